"""TPARTADD/TPARTMUL/TPARTMAX/TPARTMIN: union of two origin-anchored rectangles.

Authority: seed ADR 0083 decisions 140-143; ASL ``ExecuteTilePartial`` in
``asl/tile/model/execution/complex.asl`` and ``TilePartialCoverageLegal`` in
``asl/tile/model/legality/allocation-capacity.asl``.

Both source valid rectangles start at [0, 0] and fit in the destination valid rectangle;
one of them equals it. Where both cover a coordinate the typed TADD/TMUL/TMAX/TMIN of
``core.binary`` applies (integer wrap, rounding, NaN and signed-zero rules, status);
where only one covers it, that element is copied bit-for-bit with no status.
"""

from __future__ import annotations

import numpy as np

from ..datatypes import DataType
from .core import SemanticError, binary

#: Union of the TPART type lists: seed decision 140 and the ASL legality function
#: ``TilePartialDataTypeSupportedForOperation`` (same nine types for every op). The
#: TPARTMUL contract text and the 0.58.3 catalog drop S8/U8 for TPARTMUL; that type
#: choice belongs to the executor's legality table, the semantics here cover all nine.
PART_DTYPES = frozenset(
    {
        DataType.FP32,
        DataType.FP16,
        DataType.BF16,
        DataType.S32,
        DataType.S16,
        DataType.S8,
        DataType.U32,
        DataType.U16,
        DataType.U8,
    }
)

PART_OPS = ("add", "mul", "max", "min")


def tpart_shapes_legal(
    a_shape: tuple[int, int], b_shape: tuple[int, int], dst_shape: tuple[int, int]
) -> str | None:
    """The violated TPART coverage rule for valid shapes (ValidRow, ValidCol), or None."""
    (ar, ac), (br, bc), (dr, dc) = a_shape, b_shape, dst_shape
    if min(ar, ac, br, bc, dr, dc) <= 0:
        return "TPART source and destination valid rectangles are nonempty"
    if ar > dr or ac > dc or br > dr or bc > dc:
        return "TPART source valid rectangle does not fit in the destination"
    if (ar, ac) != (dr, dc) and (br, bc) != (dr, dc):
        return "TPART neither source covers the complete destination valid rectangle"
    return None


def tpart(
    op: str,
    dt: DataType,
    a: np.ndarray,
    b: np.ndarray,
    dst_valid: tuple[int, int],
) -> tuple[np.ndarray, np.ndarray]:
    """Combine ``a`` (P, ra, ca) and ``b`` (P, rb, cb) into the (P, VR, VC) destination.

    ``op`` is add, mul, max or min. Raises :class:`SemanticError` when the coverage rule
    of :func:`tpart_shapes_legal` fails. Returns ``(dst, status)``; only overlap elements
    contribute status.
    """
    if op not in PART_OPS:
        raise ValueError(f"unknown TPART operation {op!r}")
    vr, vc = dst_valid
    rule = tpart_shapes_legal(a.shape[1:], b.shape[1:], (vr, vc))
    if rule is not None:
        raise SemanticError(rule)
    # The covering source supplies every coordinate; the other source's rectangle is the
    # overlap, which the typed operation then overwrites (left operand stays ``a``).
    full = a if a.shape[1:] == (vr, vc) else b
    dst = full.copy()
    orow, ocol = min(a.shape[1], b.shape[1]), min(a.shape[2], b.shape[2])
    res, status = binary(
        op,
        dt,
        np.ascontiguousarray(a[:, :orow, :ocol]),
        np.ascontiguousarray(b[:, :orow, :ocol]),
    )
    dst[:, :orow, :ocol] = res
    return dst, status
