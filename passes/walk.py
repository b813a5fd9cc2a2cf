"""Fast iteration over a kernel's ops, for the passes that visit every op of a large
kernel several times.

xDSL's ``Block.ops`` and ``Operation.walk`` go through a Python iterator object and
three nested generators per op (about four times the cost of following the block's
links directly). These functions yield the same ops in the same order, and like xDSL's
iterator they read an op's successor before yielding it, so the caller may detach the op
it was given.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Block, Operation


def block_ops(block: Block) -> Iterator[Operation]:
    """The ops of ``block`` in order (``block.ops``)."""
    op = block._first_op
    while op is not None:
        nxt = op._next_op
        yield op
        op = nxt


def walk(root: Operation) -> Iterator[Operation]:
    """``root`` and every op nested in it, in pre-order (``root.walk()``)."""
    yield root
    for region in root.regions:
        for block in region.blocks:
            op = block._first_op
            while op is not None:
                nxt = op._next_op
                if op.regions:
                    yield from walk(op)
                else:
                    yield op
                op = nxt
