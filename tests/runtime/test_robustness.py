"""Robustness of the decoder and the executor, and queue/capacity behaviour on tiny
machines.

Hypothesis feeds random parcel streams (raw bytes, and streams of well-formed command
words with random field values) and random mutations of valid programs (flipped bits,
dropped, duplicated or swapped parcels; dropped/duplicated lines and swapped operands in
the text) to ``Machine.run``. The only acceptable outcomes are a clean run, a
``MachineFault``, or a ``DecodeError`` naming a parcel-aligned byte offset inside the
binary -- never another exception, never a slow run -- and a faulting block leaves the
machine exactly as it was before that block (snapshot equality).

The queue section extends ``test_queues.py`` with a stateful model: random pushes,
reads and two-destination bundles on machines of depth 1..3 and a few hundred bytes of
capacity are compared with a Python model of D1/D2 (eviction order, capacity after
release, faults with no effect).
"""

from __future__ import annotations

import random
import re
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.asm import parse
from ptoc.backend.encoding import decode, encode
from ptoc.backend.errors import AsmError, DecodeError
from ptoc.backend.isa import catalog
from ptoc.backend.program import Program
from ptoc.runtime import (
    Machine,
    MachineConfig,
    MachineFault,
    StepBoundExceeded,
    TileAllocationFault,
    TileLegalityFault,
)

from . import _progs as P
from ._progs import D, Rig, block, dim_lines, iot

ROBUST = settings(max_examples=max(20, settings.default.max_examples))
#: max_steps bounds the random programs that loop (a block may branch to itself)
TINY = {"depth": 4, "capacity": 4096, "gm_size": 1 << 16, "max_steps": 1000}
SLOW = 2.0  # seconds: no single small program may take longer


def tiny() -> Machine:
    m = Machine(MachineConfig(**TINY))
    for pe in range(4):
        m.set_gpr("a0", 0x100 * pe, pe=pe)
        m.set_gpr("a1", 16, pe=pe)
        m.set_gpr("a4", pe, pe=pe)
    m.load_gm(0x800, bytes(range(256)) * 8)  # operand loads at 0x100.. read zeros
    return m


def run_blockwise(m: Machine, program: Program) -> str:
    """Run ``program`` one block at a time; on a fault the machine must equal its state
    before that block. Returns the outcome ("ok" or the fault class name)."""
    t0 = time.perf_counter()
    for blk in program.blocks():
        cmds = tuple(c for c in (blk.start, *blk.commands, blk.stop) if c is not None)
        before = m.snapshot()
        try:
            m.run(Program(cmds))
        except StepBoundExceeded as f:
            # a block that branches to itself: the bound stops the run between two of
            # its runs, after the earlier ones committed (no single block faulted)
            assert "max_steps" in str(f)
            return type(f).__name__
        except MachineFault as f:
            after = m.snapshot()
            assert after == before, f"{type(f).__name__} changed the machine: " + ", ".join(
                after.differences(before)
            )
            assert f.rule and str(f)
            return type(f).__name__
        assert time.perf_counter() - t0 < SLOW, "a tiny program ran too long"
    return "ok"


def run_bytes(m: Machine, data: bytes) -> str:
    try:
        program = decode(data)
    except DecodeError as e:
        assert 0 <= e.offset < len(data) and e.offset % 2 == 0, e
        assert f"offset 0x{e.offset:x}" in str(e)
        return "DecodeError"
    return run_blockwise(m, program)


# --------------------------------------------------------------------------- generators

_FORMS = [f for f in catalog.COMMAND_FORMS] + list(catalog.SCALAR_FORMS)
_WEIGHTS = {
    "BSTART.TEPL": 8,
    "B.IOT": 8,
    "B.DIM": 5,
    "C.B.DIMI": 4,
    "B.DATR": 4,
    "B.IOR": 4,
    "BSTOP": 6,
    "BSTART.TLOAD": 3,
    "BSTART.TSTORE": 2,
    "BSTART.STD": 2,
    "ADDI": 2,
    "LUI": 1,
    "C.MOVI": 2,
}


def word_of(form, rnd: random.Random) -> bytes:  # type: ignore[no-untyped-def]
    """A word of ``form`` with random field values (often small, sometimes any)."""
    values = {}
    for fd in form.fields:
        hi = (1 << fd.width) - 1
        v = rnd.choice([0, 1, 2, 3, rnd.randint(0, hi), rnd.randint(0, min(hi, 16))])
        if fd.signed and v >> (fd.width - 1):
            v -= 1 << fd.width
        values[fd.name] = v
    word = form.encode(values)
    return word.to_bytes(form.length_bits // 8, "little")


@st.composite
def form_streams(draw: st.DrawFn) -> bytes:
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 14))
    forms = [f for f in _FORMS if f.length_bits in (16, 32)]
    weights = [_WEIGHTS.get(f.mnemonic, 1) for f in forms]
    return b"".join(word_of(rnd.choices(forms, weights)[0], rnd) for _ in range(n))


_BY_NAME = {}
for _f in _FORMS:
    _BY_NAME.setdefault(_f.mnemonic, []).append(_f)
_HEADER = ["B.DATR", "B.DIM", "C.B.DIMI", "B.IOR", "B.IOT", "B.IOT", "B.IOT", "B.IOS"]


@st.composite
def bundle_streams(draw: st.DrawFn) -> bytes:
    """1..3 bundles shaped like real ones: a TEPL/TLOAD/TSTORE BSTART with a random
    selector and DataType, random header words, BSTOP; sometimes a scalar block."""
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    out = b""
    for _ in range(draw(st.integers(1, 3))):
        if rnd.random() < 0.2:
            out += word_of(rnd.choice(_BY_NAME["BSTART.STD"]), rnd)
            out += word_of(rnd.choice(_BY_NAME["C.MOVI"] + _BY_NAME["ADDI"]), rnd)
        start = rnd.choice(["BSTART.TEPL"] * 6 + ["BSTART.TLOAD", "BSTART.TSTORE"])
        out += word_of(_BY_NAME[start][0], rnd)
        for _ in range(rnd.randint(0, 6)):
            out += word_of(rnd.choice(_BY_NAME[rnd.choice(_HEADER)]), rnd)
        out += word_of(_BY_NAME["BSTOP"][0], rnd)
    return out


@ROBUST
@given(data=bundle_streams())
def test_random_bundle_shaped_streams(data: bytes) -> None:
    run_bytes(tiny(), data)


@ROBUST
@given(data=st.binary(min_size=0, max_size=48))
def test_random_bytes_decode_or_run_cleanly(data: bytes) -> None:
    run_bytes(tiny(), data)


@ROBUST
@given(data=form_streams())
def test_random_well_formed_word_streams(data: bytes) -> None:
    """Streams of catalog words with random fields mostly decode and reach the executor's
    header checks, preflight and computation."""
    run_bytes(tiny(), data)


def seed_programs() -> list[str]:
    """Valid programs covering loads, stores, elementwise, expansion, irregular ops."""
    rig = Rig()  # only its text is used: addresses are small, s8 is 0 on tiny machines
    a = np.arange(8, dtype=np.uint64).reshape(2, 4)
    loads = rig.load(a, D.S32) + rig.load(a + 1, D.S32)
    progs = [
        loads
        + block("TADD", "S32", dim_lines(4, 2), iot("T#2", "T#1", dst="U", size=1))
        + block("TSTORE", "S32", "B.IOR a0, a1", iot("U#1")),
        loads + block("TROWSUM", "S32", dim_lines(4, 2), iot("T#1", dst="U", size=1)),
        loads + block("TGATHER", "S32", dim_lines(4, 2), iot("T#2", "T#1", dst="U", size=1)),
        loads + block("TTRANS", "S32", dim_lines(2, 4), iot("T#1", dst="M", size=1)),
        loads
        + block("TCMP", "S32", "B.DATR LT", dim_lines(4, 2), iot("T#2", "T#1", dst="M", size=1))
        + block(
            "TSEL",
            "S32",
            dim_lines(4, 2),
            iot("M#1", "T#2", last=False),
            iot("T#1", dst="U", size=1),
        ),
        P.std("c.movi 7, ->a4")
        + block("TEXPANDS", "FP32", dim_lines(4, 2), "B.IOR a4", iot(dst="N", size=1)),
        loads + block("TPARTADD", "S32", dim_lines(4, 2), iot("T#2", "T#1", dst="U", size=1)),
        P.std("c.movi 1, ->a5")
        + block("TCI", "S32", dim_lines(6, None, 8), "B.IOR a4, a5", iot(dst="U", size=1)),
    ]
    return progs


SEEDS = seed_programs()


def test_seed_programs_run() -> None:
    for text in SEEDS:
        m = tiny()
        assert run_blockwise(m, parse(text)) == "ok", text


@ROBUST
@given(
    which=st.integers(0, len(SEEDS) - 1),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["flip", "drop", "dup", "swap", "flip2"]),
)
def test_binary_mutations(which: int, seed: int, kind: str) -> None:
    rnd = random.Random(seed)
    data = bytearray(encode(parse(SEEDS[which])))
    parcels = []
    pos = 0
    while pos < len(data):
        n = 4 if data[pos] & 1 else 2
        parcels.append(bytes(data[pos : pos + n]))
        pos += n
    if kind.startswith("flip"):
        for _ in range(1 if kind == "flip" else 2):
            bit = rnd.randrange(len(data) * 8)
            data[bit // 8] ^= 1 << (bit % 8)
        mutated = bytes(data)
    else:
        i, j = rnd.randrange(len(parcels)), rnd.randrange(len(parcels))
        if kind == "drop":
            del parcels[i]
        elif kind == "dup":
            parcels.insert(i, parcels[i])
        else:
            parcels[i], parcels[j] = parcels[j], parcels[i]
        mutated = b"".join(parcels)
    run_bytes(tiny(), mutated)


def _swap_operands(line: str, rnd: random.Random) -> str:
    m = re.match(r"(B\.IOT )([^,]+), ([^,]+)(,.*)", line)
    if m and "mask" not in m.group(2) and "mask" not in m.group(3):
        return f"{m.group(1)}{m.group(3)}, {m.group(2)}{m.group(4)}"
    m = re.match(r"(B\.IOR )(\w+), (\w+)(.*)", line)
    if m:
        return f"{m.group(1)}{m.group(3)}, {m.group(2)}{m.group(4)}"
    refs = re.findall(r"[TUMN]#\d+", line)
    if refs:
        return line.replace(refs[0], f"{rnd.choice('TUMN')}#{rnd.randint(1, 5)}", 1)
    nums = re.findall(r"zero, (\d+), ->LB", line)
    if nums:
        return line.replace(f"zero, {nums[0]},", f"zero, {rnd.choice([0, 1, 3, 65, 4096])},")
    return line


@ROBUST
@given(
    which=st.integers(0, len(SEEDS) - 1),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["drop", "dup", "swap-operands", "swap-lines", "mask"]),
)
def test_text_mutations(which: int, seed: int, kind: str) -> None:
    rnd = random.Random(seed)
    lines = SEEDS[which].strip().split("\n")
    i = rnd.randrange(len(lines))
    if kind == "drop":
        del lines[i]
    elif kind == "dup":
        lines.insert(i, lines[i])
    elif kind == "swap-operands":
        lines[i] = _swap_operands(lines[i], rnd)
    elif kind == "swap-lines":
        j = rnd.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines = [
            ln.replace("mask=1111", f"mask={rnd.choice(['0000', '1000', '1100', '0001'])}")
            if k == i
            else ln
            for k, ln in enumerate(lines)
        ]
    try:
        program = parse("\n".join(lines) + "\n")
    except AsmError:
        return  # the text front end rejects it with its own error: fine
    run_blockwise(tiny(), program)


def test_decode_error_names_the_offset() -> None:
    good = encode(parse(SEEDS[0]))
    bad = good[:8] + b"\x7f\x00\x00\x00\x00\x00\x00\x00" + good[8:]
    with pytest.raises(DecodeError) as info:
        Machine(MachineConfig(**TINY)).run(bad)
    assert info.value.offset == 8 and "offset 0x8" in str(info.value)
    with pytest.raises(DecodeError) as info:
        Machine(MachineConfig(**TINY)).run(good + b"\x01")
    assert info.value.offset == len(good)


# =========================================================================== queue model


def expands(value: int, hand: str, size: int, mask: str = "1111") -> str:
    return P.std(f"c.movi {value}, ->a4") + block(
        "TEXPANDS",
        "S32",
        "B.DIM zero, 4, ->LB0",
        "B.IOR a4",
        iot(dst=hand, size=size, mask=mask),
    )


class QueueModel:
    """D1/D2 in Python: hands of ``depth`` entries (value, bytes, mask); a commit pushes
    new entries to #1 in binding order, releases what passes the depth, and faults with
    no effect when any PE would exceed ``capacity``."""

    def __init__(self, hands: int, depth: int, capacity: int) -> None:
        self.q: list[list[tuple[int, int, int]]] = [[] for _ in range(hands)]
        self.depth, self.cap = depth, capacity

    def used(self, queues: list[list[tuple[int, int, int]]]) -> list[int]:
        u = [0] * 4
        for q in queues:
            for _, nbytes, mask in q:
                for pe in range(4):
                    if mask >> (3 - pe) & 1:
                        u[pe] += nbytes
        return u

    def push(self, items: list[tuple[int, tuple[int, int, int]]]) -> bool:
        new = [list(q) for q in self.q]
        for hand, item in items:
            new[hand] = [item, *new[hand]][: self.depth]
        if max(self.used(new)) > self.cap:
            return False
        self.q = new
        return True


HANDS = "TUMN"


@settings(max_examples=max(10, settings.default.max_examples // 3))
@given(
    depth=st.integers(1, 3),
    cap=st.sampled_from([256, 384, 512, 768]),
    steps=st.lists(
        st.tuples(
            st.integers(0, 2),
            st.integers(1, 2),
            st.sampled_from(["1111", "1000", "0100", "1100", "1110"]),
            st.integers(-16, 15),
            st.booleans(),
        ),
        min_size=1,
        max_size=10,
    ),
)
def test_queue_model(depth: int, cap: int, steps: list) -> None:  # type: ignore[type-arg]
    """Random TEXPANDS pushes (and two-destination TSORTs) against the model: queue
    contents in eviction order, per-PE capacity use, allocation faults with no effect."""
    m = Machine(MachineConfig(hands=3, depth=depth, capacity=cap, gm_size=4096))
    model = QueueModel(3, depth, cap)
    for hand, size, mask, value, two in steps:
        nbytes = 128 << (size - 1)
        if two and model.q[hand] and model.q[hand][0][2] == 0b1111 and size == 1:
            # TSORT of hand#1 into two destinations of the same hand (values, indices)
            src = model.q[hand][0]
            m.run(parse(P.std(f"c.movi {src[0]}, ->a4")))
            text = block(
                "TEXPANDS",
                "FP32",
                "B.DIM zero, 4, ->LB0",
                "B.IOR a4",
                iot(dst=HANDS[hand], size=1),
            )
            ok = model.push([(hand, (src[0], 128, 0b1111))])
            _apply(m, text, ok)
            if not ok:
                continue
            text = block(
                "TSORT",
                "FP32",
                "B.DIM zero, 4, ->LB0",
                iot(f"{HANDS[hand]}#1", dst=HANDS[hand], size=1, last=False),
                iot(dst=HANDS[hand], size=1),
            )
            sorted_value = model.q[hand][0][0]
            ok = model.push([(hand, (sorted_value, 128, 0b1111)), (hand, (-99, 128, 0b1111))])
            _apply(m, text, ok)
        else:
            ok = model.push([(hand, (value, nbytes, int(mask, 2)))])
            _apply(m, expands(value, HANDS[hand], size, mask), ok)
        _compare(m, model)


def _apply(m: Machine, text: str, ok: bool) -> None:
    if text.startswith("BSTART.STD"):  # the scalar prelude commits on its own
        head, text = text.split("BSTOP\n", 1)
        m.run(parse(head + "BSTOP\n"))
    prog = parse(text)
    if ok:
        m.run(prog)
        return
    before = m.snapshot()
    with pytest.raises(TileAllocationFault):
        m.run(prog)
    assert m.snapshot() == before


def _compare(m: Machine, model: QueueModel) -> None:
    assert m.state.used == model.used(model.q)
    for h, q in enumerate(model.q):
        assert len(m.state.queues[h]) == len(q)
        for k, (value, nbytes, mask) in enumerate(q, 1):
            v = m.tile(f"{HANDS[h]}#{k}")
            assert v.capacity == nbytes and v.mask == mask
            if value == -99:
                assert v.dtype == D.U32  # the index destination of a TSORT
                continue
            pe = next(i for i in range(4) if mask >> (3 - i) & 1)
            raw = int(P.raw(v.values)[pe, 0, 0])
            assert raw == value & 0xFFFFFFFF


def test_two_destinations_at_depth_one_keep_only_the_second() -> None:
    """Depth 1: TSORT's value destination is pushed past the depth by its own index
    destination and released in the same commit; only the index tile remains and only it
    counts against capacity (D1, D2)."""
    m = Machine(MachineConfig(depth=1, capacity=256, gm_size=4096))
    m.run(
        parse(
            P.std("lui 0x3f800, ->a4")
            + block(
                "TEXPANDS", "FP32", "B.DIM zero, 4, ->LB0", "B.IOR a4", iot(dst="U", size=1)
            )
        )
    )
    m.run(
        parse(
            block(
                "TSORT",
                "FP32",
                "B.DIM zero, 4, ->LB0",
                iot("U#1", dst="T", size=1, last=False),
                iot(dst="T", size=1),
            )
        )
    )
    assert len(m.state.queues[0]) == 1 and m.tile("T#1").dtype == D.U32
    assert m.state.used == [256] * 4  # U#1 (128) + the index tile (128)


def test_two_destinations_capacity_counts_both() -> None:
    m = Machine(MachineConfig(depth=4, capacity=384, gm_size=4096))
    m.run(
        parse(
            P.std("lui 0x3f800, ->a4")
            + block(
                "TEXPANDS", "FP32", "B.DIM zero, 4, ->LB0", "B.IOR a4", iot(dst="U", size=1)
            )
        )
    )
    sort = block(
        "TSORT",
        "FP32",
        "B.DIM zero, 4, ->LB0",
        iot("U#1", dst="T", size=1, last=False),
        iot(dst="M", size=2),
    )
    before = m.snapshot()
    with pytest.raises(TileAllocationFault):
        m.run(parse(sort))  # 128 + 128 + 256 > 384
    assert m.snapshot() == before
    m.run(parse(sort.replace("->M<256B>", "->M<128B>")))
    assert m.state.used == [384] * 4


def test_sources_resolve_before_two_pushes_into_their_hand() -> None:
    """A bundle reading T#1 and pushing two destinations into T: T#1 is resolved before
    the commit; afterwards the source is T#3."""
    m = Machine(MachineConfig(gm_size=4096))
    m.run(
        parse(
            P.std("lui 0x40000, ->a4")
            + block(
                "TEXPANDS", "FP32", "B.DIM zero, 2, ->LB0", "B.IOR a4", iot(dst="T", size=1)
            )
        )
    )
    m.run(
        parse(
            block(
                "TSORT",
                "FP32",
                "B.DIM zero, 2, ->LB0",
                iot("T#1", dst="T", size=1, last=False),
                iot(dst="T", size=1),
            )
        )
    )
    assert [m.tile(f"T#{k}").dtype for k in (1, 2, 3)] == [D.U32, D.FP32, D.FP32]
    assert int(P.raw(m.tile("T#3").values)[0, 0, 0]) == 0x40000000


def test_reading_across_allocation_masks() -> None:
    """Two sources allocated on disjoint PE masks cannot be combined under any nonzero
    bundle mask; a machine with fewer PEs rejects a mask naming a missing PE."""
    rig = Rig()
    rig.run(expands(1, "T", 1, "1000") + expands(2, "T", 1, "0100"))
    for mask in ("1000", "0100", "1100", "1111"):
        rig.fault(
            block(
                "TADD",
                "S32",
                "B.DIM zero, 4, ->LB0",
                iot("T#1", "T#2", dst="U", size=1, mask=mask),
            ),
            TileLegalityFault,
        )
    rig.noop(
        block(
            "TADD",
            "S32",
            "B.DIM zero, 4, ->LB0",
            iot("T#1", "T#2", dst="U", size=1, mask="0000"),
        )
    )
    m = Machine(MachineConfig(pes=2, gm_size=4096))
    m.run(parse(P.std("c.movi 1, ->a4")))
    before = m.snapshot()
    with pytest.raises(TileLegalityFault, match="PE"):
        m.run(parse(expands(1, "T", 1, "0001").split("BSTOP\n", 1)[1]))
    assert m.snapshot() == before
    m.run(parse(expands(1, "T", 1, "1100")))
    assert m.tile("T#1").mask == 0b1100


def test_eviction_releases_capacity_of_the_right_mask() -> None:
    """The evicted entry returns its bytes only on the PEs of its own allocation mask."""
    m = Machine(MachineConfig(depth=2, capacity=512, gm_size=4096))
    m.run(parse(expands(1, "T", 2, "1000") + expands(2, "T", 1, "1110")))
    assert m.state.used == [384, 128, 128, 0]
    m.run(parse(expands(3, "T", 1, "0001")))  # evicts the 1000 tile
    assert m.state.used == [128, 128, 128, 128]
    assert [m.tile(f"T#{k}").mask for k in (1, 2)] == [0b0001, 0b1110]


def test_empty_position_after_eviction_within_depth() -> None:
    m = Machine(MachineConfig(depth=3, gm_size=4096))
    m.run(parse(expands(1, "U", 1)))
    before = m.snapshot()
    with pytest.raises(TileLegalityFault, match="empty queue position"):
        m.run(
            parse(
                block("TADD", "S32", "B.DIM zero, 4, ->LB0", iot("U#1", "U#3", dst="T", size=1))
            )
        )
    assert m.snapshot() == before
