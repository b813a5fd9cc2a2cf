"""Trace records, register-based B.DIM, B.CATR/B.HINT handling, the Machine API."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.isa import DataType
from ptoc.backend.target import ConfigError
from ptoc.runtime import (
    GMError,
    Machine,
    MachineConfig,
    MachineError,
    TileLegalityFault,
    UnsupportedOperation,
)

from .util import machine, prog

EXP = (
    "BSTART.VEC TEXPANDS, S32\n{extra}B.DIM {reg}, {imm}, ->LB0\nB.IOR a4\n"
    "B.IOT mask={mask}, last, ->T<256B>\nBSTOP\n"
)


def test_trace_records_reads_writes_and_queues() -> None:
    m = machine()
    m.set_gpr("a4", 5)
    text = EXP.format(extra="", reg="zero", imm=4, mask="1111")
    text += (
        "BSTART.VEC TADD, S32\nB.DIM zero, 4, ->LB0\n"
        "B.IOT T#1, T#1, mask=1111, last, ->U<256B>\nBSTOP\n"
    )
    text += EXP.format(extra="", reg="zero", imm=4, mask="0000")
    report = m.run(prog(text), trace=True)
    assert report.bundles == 3 and report.trace is not None
    r0, r1, r2 = report.records
    assert r0.kind == "tile" and r0.destinations[0].name == "T#1" and not r0.sources
    assert r1.sources[0].serial == r0.destinations[0].serial
    assert r1.destinations[0].name == "U#1" and r1.queues[1][1] == (r1.destinations[0].serial,)
    assert r2.kind == "noop"
    text_out = report.trace.text()
    assert "[1] TADD" in text_out and "strict no-op" in text_out


def test_register_dims_must_agree_across_pes() -> None:
    m = machine()
    m.set_gpr("a4", 1)
    m.set_gpr("a5", 3)
    m.run(prog(EXP.format(extra="", reg="a5", imm=5, mask="1111")))  # LB0 = 3 + 5
    assert m.tile("T#1").valid_cols == 8
    m.set_gpr("a5", 4, pe=2)
    with pytest.raises(TileLegalityFault, match="differs across"):
        m.run(prog(EXP.format(extra="", reg="a5", imm=5, mask="1111")))
    m.run(prog(EXP.format(extra="", reg="a5", imm=5, mask="1100")))  # PE2 not involved


def test_dim_value_is_low_16_bits() -> None:
    m = machine()
    m.set_gpr("a5", 0x10000 + 2)
    m.run(prog(EXP.format(extra="", reg="a5", imm=6, mask="1111")))
    assert m.tile("T#1").valid_cols == 8


def test_catr_and_hint() -> None:
    m = machine()
    m.run(
        prog(
            EXP.format(
                extra="B.CATR aq=1\nB.HINT V=1, L/UL=1\n", reg="zero", imm=4, mask="1111"
            )
        )
    )
    with pytest.raises(UnsupportedOperation, match="trap"):
        m.run(prog(EXP.format(extra="B.CATR trap=1\n", reg="zero", imm=4, mask="1111")))


def test_machine_api_errors() -> None:
    m = Machine("depth=4,capacity=16384,gm_size=64K")
    assert m.config == MachineConfig(depth=4, capacity=16384, gm_size=65536)
    with pytest.raises(GMError):
        m.load_gm(65530, np.zeros(8, np.uint8))
    with pytest.raises(GMError):
        m.read_gm(-1, np.uint8, 2)
    with pytest.raises(MachineError):
        m.set_gpr("q1", 0)
    with pytest.raises(MachineError):
        m.tile("T#1")  # empty
    with pytest.raises(MachineError):
        m.tile("X#1")
    with pytest.raises(ConfigError):
        MachineConfig.parse("depth=17")
    m.set_gpr("zero", 5)
    m.set_gpr("a0", -1)
    assert m.gpr("zero") == 0 and m.gpr("a0", 3) == (1 << 64) - 1
    assert MachineConfig.parse(m.config.text()) == m.config


def test_snapshot_equality_is_bitwise() -> None:
    m = machine()
    m.push_tile("T", np.array([[np.nan, -0.0]], np.float32), DataType.FP32)
    s1 = m.snapshot()
    m2 = machine()
    m2.push_tile("T", np.array([[np.nan, 0.0]], np.float32), DataType.FP32)
    assert s1 == m.snapshot() and s1 != m2.snapshot()
