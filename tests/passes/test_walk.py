"""The passes' fast op iteration yields what xDSL's does, in the same order."""

from __future__ import annotations

import ptoc
import ptoc.lang as pt
from ptoc.passes.walk import block_ops, walk
from ptoc.testing import KernelSpec, random_kernel

F32 = ptoc.fp32


@ptoc.kernel
def _nested(x: ptoc.Tensor[F32, 64, 64], out: ptoc.Tensor[F32, 64, 64]):
    for i in pt.range(0, 64, 16):
        t = pt.load(x, rows=(i, 16), cols=(0, 32))
        for j in pt.range(0, 64, 32):
            u = pt.load(x, rows=(i, 16), cols=(j, 32))
            pt.store(out, t + u, rows=(i, 16), cols=(j, 32))
        pt.store(out, t, rows=(i, 16), cols=(32, 32))


def test_walk_is_xdsls_pre_order_through_nested_loops() -> None:
    module = _nested.trace().module
    ops = list(walk(module))
    assert ops == list(module.walk())
    assert sum(1 for op in ops if op.name == "scf.for") == 2


def test_block_ops_are_the_blocks_ops_and_survive_detaching_the_current_op() -> None:
    module, _ = random_kernel(2, KernelSpec(30))
    f = next(iter(module.ops))
    block = f.body.block
    ops = list(block.ops)
    assert list(block_ops(block)) == ops
    seen = []
    for op in block_ops(block):  # detaching the op just yielded does not end the walk
        seen.append(op)
        if op is not block.last_op:
            op.detach()
    assert seen == ops and list(block.ops) == [ops[-1]]
