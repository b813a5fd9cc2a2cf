"""ASL functions the tool deliberately does not bind to ptoc.

``NOT_APPLICABLE`` entries are ASL-internal helpers (their subject has no machine
meaning in ptoc) or rules a ptoc decision replaces; ``UNBOUND`` entries are machine
behaviour ptoc does not model yet. Calling one ends the test with that classification
and the reason given here.
"""

from __future__ import annotations

from .core import not_applicable, opaque, unbound

unbound(
    "ptoc has no CUBE engine yet (TMATMUL/TGEMV families)",
    "ConfigureCubeTile",
    "ConfigureCubeTileForMask",
    "ConfigureCubeUnitTile",
    "WriteCubeStorageValue",
    "TileCubeCellElementIndex",
    "TileCubePayloadIndex",
    "SelectTestCUBEDataType",
    "ResetCubeOrdinaryOperands",
    "CubeTotalityOperands",
    "SetBundleFixedPointAttributeState",
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
    "TileMatrixSharedSourceCountLegal",
    "TileMatrixMathematicalSourceCount",
    "TileMXInputTypeNeedsScale",
    "TileMXOperandPairLegal",
    "TileMatrixInfoOptionalScalesLegal",
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
    "ptoc's executor does not model Shared tiles (B.IOS, S0..S255)",
    "AtomicUpdateSharedTile",
    "SharedTileRecord",
    "MaterializeSharedTile",
    "ReadSharedTileWord",
    "TLOADShared",
    "SharedTileFullyInitialized",
)
unbound(
    "ptoc's executor records no memory-access events (ordering and visibility traces)",
    "StartMemoryEventCapture",
    "StopMemoryEventCapture",
)
unbound("the program counter is not modelled per command by ptoc's executor", "WritePC")
opaque(
    "the ASL test harness's own descriptor and capacity accounting (ptoc accounts per "
    "PE at bundle commit, D2)",
    "TileCapacityIsLegal",
    "TileStorageFitsCapacity",
    "TileCapacityInUseExcept",
    "TileCapacityLimitBytes",
)
