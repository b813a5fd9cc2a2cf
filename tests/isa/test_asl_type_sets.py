"""The ASL type-set data (``asl_type_sets``) and how the catalog applies it (DECISIONS D9).

Every operation of the catalog has an entry naming the ASL predicate its BSTART DataTypes
were read from (or why it has none), and the generated rows follow the precedence seeds
(D4) > ASL predicate (D9) > contract prose. The expected sets below are written out by
hand from the predicates of PTO-ISA/pto-spec 0.58.3 (and the facts its conformance tests
assert), independently of the module under test.
"""

from __future__ import annotations

import pytest

from ptoc.backend.isa import OPS, DataType, op
from ptoc.backend.isa import seed_overrides as so
from ptoc.backend.isa.asl_type_sets import ASL_DTYPES, ASL_TYPE_PAIRS, ASL_TYPE_RULES

D = DataType
ARITH16 = {D.FP64, D.FP32, D.TF32, D.HF32, D.FP16, D.BF16, D.E4M3, D.E5M2,
           D.S64, D.S32, D.S16, D.S8, D.U64, D.U32, D.U16, D.U8}  # fmt: skip
INT8 = {D.S64, D.S32, D.S16, D.S8, D.U64, D.U32, D.U16, D.U8}
FLOAT8 = {D.FP64, D.FP32, D.TF32, D.HF32, D.FP16, D.BF16, D.E4M3, D.E5M2}
A9 = {D.FP32, D.FP16, D.BF16, D.S32, D.S16, D.S8, D.U32, D.U16, D.U8}
PACKED4 = {D.E2M1X2, D.E1M2X2, D.HiF4X2, D.S4X2, D.U4X2}
WIDE64 = {D.FP64, D.S64, D.U64}


def test_every_operation_has_exactly_one_entry() -> None:
    assert set(ASL_DTYPES) == set(OPS)


@pytest.mark.parametrize("name", sorted(OPS))
def test_entry_names_its_predicate_or_why_there_is_none(name: str) -> None:
    e = ASL_DTYPES[name]
    assert e.predicate
    if e.types is None:
        assert e.note, f"{name}: an entry without a set must say why"
    else:
        assert e.types, f"{name}: an ASL set is never empty"


@pytest.mark.parametrize("name", sorted(OPS))
def test_catalog_applies_seeds_then_asl_then_prose(name: str) -> None:
    o, e = op(name), ASL_DTYPES[name]
    if name in so.DTYPES:
        assert o.dtypes == so.DTYPES[name][0]
        assert o.dtype_source == so.DTYPES[name][1]
        assert o.dtype_source.startswith("seed ")
    elif e.types is not None:
        assert o.dtypes == e.types
        assert o.dtype_source == f"ASL {e.predicate}"
    else:
        assert o.dtype_source.startswith("contract prose")


# ---------------------------------------------------------------- the sets, by hand

EXPECTED = {
    **{m: ARITH16 for m in ("TADD", "TSUB", "TMUL", "TDIV", "TREM", "TMAX", "TMIN")},
    **{m: ARITH16 for m in ("TABS", "TNEG", "TRELU", "TCMP", "TSEL", "TFMA")},
    **{m: INT8 for m in ("TAND", "TOR", "TXOR", "TSHL", "TSHR", "TNOT")},
    **{m: FLOAT8 for m in ("TEXP", "TLOG", "TRECIP", "TSQRT", "TRSQRT")},
    **{m + "S": ARITH16 for m in ("TADD", "TSUB", "TMUL", "TDIV", "TREM", "TMAX", "TMIN")},
    **{m: INT8 for m in ("TANDS", "TORS", "TXORS", "TSHLS", "TSHRS")},
    "TCMPS": ARITH16,
    "TSELS": ARITH16,
    "TEXPANDS": ARITH16,
    **{f"T{a}{o}": ARITH16 for a in ("ROW", "COL") for o in ("SUM", "MAX", "MIN", "PROD")},
    **{f"T{a}{o}": A9 for a in ("ROW", "COL") for o in ("ARGMAX", "ARGMIN")},
    **{
        f"T{a}EXPAND{o}": ARITH16
        for a in ("ROW", "COL")
        for o in ("", "ADD", "SUB", "MUL", "DIV", "MAX", "MIN")
    },
    **{f"T{a}EXPANDEXPDIF": {D.FP16, D.BF16, D.FP32} for a in ("ROW", "COL")},
    **{m: set(D) - {D.HiF4X2} for m in ("TCONCAT", "TEXTRACT", "TINSERT", "TTRANS")},
    "TFILLPAD": ARITH16 - {D.FP64, D.S64, D.U64},
    "TIMG2COL": A9,
    "TMOV": set(D),
    "TCVT": set(D),
    "TCI": {D.S32, D.S16, D.U32, D.U16},
    "TTRI": {D.FP32, D.FP16, D.S32, D.S16, D.U32, D.U16},
    "THISTOGRAM": {D.U16, D.U32},
    "TSORT": {D.FP32, D.FP16},
    "TMRGSORT": {D.FP32, D.FP16},
    **{m: A9 for m in ("TPARTADD", "TPARTMUL", "TPARTMAX", "TPARTMIN")},
    "TQUANT": {D.FP32},
    "TDEQUANT": {D.S8, D.U8},
    "TGATHER": set(D) - PACKED4,
    "TSCATTER": set(D) - PACKED4,
    "TLOAD": set(D),
    "TSTORE": set(D),
    "TPREFETCH": set(D) - WIDE64,
    "GMOV": set(D) - WIDE64,
    **{
        m: set(D) - PACKED4
        for m in ("MGATHER", "MSCATTER", "MGATHER_MASK", "MSCATTER_MASK", "MGATHER_CAS")
    },
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_asl_sets_are_the_predicates(name: str) -> None:
    e = ASL_DTYPES[name]
    if op(name).family.value == "CUBE":
        assert e.types is None
        return
    assert e.types == EXPECTED[name], name


@pytest.mark.parametrize(
    ("name", "legal", "illegal"),
    [
        # facts the pto-spec conformance tests assert of the predicates
        ("TEXP", {D.FP32, D.FP16, D.BF16, D.FP64, D.E4M3, D.E5M2},
         {D.U64, D.E8M0, D.E3M2, D.U4X2}),
        ("TSQRT", {D.FP64}, {D.S32}),
        ("TLOG", {D.E4M3}, {D.HiF8}),
        ("TRECIP", {D.E4M3}, set()),
        ("TRSQRT", {D.E4M3}, set()),
        ("TREM", {D.S64, D.FP32}, {D.HiF8}),
        ("TDIV", {D.S64, D.U64}, set()),
        ("TAND", {D.U64}, {D.E3M2, D.FP64, D.U4X2}),
        ("TOR", set(), {D.HF32}),
        ("TXOR", {D.U16}, set()),
        ("TSEL", {D.FP64, D.U64, D.BF16}, {D.HiF8, D.E3M2, D.E2M3, D.E8M0}),
        ("TSELS", {D.FP32}, {D.HiF8}),
        ("TANDS", set(), {D.E2M3}),
        ("TORS", set(), {D.TF32}),
        ("TXORS", {D.S8}, set()),
        ("TROWEXPAND", {D.U64}, {D.HiF8}),
        ("TCOLEXPAND", {D.U32}, set()),
        ("TEXPANDS", {D.S64}, {D.E3M2}),
        ("TFILLPAD", {D.HF32}, set()),
        ("TEXTRACT", {D.BF16}, set()),
        ("TINSERT", {D.E2M3, D.FP64, D.U4X2}, set()),
        ("TTRANS", {D.S32}, set()),
        ("TIMG2COL", {D.U8}, {D.E3M2, D.FP64, D.U4X2}),
        ("GMOV", {D.TF32}, {D.FP64}),
        ("TPREFETCH", {D.FP32}, {D.FP64}),
        ("TLOAD", {D.FP32, D.FP64, D.U4X2}, set()),
        ("TSTORE", {D.BF16, D.FP64, D.U4X2}, set()),
        # the cases the issue names
        ("TMAX", {D.FP64, D.S64, D.U64, D.S8}, set()),
        ("TMIN", {D.FP64, D.S64, D.U64, D.S8}, set()),
        ("TSUB", {D.FP64, D.S64, D.U64, D.S8}, set()),
        ("TMUL", {D.FP64, D.S64, D.U64, D.S8}, set()),
        ("TFMA", {D.FP64, D.S64, D.U64, D.S8}, set()),
        ("TABS", {D.S8, D.U8, D.E4M3}, set()),
        ("TNEG", {D.U16, D.U64}, set()),
        ("TRELU", {D.S8, D.U32}, set()),
        ("TCMP", {D.U64}, set()),
        ("TCOLPROD", {D.U8}, set()),
        ("TPARTMUL", {D.S8, D.U8}, set()),
        ("TADDS", {D.FP64, D.U64}, set()),
    ],
)  # fmt: skip
def test_catalog_admits_what_the_asl_admits(name: str, legal: set, illegal: set) -> None:
    dtypes = op(name).dtypes
    assert legal <= dtypes, sorted(d.name for d in legal - dtypes)
    assert not illegal & dtypes, sorted(d.name for d in illegal & dtypes)


def test_seed_sets_are_the_seed_sentences_only() -> None:
    """seed_overrides.DTYPES holds seed sentences (D4) only; everything the ASL states
    lives in asl_type_sets (D9)."""
    for name, (_, why) in so.DTYPES.items():
        assert why.startswith("seed "), name


def test_where_a_seed_and_the_asl_agree_or_the_seed_narrows() -> None:
    """The seeds never admit a type the ASL rejects."""
    for name, (types, _) in so.DTYPES.items():
        asl = ASL_DTYPES[name].types
        assert asl is not None and types <= asl, name


@pytest.mark.parametrize("name", sorted(OPS))
def test_further_type_rules_are_the_asl_rules_or_a_seed_narrowing(name: str) -> None:
    o = op(name)
    asl = {k: v for k, (v, _) in ASL_TYPE_RULES.get(name, {}).items()}
    seed = so.TYPE_RULES.get(name, {})
    assert set(o.type_rules) == set(asl) | set(seed)
    for what, types in o.type_rules.items():
        if what in seed:
            assert types == seed[what] and (what not in asl or types <= asl[what])
        else:
            assert types == asl[what]
    pairs = ASL_TYPE_PAIRS.get(name)
    if name in so.TYPE_PAIRS:
        assert o.type_pairs == so.TYPE_PAIRS[name]
    else:
        assert o.type_pairs == (pairs[0] if pairs else frozenset())


def test_further_type_rules_by_hand() -> None:
    index64 = {D.S16, D.U16, D.S32, D.U32, D.S64, D.U64}
    assert ASL_TYPE_RULES["TGATHER"]["index"][0] == index64
    assert op("TGATHER").type_rules["index"] == {D.S32, D.U32}  # seed D138 narrows
    assert ASL_TYPE_RULES["TCVT"]["e8m0_sources"][0] == {D.FP16, D.BF16, D.FP32}
    for m in ("TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN"):
        assert op(m).type_rules["dst"] == {D.S32, D.U32}
    assert op("THISTOGRAM").type_rules == {"dst": {D.U32}, "filter": {D.U8}}
    expdif = {(D.FP16, D.FP16), (D.FP16, D.FP32), (D.BF16, D.BF16), (D.BF16, D.FP32),
              (D.FP32, D.FP32)}  # fmt: skip
    assert op("TROWEXPANDEXPDIF").type_pairs == expdif == op("TCOLEXPANDEXPDIF").type_pairs
    # seed D139 pairs are within the ASL's (value, index) domain
    values, index = ASL_DTYPES["TSCATTER"].types, ASL_TYPE_RULES["TSCATTER"]["index"][0]
    assert values is not None
    assert all(v in values and i in index for v, i in op("TSCATTER").type_pairs)
