"""``ptoc-allocate`` for kernels with run-time loops (``scf.for`` in the legalized IR).

1. Carried tiles are made distinct values: a loop's initial value that something else
   also reads, and a new value that the body does not compute itself, get a TMOV copy, so
   that the loop entry and back edge can rename queue entries (``loops``).
2. Every straight-line run of bundles (between loops, in each body) is scheduled like a
   loop-free kernel; a value read outside its run keeps its producer alive.
3. The runs and loops form one timeline that :class:`~.loops.LoopAllocator` plans.
4. Scalars: every constant and address a bundle reads gets a register of its own, written
   before the first bundle (bundles in loops run again and again); the run-time integers
   -- loop indices, ``arith`` results -- share the reserved registers by live range
   (:mod:`.integers`), and one register holds each run-time address (``pto.index``) from
   its computation to its bundle.
"""

from __future__ import annotations

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from ptoc.backend.target import MachineConfig
from ptoc.dialects import pto_ops
from ptoc.dialects.dtypes import is_pred
from ptoc.dialects.pto import (
    IndexAddrOp,
    LoadScalarOp,
    ParamOp,
    PtoOp,
)
from ptoc.dialects.pto_base import mask_attr
from ptoc.dialects.pto_types import PtoTileType
from ptoc.dialects.scalars import is_scalar, is_scalar_op

from ..diagnostics import fail, value_name
from ..legalize.ctx import dims_attr, std_dims
from ..walk import walk
from .integers import integer_colors
from .loops import Event, Loop, LoopAllocator, flatten, state_values
from .schedule import build_dataflow, live_ops, schedule, tensor_key
from .tiles import BundlePlan, TileAllocator

#: the attribute naming the register of a run-time integer (on its defining op) or of a
#: loop's index (on the ``scf.for``)
GPR_ATTR = "pto.gpr"
#: the registers a run-time address and one of its terms are computed in
ADDR_TEMPS = 2


def has_loops(f: func.FuncOp) -> bool:
    """Whether the kernel needs this allocation: it has run-time loops or run-time
    integers (a scalar load, a moved window), which the loop-free path does not know."""
    for op in walk(f):
        cls = type(op)
        structured = _STRUCTURED.get(cls)
        if structured is None:  # a fact of the op class, asked for every op
            structured = _STRUCTURED[cls] = issubclass(
                cls, (scf.ForOp, IndexAddrOp, LoadScalarOp, ParamOp)
            ) or is_scalar_op(op)
        if structured:
            return True
    return False


#: :func:`has_loops`'s test of an op, by op class
_STRUCTURED: dict[type, bool] = {}


def _copy_op(v: SSAValue, mask: int, at: Operation) -> PtoOp:
    t = v.type
    assert isinstance(t, PtoTileType)
    if is_pred(t.dtype) or t.cube is not None:
        raise fail(
            at,
            f"{value_name(v)} ({t}) is carried by a run-time loop that needs a copy of it; "
            "predicates and CUBE tiles cannot be copied",
            "compute the value inside the loop body, or carry a numeric tile",
        )
    props = {"dtype": t.dtype, "dims": dims_attr(tuple(std_dims(t))), "mask": mask_attr(mask)}
    op = pto_ops.TmovOp.build(operands=[[v], [], []], result_types=[[t]], properties=props)
    assert isinstance(op, PtoOp)
    return op


def _mask(f: func.FuncOp) -> int:
    for op in f.walk():
        if isinstance(op, PtoOp):
            return op.mask.value.data
    return 0b1000


def distinct_carried(f: func.FuncOp) -> None:
    """Make each loop's carried tiles distinct values (module docstring, step 1)."""
    mask = _mask(f)
    for loop in [op for op in f.walk() if isinstance(op, scf.ForOp)]:
        body = loop.body.block
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp)
        for k, init in enumerate(loop.iter_args):
            if is_scalar(init):
                raise fail(
                    loop,
                    "a run-time integer carried from iteration to iteration is not "
                    "supported yet",
                    "compute it from the loop index instead (e.g. off = base + i * step)",
                )
            if len(list(init.uses)) > 1:
                copy = _copy_op(init, mask, loop)
                copy.location = loop.location
                loop.parent_block().insert_op_before(copy, loop)  # type: ignore[union-attr]
                loop.operands[3 + k] = copy.dsts[0]
        seen: set[SSAValue] = set()
        for k, y in enumerate(list(yielded.operands)):
            inside = _produced_in(y, loop) and y not in body.args
            if inside and y not in seen:
                seen.add(y)
                continue
            copy = _copy_op(y, mask, loop)
            copy.location = loop.location
            body.insert_op_before(copy, yielded)
            yielded.operands[k] = copy.dsts[0]
            seen.add(copy.dsts[0])


def _produced_in(v: SSAValue, loop: scf.ForOp) -> bool:
    owner = v.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


def build_items(block: Block, dead: list[PtoOp]) -> list[PtoOp | Loop]:
    """The block's bundles and loops in order, each run of bundles scheduled."""
    items: list[PtoOp | Loop] = []
    run: list[PtoOp] = []

    def close() -> None:
        if not run:
            return
        inside = set(run)
        roots = frozenset(
            d for op in run for d in op.dsts if any(u.operation not in inside for u in d.uses)
        )
        df = build_dataflow(run)
        keep = live_ops(df, roots, _LoadedAfter(run[-1]))
        items.extend(run[i] for i in schedule(df, keep))
        dead.extend(op for op, k in zip(run, keep, strict=True) if not k)
        run.clear()

    for op in block.ops:
        if isinstance(op, PtoOp):
            run.append(op)
        elif isinstance(op, scf.ForOp):
            close()
            items.append(_loop(op, dead))
        elif isinstance(op, scf.IfOp):  # a body run zero times or once: a loop's rules
            close()
            items.append(Loop(op, build_items(op.true_region.block, dead)))  # type: ignore[arg-type]
    close()
    return items


class _LoadedAfter:
    """Whether a bundle that runs after ``last`` and outside its run of bundles loads a
    tensor: one after it in its block (loop bodies included), or anywhere in the body of
    a loop around it (the next iteration), and so on outwards. Asked only for the scratch
    stores of a run that nothing in the run reads, so kernels without them never walk."""

    def __init__(self, last: Operation) -> None:
        self.last = last
        self.loaded: set[SSAValue] | None = None

    def __call__(self, tensor: SSAValue) -> bool:
        if self.loaded is None:
            self.loaded = set()
            op: Operation | None = self.last
            while op is not None:
                after = op.next_op
                while after is not None:
                    self._collect(after)
                    after = after.next_op
                parent = op.parent_op()
                if isinstance(parent, (scf.ForOp, scf.IfOp)):
                    if isinstance(parent, scf.ForOp):
                        self._collect(parent)  # the next iteration reads the whole body
                    op = parent
                else:
                    op = None
        return tensor in self.loaded

    def _collect(self, root: Operation) -> None:
        assert self.loaded is not None
        for o in root.walk():
            if isinstance(o, PtoOp) and not o.dsts:
                continue
            t = tensor_key(o) if isinstance(o, PtoOp) else None
            if t is not None:
                self.loaded.add(t)


def _loop(op: scf.ForOp, dead: list[PtoOp]) -> Loop:
    body = op.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    loop = Loop(op, build_items(body, dead))
    loop.carried = list(body.args[1:])
    loop.inits = list(op.iter_args)
    loop.yields = list(yielded.operands)
    return loop


def loops_of(items: list[PtoOp | Loop]) -> list[Loop]:
    out = []
    for it in items:
        if isinstance(it, Loop):
            out.append(it)
            out.extend(loops_of(it.body))
    return out


def plan_tiles(
    items: list[PtoOp | Loop], target: MachineConfig
) -> tuple[list[Event], dict[int, BundlePlan], TileAllocator]:
    events: list[Event] = []
    flatten(items, events)
    state_values(events, loops_of(items))
    alloc = TileAllocator(target.hands, target.depth, target.capacity)
    for t, e in enumerate(events):
        for v in e.srcs:
            alloc.live.add(v, t)
    alloc._classify([e.dsts for e in events])
    la = LoopAllocator(alloc, events)
    la.run()
    return events, la.plans, alloc


def scalar_params(f: func.FuncOp) -> list[BlockArgument]:
    return [a for a in f.body.block.args if is_scalar(a)]


def body_block(op: Operation) -> Block:
    """The body of a loop or conditional."""
    if isinstance(op, scf.ForOp):
        return op.body.block
    assert isinstance(op, scf.IfOp)
    return op.true_region.block


def dynamic_registers(f: func.FuncOp, regs: list[str]) -> None:
    """Registers of the run-time integers: the loop indices and ``arith`` results get
    ``regs`` (after the address temporaries, which come first) by their live ranges
    (:mod:`.integers`); scalar parameters are the ABI's."""
    free = list(regs[ADDR_TEMPS:])
    for op, color in integer_colors(f).items():
        if color >= len(free):
            raise fail(
                op,
                "the kernel has more loop indices and run-time integers live at once "
                "than free registers",
                "compute fewer distinct run-time integers",
            )
        op.attributes[GPR_ATTR] = StringAttr(free[color])


def address_temps(regs: list[str]) -> tuple[str, str]:
    return regs[0], regs[1]


def count_dynamic(f: func.FuncOp) -> int:
    """The registers the run-time integers and address temporaries need at once."""
    colors = integer_colors(f)
    return ADDR_TEMPS + (max(colors.values()) + 1 if colors else 0)


__all__ = [
    "GPR_ATTR",
    "address_temps",
    "body_block",
    "build_items",
    "count_dynamic",
    "distinct_carried",
    "dynamic_registers",
    "has_loops",
    "plan_tiles",
    "scalar_params",
]
