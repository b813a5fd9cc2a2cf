"""Scalar sequences leave exactly the intended 64-bit value (run on the machine model)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptoc
import ptoc.lang as pt
from ptoc.backend.isa.fields import GPR_BY_NAME
from ptoc.backend.program import Program, ScalarStart, Stop
from ptoc.passes.allocate.gprs import Binding, Scalar
from ptoc.passes.emit.materialize import load_const, materialize
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


# ------------------------------------------------------------------ issue 9 item 18


def test_every_materialization_meets_its_catalog_form() -> None:
    """c.movi cannot write ra (RegDst 10 is C.SETRET): small constants for ra take the
    32-bit path, and every instruction for every register meets its form."""
    from ptoc.backend.encoding import field_violation

    ra = GPR_BY_NAME["ra"]
    for rd in range(1, 24):
        for value in [*range(-20, 20), 4095, 4096, -4097, 1 << 31, -(1 << 40)]:
            cmds = load_const(rd, value)
            assert all(field_violation(c) is None for c in cmds), (rd, value)
            if rd == ra:
                assert all(c.mnemonic != "C.MOVI" for c in cmds)
    for value in range(-16, 16):
        assert _run(load_const(ra, value)).gpr("ra") == value % 2**64


def test_the_validator_refuses_a_c_movi_to_ra() -> None:
    from ptoc.backend.program import Scalar as Cmd
    from ptoc.passes.pipeline import compile_module
    from ptoc.passes.validate import ValidationError, validate
    from ptoc.runtime import MachineConfig

    from .test_validate import _reuse_kernel, _with

    em = compile_module(_reuse_kernel(), MachineConfig()).emitted
    i = next(i for i, c in enumerate(em.program.commands) if isinstance(c, Cmd))
    bad = _with(em, i, Cmd("C.MOVI", (("RegDst", 10), ("simm5", 3))))
    with pytest.raises(ValidationError, match=r"c\.movi RegDst=10 is a reserved encoding"):
        validate(bad, MachineConfig())


@ptoc.kernel
def add_constants(x: ptoc.Tensor[ptoc.s32, 8, 64], out: ptoc.Tensor[ptoc.s32, 8, 64]):
    t = pt.load(x)
    for i in range(1, 16):
        t = t + i
    pt.store(out, t)


def test_a_kernel_with_fifteen_constants_assembles_and_verifies() -> None:
    """The reproducer of item 18: with 14 scratch registers the 15th constant went to
    ra as c.movi, which ptoc asm refused (and the executor ran)."""
    from ptoc.backend import asm

    k = add_constants
    text = ptoc.compile(k).asm()
    assert asm.parse(text).commands == ptoc.compile(k).program.commands
    assert "->ra" in text  # the allocator still uses ra, through a legal form
    ptoc.verify(k)


def test_topk_on_the_tiny_machine_assembles() -> None:
    """The other reproducer of item 18: examples/topk.py on depth=4,capacity=16384."""
    from pathlib import Path

    from ptoc.backend import asm
    from ptoc.loader import load_kernel

    root = Path(__file__).resolve().parents[2]
    k = load_kernel(f"{root / 'examples' / 'topk.py'}::topk")
    text = ptoc.compile(k, "depth=4,capacity=16384").asm()
    assert not [ln for ln in text.splitlines() if ln.startswith("c.movi") and "->ra" in ln]
    asm.parse(text)


# ------------------------------------------------------------------ the positional forms


def _load_const_by_name(rd: int, value: int) -> list:  # type: ignore[type-arg]
    """:func:`load_const` spelled with :func:`_s` and field names (the literal rule)."""
    from ptoc.passes.emit.materialize import _legal, _s, _signed64

    v = _signed64(value)
    if -16 <= v < 16 and _legal("C.MOVI", RegDst=rd, simm5=v):
        return [_s("C.MOVI", RegDst=rd, simm5=v)]
    if -(1 << 31) <= v < (1 << 31):
        hi, lo = v >> 12, v & 0xFFF
        if hi == 0:
            return [_s("ADDI", RegDst=rd, SrcL=0, uimm12=lo)]
        out = [_s("LUI", RegDst=rd, imm20=hi & 0xFFFFF)]
        if lo:
            out.append(_s("ADDI", RegDst=rd, SrcL=rd, uimm12=lo))
        return out
    low = v & 0xFFFFFFFF
    out = _load_const_by_name(rd, v >> 32)
    for width, pos in ((12, 20), (12, 8), (8, 0)):
        out.append(_s("SLLI", RegDst=rd, SrcL=rd, shamt=width))
        chunk = (low >> pos) & ((1 << width) - 1)
        if chunk:
            out.append(_s("ADDI", RegDst=rd, SrcL=rd, uimm12=chunk))
    return out


_VALUES = st.one_of(
    st.integers(-20, 20),
    st.integers(-(2**31) - 2, 2**31 + 2),
    st.integers(-(2**63), 2**64 - 1),
    st.sampled_from([0, 4095, 4096, -4096, -4097, 2**31 - 1, -(2**31), 2**63, 2**64 - 1]),
)


@given(st.integers(1, 23), _VALUES, st.integers(0, 23))
def test_positional_forms_build_what_the_named_fields_build(
    rd: int, value: int, base_reg: int
) -> None:
    """``load_const`` and ``materialize`` build their instructions with per-form memos
    keyed by field values in position (``_form``); they equal the literal rule spelled
    with field names, for every register (ra, whose c.movi is reserved, too) and values
    in every range (c.movi, addi, lui, lui+addi, 64-bit), addresses with both the short
    and the long form. Mutation-checked: swapping two names of the ``_ADD`` form, or
    dropping the ``c.movi`` legality test, fails this test."""
    from ptoc.backend.isa.fields import GPR_NAMES
    from ptoc.passes.emit.materialize import _s

    assert load_const(rd, value) == _load_const_by_name(rd, value)
    b = Binding(1, 0)
    offset = value % 2**40
    got = materialize(rd, Scalar(offset, b), {b: GPR_NAMES[base_reg]})
    if offset < 4096:
        want = [_s("ADDI", RegDst=rd, SrcL=base_reg, uimm12=offset)]
    else:
        want = [
            *_load_const_by_name(rd, offset),
            _s("ADD", RegDst=rd, SrcL=base_reg, SrcR=rd, SrcRType=3, shamt=0),
        ]
    assert got == want
