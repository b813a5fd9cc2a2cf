"""ASL functions the tool deliberately does not bind to ptoc.

``NOT_APPLICABLE`` entries are ASL-internal helpers (their subject has no machine
meaning in ptoc) or rules a ptoc decision replaces; ``UNBOUND`` entries are machine
behaviour ptoc does not model yet. Calling one ends the test with that classification
and the reason given here.
"""

from __future__ import annotations

from .core import not_applicable, unbound

unbound(
    "ptoc has no CUBE engine yet (TMATMUL/TGEMV families)",
    "ConfigureCubeTile", "ConfigureCubeTileForMask", "ConfigureCubeUnitTile",
    "WriteCubeStorageValue", "TileCubeCellElementIndex", "TileCubePayloadIndex",
    "SelectTestCUBEDataType", "ResetCubeOrdinaryOperands", "CubeTotalityOperands",
)

not_applicable(
    "asl-internal",
    "an internal step of the ASL's executable model (no ptoc counterpart)",
    "TileCommitConversionResult", "TileCompareBoolean",
)
