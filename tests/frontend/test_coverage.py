"""Every op of the ``tile`` dialect is reachable from ``ptoc.lang``."""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects import func

from ptoc.dialects.compound_ops import ViewOp
from ptoc.dialects.tile import ALL_TILE_OPS

from .helpers import write_kernels

SNIPPETS = """
F = ptoc.Tensor[ptoc.fp32, 8, 64]
I = ptoc.Tensor[ptoc.s32, 8, 64]

@ptoc.kernel
def floats(x: F, y: F, out: F):
    pt.prefetch(x)
    a, b = pt.load(x), pt.load(y)
    col, row = pt.row_max(a), pt.col_sum(a)
    for op in (pt.add, pt.sub, pt.mul, pt.div, pt.maximum, pt.minimum):
        op(a, b); op(a, col); op(a, row); op(a, 2.0)
    for f in (pt.abs, pt.neg, pt.exp, pt.log, pt.recip, pt.sqrt, pt.rsqrt, pt.relu):
        f(a)
    a % b; a % 3.0
    for f in (pt.row_sum, pt.row_max, pt.row_min, pt.row_prod, pt.row_argmax, pt.row_argmin,
              pt.col_sum, pt.col_max, pt.col_min, pt.col_prod, pt.col_argmax, pt.col_argmin):
        f(a)
    pt.fma(a, b, a)
    pt.cast(a, ptoc.fp16, rounding="rtz")
    p = a < b
    a > 0.0
    pt.where(p, a, b); pt.where(p, a, 1.0)
    pt.full((8, 64), 1.5, ptoc.fp32)
    pt.broadcast_to(col, (8, 64)); pt.broadcast_to(row, (8, 64))
    pt.exp_diff(a, col); pt.exp_diff(a, row)
    pt.transpose(a); pt.concat(a, b); a[0:4, 8:40]
    a @ pt.transpose(b)
    v, i = pt.sort(a, width=32, descending=True)
    pt.merge(v[0, 0:32], v[1, 0:32], descending=True)
    pt.gather(a, pt.full((8, 1), 3, ptoc.s32))
    pt.scatter(a[0:1], pt.iota(64, dtype=ptoc.u32) * 0, 4)
    pt.partial_add(a, a[0:4]); pt.partial_mul(a, a[0:4])
    pt.partial_max(a, a[0:4]); pt.partial_min(a, a[0:4])
    pt.iota(16); pt.tri((8, 8))
    pt.insert(a, b[0:2, 0:8], 3, 8); pt.fillpad(a[0:4, 0:60], (8, 64), 0.0)
    q = pt.quantize(a, ptoc.s8, multiplier=4.0, zero_point=1)
    pt.dequantize(q, multiplier=0.25, zero_point=1)
    pt.quantize_rows(a, col)
    pt.store(out, a)

@ptoc.kernel
def compounds(x: F, out: F):
    a = pt.load(x)
    col = pt.row_max(a)
    q = pt.quantize_rows(a, col, 1.0, dtype=ptoc.u8)
    pt.dequantize_rows(q, col, col)
    mx = pt.quantize_mx(a)
    pt.dequantize_mx(mx.elements, mx.scales)
    r = pt.sort32(a)
    m, n = pt.merge_sorted(r.values[0:1], r.values[1:2], top_k=8)
    pt.merge_sorted(pt.Records(r.values[0:1], r.payload[0:1]),
                    pt.Records(r.values[1:2], r.payload[1:2]), exhausted=True)
    pt.merge_blocks(r.values[0:1], 32)
    packed = pt.pack_records(r)
    pt.unpack_records(packed, ptoc.fp32)
    pt.gather_pattern(packed, "P0101", dtype=ptoc.fp32)
    offsets = pt.iota(16, dtype=ptoc.s32)
    pt.gather_flat(a, offsets)
    pt.gather_blocks(a, pt.iota(2, dtype=ptoc.s32) * 32)
    pt.scatter_flat(offsets, offsets, (4, 4))
    pt.transpose(a, scratch=a)
    pt.partial_max(a[0:4], a[:, 0:8], shape=(8, 64))
    pt.store(out, a)

@ptoc.kernel
def ints(x: I, ids: ptoc.Tensor[ptoc.s32, 8, 1], out: I):
    a = pt.load(x)
    for op in ("&", "|", "^", "<<", ">>"):
        eval(f"a {op} a"); eval(f"a {op} 3")
    ~a
    pt.histogram(pt.cast(a, ptoc.u32), pt.full((8, 3), 0, ptoc.u8), 0)
    pt.store(out, a)
"""


def test_every_tile_op_is_reachable_from_lang(tmp_path: Path) -> None:
    _, kernels = write_kernels(tmp_path, SNIPPETS)
    seen: set[type] = set()
    for k in kernels.values():
        f = next(op for op in k.trace().module.ops if isinstance(op, func.FuncOp))
        seen.update(type(op) for op in f.body.block.ops)
    # tile.view is the lowerings' own reshape through GM scratch, not a kernel operation
    missing = sorted(c.name for c in ALL_TILE_OPS if c not in seen and c is not ViewOp)
    assert not missing, f"no ptoc.lang function produces {missing}"
