"""Registers of the run-time integers of a kernel with loops: loop indices, ``arith``
results and scalar loads, by their live ranges.

The ops are numbered in program order (a pre-order walk of the function). A loop index
lives over its loop; a run-time integer from its definition to its last read, where a
read inside a loop that does not contain the definition lasts to the end of that loop
(the next iteration reads it again), a loop's upper bound is read at its latch (the end
of the loop) and a comparison's operands at the guard of the conditional it controls.
Values whose ranges do not overlap share a register, so a kernel needs as many
registers as run-time integers are live at once, not one per integer it ever computes.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.ir import Operation, SSAValue

from ptoc.dialects.pto import LoadScalarOp, RegOp
from ptoc.dialects.scalars import CoreOp, is_scalar_op


def is_dynamic(op: Operation) -> bool:
    """An op computing a run-time integer in a register: ``arith`` or a scalar load (a
    comparison is the condition setter of its conditional's guard: no register)."""
    return (is_scalar_op(op) and not isinstance(op, (arith.CmpiOp, CoreOp))) or isinstance(
        op, LoadScalarOp
    )


def sink_constants(f: func.FuncOp) -> None:
    """Move each ``arith.constant`` right before the first op of its block that reads it
    (legalize creates them at the top): a constant's register is then busy only from
    there, not from the start of the kernel."""
    for op in list(f.walk()):
        if not isinstance(op, arith.ConstantOp) or op.parent_block() is None:
            continue
        block = op.parent_block()
        assert block is not None
        firsts = []
        for use in op.result.uses:
            user: Operation | None = use.operation
            while user is not None and user.parent_block() is not block:
                user = user.parent_op()
            if user is not None:
                firsts.append(user)
        if not firsts:
            continue
        index = {o: i for i, o in enumerate(block.ops)}
        first = min(firsts, key=lambda o: index[o])
        if first is not op.next_op:
            op.detach()
            block.insert_op_before(op, first)


def integer_colors(f: func.FuncOp) -> dict[Operation, int]:
    """Each loop and run-time integer op -> its register's index (0, 1, ...): values
    whose live ranges overlap get distinct indices."""
    order = list(f.walk())
    pos = {op: i for i, op in enumerate(order)}
    end: dict[Operation, int] = {}
    for op in reversed(order):  # the last position inside each op
        last = pos[op]
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    last = max(last, end[inner])
        end[op] = last

    def read_at(user: Operation, v: SSAValue) -> int:
        if isinstance(user, scf.ForOp) and v is user.ub:
            return end[user]  # the latch compares with it again
        if isinstance(user, (arith.CmpiOp, RegOp)):  # read by the guard / the bundles
            return max((pos[u.operation] for u in user.result.uses), default=pos[user])
        return pos[user]

    ranges: list[tuple[int, int, Operation]] = []
    for op in order:
        if isinstance(op, scf.ForOp):
            ranges.append((pos[op], end[op], op))
        elif is_dynamic(op):
            last = pos[op]
            for r in op.results:
                for use in r.uses:
                    at = read_at(use.operation, r)
                    outer = use.operation.parent_op()
                    while outer is not None and outer is not f:
                        if isinstance(outer, scf.ForOp) and not _inside(op, outer):
                            at = max(at, end[outer])
                        outer = outer.parent_op()
                    last = max(last, at)
            ranges.append((pos[op], last, op))
    colors: dict[Operation, int] = {}
    free_at: list[int] = []  # per color, the last position of its current value
    for start, stop, op in sorted(ranges, key=lambda r: (r[0], r[1])):
        for c, busy in enumerate(free_at):
            if busy < start:
                free_at[c] = stop
                colors[op] = c
                break
        else:
            colors[op] = len(free_at)
            free_at.append(stop)
    return colors


def _inside(op: Operation, loop: Operation) -> bool:
    p = op.parent_op()
    while p is not None:
        if p is loop:
            return True
        p = p.parent_op()
    return False


__all__ = ["integer_colors", "is_dynamic", "sink_constants"]
