"""The :class:`Machine`: state plus the program runner (tile bundles and scalar blocks).

``Machine.run`` walks the program's blocks in order. A tile bundle commits at its
BSTOP, at the next BSTART, or at the end of the program; a standard block
(``BSTART.STD FALL``) runs its scalar instructions on every PE. Any fault propagates as
a :class:`~ptoc.runtime.faults.MachineFault` naming the block (``bundle N``: the 0-based
count of tile bundles before it, or ``scalar block N``), the operation and the rule;
the faulting block has no effect.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ptoc.backend.encoding import decode
from ptoc.backend.errors import Error
from ptoc.backend.isa.fields import GPR_BY_NAME, GPR_COUNT, XMASK, Hand, mask_pes
from ptoc.backend.isa.shared import SHARED_TILE_COUNT
from ptoc.backend.literals import show
from ptoc.backend.program import (
    END,
    Block,
    BlockGraph,
    Generic,
    Ios,
    Iot,
    Program,
    Scalar,
    ScalarStart,
    Stop,
    TileRef,
    TileStart,
)
from ptoc.backend.target import ConfigError, MachineConfig

from . import ops  # noqa: F401  (registers every operation handler)
from .arrays import array_dtype_rule, little_endian
from .bundle import BundlePlan, build_plan, command_text, encoding_rule, generic_kind
from .engine import execute, execute_untraced
from .faults import (
    BundleControlFault,
    BundleLocation,
    IllegalInstructionFault,
    InstructionPCFault,
    MachineFault,
    StepBoundExceeded,
    unsupported,
)
from .gm import Memory
from .memory import GMError, check_range
from .scalar import (
    RA,
    ScalarContext,
    ScalarStep,
    compile_scalar,
    is_condition_setter,
    run_scalar_block,
)
from .scalar_ints import IntBlock, compile_int_block
from .shared import SharedTile
from .state import MachineSnapshot, MachineState
from .tiles import Layout, Tile, poisoned, raw_bits
from .trace import Trace, TraceRecord, record_bundle, record_scalar


class MachineError(Error):
    """A host-side API misuse (unknown register, bad tile name, ...)."""


@dataclass(frozen=True)
class TileView:
    """A published tile as seen from the host: descriptor, values and definedness.

    ``values`` is ``(pes, ValidRow, ValidCol)`` in the DataType carrier (bool for
    predicate tiles) with zeros on PEs outside the allocation ``mask``; ``defined`` has
    the same shape. ``payload`` is the full physical storage (poison where undefined).
    """

    name: str
    dtype: Any
    rows: int
    cols: int
    valid_rows: int
    valid_cols: int
    layout: Layout
    mask: int
    capacity: int
    values: np.ndarray
    defined: np.ndarray
    payload: np.ndarray

    @property
    def predicate(self) -> bool:
        return self.dtype is None

    @property
    def pes(self) -> tuple[int, ...]:
        return mask_pes(self.mask)

    def pe(self, pe: int) -> np.ndarray:
        """The valid region of one PE."""
        return self.values[pe]


@dataclass
class RunReport:
    """What one ``run`` did: tile bundles and scalar blocks executed and, when asked,
    the trace."""

    bundles: int = 0
    scalar_blocks: int = 0
    trace: Trace | None = None
    records: list[TraceRecord] = field(default_factory=list)


_Step = tuple[str, Block, Any]


class Machine:
    """A PTO core: global memory, per-PE GPRs and status, four Local tile queues."""

    def __init__(
        self, config: MachineConfig | str | None = None, *, gm: Memory | None = None
    ) -> None:
        """A core of ``config``; ``gm``: a global memory shared with other cores (a grid
        launch, :class:`ptoc.runtime.grid.Grid`), else a fresh one of ``gm_size`` bytes."""
        parsed = MachineConfig.parse(config) if isinstance(config, str) else config
        self.config: MachineConfig = parsed or MachineConfig()
        if gm is not None and len(gm) != self.config.gm_size:
            raise MachineError(
                f"the shared global memory has {len(gm)} bytes, the machine gm_size="
                f"{self.config.gm_size}"
            )
        try:
            self.state = MachineState(self.config, gm)
        except MemoryError:
            raise ConfigError(
                f"cannot allocate the {self.config.gm_size}-byte global memory on this host"
            ) from None

    # ------------------------------------------------------------------ GM

    def load_gm(self, addr: int, array: np.ndarray | bytes) -> None:
        """Place the bytes of ``array`` at byte address ``addr``, little-endian.

        ``array`` is ``bytes`` or a numeric numpy array (bool, integers, floats, the
        ml_dtypes formats, or raw unstructured bytes such as a saved bfloat16 array);
        a big-endian array is stored as its little-endian bytes. Object, complex,
        datetime, string and structured arrays are refused (GMError): their bytes are
        pointers or something the machine has no element type for.
        """
        a = _index(addr, "load_gm address")
        if isinstance(array, (bytes, bytearray, memoryview)):
            data = np.frombuffer(bytes(array), np.uint8)
        elif isinstance(array, np.ndarray):
            rule = array_dtype_rule(array.dtype)
            if rule is not None:
                raise GMError(f"load_gm: {rule}")
            data = little_endian(array).reshape(-1).view(np.uint8)
        else:
            raise GMError(f"load_gm takes a numpy array or bytes, not {type(array).__name__}")
        check_range(self.config.gm_size, a, data.size, "load_gm")
        self.state.gm[a : a + data.size] = data
        written = self.state.gm_written
        if written is not None:
            written.span(a, a + data.size)

    def read_gm(self, addr: int, dtype: Any, shape: int | tuple[int, ...]) -> np.ndarray:
        """A copy of GM at ``addr`` viewed as ``dtype`` (a numeric numpy dtype, see
        :meth:`load_gm`) with ``shape``."""
        a = _index(addr, "read_gm address")
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise GMError(f"read_gm: {dtype!r} is not a numpy dtype") from None
        rule = array_dtype_rule(dt)
        if rule is not None:
            raise GMError(f"read_gm: {rule}")
        shp = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        dims = tuple(_index(d, "read_gm shape") for d in shp)
        if any(d < 0 for d in dims):
            raise GMError(f"read_gm: shape {dims} has a negative dimension")
        n = math.prod(dims) * dt.itemsize
        check_range(self.config.gm_size, a, n, "read_gm")
        return self.state.gm[a : a + n].copy().view(dt).reshape(dims)

    # ------------------------------------------------------------------ GPRs

    def _reg(self, reg: str | int) -> int:
        if isinstance(reg, str):
            if reg not in GPR_BY_NAME:
                raise MachineError(f"unknown GPR {show(reg)}")
            return GPR_BY_NAME[reg]
        if isinstance(reg, bool) or not isinstance(reg, (int, np.integer)):
            raise MachineError(f"a GPR is a name or a selector, not {type(reg).__name__}")
        if not 0 <= reg < GPR_COUNT:
            raise MachineError(f"GPR selector {reg} is outside 0..{GPR_COUNT - 1}")
        return int(reg)

    def set_gpr(self, reg: str | int, value: int, pe: int | None = None) -> None:
        """Set a GPR on one PE (or every PE when ``pe`` is None); writes to ``zero`` are
        discarded; values wrap to 64 bits."""
        r = self._reg(reg)
        if pe is not None and (
            not isinstance(pe, (int, np.integer)) or not 0 <= pe < self.config.pes
        ):
            raise MachineError(f"PE{pe} does not exist ({self.config.pes} PE(s))")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise MachineError(f"a GPR value is an integer, not {type(value).__name__}")
        if r == 0:
            return
        v = np.uint64(int(value) & XMASK)
        gpr = self.state.writable_gpr()
        if pe is None:
            gpr[:, r] = v
        else:
            gpr[pe, r] = v

    def gpr(self, reg: str | int, pe: int = 0) -> int:
        """The unsigned 64-bit value of a GPR on one PE (0 .. pes-1)."""
        r = self._reg(reg)
        if not isinstance(pe, (int, np.integer)) or not 0 <= pe < self.config.pes:
            raise MachineError(f"PE{pe} does not exist ({self.config.pes} PE(s))")
        return int(self.state.gpr[pe, r])

    # ------------------------------------------------------------------ tiles, status

    @property
    def status(self) -> np.ndarray:
        """Sticky numeric status per PE (bits NV=1, DZ=2, OF=4, UF=8, NX=16)."""
        return self.state.status.copy()

    def tile(self, name: str | TileRef) -> TileView:
        """The tile a relative name (``T#1``, ``U#3``...) selects now."""
        ref = name if isinstance(name, TileRef) else _parse_ref(name)
        try:
            t = self.state.lookup(ref)
        except MachineFault as e:
            raise MachineError(e.rule) from None
        return _view(str(ref), t)

    def shared(self, tid: int) -> SharedTile | None:
        """Shared register ``S<tid>`` (0..255) as it is now: its immutable record, or None
        while it is unallocated."""
        if (
            isinstance(tid, bool)
            or not isinstance(tid, (int, np.integer))
            or not (0 <= int(tid) < SHARED_TILE_COUNT)
        ):
            raise MachineError(f"{tid!r} is not a Shared register number 0..255")
        return self.state.shared.get(int(tid))

    def tiles(self) -> dict[str, TileView]:
        """Every tile present in a queue, by relative name."""
        out = {}
        for h, q in enumerate(self.state.queues):
            for k, t in enumerate(q, 1):
                name = f"{Hand(h).name}#{k}"
                out[name] = _view(name, t)
        return out

    def push_tile(
        self,
        hand: str | Hand,
        values: np.ndarray,
        dtype: Any,
        *,
        size: int | None = None,
        cols: int | None = None,
        mask: int = 0b1111,
        defined: np.ndarray | None = None,
        layout: Layout = Layout.ROW_MAJOR,
    ) -> None:
        """Test/debug helper: publish a tile directly, without a bundle (queue and capacity
        rules still apply).

        ``values`` is ``(ValidRow, ValidCol)`` (copied to every PE of ``mask``) or
        ``(pes, ValidRow, ValidCol)``; ``dtype`` a DataType; ``size`` a SizeCode (default:
        the smallest that holds the shape); ``defined`` an optional
        ``(pes, Rows, Col)`` definedness map.
        """
        from ptoc.backend.isa import DataType, info

        from .tiles import derived_rows, size_code_bytes

        dt = DataType(dtype)
        carrier = info(dt).carrier
        v = np.asarray(values)
        if v.ndim == 2:
            v = np.broadcast_to(v, (self.config.pes, *v.shape))
        v = v.astype(carrier) if v.dtype != carrier else v
        _, vr, vc = v.shape
        c = cols or 1 << max(vc - 1, 0).bit_length()
        codes = [size] if size else range(1, 11)
        for code in codes:
            rows = derived_rows(size_code_bytes(code), c, info(dt).bits)
            if rows >= vr:
                break
        else:
            raise MachineError(f"no SizeCode holds a {vr}x{vc} {dt.name} tile of Col {c}")
        payload = poisoned(dt, (self.config.pes, rows, c))
        for pe in mask_pes(mask):
            payload[pe, :vr, :vc] = v[pe]
        payload.flags.writeable = False
        t = Tile(dt, rows, c, vr, vc, layout, mask, size_code_bytes(code), payload, defined,
                 serial=self.state.next_serial())  # fmt: skip
        h = int(Hand[hand] if isinstance(hand, str) else Hand(hand))
        push = self.state.check_push([(h, mask, t.capacity)])
        self.state.apply_push(push, [(h, t)])

    def snapshot(self) -> MachineSnapshot:
        """A deep copy of the whole state; ``==`` compares it bit for bit."""
        return self.state.snapshot()

    # ------------------------------------------------------------------ running

    def run(self, program: Program | bytes, trace: bool = False) -> RunReport:
        """Execute a Program (or little-endian parcels, decoded first), following its
        block graph (D12) until the continuation leaves the program; stops with
        :class:`StepBoundExceeded` after ``config.max_steps`` blocks."""
        if isinstance(program, (bytes, bytearray)):
            program = decode(bytes(program))
        report = RunReport(trace=Trace() if trace else None)
        records = report.trace.records if report.trace is not None else None
        report.bundles, report.scalar_blocks = self._walk(program, records)
        if report.trace is not None:
            report.records = report.trace.records
        return report

    def run_quiet(self, program: Program) -> None:
        """:meth:`run` without a report (what a caller that reads only the memory and
        the state afterwards needs)."""
        self._walk(program, None)

    def _walk(self, program: Program, records: list[TraceRecord] | None) -> tuple[int, int]:
        """Run ``program`` (appending a trace record per block to ``records`` when
        given); returns the tile bundles and scalar blocks executed."""
        graph, steps = self._compile(program)
        state = self.state
        tiles = scalars = 0  # tile bundles and scalar blocks run so far (docs/formats.md)
        bound = self.config.max_steps
        executed = 0
        pos = 0 if steps else END
        # straight runs of tile bundles skip the per-block bookkeeping below when
        # nothing is recorded per block (no trace, no grid access log)
        ends = straight_runs(program, steps) if records is None else None
        while pos != END:
            if ends is not None and state.access_log is None:
                end = min(ends[pos], pos + bound - executed)
                if end > pos:
                    done, fault = _run_straight(state, steps, pos, end)
                    pos += done
                    tiles += done
                    executed += done
                    if pos == len(steps):
                        break
                    if fault is not None:  # located below like any faulting block
                        block = steps[pos][1]
                        raise self._located(fault, program, "tile", block, steps[pos][2],
                                            tiles, False) from None  # fmt: skip
            kind, block, payload = steps[pos]
            in_scalar = isinstance(block.start, ScalarStart)
            index = scalars if in_scalar else tiles
            nxt = graph.fall[pos]
            if state.access_log is not None:
                state.access_log.block = (in_scalar, index, block.index)
            try:
                if executed >= bound:
                    raise StepBoundExceeded(
                        f"the run executed {bound} blocks without ending (machine "
                        f"parameter max_steps={bound}); the next block, block {pos} of "
                        f"the program, was not run"
                    )
                executed += 1
                if kind == "tile":
                    if records is None:
                        execute_untraced(state, payload)
                    else:
                        before = state.status.copy()
                        outcome = execute(state, payload)
                        records.append(record_bundle(index, payload, outcome, state, before))
                elif kind == "scalar":
                    gprs_before = state.gpr.copy() if records is not None else None
                    nxt = self._run_scalar(pos, payload, graph)
                    if records is not None:
                        records.append(record_scalar(index, block, gprs_before, state.gpr))
                else:
                    raise payload[0](payload[1], payload[2])
            except MachineFault as f:
                located = self._located(f, program, kind, block, payload, index, in_scalar)
                raise located from None
            if in_scalar:
                scalars += 1
            elif block.start is not None:
                tiles += 1
            pos = nxt
        return tiles, scalars

    @staticmethod
    def _located(
        f: MachineFault,
        program: Program,
        kind: str,
        block: Block,
        payload: Any,
        index: int,
        in_scalar: bool,
    ) -> MachineFault:
        """``f`` located at its block (``index``: the tile bundle or scalar block count
        before it) and, where known, at the offending command."""
        ci = block.index
        if (
            kind == "tile"
            and isinstance(payload, BundlePlan)
            and payload.fault is not None
            and payload.fault_at >= 0
        ):
            ci = block.index + 1 + payload.fault_at  # the offending header command
        if kind == "scalar" and f.step is not None and f.step < len(payload.commands):
            ci = payload.commands[f.step]  # the faulting scalar instruction
        line, offset = _line(program, ci), _offset(program, ci)
        loc = BundleLocation(index, ci, line, offset, scalar=in_scalar)
        return f.locate(loc, _block_name(block))

    def _run_scalar(self, pos: int, plan: _ScalarPlan, graph: BlockGraph) -> int:
        """Run one scalar block; publish its GPRs (its stores are already in GM, undone
        on a fault) and return the block its continuation selects."""
        state = self.state
        if plan.ints is not None and state.access_log is None:
            nxt = _run_int_block(state, pos, plan, graph)
            if nxt is not None:
                return nxt
        ctx = ScalarContext(
            state.gpr.copy(),
            state.gm,
            self.config.gm_size,
            state.squeue.copy(),
            state.squeue_valid.copy(),
            log=state.access_log,
            status=state.status.copy(),
            fp_rounding=state.fp_rounding,
        )
        ra = state.gpr[:, RA].copy()  # RET snapshots ra before the block runs
        run_scalar_block(ctx, plan.steps)
        written = state.gm_written
        if written is not None:
            for index, _ in ctx.undo:  # every store the block made
                written.index(index)
        try:
            nxt = self._continuation(pos, plan, graph, ctx, ra)
        except MachineFault:
            ctx.rollback()
            raise
        state.gpr = ctx.gpr
        assert ctx.squeue is not None and ctx.squeue_valid is not None
        state.squeue, state.squeue_valid = ctx.squeue, ctx.squeue_valid
        assert ctx.status is not None
        state.status = ctx.status
        return nxt

    @staticmethod
    def _continuation(
        pos: int,
        plan: _ScalarPlan,
        graph: BlockGraph,
        ctx: ScalarContext | _Condition,
        ra: np.ndarray,
    ) -> int:
        """``BARGCommitPC``: the sequential continuation, or BPCN for DIRECT, a taken
        COND and RET."""
        kind = plan.transfer
        if kind == "FALL" or (kind == "COND" and not ctx.taken):
            return graph.fall[pos]
        if kind in ("DIRECT", "COND"):
            t = graph.target[pos]
            if t is None:
                dest = graph.starts[pos] + 2 * plan.offset
                raise InstructionPCFault(
                    f"the {kind} target 0x{dest:x} (offset {plan.offset}) starts no block "
                    f"of the program (blocks start at BSTART commands; the program ends at "
                    f"0x{graph.size:x})"
                )
            return t
        values = sorted({int(v) for v in ra})
        if len(values) > 1:
            per_pe = ", ".join(f"PE{p} 0x{int(v):x}" for p, v in enumerate(ra))
            raise BundleControlFault(
                f"RET: the PEs hold different return addresses in ra ({per_pe})"
            )
        dest = values[0]
        t = graph.at(dest)
        if dest & 1 or t is None:
            why = "is odd" if dest & 1 else "starts no block of the program"
            raise InstructionPCFault(f"RET: the return address ra=0x{dest:x} {why}")
        return t

    def _compile(self, program: Program) -> tuple[BlockGraph, list[_Step]]:
        return compiled(program)


#: the attribute of a Program that holds its executable form (see :func:`compiled`)
_STEPS = "_executable_steps"


def compiled(program: Program) -> tuple[BlockGraph, list[_Step]]:
    """The executable form of ``program``: its block graph and one step per block (tile
    bundles as their validated :class:`BundlePlan`, scalar blocks compiled).

    Built once and kept on the Program itself (which is immutable), so repeated runs,
    new Machines and loop bodies executed many times reuse it: nothing in it depends on
    the machine (each plan caches its static preparation per LB tuple, checked against
    the running machine's PEs and queues when it executes).
    """
    hit = program.__dict__.get(_STEPS)
    if hit is not None:
        return hit
    graph = program.graph()
    addrs, _ = program.addresses()
    steps = [_compile_block(b, addrs) for b in graph.blocks]
    object.__setattr__(program, _STEPS, (graph, steps))  # a frozen dataclass: a cache
    return graph, steps


#: the attribute of a Program that holds its straight runs (see :func:`straight_runs`)
_RUNS = "_straight_runs"


def straight_runs(program: Program, steps: list[_Step]) -> tuple[int, ...]:
    """For each block of ``program``: the end (exclusive) of the run of consecutive tile
    bundles starting there (the block itself when it is no tile bundle). A tile bundle
    always continues with the next block, so such a run executes in order without
    consulting the block graph; kept on the Program like :func:`compiled`."""
    hit = program.__dict__.get(_RUNS)
    if hit is not None and len(hit) == len(steps):
        return hit
    ends = [0] * len(steps)
    end = len(steps)
    for pos in range(len(steps) - 1, -1, -1):
        if steps[pos][0] != "tile":
            end = pos
        ends[pos] = end
    out = tuple(ends)
    object.__setattr__(program, _RUNS, out)
    return out


def _run_straight(
    state: MachineState, steps: list[_Step], pos: int, end: int
) -> tuple[int, MachineFault | None]:
    """Execute the tile bundles ``steps[pos:end]`` (untraced); returns how many
    completed and the fault of the next one, if it faulted (which left no effect)."""
    done = 0
    try:
        for k in range(pos, end):
            plan = steps[k][2]
            # (``engine.execute_untraced`` inlined: this loop is the per-bundle path)
            memo = plan.memo  # (set with plan.ready: its kept constant result)
            if memo is None or not memo.run(state, plan):
                fused = plan.fused  # (and the prepared plan's fused form)
                if fused is None or not fused(state, plan):
                    execute(state, plan)
            done += 1
    except MachineFault as f:
        return done, f
    return done, None


@dataclass(frozen=True)
class _ScalarPlan:
    """A compiled scalar block: its steps, the command index of each, its transfer
    kind and branch offset, and its form on Python integers when it has one
    (:mod:`.scalar_ints`)."""

    steps: list[ScalarStep]
    commands: tuple[int, ...]
    transfer: str = "FALL"
    offset: int = 0
    ints: IntBlock | None = None


class _Condition:
    """The block condition of a block run on Python integers (what the continuation
    reads of a :class:`ScalarContext`)."""

    __slots__ = ("taken",)

    def __init__(self, taken: bool | None) -> None:
        self.taken = taken


def _run_int_block(
    state: MachineState, pos: int, plan: _ScalarPlan, graph: BlockGraph
) -> int | None:
    """Run a block of plain integer forms on each PE's GPRs as Python integers and
    publish them; returns the next block, or None when the PEs disagree on the block
    condition (nothing changed: the numpy path runs the block and raises the fault).

    The GPRs stay Python integers from one integer block to the next
    (:meth:`MachineState.publish_gpr_ints`): their array is made only when something
    reads ``state.gpr``, so a loop's bookkeeping converts no array."""
    ints = plan.ints
    assert ints is not None
    transfer = plan.transfer
    # RET continues at ra as it was before the block (read before anything changes)
    ra = state.gpr[:, RA].copy() if transfer == "RET" else None
    regs = state.gpr_lists()
    run = ints.run
    conditions = run(regs[0])
    for pe in regs[1:]:
        if run(pe) != conditions:
            return None
    taken = conditions[-1] if conditions else None
    if transfer == "FALL" or (transfer == "COND" and not taken):
        nxt = graph.fall[pos]
    elif transfer != "RET" and graph.target[pos] is not None:  # a taken branch
        nxt = graph.target[pos]
    else:  # (RET, or the fault of a branch target that starts no block)
        nxt = Machine._continuation(pos, plan, graph, _Condition(taken), ra)  # type: ignore[arg-type]
    state.publish_gpr_ints(regs, ints.written)
    return nxt


def _compile_block(block: Block, addrs: tuple[int, ...]) -> _Step:
    start = block.start
    if isinstance(start, TileStart):
        return ("tile", block, build_plan(start, block.commands))
    if isinstance(start, ScalarStart):
        try:
            return ("scalar", block, _scalar_plan(start, block, addrs))
        except MachineFault as f:
            return ("fault", block, (type(f), f.rule, f.op))
    # commands outside any block; a zero-mask B.IOT/B.IOS is skipped before placement
    stray = [c for c in block.commands if not (isinstance(c, (Iot, Ios)) and c.mask == 0)]
    if not stray and block.stop is None:
        return ("scalar", block, _ScalarPlan([], ()))
    what = command_text(stray[0]) if stray else "BSTOP"
    return ("fault", block, (BundleControlFault, f"{what} outside any block", what))


def _scalar_plan(start: ScalarStart, block: Block, addrs: tuple[int, ...]) -> _ScalarPlan:
    rule = encoding_rule(start)
    if rule is not None:
        raise IllegalInstructionFault(rule, f"BSTART.{start.block}")
    if start.block != "STD" or start.kind not in TRANSFERS:
        raise unsupported(f"BSTART.{start.block} {start.kind} (control flow)", "BSTART")
    steps: list[ScalarStep] = []
    where: list[int] = []
    scalars: list[Scalar] = []
    setters = 0
    for k, c in enumerate(block.commands):
        ci = block.index + 1 + k
        # each command is decoded before it is dispatched (a reserved encoding faults as
        # Fault_IllegalInstruction, even where its placement would be wrong too)
        rule = encoding_rule(c) if not isinstance(c, Stop) else None
        if rule is not None:
            raise IllegalInstructionFault(rule, command_text(c))
        if isinstance(c, Scalar):
            if is_condition_setter(c):
                # ScalarOperationApplicable: one setter, in a COND block
                name = c.mnemonic.lower()
                if start.kind != "COND":
                    raise BundleControlFault(
                        f"{name} sets the block condition, but this block is "
                        f"BSTART.STD {start.kind} (only a COND block has one)",
                        name,
                    )
                setters += 1
                if setters > 1:
                    raise BundleControlFault(
                        f"{name} is a second condition setter in one COND block", name
                    )
            steps.append(compile_scalar(c, addrs[ci] if ci < len(addrs) else 0))
            where.append(ci)
            scalars.append(c)
        elif isinstance(c, Generic) and generic_kind(c) == "B.HINT":
            if any(k == "B/E" for k, _ in c.fields):
                raise unsupported("B.HINT TRACE (it opens a new block)", "B.HINT")
            continue  # a branch/temperature/prefetch hint has no architectural effect
        elif isinstance(c, (Iot, Ios)) and c.mask == 0:
            continue
        elif isinstance(c, Stop):  # pragma: no cover - blocks() ends a block at a stop
            break
        else:
            name = command_text(c)
            raise BundleControlFault(f"{name} inside a standard (scalar) block", name)
    pcs = [addrs[ci] if ci < len(addrs) else 0 for ci in where]
    # RET reads ra as it was before the block: the integer form serves the other kinds
    ints = compile_int_block(scalars, pcs) if start.kind != "RET" else None
    return _ScalarPlan(steps, tuple(where), start.kind, start.offset, ints)


#: the BSTART.STD transfer kinds the executor follows (IND is not modelled)
TRANSFERS = ("FALL", "DIRECT", "COND", "RET")


def _index(value: Any, what: str) -> int:
    """An integer argument (Python or numpy int, not bool or float)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise GMError(f"{what} must be an integer, not {type(value).__name__}")
    return int(value)


def _line(program: Program, i: int) -> int:
    return program.lines[i] if 0 <= i < len(program.lines) else 0


def _offset(program: Program, i: int) -> int:
    return program.offsets[i] if 0 <= i < len(program.offsets) else -1


def _block_name(block: Block) -> str:
    s = block.start
    if isinstance(s, TileStart):
        o = s.op
        return o.mnemonic if o is not None else "BSTART"
    if isinstance(s, ScalarStart):
        return f"BSTART.{s.block}"
    return ""


def _parse_ref(name: str) -> TileRef:
    text = name.strip().upper()
    hand, sep, idx = text.partition("#")
    if not sep or hand not in Hand.__members__ or not idx.isdigit() or not 1 <= int(idx) <= 16:
        raise MachineError(f"{name!r} is not a relative tile name such as T#1 or U#3")
    return TileRef(Hand[hand], int(idx))


def _view(name: str, t: Tile) -> TileView:
    pes = t.payload.shape[0]
    defined = t.definedness()[:, : t.valid_rows, : t.valid_cols].copy()
    vals = t.payload[:, : t.valid_rows, : t.valid_cols].copy()
    keep = np.zeros(pes, bool)
    keep[list(mask_pes(t.mask))] = True
    raw = raw_bits(vals)
    raw[~keep] = 0
    return TileView(name, t.dtype, t.rows, t.cols, t.valid_rows, t.valid_cols, t.layout,
                    t.mask, t.capacity, raw.view(vals.dtype), defined,
                    t.payload.copy())  # fmt: skip
