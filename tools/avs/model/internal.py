"""ASL functions the tool deliberately does not bind to ptoc.

``NOT_APPLICABLE`` entries are ASL-internal helpers (their subject has no machine
meaning in ptoc) or rules a ptoc decision replaces; ``UNBOUND`` entries are machine
behaviour ptoc does not model yet. Calling one ends the test with that classification
and the reason given here.
"""

from __future__ import annotations

from typing import Any

from ..outcome import Untranslated
from .core import PtocModel, binding, model_variable, not_applicable, opaque, unbound

unbound(
    "CUBE engine",
    "ConfigureCubeTile",
    "ConfigureCubeTileForMask",
    "ConfigureCubeUnitTile",
    "WriteCubeStorageValue",
    "TileCubeCellElementIndex",
    "TileCubePayloadIndex",
    "SelectTestCUBEDataType",
    "ResetCubeOrdinaryOperands",
    "CubeTotalityOperands",
    "TileMXInputTypeSupported",
    "TileOrdinaryMatrixAccumulatorType",
    "MatrixQuantParameter",
    "TileMatrixFunctionAssigned",
    "TileMatrixLocalBiasSchemaLegal",
    "TileMatrixLocalOperandSchemaLegal",
    "TileMatrixAuxiliarySourceSchemaLegal",
    "TileMatrixVectorReluContentsLegal",
    "TileMatrixVectorQuantContentsLegal",
    "TileCubeStorageRows",
    "TileCubeCellRows",
    "TileCubeKRepeat",
    "TileCubeDescriptorShapeLegal",
    "TileCubeCellColumns",
    "TileCubeStorageColumns",
    "TileCubeDescriptorLegal",
    "TileCubeDataTypeSupported",
    "TileMXInputTypeNeedsScale",
    "TileMXOperandPairLegal",
    "CubeFunctionUsesBias",
    "CubeFunctionAccumulates",
    "CubeFunctionUsesMX",
    "TileLayoutIsCube",
)

not_applicable(
    "asl-internal",
    "an internal step of the ASL's executable model (no ptoc counterpart)",
    "TileCommitConversionResult",
)

not_applicable(
    "asl-internal",
    "sets a feature-map descriptor, which no PTO instruction can configure (ptoc rejects "
    "every TIMG2COL for that reason)",
    "ConfigureTileFeatureMapDescriptor",
    "ReadTileFeatureMapDescriptor",
)

opaque(
    "an ASL-internal helper of the executable model (no ptoc counterpart)",
    "IsNonzeroPowerOfTwo",
    "DecodeTileMemoryElementRaw",
    "ResolveTileNumericExecutionControl",
    "DecodeBundleRoundingSelection",
    "TileProfileReductionInitial",
    "TileProfileMixedExpdifFP32",
    "TileCompareBoolean",
)
not_applicable(
    "asl-internal",
    "builds an ASL TileInfo record's packed-carrier representation by hand",
    "ZeroPackedTileDefinedElements",
)
not_applicable(
    "asl-internal",
    "an ASL-internal step of bundle resolution, called outside any instruction",
    "ResolveBundleTileDestinationsWithShapeAndType",
    "ResolveBundleTileDestinations",
    "RollBackBundleTileDestinations",
)
not_applicable(
    "asl-internal",
    "a partial arg-reduction helper that no PTO instruction selects",
    "ExecuteTilePartialArg",
)
unbound(
    "Shared tiles",
    "MaterializeSharedTile",
    "TLOADShared",
)


@binding("StartMemoryEventCapture", harness=True)
def start_memory_event_capture(m: PtocModel, *args: Any) -> None:
    """Open a capture window (remember how many bundles ptoc had committed)."""
    m.globals["capture_from"] = m.commits


@binding("StopMemoryEventCapture", harness=True)
def stop_memory_event_capture(m: PtocModel, *args: Any) -> None:
    m.globals.pop("capture_from", None)


def _memory_events(m: PtocModel) -> Any:
    raise Untranslated("_MemoryEvents", group="memory events")


def _memory_event_count(m: PtocModel) -> int:
    """Zero when every bundle since the capture opened was rejected (ptoc's rejected
    bundles have no effect, so they access no memory); otherwise untranslated."""
    start = m.globals.get("capture_from")
    if start is not None and m.commits == start:
        return 0
    raise Untranslated("_MemoryEventCount", group="memory events")


model_variable("_MemoryEvents", _memory_events)
model_variable("_MemoryEventCount", _memory_event_count)


@binding("WritePC", harness=True)
def write_pc(m: PtocModel, value: Any) -> None:
    """The PC only locates a fault (``_FaultAddress``), which ptoc reports by bundle index
    instead; writing it changes nothing the tests observe otherwise."""
    m.globals["pc"] = value


opaque(
    "the ASL test harness's own descriptor and capacity accounting (ptoc accounts per "
    "PE at bundle commit, D2)",
    "TileCapacityIsLegal",
    "TileStorageFitsCapacity",
    "TileCapacityInUseExcept",
    "TileCapacityLimitBytes",
)
# the executor runs TPREFETCH bundles; the tests that call its direct form observe it only
# through the memory events it records
unbound("memory events", "TPREFETCHAllPEs")
