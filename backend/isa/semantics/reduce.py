"""Row and column reductions: TROW/TCOL SUM, MAX, MIN, PROD, ARGMAX, ARGMIN (Mode 2).

Authority: DECISIONS.md D5 (left folds in increasing index order at the element type, no
widening); ASL ``asl/tile/model/execution/reduction.asl`` (``ExecuteTileReduction``,
``TileReductionStepWithFlags``) and ``asl/tile/model/legality/reduction-and-expansion.asl``.

Fold rules (ASL ``TileReductionInitialValue``):

* SUM folds from the zero encoding (+0.0 for floats) with TADD, PROD from the typed one
  with TMUL, both starting at index 0. So a float row of only -0.0 sums to +0.0.
* MAX/MIN (and the ARG variants) start from the raw first element and fold from index 1
  with TMAX/TMIN. A single-element reduction returns that element unchanged, even a
  signalling NaN, without status.
* ARG: after each step the index moves to ``k`` exactly when the step result equals the
  new value's encoding and differs from the accumulator's encoding (raw-bit equality, as
  ASL ``Word`` comparison). Ties therefore keep the lowest index, +0 beats an earlier -0
  for ARGMAX (and -0 an earlier +0 for ARGMIN), a NaN accumulator is replaced by the
  next number, and when two NaNs meet the index moves only if the new element already is
  the canonical NaN that TMAX/TMIN produce. The output is the index in S32 or U32.

Integer folds are exact modulo the element width, so numpy's reductions in the carrier
dtype reproduce them (and argmax/argmin return the first extremum). FP64/FP32/FP16/BF16
folds take the fast paths of :func:`.fastpath.fold` / :func:`.fastpath.arg_fold`
(whole-row numpy accumulations with per-step exactness checks), which leave the rows
they cannot settle (NaN/Inf, possible underflow, zero extrema of ARG folds) to the
step loop. Every other float fold loops over the reduced axis with ``core.binary``
vectorized across PEs and the other axis.
"""

from __future__ import annotations

import numpy as np

from ..datatypes import DataType, info
from . import fastpath as _fp
from .core import binary, no_status, to_bits

REDUCE_OPS = ("sum", "max", "min", "prod")
ARG_OPS = {"argmax": "max", "argmin": "min"}
ARG_INDEX_DTYPES = frozenset({DataType.S32, DataType.U32})
_STEP = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}


def _stacked(x: np.ndarray) -> np.ndarray:
    """(P, N, K) -> contiguous (K, P, N) so every fold step reads one contiguous slice."""
    return np.ascontiguousarray(np.moveaxis(x, 2, 0))


def _reduce_last(op: str, dt: DataType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reduce (P, N, K) over its last axis -> ((P, N), status)."""
    if op not in REDUCE_OPS:
        raise ValueError(f"unknown reduction {op!r}")
    ti = info(dt)
    p = x.shape[0]
    if not ti.is_float:
        if op == "sum":
            return x.sum(axis=2, dtype=ti.carrier), no_status(p)
        if op == "prod":
            return x.prod(axis=2, dtype=ti.carrier), no_status(p)
        return (x.max(axis=2) if op == "max" else x.min(axis=2)), no_status(p)
    if _fp.enabled():
        fast = _fp.fold(op, dt, x)
        if fast is not None:
            acc, status, redo = fast
            if redo.any():  # the step loop, one row per "PE", ORed into the real PEs
                idx = np.nonzero(redo)
                racc, rst = _fold_loop(op, dt, x[idx][:, None, :])
                acc[idx] = racc[:, 0]
                np.bitwise_or.at(status, idx[0], rst)
            return acc, status
    return _fold_loop(op, dt, x)


def _fold_loop(op: str, dt: DataType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fold of (P, N, K) over K one ``core.binary`` step at a time."""
    ti = info(dt)
    xs = _stacked(x)
    status = no_status(x.shape[0])
    if op in ("sum", "prod"):
        init = np.zeros if op == "sum" else np.ones
        acc, first = init(xs.shape[1:], dtype=ti.carrier), 0
    else:
        acc, first = xs[0].copy(), 1
    for k in range(first, xs.shape[0]):
        acc, st = binary(_STEP[op], dt, acc, xs[k])
        status = status | st
    return acc, status


def _arg_last(
    op: str, dt: DataType, x: np.ndarray, index_dt: DataType
) -> tuple[np.ndarray, np.ndarray]:
    """Index of the extremum of (P, N, K) over its last axis -> ((P, N) index_dt, status)."""
    if op not in ARG_OPS:
        raise ValueError(f"unknown arg reduction {op!r}")
    if DataType(index_dt) not in ARG_INDEX_DTYPES:
        raise ValueError("ARGMAX/ARGMIN destinations are S32 or U32")
    ti = info(dt)
    p = x.shape[0]
    carrier = info(index_dt).carrier
    if not ti.is_float:
        idx = np.argmax(x, axis=2) if op == "argmax" else np.argmin(x, axis=2)
        return idx.astype(carrier), no_status(p)
    if _fp.enabled():
        fast = _fp.arg_fold(op, dt, x)
        if fast is not None:
            idx, redo = fast
            status = no_status(p)
            if redo.any():  # NaN rows and zero extrema: the step loop on those rows
                where = np.nonzero(redo)
                ridx, rst = _arg_loop(op, dt, x[where][:, None, :])
                idx[where] = ridx[:, 0]
                np.bitwise_or.at(status, where[0], rst)
            return idx.astype(carrier), status
    idx, status = _arg_loop(op, dt, x)
    return idx.astype(carrier), status


def _arg_loop(op: str, dt: DataType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ARG fold of (P, N, K) over K one step at a time: (index (P, N) int64, status)."""
    xs = _stacked(x)
    status = no_status(x.shape[0])
    acc = xs[0].copy()
    idx = np.zeros(xs.shape[1:], dtype=np.int64)
    for k in range(1, xs.shape[0]):
        res, st = binary(ARG_OPS[op], dt, acc, xs[k])
        res_bits = to_bits(res)
        moved = (res_bits == to_bits(xs[k])) & (res_bits != to_bits(acc))
        idx[moved] = k
        acc = res
        status = status | st
    return idx, status


def row_reduce(op: str, dt: DataType, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TROWSUM/MAX/MIN/PROD: fold each row of (P, R, C) in increasing column order.

    Returns ``(dst (P, R, 1) in dt's carrier, status)``.
    """
    acc, status = _reduce_last(op, DataType(dt), a)
    return acc[:, :, None], status


def col_reduce(op: str, dt: DataType, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TCOLSUM/MAX/MIN/PROD: fold each column of (P, R, C) in increasing row order.

    Returns ``(dst (P, 1, C) in dt's carrier, status)``.
    """
    acc, status = _reduce_last(op, DataType(dt), np.swapaxes(a, 1, 2))
    return acc[:, None, :], status


def row_arg(
    op: str, dt: DataType, a: np.ndarray, index_dt: DataType
) -> tuple[np.ndarray, np.ndarray]:
    """TROWARGMAX/TROWARGMIN: column index of each row's extremum (lowest on ties).

    Returns ``(dst (P, R, 1) in index_dt's carrier (S32/U32), status)``.
    """
    idx, status = _arg_last(op, DataType(dt), a, index_dt)
    return idx[:, :, None], status


def col_arg(
    op: str, dt: DataType, a: np.ndarray, index_dt: DataType
) -> tuple[np.ndarray, np.ndarray]:
    """TCOLARGMAX/TCOLARGMIN: row index of each column's extremum (lowest on ties).

    Returns ``(dst (P, 1, C) in index_dt's carrier (S32/U32), status)``.
    """
    idx, status = _arg_last(op, DataType(dt), np.swapaxes(a, 1, 2), index_dt)
    return idx[:, None, :], status
