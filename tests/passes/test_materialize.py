"""Scalar sequences leave exactly the intended 64-bit value (run on the machine model)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.fields import GPR_BY_NAME
from ptoc.backend.program import Program, ScalarStart, Stop
from ptoc.passes.alloc_gprs import Binding, Scalar
from ptoc.passes.materialize import load_const, materialize
from ptoc.runtime import Machine

S1 = GPR_BY_NAME["s1"]


def _run(cmds) -> Machine:  # type: ignore[no-untyped-def]
    m = Machine()
    m.set_gpr("a3", 0x10000)
    m.run(Program((ScalarStart("STD", "FALL"), *cmds, Stop())))
    return m


@given(st.integers(-(2**63), 2**64 - 1))
def test_constants(value: int) -> None:
    assert _run(load_const(S1, value)).gpr("s1") == value % 2**64


@given(st.integers(0, 2**40))
def test_addresses(offset: int) -> None:
    b = Binding(2, 0)
    m = _run(materialize(S1, Scalar(offset, b), {b: "a3"}))
    assert m.gpr("s1") == 0x10000 + offset


def test_small_constants_are_one_compressed_instruction() -> None:
    (c,) = load_const(S1, -3)
    assert c.mnemonic == "C.MOVI"
