"""Reference semantics of the partial elementwise compound interfaces (pto-isa TPART*).

``partial_add``, ``partial_mul``, ``partial_max``, ``partial_min``: the ADR 0083 TPART*
rules (decisions 140-143) extended to destinations that neither source covers, and to
empty sources. The typed combine is ``ptoc.backend.isa.semantics.core.binary`` (the
executor's TADD/TMUL/TMAX/TMIN element rules, DECISIONS D5).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa.semantics.core import binary

from ._common import BF16, FP16, FP32, CompoundError, bits, datatype_of, from_bits, tile

PART_DTYPES = (
    FP32,
    FP16,
    BF16,
    np.dtype(np.int32),
    np.dtype(np.int16),
    np.dtype(np.int8),
    np.dtype(np.uint32),
    np.dtype(np.uint16),
    np.dtype(np.uint8),
)


def default_pad(op: str, dt: np.dtype) -> Any:
    """The fill of positions no source covers: pto-isa A5 for max/min, 0 for add/mul.

    max: -inf (floats), the type minimum (integers; 0 for unsigned). min: +inf (floats),
    the type maximum (integers). add and mul: 0 (the pto-isa CPU simulator's fill).
    """
    dt = np.dtype(dt)
    if op in ("add", "mul"):
        return dt.type(0)
    is_int = dt.kind in "iu"
    if op == "max":
        return np.iinfo(dt).min if is_int else dt.type(-np.inf)
    return np.iinfo(dt).max if is_int else dt.type(np.inf)


def _partial(op: str, a: Any, b: Any, shape: tuple[int, int] | None, pad: Any) -> np.ndarray:
    a = tile("a", a, dtypes=PART_DTYPES)
    b = tile("b", b, dtypes=PART_DTYPES)
    if a.dtype != b.dtype:
        raise CompoundError(f"a and b have different element types {a.dtype} and {b.dtype}")
    dt = a.dtype
    # an empty source (0 rows or 0 columns) covers nothing: it fits any destination and
    # does not contribute to the default shape
    covering = [s for s in (a, b) if s.size]
    if shape is None:
        if not covering:
            raise CompoundError("both sources are empty: pass the destination shape")
        shape = (max(s.shape[0] for s in covering), max(s.shape[1] for s in covering))
    if len(shape) != 2 or int(shape[0]) <= 0 or int(shape[1]) <= 0:
        raise CompoundError(
            f"the destination shape must be a nonzero (rows, cols), not {shape!r}"
        )
    rows, cols = (int(shape[0]), int(shape[1]))
    for name, s in (("a", a), ("b", b)):
        if s.size and (s.shape[0] > rows or s.shape[1] > cols):
            raise CompoundError(f"{name} {s.shape} does not fit in the destination {shape!r}")
    fill = default_pad(op, dt) if pad is None else pad
    try:
        fill_bits = bits(np.array([fill], dt))[0]
    except (OverflowError, ValueError, TypeError):
        raise CompoundError(f"pad {fill!r} is not a {dt} value") from None
    out = np.full((rows, cols), fill_bits, bits(a).dtype)
    # positions covered by exactly one source: that source's bits, unchanged
    for s in covering:
        out[: s.shape[0], : s.shape[1]] = bits(s)
    # positions covered by both: the typed operation
    r, c = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    if r and c:  # both sources nonempty
        x = np.ascontiguousarray(a[:r, :c]).reshape(1, r, c)
        y = np.ascontiguousarray(b[:r, :c]).reshape(1, r, c)
        res, _status = binary(op, datatype_of(dt), x, y)
        out[:r, :c] = bits(np.asarray(res, dt).reshape(r, c))
    return from_bits(out, dt)


def partial_add(
    a: Any, b: Any, shape: tuple[int, int] | None = None, pad: Any = None
) -> np.ndarray:
    """Partial TADD over ``shape`` (default: the bounding box of both sources).

    Both sources are anchored at [0, 0] and must fit in ``shape``; either may be empty
    (0 rows or 0 columns). Covered by both: typed add (integers wrap, floats RNE with
    D5 NaN/inf rules). Covered by one: that element's bits. Covered by none: ``pad``
    (default 0).
    """
    return _partial("add", a, b, shape, pad)


def partial_mul(
    a: Any, b: Any, shape: tuple[int, int] | None = None, pad: Any = None
) -> np.ndarray:
    """Partial TMUL; as :func:`partial_add` with the typed multiplication (default pad 0)."""
    return _partial("mul", a, b, shape, pad)


def partial_max(
    a: Any, b: Any, shape: tuple[int, int] | None = None, pad: Any = None
) -> np.ndarray:
    """Partial TMAX; as :func:`partial_add` with TMAX's rules (one NaN selects the number,
    two NaNs give the canonical NaN, max(+0, -0) = +0). Default pad: -inf / type minimum.
    """
    return _partial("max", a, b, shape, pad)


def partial_min(
    a: Any, b: Any, shape: tuple[int, int] | None = None, pad: Any = None
) -> np.ndarray:
    """Partial TMIN; as :func:`partial_max` with min(+0, -0) = -0. Default pad: +inf /
    type maximum.
    """
    return _partial("min", a, b, shape, pad)
