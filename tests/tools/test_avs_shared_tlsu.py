"""The AVS tool's bindings of the Shared TLSU forms (TSTORE of a Shared register, TMOV
Local <-> Shared), pinned on small ASL tests written here (a stand-in pto-spec tree):
the BSTART encoding variants decode, the Shared helpers read ptoc's register file, and a
rejected Shared bundle leaves the records as they were."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the tool lives in the checkout, not the installed package
    sys.path.insert(0, str(ROOT))

from test_avs_model import one  # noqa: E402

from ptoc.backend.encoding import encode_command  # noqa: E402
from ptoc.backend.isa import Family  # noqa: E402
from ptoc.backend.isa.fields import Hand  # noqa: E402
from ptoc.backend.program import Ios, Iot, TileRef, TileStart  # noqa: E402


def word(c: object) -> str:
    """The ASL expression of a command word, encoded by ptoc."""
    value, bits = encode_command(c)  # type: ignore[arg-type]
    return f"Zeros{{64}} + 0x{value:x}, {bits}"


def start(function: int, dtype: int = 24) -> str:
    return word(TileStart(Family.TLSU, function, dtype))


T1 = TileRef(Hand.T, 1)
U64_TILE = (
    "    ConfigureTile(0, 128, 1, 1, 1, 1, TileDataType_U64,\n"
    "        TileLayout_RowMajor, TileLocation_Any);\n"
    "    WriteTileElement(0, 0, 0, Zeros{64} + 11);\n"
)


def test_insert_publish_then_broadcast_and_store(tmp_path: Path) -> None:
    body = U64_TILE + (
        f"    assert ExecuteCommandInstruction({start(10)}) == CommandExecution_Executed;\n"
        f"    assert ExecuteCommandInstruction({word(Ios(19, 0b1111, 1))})"
        " == CommandExecution_Executed;\n"
        f"    assert ExecuteCommandInstruction({word(Iot((T1,), 0b1111, True))})"
        " == CommandExecution_Executed;\n"
        "    assert BundleSharedBindingCount() == 1;\n"
        "    assert BundleSharedTLSUSelected();\n"
        "    assert BundleSharedTMOVLocalSchemaLegal();\n"
        "    assert ExecuteBundleTileOperation();\n"
        "    assert _BundleSharedBindings[[0]].consumed;\n"
        "    assert SharedTilePublished(Zeros{8} + 19);\n"
        "    assert ReadSharedTileWord(Zeros{8} + 19, 0) == Zeros{64} + 11;\n"
        "    ResetBundleControlState();\n"
        f"    assert ExecuteCommandInstruction({start(11)}) == CommandExecution_Executed;\n"
        f"    assert ExecuteCommandInstruction({word(Ios(19, 0b1111, 0))})"
        " == CommandExecution_Executed;\n"
        f"    assert ExecuteCommandInstruction({word(Iot((), 0b1111, True, Hand.U, 1))})"
        " == CommandExecution_Executed;\n"
        "    assert ExecuteBundleTileOperation();\n"
        "    let t = _BundleTileBindings[[0]].destination;\n"
        "    assert ReadTileElement(t, 0, 0) == Zeros{64} + 11;\n"
        "    ResetBundleControlState();\n"
        "    WriteGPR(2, Zeros{64} + 64);\n"
        f"    assert ExecuteCommandInstruction({start(14)}) == CommandExecution_Executed;\n"
        f"    assert ExecuteCommandInstruction({word(Ios(19, 0b1000, 0))})"
        " == CommandExecution_Executed;\n"
        "    SetBundleScalarBinding(0, Zeros{5}, Zeros{5} + 2, Zeros{5}, Zeros{5}, 3);\n"
        "    assert ExecuteBundleTileOperation();\n"
        "    assert _Memory[[64]] == Zeros{8} + 11;\n"
    )
    r = one(tmp_path, "publish", body)
    assert r.outcome == "passed", r


def test_unallocated_reads_give_the_undefined_register_word(tmp_path: Path) -> None:
    body = (
        "    assert MinimumTileCapacityBytesForShape(1, 1, 1, TileDataType_U8) == 128;\n"
        "    assert MinimumTileCapacityBytesForShape(1024, 64, 1024, TileDataType_U64) == 0;\n"
        "    assert SharedTileCapacityIsLegal(262144) && !SharedTileCapacityIsLegal(64);\n"
        "    assert ReadSharedTileWord(Zeros{8} + 42, 3) == UndefinedSharedTileWord(\n"
        "        Zeros{8} + 42, 3);\n"
        "    assert UndefinedSharedTileWord(Zeros{8} + 42, 3) == Zeros{64} + 41;\n"
        f"    assert ExecuteCommandInstruction({start(14, 12 + 12)})"
        " == CommandExecution_Executed;\n"
        f"    assert ExecuteCommandInstruction({word(Ios(42, 0b1000, 0))})"
        " == CommandExecution_Executed;\n"
        "    assert ExecuteBundleTileOperation();\n"
        "    assert _Memory[[0]] == Zeros{8} + 42;\n"
        "    assert !SharedTileRecord(Zeros{8} + 42).descriptor_valid;\n"
    )
    r = one(tmp_path, "undefined", body)
    assert r.outcome == "passed", r


def test_a_rejected_shared_bundle_changes_no_record(tmp_path: Path) -> None:
    # Function 1 stores all four PEs; the partial mask is rejected before any effect,
    # and a TMOV Local -> Shared B.IOT with a destination is rejected at its command
    body = U64_TILE + (
        "    InstallSharedTile(Zeros{8} + 9, _Tiles[[0]], '1000');\n"
        f"    assert ExecuteCommandInstruction({start(1)}) == CommandExecution_Executed;\n"
        f"    assert ExecuteCommandInstruction({word(Ios(9, 0b1000, 0))})"
        " == CommandExecution_Executed;\n"
        "    assert !ExecuteBundleTileOperation();\n"
        "    assert _LastFault == Fault_TileLegality;\n"
        "    assert _Memory[[0]] == Zeros{8};\n"
        "    ResetBundleControlState();\n"
        "    ClearFault();\n"
        f"    assert ExecuteCommandInstruction({start(9)}) == CommandExecution_Executed;\n"
        f"    assert ExecuteCommandInstruction({word(Iot((), 0b1111, True, Hand.T, 1))})"
        " == CommandExecution_Rejected;\n"
        "    assert _LastFault == Fault_TileLegality;\n"
        "    assert SharedTileRecord(Zeros{8} + 9).allocation_mask == '1000';\n"
    )
    r = one(tmp_path, "rejected", body)
    assert r.outcome == "passed", r
