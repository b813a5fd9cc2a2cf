"""Scalar forms (D12) against independent Python integer arithmetic.

Every instruction runs in a ``BSTART.STD FALL`` block on all four PEs, each PE with its
own operand values; the expected value is computed here from the ASL's definition
(``asl/scalar/model/alu/semantics.asl``, ``bru/semantics.asl``) with Python integers.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.program import Program
from ptoc.runtime import Machine
from ptoc.runtime.faults import (
    BundleControlFault,
    DataAlignmentFault,
    DataPageFault,
    IllegalInstructionFault,
)

M = (1 << 64) - 1
EDGES = [0, 1, 2, M, M - 1, 1 << 63, (1 << 63) - 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 63, 64]
words = st.one_of(st.sampled_from(EDGES), st.integers(0, M))
quads = st.lists(words, min_size=4, max_size=4)


def s64(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def sx(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return (v - (1 << bits) if v >> (bits - 1) else v) & M


def run(text: str, regs: dict[str, list[int]], gm: bytes = b"", gm_at: int = 0) -> Machine:
    m = Machine("gm_size=4096")
    for name, values in regs.items():
        for pe, v in enumerate(values):
            m.set_gpr(name, v, pe=pe)
    if gm:
        m.load_gm(gm_at, gm)
    m.run(Program.parse(f"BSTART.STD FALL\n{text}\nBSTOP\n"))
    return m


def result(text: str, a: list[int], b: list[int], reg: str = "a2") -> list[int]:
    m = run(text, {"a0": a, "a1": b})
    return [m.gpr(reg, pe) for pe in range(4)]


def tdiv(a: int, b: int) -> int:
    """Truncating signed division on Python integers (independent of the executor)."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "sll": lambda a, b: a << (b & 63),
    "srl": lambda a, b: a >> (b & 63),
    "sra": lambda a, b: s64(a) >> (b & 63),
    "min": lambda a, b: a if s64(a) < s64(b) else b,
    "minu": lambda a, b: min(a, b),
    "max": lambda a, b: a if s64(a) > s64(b) else b,
    "maxu": lambda a, b: max(a, b),
    "mul": lambda a, b: a * b,
    "mulu": lambda a, b: a * b,
    "div": lambda a, b: tdiv(s64(a), s64(b)),
    "divu": lambda a, b: a // b if b else 0,
    "rem": lambda a, b: s64(a) - tdiv(s64(a), s64(b)) * s64(b) if b else a,
    "remu": lambda a, b: a % b if b else a,
}


def word32(fn: Callable[[int, int], int], signed_in: bool = True) -> Callable[[int, int], int]:
    def w(a: int, b: int) -> int:
        a32, b32 = a & 0xFFFFFFFF, b & 0xFFFFFFFF
        if signed_in:
            a32, b32 = s64(sx(a32, 32)), s64(sx(b32, 32))
        return sx(fn(a32, b32), 32)

    return w


WORD = {
    "addw": word32(lambda a, b: a + b),
    "subw": word32(lambda a, b: a - b),
    "andw": word32(lambda a, b: a & b),
    "sllw": lambda a, b: sx((a & 0xFFFFFFFF) << (b & 31), 32),
    "srlw": lambda a, b: sx((a & 0xFFFFFFFF) >> (b & 31), 32),
    "sraw": lambda a, b: sx(s64(sx(a, 32)) >> (b & 31), 32),
    "mulw": word32(lambda a, b: a * b, False),
    "divw": word32(lambda a, b: tdiv(a, b)),
    "divuw": word32(lambda a, b: a // b if b else 0, False),
    "remw": word32(lambda a, b: a - tdiv(a, b) * b if b else a),
    "remuw": word32(lambda a, b: a % b if b else a, False),
}


@pytest.mark.parametrize("name", sorted(BINARY) + sorted(WORD))
@given(a=quads, b=quads)
def test_register_forms(name: str, a: list[int], b: list[int]) -> None:
    fn = BINARY.get(name) or WORD[name]
    assert result(f"{name} a0, a1, ->a2", a, b) == [fn(x, y) & M for x, y in zip(a, b)]


def test_division_by_zero_and_overflow() -> None:
    a = [7, (1 << 63), 5, M]
    got = result("div a0, a1, ->a2", a, [0, M, 0, 0])
    assert got == [0, 1 << 63, 0, 0]  # INT64_MIN / -1 wraps to INT64_MIN
    assert result("rem a0, a1, ->a2", a, [0, M, 0, 0]) == [7, 0, 5, M]
    assert result("remu a0, a1, ->a2", a, [0] * 4) == a


MODS = {  # SrcRType code -> transformation (binary decoding: DecodeScalarBinaryRightModifier)
    ".sw": lambda r: sx(r, 32),
    ".uw": lambda r: r & 0xFFFFFFFF,
    ".neg": lambda r: -r,
    "": lambda r: r,
}


@pytest.mark.parametrize("mod", sorted(MODS))
@given(a=quads, b=quads, sh=st.integers(0, 31))
def test_add_sub_modifiers_shift(mod: str, a: list[int], b: list[int], sh: int) -> None:
    f = MODS[mod]
    shift = f"<<{sh}" if sh else ""
    assert result(f"add a0, a1{mod}{shift}, ->a2", a, b) == [
        (x + (f(y) << sh)) & M for x, y in zip(a, b)
    ]
    assert result(f"subw a0, a1{mod}{shift}, ->a2", a, b) == [
        sx(x - (f(y) << sh), 32) for x, y in zip(a, b)
    ]


@given(a=quads, b=quads, sh=st.integers(0, 31))
def test_logical_not_modifier(a: list[int], b: list[int], sh: int) -> None:
    assert result(f"and a0, a1.not<<{sh}, ->a2", a, b) == [
        x & ((~y << sh) & M) for x, y in zip(a, b)
    ]


@pytest.mark.parametrize(
    ("name", "fn", "imm_bits", "signed_imm"),
    [
        ("addi", lambda a, i: a + i, 12, False),
        ("subi", lambda a, i: a - i, 12, False),
        ("andi", lambda a, i: a & i, 12, True),
        ("ori", lambda a, i: a | i, 12, True),
        ("xori", lambda a, i: a ^ i, 12, True),
        ("addiw", lambda a, i: sx(a + i, 32), 12, False),
        ("xoriw", lambda a, i: sx(a ^ i, 32), 12, True),
    ],
)
@given(a=quads, imm=st.integers(-2048, 4095))
def test_immediate_forms(
    name: str, fn, imm_bits: int, signed_imm: bool, a: list[int], imm: int
) -> None:
    imm = sx(imm, 12) if signed_imm else imm & 0xFFF
    text_imm = s64(imm) if signed_imm else imm
    assert result(f"{name} a0, {text_imm}, ->a2", a, a) == [fn(x, imm) & M for x in a]


@pytest.mark.parametrize("name", ["slli", "srli", "srai", "slliw", "srliw", "sraiw"])
@given(a=quads, sh=st.sampled_from([0, 1, 31, 32, 62, 63]))
def test_shift_immediates(name: str, a: list[int], sh: int) -> None:
    if name.endswith("w"):
        sh &= 31
        fn = {"slliw": WORD["sllw"], "srliw": WORD["srlw"], "sraiw": WORD["sraw"]}[name]
    else:
        fn = BINARY[name[:3]]
    assert result(f"{name} a0, {sh}, ->a2", a, a) == [fn(x, sh) & M for x in a]


@given(imm=st.integers(0, (1 << 20) - 1), small=st.integers(-16, 15))
def test_lui_movi(imm: int, small: int) -> None:
    m = run(f"lui 0x{imm:x}, ->a2\nc.movi {small}, ->a3", {})
    assert m.gpr("a2") == (sx(imm, 20) << 12) & M
    assert m.gpr("a3", pe=3) == small & M


CONDS = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: s64(a) < s64(b),
    "ge": lambda a, b: s64(a) >= s64(b),
    "ltu": lambda a, b: a < b,
    "geu": lambda a, b: a >= b,
}


@pytest.mark.parametrize("cond", sorted(CONDS))
@given(a=quads, b=quads)
def test_compares_write_gprs(cond: str, a: list[int], b: list[int]) -> None:
    b = [y if i % 2 else x for i, (x, y) in enumerate(zip(a, b))]  # equal operands too
    assert result(f"cmp.{cond} a0, a1, ->a2", a, b) == [
        int(CONDS[cond](x, y)) for x, y in zip(a, b)
    ]


@given(a=quads, imm=st.integers(-2048, 2047))
def test_compare_immediates(a: list[int], imm: int) -> None:
    assert result(f"cmp.lti a0, {imm}, ->a2", a, a) == [int(s64(x) < imm) for x in a]
    assert result(f"cmp.ltui a0, {imm & 0xFFF}, ->a2", a, a) == [
        int(x < (imm & 0xFFF)) for x in a
    ]
    assert result(f"cmp.andi a0, {imm}, ->a2", a, a) == [int(x & (imm & M) != 0) for x in a]


@given(a=quads, width=st.integers(1, 64), offset=st.integers(0, 63))
def test_bitfields(a: list[int], width: int, offset: int) -> None:
    def rot(v: int) -> int:
        return ((v >> offset) | (v << (64 - offset))) & M if offset else v

    field = [rot(x) & ((1 << width) - 1) for x in a]
    got = result(f"bxu a0, {width - 1}, {offset}, ->a2", a, a)
    assert got == field
    assert result(f"bxs a0, {width - 1}, {offset}, ->a2", a, a) == [sx(f, width) for f in field]
    assert result(f"bcnt a0, {width - 1}, {offset}, ->a2", a, a) == [
        bin(f).count("1") for f in field
    ]
    assert result(f"clz a0, {width - 1}, {offset}, ->a2", a, a) == [
        width - f.bit_length() for f in field
    ]


@given(a=quads, b=quads, p=quads)
def test_csel_and_madd(a: list[int], b: list[int], p: list[int]) -> None:
    m = run("csel a3, a0, a1.neg, ->a2\nmadd a0, a1, a3, ->a4", {"a0": a, "a1": b, "a3": p})
    assert [m.gpr("a2", pe) for pe in range(4)] == [
        x if c else (-y) & M for x, y, c in zip(a, b, p)
    ]
    assert [m.gpr("a4", pe) for pe in range(4)] == [(x * y + c) & M for x, y, c in zip(a, b, p)]


# ----------------------------------------------------------------------------- AGU

LOADS = {"lbi": (1, True), "lbui": (1, False), "lhi": (2, True), "lhui": (2, False),
         "lwi": (4, True), "lwui": (4, False), "ldi": (8, True)}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LOADS))
@given(data=st.binary(min_size=64, max_size=64), slot=st.integers(0, 3))
def test_loads(name: str, data: bytes, slot: int) -> None:
    size, signed = LOADS[name]
    base = 0x200
    # each PE reads its own element: a0 = base + pe * size
    m = run(
        f"{name} [a0, {slot}], ->a2", {"a0": [base + pe * size for pe in range(4)]}, data, base
    )
    for pe in range(4):
        at = pe * size + slot * size  # the immediate is scaled by the size (offset_scale)
        v = int.from_bytes(data[at : at + size], "little")
        assert m.gpr("a2", pe) == (sx(v, size * 8) if signed else v)


@pytest.mark.parametrize("name,size", [("sb", 1), ("sh", 2), ("sw", 4), ("sd", 8)])
@given(values=quads)
def test_register_offset_stores(name: str, size: int, values: list[int]) -> None:
    m = run(
        f"{name} a2, [a0, a1]",
        {"a0": [0x100] * 4, "a1": list(range(4)), "a2": values},
    )
    got = m.read_gm(0x100, np.uint8, 4 * size).tobytes()
    want = b"".join((v & ((1 << (8 * size)) - 1)).to_bytes(size, "little") for v in values)
    assert got == want  # SrcR scaled by the size (sw ..., [a0, a1<<2])


def test_register_offset_load_with_modifier_and_shamt() -> None:
    data = np.arange(16, dtype=np.uint64)
    m = run(
        "ld [a0, a1.uw<<3], ->a2",
        {"a0": [0x100] * 4, "a1": [(0xFFFFFFFF << 32) | k for k in (0, 3, 7, 15)]},
        data.tobytes(),
        0x100,
    )
    assert [m.gpr("a2", pe) for pe in range(4)] == [0, 3, 7, 15]


@pytest.mark.parametrize(
    ("text", "fault", "needle"),
    [
        ("lwi [a0, 0], ->a2", DataAlignmentFault, "0x102 (PE0), which is not aligned to 4"),
        ("sdi a2, [a1, 0]", DataPageFault, "0x1000 (PE0), beyond the 0x1000-byte"),
    ],
)
def test_agu_faults_leave_no_effect(text: str, fault: type, needle: str) -> None:
    m = Machine("gm_size=4096")
    m.set_gpr("a0", 0x102)
    m.set_gpr("a1", 0x1000)
    m.set_gpr("a3", 0x300)
    before = m.snapshot()
    # the store and the register writes before the faulting access are undone too
    prog = Program.parse(f"BSTART.STD FALL\nc.movi 7, ->a2\nsdi a2, [a3, 0]\n{text}\nBSTOP\n")
    with pytest.raises(fault) as e:
        m.run(prog)
    assert needle in str(e.value) and "line 4" in str(e.value)
    assert m.snapshot() == before


def test_temporary_queues() -> None:
    """``->t``/``->u`` push (entry 0 newest, four deep), T#k/U#k read without consuming,
    the 16-bit forms read T#1 and push T."""
    text = """\
c.movi 5, ->a0
c.addi a0, 3, ->t
c.slli t#1, 2, ->t
c.sext.b a4, ->t
add r24, r25, ->a1
addi a0, 1, ->r30
c.sdi t#1, [a2, 1]
c.ldi [a2, 1], ->t
c.cmp.eqi t#1, -1, ->t
c.movr r24, ->a3
sub r28, r26, ->a5
"""
    m = run(text, {"a2": [0x100] * 4, "a4": [0x80, 0x7F, 0xFF, 0x1FF]})
    for pe, a4 in enumerate([0x80, 0x7F, 0xFF, 0x1FF]):
        ext = sx(a4, 8)
        assert m.gpr("a1", pe) == (ext + 32) & M  # T#1 = sext.b, T#2 = 32
        # every PE stored its T#1 to 0x108 (PE3's value remains, -1); c.ldi loads it back
        assert m.gpr("a3", pe) == 1
        # U#1 = 6; T#3 after the load and the compare: the c.sext.b value
        assert m.gpr("a5", pe) == (6 - ext) & M
    assert int(m.read_gm(0x108, np.uint64, 1)[0]) == sx(0xFF, 8)  # PE3's T#1 (PE order)


def test_unwritten_queue_entry_is_illegal_and_leaves_no_effect() -> None:
    m = Machine()
    before = m.snapshot()
    with pytest.raises(
        IllegalInstructionFault, match=r"T#1 .selector 24., which holds no value"
    ):
        m.run(Program.parse("BSTART.STD FALL\nc.movi 1, ->a0\nadd r24, a0, ->a1\nBSTOP\n"))
    assert m.snapshot() == before
    m.run(Program.parse("BSTART.STD FALL\nc.movi 1, ->r31\nBSTOP\n"))
    with pytest.raises(IllegalInstructionFault, match="T#2"):
        m.run(Program.parse("BSTART.STD FALL\nc.movr r25, ->a0\nBSTOP\n"))


def test_setc_outside_a_cond_block_is_bundle_control() -> None:
    with pytest.raises(BundleControlFault, match="only a COND block"):
        Machine().run(Program.parse("BSTART.STD FALL\nsetc.eq a0, a1\nBSTOP\n"))


@pytest.mark.parametrize("form", ["sext.b", "sext.h", "sext.w", "zext.b", "zext.h", "zext.w"])
@given(a=quads)
def test_extension_forms(form: str, a: list[int]) -> None:
    bits = {"b": 8, "h": 16, "w": 32}[form[-1]]
    want = [sx(x, bits) if form[0] == "s" else x & ((1 << bits) - 1) for x in a]
    assert result(f"c.{form} a0, ->t\nc.movr r24, ->a2", a, a) == want


def test_pc_relative_load_and_store() -> None:
    """``lw.pcr [2]`` at address 4 reads ``(4 & ~3) + (2 << 2)`` = 12 (offset_scale 2)."""
    m = Machine("gm_size=4096")
    m.load_gm(0, np.arange(64, dtype=np.uint8))
    m.set_gpr("a1", 0xAABBCCDD)
    m.run(Program.parse("BSTART.STD FALL\nlw.pcr [2], ->a0\nsw.pcr a1, [-1]\nBSTOP\n"))
    assert m.gpr("a0") == int.from_bytes(bytes(range(12, 16)), "little")
    # sw.pcr at address 8: (8 & ~3) + (-1 << 2) = 4
    assert m.read_gm(4, np.uint32, 1)[0] == 0xAABBCCDD
