"""Catalog form constraints in the executor and host API bounds (issue 9 items 18, 23, 24).

The executor must refuse every command whose fields break a catalog constraint --
Fault_IllegalInstruction before any effect -- in scalar blocks as in tile bundles; the
host API must refuse PEs and registers the machine does not have.
"""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.encoding import decode
from ptoc.backend.isa.fields import Hand
from ptoc.backend.program import Program, Scalar, ScalarStart, Stop
from ptoc.backend.target import MAX_GM_SIZE, ConfigError
from ptoc.runtime import (
    IllegalInstructionFault,
    Machine,
    MachineConfig,
    TileLegalityFault,
)
from ptoc.runtime.machine import MachineError

from .util import prog


def _no_effect(m: Machine, program: Program | bytes, fault: type) -> str:
    before = m.snapshot()
    with pytest.raises(fault) as info:
        m.run(program)
    assert m.snapshot() == before
    return str(info.value)


def test_c_movi_writing_ra_faults_instead_of_running() -> None:
    m = Machine("gm_size=4096")
    m.set_gpr("ra", 77)
    p = Program((ScalarStart("STD", "FALL"), Scalar("C.MOVI", (("RegDst", 10), ("simm5", 3)))))
    text = _no_effect(m, p, IllegalInstructionFault)
    assert "RegDst=10 is a reserved encoding" in text and "C.SETRET" in text
    assert m.gpr("ra") == 77


def test_the_c_movi_ra_word_is_c_setret() -> None:
    m = Machine("gm_size=4096")
    words = (0x1001).to_bytes(4, "little") + (0x16 | 3 << 6 | 10 << 11).to_bytes(2, "little")
    assert decode(words).commands[1].mnemonic == "C.SETRET"  # type: ignore[attr-defined]
    m.run(words)
    # SetReturnAddress: ra = the c.setret's own address (4) + (uimm5=3 << 1)
    assert m.gpr("ra") == 10 and m.gpr("a0") == 0


def test_fall_with_an_offset_faults() -> None:
    m = Machine("gm_size=4096")
    p = Program(
        (ScalarStart("STD", "FALL", 5), Scalar("C.MOVI", (("RegDst", 2), ("simm5", 1))))
    )
    assert "simm17=5 is a reserved encoding" in _no_effect(m, p, IllegalInstructionFault)
    assert m.gpr("a0") == 0


def test_scalar_without_some_fields_reads_them_as_zero_like_the_encoder() -> None:
    m = Machine("gm_size=4096")
    m.run(Program((ScalarStart("STD", "FALL"), Scalar("ADDI", (("RegDst", 2),)), Stop())))
    assert m.gpr("a0") == 0


REG_DIM = """\
BSTART.STD FALL
c.movi 8, ->a1
BSTOP
BSTART.TLOAD FP32
B.DIM a1, 0, ->LB0
B.DIM zero, 2, ->LB1
B.IOR a0, zero
B.IOT mask=1111, last, ->T<128B>
BSTOP
"""


def test_register_dim_with_a_mask_naming_a_missing_pe() -> None:
    """Issue 9 item 23: a register B.DIM read the GPRs of PE2/PE3 on a 2-PE machine
    (IndexError); the mask is checked first."""
    m = Machine(MachineConfig(pes=2, gm_size=4096))
    p = prog(REG_DIM)
    m.run(Program(p.commands[:3]))
    text = _no_effect(m, Program(p.commands[3:]), TileLegalityFault)
    assert "mask=1111 selects PE3, but this machine has 2 PE(s)" in text


def test_gpr_pe_bounds() -> None:
    """Issue 9 item 24: gpr(pe=-1) read PE3 through numpy's negative indexing."""
    m = Machine(MachineConfig(pes=2))
    m.set_gpr("a0", 5, pe=1)
    assert m.gpr("a0", pe=1) == 5
    for pe in (-1, 2, 4):
        with pytest.raises(MachineError, match=f"PE{pe} does not exist"):
            m.gpr("a0", pe=pe)
        with pytest.raises(MachineError, match=f"PE{pe} does not exist"):
            m.set_gpr("a0", 1, pe=pe)
    with pytest.raises(MachineError, match="not float"):
        m.gpr(1.0)  # type: ignore[arg-type]
    with pytest.raises(MachineError, match="GPR value is an integer"):
        m.set_gpr("a0", 1.5)  # type: ignore[arg-type]
    assert m.gpr(np.int64(2), pe=np.int64(1)) == 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gm_size=2000G", "gm_size=2000G exceeds the 1024G"),
        ("gm_size=0x100000000000000000000", "exceeds the 1024G"),
        ("gm_size=2**80", "'2**80' is not an integer"),
        ("gm_size=" + "9" * 5000, "has more than 40 digits"),
        ("depth=\u0663", "is not an integer"),
    ],
)
def test_machine_parameters_out_of_reach(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        MachineConfig.parse(text)
    assert message in str(info.value) and len(str(info.value)) < 200


def test_the_largest_gm_is_accepted_as_a_config() -> None:
    assert MachineConfig.parse(f"gm_size={MAX_GM_SIZE}").gm_size == MAX_GM_SIZE
    assert MachineConfig.parse("gm_size=16M").gm_size == 16 << 20


def test_a_reserved_header_word_in_a_scalar_block_is_an_illegal_instruction() -> None:
    """Decoding comes before placement: a zero-mask B.IOT (otherwise skipped) or a B.HINT
    with a reserved field value inside a standard block faults as reserved."""
    from ptoc.backend.program import Iot

    m = Machine("gm_size=4096")
    bad = Iot((), 0, True, Hand.T, 11)  # SizeCode 11 is reserved
    p = Program((ScalarStart("STD", "FALL"), bad, Stop()))
    assert "SizeCode=11 is a reserved encoding" in _no_effect(m, p, IllegalInstructionFault)
    ok = Program((ScalarStart("STD", "FALL"), Iot((), 0, True, Hand.T, 1), Stop()))
    m.run(ok)  # the legal zero-mask binding is skipped
