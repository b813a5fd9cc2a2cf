"""Run a compiled kernel on the machine model and check it against the tile reference.

:func:`run_compiled` places every tensor in GM (row-major at its row stride), sets each
ABI register on every PE, runs the program and reads the output tensors back.
:func:`verify_module` compiles, runs and compares with the reference interpreter bit for
bit (NaN payloads and signed zeros included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ptoc.backend.isa.fields import GPR_BY_NAME, GPR_COUNT
from ptoc.dialects.dtypes import carrier
from ptoc.dialects.reference import run_reference
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.gm_pool import Written
from ptoc.runtime.spare import keep_machine, spare_machine

from .allocate.gprs import TABLE_REG
from .emit import AbiBinding
from .pipeline import CompiledKernel, KernelAbi, TensorParam, compile_module

GM_BASE = 0x1000
#: the machine :func:`run_compiled` runs on unless told (a frozen configuration)
DEFAULT_MACHINE = MachineConfig()
ALIGN = 256


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def gm_end(
    tensors: Sequence[TensorParam], scratch_bytes: int = 0, pes: int = 1, slots: int = 0
) -> int:
    """The first GM address after what :func:`place` puts in GM: every tensor from
    ``GM_BASE`` (256-byte aligned), then ``scratch_bytes`` of spill area per PE, then the
    argument table (``slots`` 8-byte slots for each of the machine's PEs, at most 4)."""
    addr = GM_BASE
    for t in tensors:
        addr = _align(addr + t.nbytes)
    addr += scratch_bytes * pes
    return _align(addr) + slots * 8 * 4 if slots else addr


@dataclass(frozen=True)
class _Placed:
    """Where :func:`place` puts one tensor: ``addr``, the ``rows`` (rows, row stride) of
    ``carrier`` elements it writes (``nbytes``), ``cols`` of them the tensor's."""

    addr: int
    carrier: np.dtype
    rows: tuple[int, int]
    cols: int
    nbytes: int


@dataclass(frozen=True)
class TensorLayout:
    """The GM layout :func:`place` gives a kernel ABI's tensors (computed once per ABI)."""

    tensors: tuple[_Placed, ...]
    where: dict[str, int]
    scratch: int
    #: :func:`gm_end` of the ABI (its argument table included)
    end: int
    #: the ABI registers that hold one base on every PE (a tensor's or the scratch
    #: area's), and those bases: set in one assignment
    uniform_regs: np.ndarray
    uniform_values: np.ndarray
    #: the bindings of the argument table, and the bindings set one by one (scalar
    #: parameters, bases that step per PE)
    table: tuple[AbiBinding, ...] = ()
    others: tuple[AbiBinding, ...] = ()


def tensor_layout(abi: KernelAbi) -> TensorLayout:
    """The layout of ``abi``'s tensors, kept on the (immutable) ABI."""
    hit = abi.__dict__.get("_tensor_layout")
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    addr = GM_BASE
    placed, where = [], {}
    for t in abi.tensors:
        car = carrier(t.dtype)
        rows = (t.shape[0], t.row_stride)
        placed.append(_Placed(addr, car, rows, t.shape[1], rows[0] * rows[1] * car.itemsize))
        where[t.name] = addr
        addr = _align(addr + t.nbytes)
    slots = sum(1 for b in abi.bindings if b.table_slot is not None)
    end = gm_end(abi.tensors, abi.scratch_bytes, abi.pes, slots)
    regs, values = [], []
    for b in abi.bindings:
        if _uniform(b, abi.pes):
            regs.append(GPR_BY_NAME[b.gpr])
            values.append(addr if b.tensor is None else where[b.tensor])
    table = tuple(b for b in abi.bindings if b.table_slot is not None)
    others = tuple(b for b in abi.bindings if b.table_slot is None and not _uniform(b, abi.pes))
    out = TensorLayout(tuple(placed), where, addr, end, np.array(regs, np.intp),
                       np.array(values, np.uint64), table, others)  # fmt: skip
    object.__setattr__(abi, "_tensor_layout", out)  # a frozen dataclass: a cache
    return out


@dataclass(frozen=True)
class Placement:
    """Where a run put each tensor and the scratch area."""

    tensors: dict[str, int]
    scratch: int


def _uniform(b, pes: int) -> bool:  # type: ignore[no-untyped-def]
    """Whether ABI binding ``b`` holds one base on every PE (see :func:`place`)."""
    return (
        b.table_slot is None
        and not b.scalar
        and (b.pe_step == 0 or pes == 1)
        and GPR_BY_NAME.get(b.gpr, 0) != 0  # (a write to ``zero`` is discarded)
    )


def place(ck: CompiledKernel, machine: Machine, inputs: Mapping[str, np.ndarray]) -> Placement:
    """Load the tensors into GM and set the ABI registers of every PE."""
    plan = _place_tensors(ck, machine, inputs)
    where, scratch = plan.where, plan.scratch
    table = plan.table
    if table:  # the argument table: one row of slots per PE, its address in a7
        pes = machine.config.pes
        at = _align(scratch + ck.abi.scratch_bytes * ck.abi.pes)
        rows = np.zeros((pes, len(table)), np.uint64)
        for b in table:
            assert b.table_slot is not None
            for pe in range(pes):
                rows[pe, b.table_slot] = _value(b, inputs, where, scratch, pe, ck.abi.pes)
        machine.load_gm(at, rows)
        for pe in range(pes):
            machine.set_gpr(TABLE_REG, at + pe * 8 * len(table), pe=pe)
    if len(plan.uniform_regs):
        machine.state.writable_gpr()[:, plan.uniform_regs] = plan.uniform_values
    for b in plan.others:  # (the table's are loaded by the program, uniform ones set above)
        if b.scalar:  # a run-time scalar parameter: its value, sign-extended to 64 bits
            assert b.tensor is not None
            value = int(np.asarray(inputs[b.tensor]).item()) & ((1 << 64) - 1)
            # on every PE of the core: a loop's condition is one per core (D12), so the
            # PEs the kernel does not run on must agree too
            machine.set_gpr(b.gpr, value)
            continue
        base = scratch if b.tensor is None else where[b.tensor]
        # the PEs the kernel does not run on see PE 0's bases: the scalar code they run
        # too (loop counts, scalar loads) then agrees with PE 0's
        if b.pe_step == 0 or ck.abi.pes == 1:
            machine.set_gpr(b.gpr, base)
            continue
        for pe in range(machine.config.pes):
            step = pe * b.pe_step if pe < ck.abi.pes else 0
            machine.set_gpr(b.gpr, base + step, pe=pe)
    return Placement(dict(where), scratch)


def _place_tensors(
    ck: CompiledKernel, machine: Machine, inputs: Mapping[str, np.ndarray]
) -> TensorLayout:
    """The GM part of :func:`place`: the inputs loaded, the other tensors zero."""
    plan = tensor_layout(ck.abi)
    written = machine.state.gm_written
    # outputs and scratch first: on a recycled memory their chunks are then known to be
    # zero without a scan (loading an input marks the chunks it shares with them written)
    for t, p in zip(ck.abi.tensors, plan.tensors, strict=True):
        if t.name not in inputs and not _zeros(machine, written, p.addr, p.nbytes):
            machine.load_gm(p.addr, np.zeros(p.nbytes, np.uint8))
    for t, p in zip(ck.abi.tensors, plan.tensors, strict=True):
        if t.name in inputs:
            _load(machine, written, p.addr, _tensor_rows(p, inputs[t.name]))
    return plan


def _zeros(machine: Machine, written: Written | None, addr: int, nbytes: int) -> bool:
    """Whether GM bytes ``[addr, addr + nbytes)`` are zero already: never written (the
    machine's record says so, without touching them), or scanned (a write would
    touch as many bytes)."""
    if written is None:
        return False
    if written.untouched(addr, addr + nbytes):
        return True
    gm = machine.state.gm
    return (
        isinstance(gm, np.ndarray)
        and addr + nbytes <= len(gm)
        and not gm[addr : addr + nbytes].any()
    )


def _load(machine: Machine, written: Written | None, addr: int, a: np.ndarray) -> None:
    """``machine.load_gm(addr, a)`` for an input of its tensor's carrier (checked by
    the caller): a C-contiguous native array is copied straight into a dense memory."""
    gm = machine.state.gm
    n = a.nbytes
    if (
        type(gm) is np.ndarray
        and a.flags.c_contiguous
        and a.dtype.isnative
        and addr + n <= len(gm)
    ):
        gm[addr : addr + n] = a.reshape(-1).view(np.uint8)
        if written is not None:
            written.span(addr, addr + n)
    else:
        machine.load_gm(addr, a)


def _tensor_rows(p: _Placed, array: np.ndarray) -> np.ndarray:
    """An input's rows at the tensor's row stride (padding columns zero)."""
    a = np.asarray(array)
    if a.dtype == p.carrier and a.shape == p.rows:
        return a
    buf = np.zeros(p.rows, p.carrier)
    buf[:, : p.cols] = a.astype(p.carrier, copy=False)
    return buf


def _value(b, inputs, where, scratch, pe: int, pes: int) -> int:  # type: ignore[no-untyped-def]
    """What binding ``b`` holds on PE ``pe`` (see :func:`place`)."""
    if b.scalar:
        return int(np.asarray(inputs[b.tensor]).item()) & ((1 << 64) - 1)
    base = scratch if b.tensor is None else where[b.tensor]
    return base + (pe * b.pe_step if pe < pes else 0)


def read_outputs(
    ck: CompiledKernel, machine: Machine, placement: Placement
) -> dict[str, np.ndarray]:
    out = {}
    gm = machine.state.gm
    for t, p in zip(ck.abi.tensors, tensor_layout(ck.abi).tensors, strict=True):
        if t.output:
            at = placement.tensors[t.name]
            if type(gm) is np.ndarray and at + p.nbytes <= len(gm):  # dense: a copy
                full = gm[at : at + p.nbytes].copy().view(p.carrier).reshape(p.rows)
            else:
                full = machine.read_gm(at, p.carrier, p.rows)
            whole = p.cols == p.rows[1]
            out[t.name] = full if whole else np.ascontiguousarray(full[:, : p.cols])
    return out


@dataclass(frozen=True)
class _RunPlan:
    """What :func:`run_compiled` does on every run of one kernel whose ABI registers
    all hold one base on every PE (no argument table, no scalar parameter, no base
    stepping per PE), on machines of one PE count: computed once, kept on the kernel."""

    #: the GPRs after :func:`place` on a new core, read-only, and one PE's row of them
    #: as Python integers (every PE holds the same)
    gpr: np.ndarray
    row: tuple[int, ...]
    #: each output: (name, address, bytes, carrier, (rows, row stride), columns)
    reads: tuple[tuple[str, int, int, np.dtype, tuple[int, int], int], ...]


def _run_plan(ck: CompiledKernel, pes: int) -> _RunPlan | None:
    """The :class:`_RunPlan` of ``ck`` on machines of ``pes`` PEs, or None when its
    registers are not all uniform bases (:func:`place` then sets them one by one)."""
    plans = ck.__dict__.get("_run_plans")
    if plans is None:
        plans = {}
        object.__setattr__(ck, "_run_plans", plans)  # a frozen dataclass: a cache
    if pes in plans:
        return plans[pes]  # type: ignore[no-any-return]
    layout = tensor_layout(ck.abi)
    out = None
    if not layout.table and not layout.others:
        gpr = np.zeros((pes, GPR_COUNT), np.uint64)
        gpr[:, layout.uniform_regs] = layout.uniform_values
        gpr.flags.writeable = False
        reads = tuple(
            (t.name, p.addr, p.nbytes, p.carrier, p.rows, p.cols)
            for t, p in zip(ck.abi.tensors, layout.tensors, strict=True)
            if t.output
        )
        out = _RunPlan(gpr, tuple(int(v) for v in gpr[0]), reads)
    plans[pes] = out
    return out


def run_compiled(
    ck: CompiledKernel, inputs: Mapping[str, np.ndarray], machine: MachineConfig | None = None
) -> dict[str, np.ndarray]:
    """Execute ``ck`` on a fresh machine; returns the output tensors by name."""
    m = spare_machine(machine or DEFAULT_MACHINE)
    state = m.state
    plan = _run_plan(ck, m.config.pes)
    gm = state.gm
    if plan is None or type(gm) is not np.ndarray or tensor_layout(ck.abi).end > len(gm):
        placement = place(ck, m, inputs)
        m.run(ck.program)
        out = read_outputs(ck, m, placement)
    else:  # (what place and read_outputs do for such a kernel, on a new core)
        _place_tensors(ck, m, inputs)
        # the uniform bases as an integer scalar block would publish them: the
        # kernel's first scalar block reads them without converting an array
        state.publish_gprs(plan.gpr, [list(plan.row)])
        m.run_quiet(ck.program)
        out = {}
        for name, at, nbytes, car, rows, cols in plan.reads:
            full = gm[at : at + nbytes].copy().view(car).reshape(rows)
            out[name] = full if cols == rows[1] else np.ascontiguousarray(full[:, :cols])
    keep_machine(m)  # (the outputs are copies: nothing refers to the machine)
    return out


class Mismatch(AssertionError):
    """Executor output differs from the reference (first differing element named)."""


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def compare(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray]) -> None:
    """Bit-for-bit equality of every output; raises :class:`Mismatch` naming the first
    differing element with both bit patterns."""
    for name, w in want.items():
        g = got[name]
        if same_bits(g, w):
            continue
        gb = g.view(f"u{g.dtype.itemsize}") if g.dtype.itemsize in (1, 2, 4, 8) else g
        wb = w.view(f"u{w.dtype.itemsize}") if w.dtype.itemsize in (1, 2, 4, 8) else w
        diff = np.argwhere(gb != wb)
        idx = tuple(int(i) for i in diff[0]) if len(diff) else ()
        raise Mismatch(
            f"output {name} differs at {idx}: executor {g[idx]} (0x{int(gb[idx]):x}) vs "
            f"reference {w[idx]} (0x{int(wb[idx]):x}); {len(diff)} element(s) differ"
        )


def verify_module(
    module: ModuleOp, inputs: Mapping[str, np.ndarray], machine: MachineConfig | None = None
) -> CompiledKernel:
    """Compile (validated), run and compare with the reference; returns the kernel."""
    ck = compile_module(module, machine)
    got = run_compiled(ck, inputs, machine)
    compare(got, run_reference(module, inputs))
    return ck
