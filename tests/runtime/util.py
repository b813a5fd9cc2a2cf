"""Helpers for the executor tests: assembly snippets and machines with data in GM."""

from __future__ import annotations

import contextlib
import textwrap

import numpy as np

from ptoc.backend.asm import parse
from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import SIZE_NAMES
from ptoc.backend.program import Program
from ptoc.runtime import Machine, MachineConfig, MachineFault

GM = 1 << 20  # 1 MiB keeps snapshots cheap
#: every PE_MASK the assembler encodes but 0000
MASKS = ["1000", "0100", "0010", "0001", "1100", "1110", "1111"]
#: one type of each element width (8..64 bits), integer and float
WIDTH_TYPES = [DataType.U8, DataType.FP16, DataType.BF16, DataType.FP32, DataType.S32,
               DataType.FP64, DataType.U64]  # fmt: skip


def prog(text: str) -> Program:
    return parse(textwrap.dedent(text))


def machine(**kw: int) -> Machine:
    kw.setdefault("gm_size", GM)
    return Machine(MachineConfig(**kw))


def size_for(dt: DataType, rows: int, cols: int) -> str:
    """The smallest SizeCode name whose derived Rows hold ``rows`` rows of ``cols``."""
    bits = info(dt).bits
    for code in range(1, 11):
        cap_bits = (1 << (code + 6)) * 8
        if cap_bits % (cols * bits) == 0 and cap_bits // (cols * bits) >= rows:
            return SIZE_NAMES[code]
    raise ValueError("no size")


def p2(n: int) -> int:
    """The smallest power of two >= n (a legal physical Col)."""
    return 1 << max(n - 1, 0).bit_length()


def whole_rows_col(dt: DataType, n: int) -> int:
    """A legal physical Col for ``n`` valid columns of ``dt``: whole 32-byte rows."""
    return p2(max(n, 32 // (info(dt).bits // 8)))


def byte_cases(*names: str) -> list[tuple[str, DataType]]:
    """(mnemonic, DataType) of every type of ``names`` whose elements are whole bytes
    (a GM transfer moves them)."""
    from ptoc.backend.isa import op

    return [
        (name, dt)
        for name in names
        for dt in sorted(op(name).dtypes, key=lambda d: d.name)
        if info(dt).bits in (8, 16, 32, 64)
    ]


def dims(vc: int, vr: int | None = None, col: int | None = None) -> str:
    out = f"B.DIM zero, {vc}, ->LB0\n"
    if vr is not None:
        out += f"B.DIM zero, {vr}, ->LB1\n"
    if col is not None:
        out += f"B.DIM zero, {col}, ->LB2\n"
    return out


def tload(
    dt: DataType,
    vr: int,
    vc: int,
    *,
    col: int | None = None,
    base: str = "a0",
    stride: str | None = "a1",
    hand: str = "T",
    size: str | None = None,
    mask: str = "1111",
    layout: str | None = None,
) -> str:
    """A TLOAD bundle (B.IOR base, stride; stride None omits B.IOR entirely); Col defaults
    to the smallest power of two >= vc."""
    c = col or p2(vc)
    size = size or size_for(dt, vr, c)
    text = f"BSTART.TLOAD {dt.name}\n"
    if layout:
        text += f"B.DATR Layout={layout}\n"
    text += dims(vc, vr, c if c != vc else None)
    if stride is not None:
        text += f"B.IOR {base}, {stride}\n"
    text += f"B.IOT mask={mask}, last, ->{hand}<{size}>\nBSTOP\n"
    return text


def tstore(
    dt: DataType,
    src: str = "T#1",
    *,
    base: str = "a0",
    stride: str | None = "a1",
    mask: str = "1111",
    extra: str = "",
) -> str:
    text = f"BSTART.TSTORE {dt.name}\n{extra}"
    if stride is not None:
        text += f"B.IOR {base}, {stride}\n"
    return text + f"B.IOT {src}, mask={mask}, last\nBSTOP\n"


def put(m: Machine, addr: int, array: np.ndarray) -> None:
    m.load_gm(addr, array)


def load_tiles(
    m: Machine, arrays: list[np.ndarray], dt: DataType, hand: str = "T", base: int = 0x1000
) -> str:
    """Place each (R, C) array in GM (same data on every PE) and return the TLOAD text that
    loads them in order (so the last array ends up as ``hand#1``). Uses a2/a3 per load."""
    text = ""
    for i, a in enumerate(arrays):
        addr = base + i * 0x10000
        m.load_gm(addr, np.ascontiguousarray(a))
        r, c = a.shape
        text += "BSTART.STD FALL\n"
        text += _const("a2", addr) + _const("a3", c * a.dtype.itemsize)
        text += "BSTOP\n"
        text += tload(dt, r, c, base="a2", stride="a3", hand=hand)
    return text


def _const(reg: str, value: int) -> str:
    """Scalar instructions materialising a non-negative value < 2**31."""
    hi, lo = value >> 12, value & 0xFFF
    out = ""
    if hi:
        out += f"lui {hi}, ->{reg}\n"
        out += f"addi {reg}, {lo}, ->{reg}\n"
    else:
        out += f"addi zero, {lo}, ->{reg}\n"
    return out


def const(reg: str, value: int) -> str:
    return "BSTART.STD FALL\n" + _const(reg, value) + "BSTOP\n"


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return (
        a.shape == b.shape
        and a.dtype.itemsize == b.dtype.itemsize
        and bool(np.array_equal(bits(a), bits(b)))
    )


def rejected_without_effect(m: Machine, text: str, cls: type) -> Exception:
    """Run ``text`` on ``m``: it must raise exactly ``cls`` and leave the whole machine
    state as it was (a rejected bundle leaves no trace); returns the fault."""
    import pytest

    from ptoc.runtime import MachineFault

    before = m.snapshot()
    with pytest.raises(MachineFault) as info:
        m.run(prog(text))
    assert type(info.value) is cls, info.value
    after = m.snapshot()
    assert after == before, after.differences(before)
    return info.value


def warm_outcome(
    text: str, regs: dict[str, list[int]], gm: bytes, generic: bool, **config: int
) -> object:
    """What a warm run of ``text`` leaves -- ("ran",) or the fault's class and text, then
    the whole machine -- on a machine of ``config`` whose GM starts as ``gm`` and whose
    GPRs hold ``regs`` (a list per register, one value per PE). A first run prepares
    each bundle's plan (only a prepared plan takes a fused form); ``generic`` traces the
    run, which takes the generic runners: a fused form must leave the same."""
    program = prog(text)
    with contextlib.suppress(MachineFault):
        Machine(MachineConfig(**config)).run(program)
    m = Machine(MachineConfig(**config))
    m.load_gm(0, np.frombuffer(gm, np.uint8))
    for reg, values in regs.items():
        for pe, v in enumerate(values[: m.config.pes]):  # (a smaller machine: its PEs)
            m.set_gpr(reg, v, pe=pe)
    try:
        m.run(program, trace=generic)
        out: tuple[object, ...] = ("ran",)
    except MachineFault as f:
        out = ("fault", type(f).__name__, str(f))
    return (*out, m.snapshot())


def counted_outcomes(
    text: str,
    regs: dict[str, list[int]],
    gm: bytes,
    tables: list[dict],
    **config: int,  # type: ignore[type-arg]
) -> tuple[object, object, list[str]]:
    """:func:`warm_outcome` of ``text`` with the fused forms and without them, and the
    names of the ``tables``' functions (dictionaries of ufuncs a lean form looks up as it
    runs, e.g. ``integer_fused.INT_UFUNCS``) that the fused run called, in order; every
    plan is built afresh (equal bundles share one)."""
    from unittest import mock

    from ptoc.runtime.bundle import build_plan

    calls: list[str] = []
    build_plan.cache_clear()
    with contextlib.ExitStack() as stack:
        for table in tables:
            stack.enter_context(mock.patch.dict(table, {
                op: (lambda *a, op=op, f=f, **k: calls.append(op) or f(*a, **k))
                for op, f in table.items()
            }))  # fmt: skip
        fused = warm_outcome(text, regs, gm, False, **config)
    return fused, warm_outcome(text, regs, gm, True, **config), calls


def count_builds(monkeypatch, module) -> list[str]:  # type: ignore[no-untyped-def]
    """The names of the bundles whose tiles ``module``'s ``build_tile`` builds from now
    on (a fused form calls it through its module)."""
    built: list[str] = []
    real = module.build_tile

    def counting(*args, **kw):  # type: ignore[no-untyped-def]
        built.append(args[1])
        return real(*args, **kw)

    monkeypatch.setattr(module, "build_tile", counting)
    return built


def count_generic(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The names of the bundles the generic path executes (``machine.execute``) from now
    on (a fused form or a kept result runs none)."""
    from ptoc.runtime import machine

    seen: list[str] = []
    real = machine.execute

    def counted(state, plan):  # type: ignore[no-untyped-def]
        seen.append(plan.name)
        return real(state, plan)

    monkeypatch.setattr(machine, "execute", counted)
    return seen


#: 64-bit words whose low bits are special encodings of the float types (+-0, +-inf,
#: quiet and signalling NaN payloads, the smallest subnormals, 1.0 and 2.0) and small
#: integers; placed among random bytes they reach every element width
SPECIAL_WORDS = [
    0, 1 << 63, 0x7F800000, 0xFF800000, 0x7FC00001, 0x7F800001, 0x00000001, 0x80000000,
    0x7C00, 0xFC00, 0x7E01, 0x7D00, 0x0001, 0x8000, 0x7F80, 0x7FC1, 0x7F81,
    0x7FF0000000000000, 0x7FF8000000000001, 0x7FF0000000000001, 0x0000000000000001,
    0xFFFFFFFFFFFFFFFF, 0x3F800000, 0x4000, 0x3C00, 0x3FF0000000000000, 31, 63, 64, 65,
]  # fmt: skip


def special_gm(raw: bytes, size: int) -> bytes:
    """``size`` bytes of GM: ``raw`` (random bytes: every binade) followed by
    :data:`SPECIAL_WORDS`, repeated (so equal values recur: ties and duplicates)."""
    specials = b"".join(w.to_bytes(8, "little") for w in SPECIAL_WORDS)
    unit = raw + specials
    return (unit * (size // len(unit) + 1))[:size]


def valid_words(gm: bytes) -> bytes:
    """``gm`` with the low 16 bits of every 32-bit word cleared: valid TF32 and HF32
    encodings (whose low fraction bits must be zero), so such tiles load."""
    words = np.frombuffer(gm, "<u4") & np.uint32(0xFFFF0000)
    return words.astype("<u4").tobytes()


def tload_tile(
    dt: DataType, vr: int, vc: int, col: int, size: str, *, base: str, mask: str, hand: str,
    stride: str = "s0",
) -> str:  # fmt: skip
    """A TLOAD bundle of a ``vr`` x ``vc`` tile of Col ``col`` and TSize ``size`` from
    ``base`` (per PE) with row stride ``stride``."""
    return f"""\
        BSTART.TLOAD {dt.name}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOR {base}, {stride}
        B.IOT mask={mask}, last, ->{hand}<{size}>
        BSTOP
        """


#: one TLOAD source of :func:`two_loads_then`: (DataType, valid rows, valid columns,
#: hand, row stride register)
Load = tuple[DataType, int, int, str, str]


def two_loads_then(
    name: str, dt: DataType, a: Load, b: Load, rows: int, cols: int, refs: str,
    load_mask: str, mask: str, repeat: int,
) -> tuple[str, int, int]:  # fmt: skip
    """Two TLOADs (``a`` from a0, ``b`` from a1, each of Col :func:`whole_rows_col` and
    the smallest TSize), then ``repeat`` BSTART.SFU ``name`` bundles of ``dt`` binding
    ``refs`` into a ``rows`` x ``cols`` destination; returns the program and the bytes
    its sources and each destination take."""
    from ._progs import size_name, smallest_size

    text, loads = "", 0
    for base, (ldt, vr, vc, hand, stride) in (("a0", a), ("a1", b)):
        col = whole_rows_col(ldt, vc)
        code = smallest_size(ldt, vr, col)
        text += tload_tile(ldt, vr, vc, col, size_name(code), base=base, mask=load_mask,
                           hand=hand, stride=stride)  # fmt: skip
        loads += 64 << code
    dcol = whole_rows_col(dt, cols)
    dcode = smallest_size(dt, rows, dcol)
    text += (
        f"""\
        BSTART.SFU {name}, {dt.name}
        C.B.DIMI {cols}, ->LB0
        C.B.DIMI {rows}, ->LB1
        C.B.DIMI {dcol}, ->LB2
        B.IOT {refs}, mask={mask}, last, ->U<{size_name(dcode)}>
        BSTOP
        """
        * repeat
    )
    return text, loads, 64 << dcode


def small_machines(data, loads: int, dest: int) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """A machine shape for ``warm_outcome`` drawn by ``data`` (a hypothesis ``st.data()``)
    for a program whose sources take ``loads`` bytes per PE and whose every destination
    ``dest``: mostly the default core, sometimes fewer PEs (masks past them fault) or
    Local capacity for the sources and at most three destinations (a later push
    faults: full queues); always queues of depth 4."""
    from hypothesis import strategies as st

    pes = data.draw(st.sampled_from([4, 4, 4, 2]))
    capacity = 1 << 18
    if data.draw(st.integers(0, 3)) == 0:
        capacity = loads + dest * data.draw(st.integers(0, 3))
    return {"gm_size": 1 << 16, "depth": 4, "pes": pes, "capacity": capacity}


def count_fused(monkeypatch, module) -> list[str]:  # type: ignore[no-untyped-def]
    """The names of the tiles ``module``'s fused forms publish from now on (each calls
    ``push_fused`` through its module; a form that falls back publishes none)."""
    published: list[str] = []
    real = module.push_fused

    def counting(state, hand, tile, *args):  # type: ignore[no-untyped-def]
        ok = real(state, hand, tile, *args)
        if ok:
            published.append("predicate" if tile.dtype is None else tile.dtype.name)
        return ok

    monkeypatch.setattr(module, "push_fused", counting)
    return published


def pe_scalars(data, words=None) -> list[int]:  # type: ignore[no-untyped-def]
    """Four per-PE 64-bit scalar words drawn from ``words`` (default: the special
    encodings and any word), every PE the same half of the time (a kernel's usual case)."""
    from hypothesis import strategies as st

    if words is None:
        words = st.one_of(st.sampled_from(SPECIAL_WORDS), st.integers(0, (1 << 64) - 1))
    scalars = data.draw(st.lists(words, min_size=4, max_size=4))
    if data.draw(st.booleans()):
        scalars = [scalars[0]] * 4
    return scalars  # type: ignore[no-any-return]


def publish_as_ints(m: Machine, per_pe: bool) -> None:
    """Give ``m``'s GPRs the form an integer scalar block publishes (Python integers,
    one list for every PE when they all hold the same and not ``per_pe``, else a list
    per PE; the array kept read-only beside them): what a kernel's fused forms read
    after its first scalar block."""
    arr = m.state.gpr.copy()
    arr.flags.writeable = False
    rows = arr.tolist()
    one = not per_pe and all(r == rows[0] for r in rows)
    m.state.publish_gprs(arr, [rows[0]] if one else rows)


def warm_outcome_ints(
    text: str, regs: dict[str, list[int]], gm: bytes, per_pe: bool, **config: int
) -> object:
    """:func:`warm_outcome` of an untraced run whose GPRs have the integer form
    (:func:`publish_as_ints`)."""
    program = prog(text)
    with contextlib.suppress(MachineFault):
        Machine(MachineConfig(**config)).run(program)
    m = Machine(MachineConfig(**config))
    m.load_gm(0, np.frombuffer(gm, np.uint8))
    for reg, values in regs.items():
        for pe, v in enumerate(values[: m.config.pes]):
            m.set_gpr(reg, v, pe=pe)
    publish_as_ints(m, per_pe)
    try:
        m.run(program)
        out: tuple[object, ...] = ("ran",)
    except MachineFault as f:
        out = ("fault", type(f).__name__, str(f))
    return (*out, m.snapshot())
