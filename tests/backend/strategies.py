"""Hypothesis strategies for commands of every form and for whole programs."""

from __future__ import annotations

from hypothesis import strategies as st

from ptoc.backend.isa import DTYPE_NONE, OPS, DataType, Family, catalog, scalar_form
from ptoc.backend.isa.fields import LAYOUT_NAMES, PEMODE_TO_MASK, Hand
from ptoc.backend.program import (
    Command,
    Datr,
    Dim,
    Generic,
    Ior,
    Ios,
    Iot,
    Program,
    Scalar,
    ScalarStart,
    Stop,
    TileRef,
    TileStart,
)

DTYPES = [int(d) for d in DataType]
GPR = st.integers(0, 23)
MASKS = st.sampled_from(PEMODE_TO_MASK)


@st.composite
def tile_starts(draw: st.DrawFn) -> TileStart:
    o = draw(st.sampled_from(sorted(OPS.values(), key=lambda o: o.mnemonic)))
    dts = DTYPES + ([DTYPE_NONE] if o.mnemonic == "TMOV" else [])
    return TileStart(o.family, o.selector, draw(st.sampled_from(dts)))


@st.composite
def raw_tepl_starts(draw: st.DrawFn) -> TileStart:
    return TileStart(Family.TEPL, draw(st.integers(0, 127)), draw(st.sampled_from(DTYPES)))


tile_refs = st.builds(TileRef, st.sampled_from(list(Hand)), st.integers(1, 16))


@st.composite
def iots(draw: st.DrawFn) -> Iot:
    n = draw(st.integers(0, 2))
    has_dst = True if n == 0 else draw(st.booleans())
    srcs = tuple(draw(tile_refs) for _ in range(n))
    dst = draw(st.sampled_from(list(Hand))) if has_dst else None
    size = draw(st.integers(1, 10)) if has_dst else 0
    return Iot(srcs, draw(MASKS), draw(st.booleans()), dst, size)


datrs = st.builds(
    Datr,
    st.sampled_from(sorted(LAYOUT_NAMES)),
    st.sampled_from([*DTYPES, DTYPE_NONE]),
    st.integers(0, 3),
    st.integers(0, 5),
    st.integers(0, 7),
    st.integers(0, 1),
    st.integers(0, 1),
)
dims = st.one_of(
    st.builds(Dim, st.integers(0, 2), GPR, st.integers(0, (1 << 17) - 1)),
    st.builds(lambda lb, imm: Dim(lb, 0, imm, True), st.integers(0, 2), st.integers(0, 255)),
)
iors = st.builds(Ior, GPR, GPR, GPR, GPR)
ioss = st.builds(Ios, st.integers(0, 255), MASKS, st.integers(0, 12))
scalar_starts = st.one_of(
    st.builds(ScalarStart, st.sampled_from(["STD", "FP", "SYS"]), st.just("FALL")),
    st.builds(
        ScalarStart,
        st.sampled_from(["STD", "FP"]),
        st.sampled_from(["COND", "DIRECT"]),
        st.integers(-(1 << 16), (1 << 16) - 1),
    ),
    st.builds(ScalarStart, st.sampled_from(["STD", "FP"]), st.sampled_from(["RET", "IND"])),
)


def _field_values(draw: st.DrawFn, fields, gpr_fields=()) -> tuple[tuple[str, int], ...]:
    out = []
    for fd in fields:
        if fd.name in gpr_fields:
            v = draw(GPR)
        elif fd.allowed is not None:
            v = draw(st.sampled_from(sorted(fd.allowed)))
        elif fd.signed:
            v = draw(st.integers(-(1 << (fd.width - 1)), (1 << (fd.width - 1)) - 1))
        else:
            v = draw(st.integers(0, (1 << fd.width) - 1))
        if fd.excluded is not None and v == fd.excluded:
            v = 0 if fd.excluded else 1
        out.append((fd.name, v))
    return tuple(out)


@st.composite
def scalars(draw: st.DrawFn) -> Scalar:
    mnemonic = draw(st.sampled_from(sorted(f.mnemonic for f in catalog.SCALAR_FORMS)))
    f = scalar_form(mnemonic)
    return Scalar(f.mnemonic, _field_values(draw, f.fields, ("RegDst", "SrcL", "SrcR")))


@st.composite
def generics(draw: st.DrawFn) -> Generic:
    forms = [f for f in catalog.COMMAND_FORMS if f.mnemonic in ("B.CATR", "B.HINT", "B.FPATR")]
    f = draw(st.sampled_from(forms))
    return Generic(f.form_id, _field_values(draw, f.fields))


#: every form the catalog encodes (header, boundary and scalar)
ALL_FORMS = (*catalog.COMMAND_FORMS, *catalog.SCALAR_FORMS)


def reserved_values(fd) -> list[int]:  # type: ignore[no-untyped-def]
    """Raw field values that a form's constraint reserves (a sample for wide fields)."""
    top = 1 << fd.width
    if fd.allowed is None and fd.excluded is None:
        return []
    candidates = range(top) if top <= 256 else [1, 2, 3, top // 2, top - 1]
    return [v for v in candidates if not fd.legal(v)]


@st.composite
def form_words(draw: st.DrawFn) -> tuple[int, int]:
    """``(word, bits)`` matching a catalog form's fixed bits, its fields drawn from their
    legal values, their reserved values and anything, and sometimes the unassigned bits
    set (the DstTile bits of a source-only B.IOT)."""
    from ptoc.backend.encoding import unassigned_bits

    f = draw(st.sampled_from(ALL_FORMS))
    word = f.match
    for fd in f.fields:
        options = [st.integers(0, (1 << fd.width) - 1)]
        if fd.allowed is not None:
            options.append(st.sampled_from(sorted(fd.allowed)))
        bad = reserved_values(fd)
        if bad:
            options.append(st.sampled_from(bad))
        word |= fd.insert(draw(st.one_of(options)))
    word = (word & ~f.mask) | f.match  # B.FPATR's opcode "fields" overlap the fixed bits
    spare = unassigned_bits(f)
    if spare and draw(st.integers(0, 3)) == 0:
        word |= draw(st.integers(1, spare)) & spare
    return word, f.length_bits


def _decoded(wb: tuple[int, int]) -> Command | None:
    from ptoc.backend.encoding import decode_command

    return decode_command(*wb)


#: commands as the decoder builds them from any word, including every reserved field
#: value (those print as raw ``.word`` / ``.half`` text) and C.SETRET
decoded_commands: st.SearchStrategy[Command] = (
    form_words().map(_decoded).filter(lambda c: c is not None)  # type: ignore[arg-type]
)

commands: st.SearchStrategy[Command] = st.one_of(
    decoded_commands,
    tile_starts(),
    raw_tepl_starts(),
    scalar_starts,
    st.builds(Stop, st.booleans()),
    datrs,
    dims,
    iors,
    iots(),
    ioss,
    scalars(),
    generics(),
)
programs = st.lists(commands, max_size=40).map(lambda cs: Program(tuple(cs)))
