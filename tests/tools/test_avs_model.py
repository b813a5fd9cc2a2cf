"""The AVS tool's ptoc binding and runner, pinned on small ASL tests written here (a
stand-in pto-spec tree in a temporary directory)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the tool lives in the checkout, not the installed package
    sys.path.insert(0, str(ROOT))

from ptoc.backend.encoding import encode_command, tile_start  # noqa: E402
from ptoc.backend.isa import DataType  # noqa: E402
from tools.avs import runner  # noqa: E402
from tools.avs.__main__ import main  # noqa: E402

ONE, TWO, THREE = 0x3F800000, 0x40000000, 0x40400000


def bstart(mnemonic: str, dt: DataType) -> str:
    """The ASL expression of a BSTART word, encoded by ptoc."""
    value, bits = encode_command(tile_start(mnemonic, int(dt)))
    return f"Zeros{{64}} + 0x{value:x}, {bits}"


def fp32_tiles(*slots: int, vc: int = 2) -> str:
    return "".join(
        f"    ConfigureTile({s}, 128, 1, 2, 1, {vc}, TileDataType_FP32,\n"
        "        TileLayout_RowMajor, TileLocation_Any);\n"
        for s in slots
    )


def write(
    spec: Path,
    name: str,
    body: str,
    *,
    source: str = "asl/tile/x/y/TADD.asl",
    family: str = "fam",
    helpers: str = "",
) -> None:
    path = spec / "tests" / "asl" / "tile" / family / f"{name}.asl"
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"id": f"T-{name.upper()}", "source": source, "kind": "execution"}
    path.write_text(
        f"// PTO-TEST: {json.dumps(meta)}\n{helpers}func main() => integer\nbegin\n"
        f"{body}    return 0;\nend;\n",
        encoding="utf-8",
    )


def results(spec: Path) -> dict[str, runner.Result]:
    return {r.id: r for r in runner.run(runner.discover(spec))}


def one(spec: Path, name: str, body: str, **kw: str) -> runner.Result:
    write(spec, name, body, **kw)
    return results(spec)[f"T-{name.upper()}"]


def test_a_direct_operation_runs_as_a_ptoc_bundle(tmp_path: Path) -> None:
    body = fp32_tiles(0, 1, 2) + (
        f"    WriteTileElement(0, 0, 0, Zeros{{64}} + 0x{ONE:x});\n"
        f"    WriteTileElement(0, 0, 1, Zeros{{64}} + 0x{TWO:x});\n"
        f"    WriteTileElement(1, 0, 0, Zeros{{64}} + 0x{TWO:x});\n"
        f"    WriteTileElement(1, 0, 1, Zeros{{64}} + 0x{ONE:x});\n"
        "    assert InstructionContractOperandsLegal_TADD(2, 0, 1);\n"
        "    InstructionContractExecute_TADD(2, 0, 1);\n"
        f"    assert ReadTileElement(2, 0, 0) == Zeros{{64}} + 0x{THREE:x};\n"
        f"    assert ReadTileElement(2, 0, 1) == Zeros{{64}} + 0x{THREE:x};\n"
        "    assert !TileElementDefined(2, 1, 0);\n"
    )
    r = one(tmp_path, "direct", body)
    assert r.outcome == "passed", r
    # slots 0 and 1 sit at T#1 and T#2; the destination slot's descriptor sets the shape
    assert "B.IOT T#1, T#2, mask=1000, last, ->U<128B>" in r.bundles[-1]
    assert "B.DIM zero, 2, ->LB0" in r.bundles[-1]


def test_a_wrong_expectation_fails_with_ptocs_value(tmp_path: Path) -> None:
    body = fp32_tiles(0, 1, 2, vc=1) + (
        f"    WriteTileElement(0, 0, 0, Zeros{{64}} + 0x{ONE:x});\n"
        f"    WriteTileElement(1, 0, 0, Zeros{{64}} + 0x{ONE:x});\n"
        "    InstructionContractExecute_TADD(2, 0, 1);\n"
        f"    assert ReadTileElement(2, 0, 0) == Zeros{{64}} + 0x{THREE:x};\n"
    )
    r = one(tmp_path, "wrong", body)
    assert r.outcome == "failed"
    assert r.line == 13  # header, func, begin, three two-line ConfigureTiles, writes
    assert r.detail == "left is 0x0000000040000000, right is 0x0000000040400000"


def test_a_bundle_from_command_words_publishes_into_the_asl_slot(tmp_path: Path) -> None:
    body = fp32_tiles(17, 18) + (
        f"    WriteTileElement(17, 0, 0, Zeros{{64}} + 0x{ONE:x});\n"
        f"    WriteTileElement(17, 0, 1, Zeros{{64}} + 0x{ONE:x});\n"
        f"    WriteTileElement(18, 0, 0, Zeros{{64}} + 0x{TWO:x});\n"
        f"    WriteTileElement(18, 0, 1, Zeros{{64}} + 0x{TWO:x});\n"
        f"    let started = ExecuteCommandInstruction({bstart('TADD', DataType.FP32)});\n"
        "    assert started == CommandExecution_Executed;\n"
        "    SetBundleDimension(0, Zeros{64} + 2);\n"
        "    AddBundleTileBinding(TRUE, 1, 1, '1111', TRUE, TRUE, 17, 18, TRUE);\n"
        "    assert ExecuteBundleTileOperation();\n"
        "    let d = _BundleTileBindings[[0]].destination;\n"
        "    assert d == 16;\n"
        "    assert _Tiles[[d]].valid_columns == 2;\n"
        f"    assert ReadTileElement(d, 0, 1) == Zeros{{64}} + 0x{THREE:x};\n"
        "    assert _LastFault == Fault_None;\n"
    )
    r = one(tmp_path, "words", body)
    assert r.outcome == "passed", r
    # ASL slots 17 and 18 are U#2 and U#3; the lowest free slot of hand U is 16
    assert "B.IOT U#2, U#3, mask=1111, last, ->U<128B>" in r.bundles[-1]


def test_header_rules_and_zero_masks_come_from_ptoc(tmp_path: Path) -> None:
    body = (
        f"    let started = ExecuteCommandInstruction({bstart('TADD', DataType.FP32)});\n"
        "    SetBundleDimension(0, Zeros{64} + 2);\n"
        "    SetBundleDimension(0, Zeros{64} + 4);\n"
        "    assert _LastFault == Fault_BundleControl;\n"
        "    ClearFault();\n"
        "    AddBundleTileBinding(FALSE, 0, 0, '0000', FALSE, FALSE, 0, 0, FALSE);\n"
        "    assert ExecuteBundleTileOperation();\n"
        "    assert _LastFault == Fault_None;\n"
        "    assert !_Tiles[[0]].allocated;\n"
    )
    r = one(tmp_path, "header", body)
    assert r.outcome == "passed", r


def test_legality_is_ptocs_acceptance_of_the_bundle_the_call_means(tmp_path: Path) -> None:
    body = fp32_tiles(0, 1) + (
        "    ConfigureTile(2, 128, 1, 2, 1, 1, TileDataType_FP32,\n"
        "        TileLayout_RowMajor, TileLocation_Any);\n"
        "    MarkTileValidRegionDefined(0);\n"
        "    MarkTileValidRegionDefined(1);\n"
        "    assert InstructionContractOperandsLegal_TADD(2, 0, 1);\n"
    )
    r = one(tmp_path, "shape", body)
    assert r.outcome == "failed"
    assert "T#1 is 1x2 of Col 2; the bundle describes 1x1 of Col 2" in r.detail
    # a row reduction derives its destination: a 1x2 destination slot has no bundle
    body = fp32_tiles(0, 2) + (
        "    MarkTileValidRegionDefined(0);\n"
        "    assert TileOperandsLegal_ExecuteTileReduction(\n"
        "        TileReduction_SUM, TileAxis_Row, 2, 0);\n"
    )
    r = one(tmp_path, "derived", body)
    assert r.outcome == "failed"
    assert "publishes FP32 1x1 RowMajor, the destination descriptor is FP32 1x2 RowMajor" in (
        r.detail
    )


def test_catalog_predicates_and_element_values_are_ptocs(tmp_path: Path) -> None:
    body = (
        "    assert InstructionContractDataTypeLegal_TADD(TileDataType_S8);\n"
        "    assert !InstructionContractDataTypeLegal_TADD(TileDataType_U4X2);\n"
        "    let index = DecodeTileOperation(TileDecode_TEPL, Zeros{12});\n"
        "    assert TileOperationOfIndex(index) == TileOperation_TADD;\n"
        "    assert TileEngineOfIndex(index) == TileEngine_VEC;\n"
        "    assert TileHandlerOfIndex(index) == TileHandler_ExecuteTileBinary;\n"
        "    let (v, invalid) = InstructionContractFloatingValue_TMAX(TileDataType_FP32,\n"
        f"        Zeros{{64}} + 0x7fc00001, Zeros{{64}} + 0x{ONE:x});\n"
        f"    assert v == Zeros{{64}} + 0x{ONE:x} && !invalid;\n"
    )
    r = one(tmp_path, "catalog", body)
    assert r.outcome == "passed", r
    assert len(r.skipped) == 1 and "semantic-handler" in r.skipped[0]


def test_classification_of_what_ptoc_cannot_or_need_not_answer(tmp_path: Path) -> None:
    write(tmp_path, "compiles", "    assert TRUE;\n")
    write(tmp_path, "harness", fp32_tiles(0) + "    assert !_Tiles[[0]].contents_defined;\n")
    write(tmp_path, "unbound", "    let ok = TileMatrixLocalBiasSchemaLegal(0);\n")
    write(tmp_path, "unknown", "    Frobnicate();\n")
    write(
        tmp_path,
        "seed",
        "    assert InstructionContractDataTypeLegal_TSORT(TileDataType_FP64);\n",
        source="asl/tile/x/y/TSORT.asl",
    )
    got = {k: (r.outcome, r.category) for k, r in results(tmp_path).items()}
    assert got == {
        "T-COMPILES": ("not applicable", "asl-unit-compiles"),
        "T-HARNESS": ("not applicable", "asl-internal"),
        "T-UNBOUND": ("untranslated", "CUBE engine"),
        "T-UNKNOWN": ("untranslated", "Frobnicate"),
        "T-SEED": ("not applicable", "D4 seed type set"),
    }


def test_the_command_line_counts_per_family_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path,
        "ok",
        "    assert InstructionContractDataTypeLegal_TADD(TileDataType_FP32);\n",
        family="fam-a",
    )
    write(
        tmp_path,
        "bad",
        "    assert InstructionContractDataTypeLegal_TSUB(TileDataType_U4X2);\n",
        family="fam-b",
        source="asl/tile/x/y/TSUB.asl",
    )
    out = tmp_path / "r.json"
    code = main(["--spec", str(tmp_path), "--json", str(out), "-v"])
    text = capsys.readouterr().out
    assert code == 1
    assert (
        "FAIL T-BAD  tile/fam-b/bad.asl:4: assert InstructionContractDataTypeLegal_TSUB" in text
    )
    data = json.loads(out.read_text())
    assert data["summary"]["tile/fam-a"]["passed"] == 1
    assert data["summary"]["tile/fam-b"]["failed"] == 1
    assert data["summary"]["tile/fam-b"]["translated"] == 1
    assert main(["--spec", str(tmp_path), "--family", "tile/fam-a"]) == 0
    assert main(["--spec", str(tmp_path / "missing")]) == 2


def test_a_rejection_only_the_type_set_causes_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass whose expected rejection comes only from ptoc's DataType set is noted for a
    reviewer: here ptoc is made to reject FP32 TSUB and the operands are otherwise legal."""
    from ptoc.runtime.spec import Spec

    original = Spec.dtype

    def narrow(self: Spec, allowed: object = None) -> DataType:
        if self.name == "TSUB" and self.dtype_code == int(DataType.FP32):
            raise self.illegal("TSUB does not support DataType FP32")
        return original(self, allowed)  # type: ignore[arg-type]

    monkeypatch.setattr(Spec, "dtype", narrow)
    body = fp32_tiles(0, 1, 2) + (
        "    MarkTileValidRegionDefined(0);\n"
        "    MarkTileValidRegionDefined(1);\n"
        "    assert !InstructionContractOperandsLegal_TSUB(2, 0, 1);\n"
    )
    r = one(tmp_path, "masked", body, source="asl/tile/x/y/TSUB.asl")
    assert r.outcome == "passed"
    assert r.notes == [
        "line 12: the rejection the test expects comes from ptoc's type set only (TSUB does "
        "not support DataType FP32); with that DataType accepted ptoc accepts the TSUB bundle"
    ]
