"""Inputs of the catalog generator that the 0.58.3 JSON catalogs do not carry, or carry
differently from the seeds (DECISIONS D4: seeds > decisions > 0.58.3 catalog).

Only ``generate.py`` reads this module; everything else reads the generated
``catalog.py``. Every entry says which sentence it comes from.
"""

from __future__ import annotations

from .datatypes import DataType as D

#: the seed "arithmetic" type set (TileVecArithmeticDataTypeSupported, seeds S1/S2)
ARITH16 = frozenset(
    {
        D.FP64, D.FP32, D.TF32, D.HF32, D.FP16, D.BF16, D.E4M3, D.E5M2,
        D.S64, D.S32, D.S16, D.S8, D.U64, D.U32, D.U16, D.U8,
    }
)  # fmt: skip
ALL_ASSIGNED = frozenset(D)

#: Legal BSTART DataTypes that seed sentences state (D4). They win over the ASL
#: predicate sets of ``asl_type_sets.py`` (D9), which win over the contract prose.
DTYPES: dict[str, tuple[frozenset[D], str]] = {
    "TADD": (
        ARITH16,
        "seed S2: TADD accepts FP64, FP32, TF32, HF32, FP16, BF16, E4M3, "
        "E5M2, S64, S32, S16, S8, U64, U32, U16, U8 (0.58.3 had nine types)",
    ),
    "TSORT": (
        frozenset({D.FP32, D.FP16}),
        "seed D135: the exact supported value DataTypes are FP32 and FP16",
    ),
    "TMRGSORT": (
        frozenset({D.FP32, D.FP16}),
        "seed D136: the exact supported DataTypes are FP32 and FP16",
    ),
    "TQUANT": (frozenset({D.FP32}), "seed D133: the source DataType is exactly FP32"),
    "TDEQUANT": (frozenset({D.S8, D.U8}), "seed D134: the source DataType is exactly S8 or U8"),
    "TTRANS": (
        ALL_ASSIGNED - {D.HiF4X2},
        "seed D137: every assigned Tile DataType except HiF4X2 is supported",
    ),
    "TGATHER": (
        frozenset({D.FP32, D.FP16, D.S32, D.S16, D.U32, D.U16}),
        "seed D138: the exact value DataTypes are FP32, FP16, S32, S16, U32 and U16",
    ),
    "TSCATTER": (
        frozenset({D.FP32, D.S32, D.U32, D.FP16, D.BF16, D.S16, D.U16, D.S8, D.U8}),
        "seed D139: FP32/S32/U32, FP16/BF16/S16/U16 and S8/U8 values",
    ),
    "TPARTADD": (
        frozenset({D.FP32, D.FP16, D.BF16, D.S32, D.S16, D.S8, D.U32, D.U16, D.U8}),
        "seed D140: FP32, FP16, BF16, S32, S16, S8, U32, U16 and U8",
    ),
    "TROWEXPAND": (
        ARITH16,
        "seed S1: the row-expansion family accepts the 16 arithmetic types",
    ),
}
for _m in ("ADD", "SUB", "MUL", "DIV", "MAX", "MIN"):
    DTYPES[f"TROWEXPAND{_m}"] = (ARITH16, "seed S1: row-expansion family, 16 arithmetic types")

#: Further type rules that seed sentences state: what they constrain -> types. They win
#: over the ASL's rules of ``asl_type_sets.ASL_TYPE_RULES`` (D4).
TYPE_RULES: dict[str, dict[str, frozenset[D]]] = {
    "TQUANT": {"dst": frozenset({D.S8, D.U8})},  # seed D133
    "TDEQUANT": {"dst": frozenset({D.FP32})},  # seed D134
    "TSORT": {"index": frozenset({D.U32})},  # seed D135: a U32 index destination
    "TGATHER": {"index": frozenset({D.S32, D.U32})},  # seed D138
    "TSCATTER": {"index": frozenset({D.S16, D.U16, D.S32, D.U32})},  # seed D139
}

_W32 = (D.FP32, D.S32, D.U32)
_W16 = (D.FP16, D.BF16, D.S16, D.U16)
#: (value, index) pairs of TSCATTER: seed D139 pairs the index width with the value width.
TYPE_PAIRS: dict[str, frozenset[tuple[D, D]]] = {
    "TSCATTER": frozenset(
        [(v, i) for v in _W32 for i in (D.S32, D.U32)]
        + [(v, i) for v in (*_W16, D.S8, D.U8) for i in (D.S16, D.U16)]
    ),
}

#: Dimension meanings where the contract text is generic ("B.DIM LB0; B.DIM (LB1/LB2 for 2D)").
#: Each entry: (lb, meaning, required, default).
DIMS: dict[str, tuple[tuple[int, str, bool, str | None], ...]] = {
    "TTRANS": (
        (0, "destination ValidCol", True, None),
        (1, "destination ValidRow", False, "1"),
        (2, "destination physical Col", False, "ValidCol"),
    ),
    "TMRGSORT": (),
    "THISTOGRAM": (),
    "GMOV": (),
    # the block line spells "LB0/ValidCol"; its defaults sentence makes every LB optional
    # ("omitted LB0 and LB1 each select one, and omitted LB2 selects resolved ValidCol")
    "TPREFETCH": (
        (0, "ValidCol", False, "1"),
        (1, "ValidRow", False, "1"),
        (2, "Col", False, "ValidCol"),
    ),
}
for _m in (
    "TMATMUL",
    "TMATMUL_BIAS",
    "TMATMUL_ACC",
    "TMATMUL_MX",
    "TMATMUL_MX_BIAS",
    "TMATMUL_MX_ACC",
):
    DIMS[_m] = ((0, "M", False, "1"), (1, "N", False, "1"), (2, "K", False, "1"))
for _m in ("TGEMV", "TGEMV_BIAS", "TGEMV_ACC", "TGEMV_MX", "TGEMV_MX_BIAS", "TGEMV_MX_ACC"):
    DIMS[_m] = ((0, "M (only 1)", False, "1"), (1, "N", False, "1"), (2, "K", False, "1"))

#: B.IOR omission defaults (raw GPR values) that the contract states in prose; None means
#: the default is derived from the descriptor (the dense row stride of TLOAD/TSTORE).
IOR_DEFAULTS: dict[str, dict[str, int | None]] = {
    "TLOAD": {"address": 0, "scalar0": None},  # base zero, dense rows ceil(Col*bits/8)
    "TSTORE": {"address": 0, "scalar0": None},
    "TPREFETCH": {"address": 0, "scalar0": None},
    "TQUANT": {"scalar0": 0x3F800000, "scalar1": 0},  # seed D133: multiplier 1.0, zero point 0
    "TDEQUANT": {"scalar0": 0x3F800000, "scalar1": 0},  # seed D134
}

#: B.IOR slot order: "address, scalar0, scalar1, diagonal, flag0, densely packed into
#: RegSrc0..2" (B.IOR.asl); natural offsets follow the scalars.
IOR_SLOT_ORDER = ("address", "scalar0", "scalar1", "natural0", "natural1", "diagonal", "flag0")

#: Seed notes attached to the catalog rows (shown by ``ptoc isa``).
SEED_NOTES: dict[str, tuple[str, ...]] = {
    "TQUANT": ("B.DATR is mandatory; omitted B.IOR selects multiplier 1.0 and zero point 0, an "
               "explicit all-zero B.IOR reads multiplier 0.0 and is illegal (seed D133)",),
    "TSORT": ("sort_width LB0 in 1..64; omission and encoded zero both select 32 (seed D135)",),
    "TMRGSORT": ("unsorted input makes the whole block illegal; ties select the left source "
                 "(seed D136)",),
    "TSCATTER": ("duplicate destinations are illegal; the destination, padding included, "
                 "starts as zero (seed D139)",),
}  # fmt: skip
