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


commands: st.SearchStrategy[Command] = st.one_of(
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
