"""The AVS tool's CUBE matrix-function, primary-operand and Shared-record bindings,
pinned on small ASL tests written here (a stand-in pto-spec tree)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the tool lives in the checkout, not the installed package
    sys.path.insert(0, str(ROOT))

from test_avs_model import ONE, TWO, bstart, one  # noqa: E402

from ptoc.backend.isa import DataType  # noqa: E402


def test_matrix_function_tables_and_shared_groups(tmp_path: Path) -> None:
    body = (
        "    assert TileMatrixFunctionIsGEMV(16) && TileMatrixFunctionIsGEMV(22);\n"
        "    assert !TileMatrixFunctionIsGEMV(19) && !TileMatrixFunctionIsGEMV(0);\n"
        "    assert !TileMatrixFunctionUsesBias(3) && TileMatrixFunctionUsesBias(21);\n"
        "    assert TileMatrixFunctionUsesAccumulator(6) && !TileMatrixFunctionUsesMX(2);\n"
        "    assert TileMatrixMathematicalSourceCount(\n"
        "        6, TileDataType_E4M3, TileDataType_E1M2X2) == 5;\n"
        "    assert TileMatrixMathematicalSourceCount(\n"
        "        4, TileDataType_FP16, TileDataType_BF16) == 2;\n"
        "    assert TileMatrixSharedSourceCountLegal(\n"
        "        4, TileDataType_FP16, TileDataType_E4M3, 2);\n"
        "    assert !TileMatrixSharedSourceCountLegal(\n"
        "        4, TileDataType_FP16, TileDataType_E4M3, 1);\n"
        "    assert !TileMatrixSharedSourceCountLegal(\n"
        "        16, TileDataType_FP16, TileDataType_FP16, 1);\n"
        "    assert TileMatrixLocalMathematicalSourceCount(\n"
        "        2, TileDataType_FP16, TileDataType_FP16, 1) == 2;\n"
        "    assert TileMatrixLocalMathematicalSourceCount(\n"
        "        6, TileDataType_E4M3, TileDataType_E4M3, 4) == 1;\n"
    )
    r = one(tmp_path, "functions", body)
    assert r.outcome == "passed", r


def test_an_unassigned_function_stops_at_the_asl_assertion(tmp_path: Path) -> None:
    body = (
        "    let n = TileMatrixMathematicalSourceCount(\n"
        "        3, TileDataType_FP16, TileDataType_FP16);\n"
    )
    r = one(tmp_path, "unassigned", body)
    # the ASL asserts TileMatrixFunctionAssigned: an evaluation error, never a pass
    assert r.outcome == "untranslated" and r.reason == "CUBE function 3 is not assigned", r


def test_cube_primaries_match_dimensions(tmp_path: Path) -> None:
    body = (
        "    assert ConfigureCubeTile(1, 128, 1, 2,\n"
        "        TileDataType_FP16, TileLayout_CUBE_M16, TileLocation_Matrix);\n"
        "    assert ConfigureCubeTile(2, 128, 2, 2,\n"
        "        TileDataType_FP16, TileLayout_CUBE_N8, TileLocation_Matrix);\n"
        "    assert !TileMatrixCubeInfosMatchDimensions(_Tiles[[1]], _Tiles[[2]], 1, 2, 2);\n"
        "    WriteTileElement(1, 0, 0, Zeros{64});\n"
        "    WriteTileElement(1, 0, 1, Zeros{64});\n"
        "    WriteTileElement(2, 0, 0, Zeros{64});\n"
        "    WriteTileElement(2, 0, 1, Zeros{64});\n"
        "    WriteTileElement(2, 1, 0, Zeros{64});\n"
        "    WriteTileElement(2, 1, 1, Zeros{64});\n"
        "    assert TileMatrixCubeInfosMatchDimensions(_Tiles[[1]], _Tiles[[2]], 1, 2, 2);\n"
        "    assert !TileMatrixCubeInfosMatchDimensions(_Tiles[[1]], _Tiles[[2]], 1, 2, 0);\n"
        "    assert !TileMatrixCubeInfosMatchDimensions(_Tiles[[2]], _Tiles[[1]], 2, 2, 1);\n"
        "    assert TileMatrixMLayoutLegal(TileLayout_CUBE_M32, 32);\n"
        "    assert !TileMatrixMLayoutLegal(TileLayout_CUBE_M16, 17);\n"
        "    assert !TileMatrixMLayoutLegal(TileLayout_CUBE_N8, 1);\n"
    )
    r = one(tmp_path, "primaries", body, source="asl/tile/x/y/TMATMUL.asl")
    assert r.outcome == "passed", r


def test_shared_records_before_any_commit_and_cube_layout_rejections(tmp_path: Path) -> None:
    body = (
        "    assert ConfigureCubeTile(0, 512, 16, 16,\n"
        "        TileDataType_FP16, TileLayout_CUBE_M16, TileLocation_Matrix);\n"
        "    assert !SharedTileUpdateCompatible(Zeros{8}, _Tiles[[0]], '0001');\n"
        "    assert SharedTileUpdateCompatible(Zeros{8}, _Tiles[[0]], '0000');\n"
        "    assert !SharedTileReadSchemaLegalAtCapacity(Zeros{8}, 16, 16, 16,\n"
        "        TileDataType_FP16, TileLayout_CUBE_M16, 512);\n"
        "    assert !SharedTileRecord(Zeros{8}).descriptor_valid;\n"
        "    assert SharedTileRecord('00000011').allocation_mask == '0000';\n"
        "    assert SharedTileCapacityInUse() == 0;\n"
    )
    r = one(tmp_path, "shared", body)
    assert r.outcome == "passed", r
    # a RowMajor write installs the register as ptoc's Shared register file holds it
    body = (
        "    ConfigureTile(0, 128, 1, 2, 1, 2, TileDataType_FP32,\n"
        "        TileLayout_RowMajor, TileLocation_Any);\n"
        f"    WriteTileElement(0, 0, 0, Zeros{{64}} + 0x{ONE:x});\n"
        f"    WriteTileElement(0, 0, 1, Zeros{{64}} + 0x{TWO:x});\n"
        "    assert SharedTileUpdateCompatible(Zeros{8} + 7, _Tiles[[0]], '1111');\n"
        "    assert !SharedTileRecord(Zeros{8} + 7).descriptor_valid;\n"
        "    InstallSharedTile(Zeros{8} + 7, _Tiles[[0]], '1111');\n"
        "    let rec = SharedTileRecord(Zeros{8} + 7);\n"
        "    assert rec.descriptor_valid && rec.published;\n"
        "    assert rec.allocation_mask == '1111' && rec.initialized_mask == '1111';\n"
        f"    assert rec.tile.payload[[1]] == Zeros{{64}} + 0x{TWO:x};\n"
        "    assert SharedTileFullyInitialized(Zeros{8} + 7);\n"
        "    assert SharedTileCapacityInUse() == 512;\n"
        # an allocated register keeps its descriptor and its allocation mask
        "    ConfigureTile(1, 128, 1, 1, 1, 1, TileDataType_FP32,\n"
        "        TileLayout_RowMajor, TileLocation_Any);\n"
        "    WriteTileElement(1, 0, 0, Zeros{64});\n"
        "    assert !SharedTileUpdateCompatible(Zeros{8} + 7, _Tiles[[1]], '1111');\n"
        "    assert !AtomicUpdateSharedTile(Zeros{8} + 7, _Tiles[[1]], '1111');\n"
        "    assert SharedTileCapacityInUse() == 512;\n"
    )
    r = one(tmp_path, "rowmajor", body)
    assert r.outcome == "passed", r


def test_a_committed_bundle_reads_an_installed_shared_register(tmp_path: Path) -> None:
    # U16 A (Local) x U8 B (Shared S9): 6 * 7, and the B.IOS binding is consumed
    body = (
        "    ResetProfileState();\n"
        "    assert ConfigureCubeTileForMask(1, 128, 1, 1,\n"
        "        TileDataType_U16, TileLayout_CUBE_M16, TileLocation_Matrix, '1111');\n"
        "    ConfigureTile(2, 128, 1, 1, 1, 1, TileDataType_U8,\n"
        "        TileLayout_RowMajor, TileLocation_Matrix);\n"
        "    WriteTileElement(1, 0, 0, Zeros{64} + 6);\n"
        "    WriteTileElement(2, 0, 0, Zeros{64} + 7);\n"
        "    InstallSharedTile(Zeros{8} + 9, _Tiles[[2]], '1111');\n"
        f"    let started = ExecuteCommandInstruction({bstart('TMATMUL', DataType.U16)});\n"
        "    SetBundleFixedPointAttributeState(\n"
        "        Zeros{6}, Zeros{3}, Zeros{4}, FALSE, FALSE, FALSE, FALSE);\n"
        "    SetBundleDataAttributeState(Zeros{5} + 27, Zeros{5}, Zeros{2},\n"
        "        Zeros{3}, Zeros{3}, FALSE, FALSE);\n"
        "    _BundleDataAttributesPresent = TRUE;\n"
        "    BindBundleSharedIO(Zeros{8} + 9, 0, '1111');\n"
        "    assert !_BundleSharedBindings[[0]].consumed;\n"
        "    AddBundleTileBinding(TRUE, 0, 1, '1111', TRUE, FALSE, 1, 0, TRUE);\n"
        "    assert ExecuteBundleTileOperation();\n"
        "    assert _BundleSharedBindings[[0]].valid;\n"
        "    assert _BundleSharedBindings[[0]].shared_id == Zeros{8} + 9;\n"
        "    assert _BundleSharedBindings[[0]].consumed;\n"
        "    let d = _BundleTileBindings[[0]].destination;\n"
        "    assert ReadTileElement(d, 0, 0) == Zeros{64} + 42;\n"
        # the register stays allocated across bundles
        "    assert SharedTileRecord(Zeros{8} + 9).descriptor_valid;\n"
    )
    r = one(tmp_path, "shared_b", body, source="asl/block/x/BSTART.TMATMUL.asl")
    assert r.outcome == "passed", r
    assert "B.IOS S9" in r.bundles[-1], r.bundles


def _select(dtype_bits: str, selector: int = 4) -> str:
    """A TileMatrix bundle descriptor (TMATMULMX is selector 4) with AType ``dtype_bits``."""
    return (
        "    InstallBundleOperationDescriptor(BundleOperationDescriptor {\n"
        "        valid = TRUE, form_identity = Zeros{7},\n"
        "        operation_class = BundleOperation_TileMatrix,\n"
        f"        selector_valid = TRUE, selector = Zeros{{10}} + {selector},\n"
        f"        data_type_valid = TRUE, data_type = '{dtype_bits}',\n"
        "        mode_valid = FALSE, mode = Zeros{2},\n"
        "        branch_type_valid = FALSE, branch_type = Zeros{3}\n"
        "    });\n"
    )


def _primaries(dt: str, k: int = 2) -> str:
    """A 1 x K CUBE_M16 A in slot 1 and a K x 2 CUBE_N8 B in slot 2, all elements defined."""
    writes = [(1, 0, c) for c in range(k)] + [(2, r, c) for r in range(k) for c in range(2)]
    return (
        f"    assert ConfigureCubeTile(1, 128, 1, {k},\n"
        f"        TileDataType_{dt}, TileLayout_CUBE_M16, TileLocation_Matrix);\n"
        f"    assert ConfigureCubeTile(2, 128, {k}, 2,\n"
        f"        TileDataType_{dt}, TileLayout_CUBE_N8, TileLocation_Matrix);\n"
        + "".join(f"    WriteTileElement({s}, {r}, {c}, Zeros{{64}});\n" for s, r, c in writes)
    )


def test_mx_operands_and_scales_follow_ptocs_preflight(tmp_path: Path) -> None:
    body = (
        "    ResetProfileState();\n"
        + _select("00100")  # FP16: no scales
        + _primaries("FP16")
        + "    assert TileMatrixShapeLegal(1, 2) && !TileMatrixShapeLegal(2, 1);\n"
        "    assert TileMXMatrixOperandsLegal(1, 2);\n"
        "    assert TileOrdinaryMatrixOperandsLegal(1, 2);\n"
        "    assert TileMatrixInfoOptionalScalesLegal(\n"
        "        _Tiles[[1]], _Tiles[[0]], FALSE, _Tiles[[2]], _Tiles[[0]], FALSE);\n"
        "    assert !TileMatrixInfoOptionalScalesLegal(\n"
        "        _Tiles[[1]], _Tiles[[0]], TRUE, _Tiles[[2]], _Tiles[[0]], FALSE);\n"
        "    ResetProfileState();\n"
        + _select("00111")  # E4M3: both sides need an E8M0 scale
        + _primaries("E4M3")
        + "    assert TileMXMatrixOperandsLegal(1, 2);\n"
        "    ConfigureTile(3, 128, 16, 8, 1, 1, TileDataType_E8M0,\n"
        "        TileLayout_RowMajor, TileLocation_Matrix);\n"
        "    ConfigureTile(4, 128, 16, 8, 1, 2, TileDataType_E8M0,\n"
        "        TileLayout_RowMajor, TileLocation_Matrix);\n"
        "    assert !TileMatrixInfoScalesLegal(\n"
        "        _Tiles[[1]], _Tiles[[3]], _Tiles[[2]], _Tiles[[4]]);\n"  # undefined
        "    WriteTileElement(3, 0, 0, Zeros{64});\n"
        "    WriteTileElement(4, 0, 0, Zeros{64});\n"
        "    WriteTileElement(4, 0, 1, Zeros{64});\n"
        "    assert TileMatrixInfoScalesLegal(\n"
        "        _Tiles[[1]], _Tiles[[3]], _Tiles[[2]], _Tiles[[4]]);\n"
        "    assert !TileMatrixInfoScalesLegal(\n"  # the scales swapped: wrong shapes
        "        _Tiles[[1]], _Tiles[[4]], _Tiles[[2]], _Tiles[[3]]);\n"
        "    assert !TileMatrixInfoOptionalScalesLegal(\n"
        "        _Tiles[[1]], _Tiles[[3]], FALSE, _Tiles[[2]], _Tiles[[4]], TRUE);\n"
        "    assert !TileMatrixInfoShapeLegal(_Tiles[[1]], _Tiles[[2]]);\n"
    )
    r = one(tmp_path, "mx", body, source="asl/tile/x/y/TMATMUL_MX.asl")
    assert r.outcome == "passed", r


def test_operand_types_must_be_the_bundles(tmp_path: Path) -> None:
    # AType S8 selected, FP16 primaries: neither ordinary nor MX operands are legal
    body = (
        _select("10011", selector=0)
        + _primaries("FP16")
        + "    assert TileMatrixShapeLegal(1, 2);\n"
        "    assert !TileOrdinaryMatrixOperandsLegal(1, 2);\n"
        "    assert !TileMXMatrixOperandsLegal(1, 2);\n"
    )
    r = one(tmp_path, "types", body, source="asl/tile/x/y/TMATMUL.asl")
    assert r.outcome == "passed", r


def _matmul_bundle(dt: str, a: int, b: int, mask: str = "1111", fpatr: str = "") -> str:
    """A 1x1x1 TMATMUL of ``dt`` run from its BSTART word and the ASL's state setters."""
    fpatr = fpatr or "Zeros{6}, Zeros{3}, Zeros{4}, FALSE, FALSE, FALSE, FALSE"
    return (
        "    ResetProfileState();\n"
        "    assert ConfigureCubeTileForMask(1, 128, 1, 1,\n"
        f"        TileDataType_{dt}, TileLayout_CUBE_M16, TileLocation_Matrix, '1111');\n"
        "    assert ConfigureCubeTileForMask(2, 128, 1, 1,\n"
        f"        TileDataType_{dt}, TileLayout_CUBE_N8, TileLocation_Matrix, '1111');\n"
        f"    WriteTileElement(1, 0, 0, Zeros{{64}} + {a});\n"
        f"    WriteTileElement(2, 0, 0, Zeros{{64}} + {b});\n"
        f"    let started = ExecuteCommandInstruction({bstart('TMATMUL', DataType[dt])});\n"
        "    assert started == CommandExecution_Executed;\n"
        f"    SetBundleFixedPointAttributeState({fpatr});\n"
        f"    AddBundleTileBinding(TRUE, 0, 1, '{mask}', TRUE, TRUE, 1, 2, TRUE);\n"
    )


def test_fixed_point_attribute_state_becomes_the_bundles_fpatr(tmp_path: Path) -> None:
    body = _matmul_bundle("S8", 6, 7) + (
        "    assert ExecuteBundleTileOperation();\n"
        "    let d = _BundleTileBindings[[0]].destination;\n"
        "    assert _Tiles[[d]].data_type == TileDataType_S32;\n"
        "    assert ReadTileElement(d, 0, 0) == Zeros{64} + 42;\n"
    )
    r = one(tmp_path, "fpatr", body, source="asl/block/x/BSTART.TMATMUL.asl")
    assert r.outcome == "passed", r
    assert "B.FPATR 0, 0, 0, 0, 0, 0, 0, 0, 0" in r.bundles[-1]
    # RowMaxInit without RowMaxEn: ptoc's BundleFPATRFieldsLegal faults at the setter
    body = (
        _matmul_bundle(
            "S8", 6, 7, fpatr="Zeros{6}, Zeros{3}, Zeros{4}, FALSE, FALSE, TRUE, FALSE"
        )
        + "    assert _LastFault == Fault_TileLegality;\n"
    )
    r = one(tmp_path, "fpatr_bad", body, source="asl/block/x/BSTART.TMATMUL.asl")
    assert r.outcome == "passed", r


def test_floating_bundle_values_and_unencodable_masks_are_classified(tmp_path: Path) -> None:
    read = (
        "    assert ExecuteBundleTileOperation();\n"
        "    let d = _BundleTileBindings[[0]].destination;\n"
        "    assert ReadTileElement(d, 0, 0) == Zeros{64} + 42;\n"
    )
    # raw FP16 words 6 and 7 are subnormals: D11's product is not the word 42
    r = one(tmp_path, "fp16", _matmul_bundle("FP16", 6, 7) + read)
    assert (r.outcome, r.category) == ("not applicable", "D11 matrix numerics"), r
    # an integer bundle's wrong value stays a failure
    r = one(tmp_path, "s8", _matmul_bundle("S8", 6, 8) + read)
    assert r.outcome == "failed", r
    r = one(tmp_path, "mask", _matmul_bundle("S8", 6, 7, mask="0011") + read)
    assert (r.outcome, r.category) == ("not applicable", "asl-internal"), r
    assert "0011 has no B.IOT PEMode encoding" in r.reason


def test_matrix_destination_and_source_ordinals_name_the_bundles_slots(tmp_path: Path) -> None:
    body = _matmul_bundle("S8", 6, 7) + (
        "    assert ExecuteBundleTileOperation();\n"
        "    let d = BundleMatrixDestinationAt(0);\n"
        "    assert d == _BundleTileBindings[[0]].destination && d != 1 && d != 2;\n"
        "    assert ReadTileElement(d, 0, 0) == Zeros{64} + 42;\n"
        "    assert BundleMatrixDestinationAt(1) == 0;\n"  # no auxiliary output
        "    assert BundleMatrixSourceAt(0) == 1 && BundleMatrixSourceAt(1) == 2;\n"
        "    assert BundleMatrixSourceAt(2) == 0;\n"
    )
    r = one(tmp_path, "ordinals", body)
    assert r.outcome == "passed", r


def test_fpatr_profile_calls_run_ptocs_post_processing(tmp_path: Path) -> None:
    ctl = "NumericExecutionControl { rounding_mode = NumericRound_RNE, saturating = %s }"
    body = (
        "    let two = FP32ToFP19(Zeros{64} + 0x40000000);\n"
        "    assert two == Zeros{19} + 0x20000;\n"  # 2.0: exponent 128, fraction 0
        "    assert FP32ToFP19(Zeros{64} + 0x3f801000) == Zeros{19} + 0x1fc00;\n"  # tie: even
        "    assert FP32ToFP19(Zeros{64} + 0x3f803000) == Zeros{19} + 0x1fc02;\n"  # tie: up
        "    let p = MatrixQuantParameter(two, Zeros{64} + 0x1ff, 9);\n"  # scale 2, offset -1
        "    let (a, fa) = TileProfileMatrixPostProcessWithFlags(Zeros{64} + 3, '000011',\n"
        f"        Zeros{{3}}, Zeros{{4}}, TileDataType_S8, p, Zeros{{64}}, {ctl % 'FALSE'});\n"
        "    assert a == Zeros{64} + 5 && fa == Zeros{5};\n"  # 3 * 2 - 1
        "    let q = MatrixQuantParameter(two, Zeros{64}, 9);\n"
        "    let (b, fb) = TileProfileMatrixPostProcessWithFlags(Zeros{64} + 70, '000011',\n"
        f"        Zeros{{3}}, Zeros{{4}}, TileDataType_S8, q, Zeros{{64}}, {ctl % 'FALSE'});\n"
        "    assert b == Zeros{64} + 0xffffffffffffff8c && fb == Zeros{5} + 0x14;\n"  # wraps
        "    let (c, fc) = TileProfileMatrixPostProcessWithFlags(Zeros{64} + 70, '000011',\n"
        f"        Zeros{{3}}, Zeros{{4}}, TileDataType_S8, q, Zeros{{64}}, {ctl % 'TRUE'});\n"
        "    assert c == Zeros{64} + 0x7f && fc == Zeros{5} + 0x14;\n"  # saturates
        "    assert MatrixShiftParameter(3) == Zeros{64} + 0x300000000;\n"
        "    assert BundleFPATRPreQuantModeLegal('100111');\n"
        "    assert !BundleFPATRPreQuantModeLegal('000110');\n"
        "    assert BundleFPATRModeFixedRounding('011001');\n"
        "    assert !BundleFPATRModeFixedRounding('000011');\n"
        "    assert BundleFPATRAccumulatorTypeLegal('000011', TileDataType_S32);\n"
        "    assert !BundleFPATRAccumulatorTypeLegal('000011', TileDataType_FP32);\n"
        "    assert BundleFPATRReluModeLegal('011') && !BundleFPATRReluModeLegal('100');\n"
        "    assert !BundleFPATRModeFinalSatProgrammable('001100');\n"  # a shift mode
    )
    r = one(tmp_path, "postprocess", body)
    assert r.outcome == "passed", r
