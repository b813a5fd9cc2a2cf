"""Reference semantics of ptoc's compound interfaces (DECISIONS D8; ``docs/compound.md``).

Pure numpy functions, one per compound interface of ``ptoc.lang``. They are the oracle
that every compound lowering is checked against by execution, so they are written from
the interfaces' documentation (pto-isa's documented hardware behaviour, overridden by the
seed rules of ADR 0083 where the two conflict), never from a lowering.

Conventions: a tile is a 2-D numpy array (rows, cols) of the element carrier dtype and
is the valid region (no PE axis, no physical padding). Records are struct-of-arrays
(:class:`Records`: a value tile and a U32 payload tile). Rejected arguments raise
:class:`CompoundError` (a ``ptoc.Error`` and a ``ValueError``) naming the rule.
"""

from __future__ import annotations

from ._common import MX, CompoundError, Records
from .gather import gather_blocks, gather_flat, gather_pattern, scatter_flat, transpose
from .partial import partial_add, partial_max, partial_min, partial_mul
from .quant import dequantize_mx, dequantize_rows, quantize_mx, quantize_rows
from .sorting import merge_blocks, merge_sorted, pack_records, sort32, unpack_records

__all__ = [
    "MX",
    "CompoundError",
    "Records",
    "dequantize_mx",
    "dequantize_rows",
    "gather_blocks",
    "gather_flat",
    "gather_pattern",
    "merge_blocks",
    "merge_sorted",
    "pack_records",
    "partial_add",
    "partial_max",
    "partial_min",
    "partial_mul",
    "quantize_mx",
    "quantize_rows",
    "scatter_flat",
    "sort32",
    "transpose",
    "unpack_records",
]
