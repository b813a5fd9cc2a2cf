"""The compiler driver: the named pipeline and :func:`compile_module`.

    ck = compile_module(module, MachineConfig(depth=4, capacity=16384))
    ck.program            # ptoc.backend.program.Program
    ck.abi.bindings       # which GPR holds which tensor base (per PE)

Every compiled program goes through the allocation validator unless ``validate=False``.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ptoc.backend.program import Program
from ptoc.dialects.dtypes import DType, element_bits
from ptoc.dialects.reference import kernel_func, kernel_pes_of, output_names, tensor_args
from ptoc.runtime.config import MachineConfig

from .allocate import AllocatePass, AllocStats, allocate_func
from .diagnostics import CompileError
from .emit import AbiBinding, EmitPass, Emitted, emit_func
from .geometry import MAX_TILE_BYTES
from .legalize import LegalizePass, legalize_func
from .lower_compound import LowerCompoundPass, lower_compound_func
from .validate import Report, validate

#: the passes of a full compile, in order (xdsl-opt names)
PIPELINE: tuple[str, ...] = (
    LowerCompoundPass.name,
    LegalizePass.name,
    AllocatePass.name,
    EmitPass.name,
)


@dataclass(frozen=True)
class TensorParam:
    """A kernel tensor argument: its GM layout (row-major, ``row_stride`` elements)."""

    name: str
    dtype: DType
    shape: tuple[int, int]
    row_stride: int
    output: bool

    @property
    def nbytes(self) -> int:
        """Bytes a buffer for the tensor spans (whole rows at the stride)."""
        return self.shape[0] * self.row_stride * element_bits(self.dtype) // 8


@dataclass(frozen=True)
class KernelAbi:
    """How to call a compiled kernel: tensors, and which GPR holds which base on each
    PE (``base(tensor) + pe * pe_step``); ``scratch_bytes`` of spill space per PE."""

    kernel: str
    pes: int
    tensors: tuple[TensorParam, ...]
    bindings: tuple[AbiBinding, ...]
    scratch_bytes: int


@dataclass(frozen=True)
class CompiledKernel:
    """A compiled kernel: the program, its ABI, and what compilation saw."""

    program: Program
    abi: KernelAbi
    emitted: Emitted
    stats: AllocStats
    report: Report | None
    module: ModuleOp


def compile_module(
    module: ModuleOp,
    machine: MachineConfig | None = None,
    *,
    validate_program: bool = True,
    max_tile_bytes: int | None = None,
    verify_input: bool = True,
) -> CompiledKernel:
    """Compile the one ``tile`` kernel of ``module`` (not modified) for ``machine``.

    Tiles larger than ``max_tile_bytes`` per PE are split into row pieces (default:
    :func:`default_tile_limit` of the machine). ``verify_input=False`` skips verifying
    ``module`` (for callers that just built and verified it).
    """
    machine = machine or MachineConfig()
    # compilation allocates many small long-lived objects: the cyclic GC would rescan
    # them ever more often as the kernel grows (superlinear time), so pause it
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _compile(module, machine, validate_program, max_tile_bytes, verify_input)
    finally:
        if enabled:
            gc.enable()


def _compile(
    module: ModuleOp,
    machine: MachineConfig,
    validate_program: bool,
    max_tile_bytes: int | None,
    verify_input: bool,
) -> CompiledKernel:
    if verify_input:
        module.verify()
    work = module.clone()
    f = kernel_func(work)
    lower_compound_func(f)
    pes = kernel_pes_of(f)
    if pes > machine.pes:
        raise CompileError(
            f"@{f.sym_name.data} runs on {pes} PEs; the machine has {machine.pes}"
        )
    params = _params(f)
    legalize_func(f, max_tile_bytes or default_tile_limit(machine), machine.capacity)
    stats = allocate_func(f, machine.hands, machine.depth, machine.capacity)
    em = emit_func(f)
    report = (
        validate(em, machine.hands, machine.depth, machine.capacity)
        if validate_program
        else None
    )
    abi = KernelAbi(f.sym_name.data, pes, params, em.bindings, em.scratch_bytes)
    return CompiledKernel(em.program, abi, em, stats, report, work)


def default_tile_limit(machine: MachineConfig) -> int:
    """The split threshold for a machine, a power of two between 128 bytes and one
    allocation: at most a quarter of the capacity (an operation's sources and result fit
    together) and at most ``capacity / depth``, so that a hand's worth of pieces fits --
    a dead tile holds its bytes until ``depth`` more pushes evict it (DECISIONS D2), and
    larger pieces would need filler bundles to release them."""
    share = max(128, machine.capacity // max(4, machine.depth))
    return min(MAX_TILE_BYTES, 1 << (share.bit_length() - 1))


def _params(f: func.FuncOp) -> tuple[TensorParam, ...]:
    outs = set(output_names(f))
    return tuple(
        TensorParam(a.name, a.type.dt, a.type.dims, a.type.stride, a.name in outs)
        for a in tensor_args(f)
    )


def run_passes(module: ModuleOp, names: tuple[str, ...] = PIPELINE) -> None:
    """Apply named passes in order (the ``xdsl-opt -p`` equivalent, default options)."""
    from .universe import PASSES

    ctx = Context()
    for name in names:
        PASSES[name]()().apply(ctx, module)  # the universe maps names to pass loaders
