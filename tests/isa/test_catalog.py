"""Seed facts about selectors, engines and types, pinned against the generated catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptoc.backend.isa import OPS, DataType, Engine, Family, generate, op, op_by_selector

D = DataType
ARITH16 = {D.FP64, D.FP32, D.TF32, D.HF32, D.FP16, D.BF16, D.E4M3, D.E5M2,
           D.S64, D.S32, D.S16, D.S8, D.U64, D.U32, D.U16, D.U8}  # fmt: skip


def test_catalog_is_fresh() -> None:
    """The checked-in catalog equals what the generator makes from the spec files."""
    spec = generate.DEFAULT_SPEC
    if not spec.is_dir():
        pytest.skip(f"the PTO-ISA spec catalogs are not next to the repository ({spec})")
    assert generate.CATALOG_PATH.read_text() == generate.generate(spec), (
        "backend/isa/catalog.py is stale: run python -m ptoc.backend.isa.generate"
    )


def test_tadd_is_vec_mode0_function0_with_sixteen_arithmetic_types() -> None:
    tadd = op("TADD")
    assert (tadd.engine, tadd.mode, tadd.function, tadd.selector) == (Engine.VEC, 0, 0, 0)
    assert set(tadd.dtypes) == ARITH16  # seed S2 overrides the 0.58.3 nine-type list
    assert tadd.datr_fields == {"PadValueOrByteId"}
    assert not tadd.ior_legal and not tadd.ios_legal
    lb = {d.lb: d for d in tadd.dims}
    assert lb[0].required and lb[1].default == "1" and lb[2].default == "ValidCol"


def test_trowexpandmin_is_sfu_2_10() -> None:
    o = op("TROWEXPANDMIN")
    assert (o.engine, o.mode, o.function, o.selector_text) == (Engine.SFU, 2, 10, "0x04A")
    assert set(o.dtypes) == ARITH16
    assert o.datr_fields == {"PadValueOrByteId"}


@pytest.mark.parametrize(
    ("mnemonic", "function", "types"),
    [
        ("TQUANT", 10, {D.FP32}),
        ("TDEQUANT", 11, {D.S8, D.U8}),
        ("TSORT", 12, {D.FP32, D.FP16}),
        ("TMRGSORT", 13, {D.FP32, D.FP16}),
        ("TTRANS", 14, set(DataType) - {D.HiF4X2}),
        ("TGATHER", 15, {D.FP32, D.FP16, D.S32, D.S16, D.U32, D.U16}),
        ("TSCATTER", 16, {D.FP32, D.S32, D.U32, D.FP16, D.BF16, D.S16, D.U16, D.S8, D.U8}),
        ("TPARTADD", 17, {D.FP32, D.FP16, D.BF16, D.S32, D.S16, D.S8, D.U32, D.U16, D.U8}),
        # the seed is silent on TPARTMUL's types; the ASL predicate
        # (TilePartialDataTypeSupportedForOperation) admits S8/U8 too, and wins (D9)
        ("TPARTMUL", 18, {D.FP32, D.FP16, D.BF16, D.S32, D.S16, D.S8, D.U32, D.U16, D.U8}),
        ("TPARTMAX", 19, {D.FP32, D.FP16, D.BF16, D.S32, D.S16, D.S8, D.U32, D.U16, D.U8}),
        ("TPARTMIN", 20, {D.FP32, D.FP16, D.BF16, D.S32, D.S16, D.S8, D.U32, D.U16, D.U8}),
    ],
)
def test_adr0083_selectors_and_types(mnemonic: str, function: int, types: set) -> None:
    o = op(mnemonic)
    assert (o.engine, o.mode, o.function) == (Engine.SFU, 3, function)
    assert op_by_selector(Family.TEPL, 3 << 5 | function) is o
    assert set(o.dtypes) == types
    assert not o.ios_legal


def test_adr0083_type_rules() -> None:
    assert op("TQUANT").type_rules["dst"] == {D.S8, D.U8}
    assert op("TQUANT").datr_required and op("TDEQUANT").datr_required
    assert op("TGATHER").type_rules["index"] == {D.S32, D.U32}
    pairs = op("TSCATTER").type_pairs
    assert (D.FP32, D.U32) in pairs and (D.FP32, D.U16) not in pairs
    assert (D.S8, D.S16) in pairs and (D.S8, D.S32) not in pairs
    assert op("TSORT").type_rules["index"] == {D.U32}
    sort_lb0 = op("TSORT").dims
    assert [(d.lb, d.default, d.zero_legal) for d in sort_lb0] == [(0, "32", True)]
    assert op("TMRGSORT").dims == ()
    assert op("TTRANS").dims[0].meaning == "destination ValidCol"


def test_tquant_bior_defaults_are_one_and_zero() -> None:
    slots = op("TQUANT").ior
    assert [(s.field, s.default) for s in slots] == [("RegSrc0", 0x3F800000), ("RegSrc1", 0)]


def test_every_tepl_selector_is_unique_and_not_reserved() -> None:
    from ptoc.backend.isa import RESERVED_TEPL_SELECTORS

    tepl = [o for o in OPS.values() if o.family is Family.TEPL]
    assert len(tepl) == 87
    assert len({o.selector for o in tepl}) == 87
    assert not {o.selector for o in tepl} & RESERVED_TEPL_SELECTORS


def test_generator_is_in_backend_isa() -> None:
    # one source of truth: the generator and its overrides live in backend/isa
    assert Path(generate.__file__).parent.name == "isa"
