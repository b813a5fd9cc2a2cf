"""Row and column expansions: TROWEXPAND*, TCOLEXPAND* (TEPL Mode 2, SFU).

Authority: seed TROWEXPANDMIN page (``dst[r, c] = typed min(src0[r, c], bcast[r, 0])``
with TMIN rules); ASL ``asl/tile/model/execution/expansion.asl``
(``TileExpandValueWithTypesAndFlags``) and
``asl/tile/model/legality/reduction-and-expansion.asl``.

* TROWEXPAND / TCOLEXPAND (``op=None``) copy the broadcast element bit-for-bit: no
  conversion, rounding, canonicalization or status.
* ADD/SUB/MUL/DIV/MAX/MIN are exactly ``core.binary`` with the full-shape source as the
  left operand and the broadcast element as the right one (an integer zero divisor is
  illegal: ``core.binary`` raises :class:`SemanticError`).
* EXPDIF is ``exp(src - bcast)``: same-type pairs use ``core.binary('sub')`` then
  ``core.unary('exp')`` at that type, ORing both statuses. FP16/BF16 -> FP32 first widens
  both operands exactly (ASL ``ExactWidenFP16ToFP32`` / ``ExactWidenBF16ToFP32``): the
  FP16 widening turns every NaN into the canonical FP32 quiet NaN 0x7FC00000 (so an FP16
  signalling NaN raises no NV), the BF16 widening is a 16-bit shift that keeps NaN
  payloads and signalling bits. Then FP32 subtraction and FP32 exp.

The ASL profile hard-codes two mixed-EXPDIF "discriminator" operand pairs
(``HardwareNumericMixedExpdifDiscriminator``); their values equal what this sequence
computes, but the ASL reports no status for them while this reference reports the NX of
the inexact exponential. That is a deliberate choice (D5 numerics).
"""

from __future__ import annotations

import numpy as np

from ..datatypes import DataType
from .core import binary, from_bits, is_float, no_status, to_bits, unary
from .fastpath import broadcast_minmax, finite, remember_finite

EXPAND_OPS = ("add", "sub", "mul", "div", "max", "min")
#: (source, destination) DataType pairs of TROWEXPANDEXPDIF / TCOLEXPANDEXPDIF.
EXPDIF_PAIRS = frozenset(
    {
        (DataType.FP16, DataType.FP16),
        (DataType.BF16, DataType.BF16),
        (DataType.FP32, DataType.FP32),
        (DataType.FP16, DataType.FP32),
        (DataType.BF16, DataType.FP32),
    }
)
_FP32_CANONICAL_NAN = 0x7FC00000


def expdif_types_legal(src_dt: DataType, dst_dt: DataType) -> str | None:
    """The violated EXPDIF type-pair rule, or None."""
    if (DataType(src_dt), DataType(dst_dt)) not in EXPDIF_PAIRS:
        return f"EXPDIF does not accept ({DataType(src_dt).name}, {DataType(dst_dt).name})"
    return None


def _full(bcast: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, bcast.dtype)
    out[...] = bcast  # broadcast assignment: no broadcast view object
    return out


def _view(bcast: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The broadcast operand as a read-only view: ``core.binary`` broadcasts itself, so
    the full-shape copy is only needed for the pure copies (TROWEXPAND/TCOLEXPAND).

    A view of a published operand without NaN or infinity is declared so (the small
    operand is scanned, once), so the full-shape view is never scanned itself."""
    v = np.broadcast_to(bcast, shape)
    if finite(bcast):
        remember_finite(v)
    return v


def _shape(src: np.ndarray | None, bcast: np.ndarray, shape: tuple[int, int] | None) -> tuple:
    if src is not None:
        return src.shape
    if shape is None:
        raise ValueError("a pure broadcast copy needs the destination valid shape")
    return (bcast.shape[0], *shape)


def _apply(
    op: str | None, dt: DataType, src: np.ndarray | None, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    if op is None:
        return b, no_status(b.shape[0])
    if op not in EXPAND_OPS or src is None:
        raise ValueError(f"expansion {op!r} needs a known op and a full-shape source")
    return binary(op, dt, src, b)


def _expand(
    op: str | None,
    dt: DataType,
    src: np.ndarray | None,
    b: np.ndarray,
    shape: tuple[int, ...],
) -> tuple[np.ndarray, np.ndarray]:
    """``op(src, b broadcast to shape)``; integer operations broadcast ``b`` in their
    ufuncs (no view, and no NaN/Inf facts to record for it)."""
    if op is None:
        return _apply(None, dt, src, _full(b, shape))
    if src is not None and not is_float(dt) and b.ndim == src.ndim:
        return _apply(op, dt, src, b)
    return _apply(op, DataType(dt), src, _view(b, shape))


def row_expand(
    op: str | None,
    dt: DataType,
    src: np.ndarray | None,
    bcast: np.ndarray,
    shape: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``dst[r, c] = op(src[r, c], bcast[r, 0])``; ``op=None`` copies ``bcast[r, 0]``.

    ``src`` is (P, R, C) (may be None for the copy, then ``shape`` = (R, C) is needed);
    ``bcast`` is (P, R, 1). Returns ``(dst (P, R, C), status)``.
    """
    # the operand itself when it is one column wide: its facts are kept by identity
    col = bcast if bcast.shape[2] == 1 else bcast[:, :, :1]
    if src is not None and op in ("max", "min"):  # the common case without a view
        fast = broadcast_minmax(op, dt, src, col)
        if fast is not None:
            return fast
    return _expand(op, dt, src, col, _shape(src, bcast, shape))


def col_expand(
    op: str | None,
    dt: DataType,
    src: np.ndarray | None,
    bcast: np.ndarray,
    shape: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``dst[r, c] = op(src[r, c], bcast[0, c])``; ``op=None`` copies ``bcast[0, c]``.

    ``src`` is (P, R, C) (may be None for the copy, then ``shape`` = (R, C) is needed);
    ``bcast`` is (P, 1, C). Returns ``(dst (P, R, C), status)``.
    """
    row = bcast if bcast.shape[1] == 1 else bcast[:, :1, :]
    if src is not None and op in ("max", "min"):  # the common case without a view
        fast = broadcast_minmax(op, dt, src, row)
        if fast is not None:
            return fast
    return _expand(op, dt, src, row, _shape(src, bcast, shape))


def _widen_fp32(src_dt: DataType, a: np.ndarray) -> np.ndarray:
    """Exact FP16/BF16 -> FP32 widening of the mixed EXPDIF path (see module docstring)."""
    bits = to_bits(a).astype(np.uint32)
    if src_dt == DataType.BF16:
        return from_bits(bits << np.uint32(16), DataType.FP32)
    with np.errstate(invalid="ignore"):
        wide = np.asarray(a, dtype=np.float16).astype(np.float32)
    is_nan = ((bits & 0x7C00) == 0x7C00) & ((bits & 0x03FF) != 0)
    wide_bits = np.where(is_nan, np.uint32(_FP32_CANONICAL_NAN), to_bits(wide))
    return from_bits(wide_bits.astype(np.uint32), DataType.FP32)


def _expdif(
    src_dt: DataType, dst_dt: DataType, src: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    src_dt, dst_dt = DataType(src_dt), DataType(dst_dt)
    if (src_dt, dst_dt) not in EXPDIF_PAIRS:
        raise ValueError(expdif_types_legal(src_dt, dst_dt))
    if src_dt != dst_dt:
        src, b = _widen_fp32(src_dt, src), _widen_fp32(src_dt, b)
    diff, st_sub = binary("sub", dst_dt, src, b)
    res, st_exp = unary("exp", dst_dt, diff)
    return res, st_sub | st_exp


def row_expand_expdif(
    src_dt: DataType, dst_dt: DataType, src: np.ndarray, bcast: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """TROWEXPANDEXPDIF: ``dst[r, c] = exp(src[r, c] - bcast[r, 0])`` in ``dst_dt``."""
    return _expdif(src_dt, dst_dt, src, _view(bcast[:, :, :1], src.shape))


def col_expand_expdif(
    src_dt: DataType, dst_dt: DataType, src: np.ndarray, bcast: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """TCOLEXPANDEXPDIF: ``dst[r, c] = exp(src[r, c] - bcast[0, c])`` in ``dst_dt``."""
    return _expdif(src_dt, dst_dt, src, _view(bcast[:, :1, :], src.shape))
