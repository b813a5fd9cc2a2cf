"""The compiler pipeline: the named stages, in order, and the one driver that runs them.

    tile IR --lower-compound--> tile IR --legalize--> pto IR --allocate--> allocated
            pto IR --emit--> Program

:func:`run_pipeline` runs the stages of :data:`PIPELINE` on a kernel module for one
target (a :class:`~ptoc.backend.target.MachineConfig`), optionally stopping after one
and calling back after each (the front end dumps and checks the IR there). Everything
that compiles runs it: ``ptoc.compile`` (the front end), :func:`compile_module` (the
library entry point) and the ``xdsl-opt`` passes ``ptoc-lower-compound`` ...
``ptoc-emit``, each of which runs one stage with its stage check (:func:`run_stage`).

    ck = compile_module(module, MachineConfig(depth=4, capacity=16384))
    ck.program            # ptoc.backend.program.Program
    ck.abi.bindings       # which GPR holds which tensor base (per PE)

Every compiled program goes through the allocation validator unless ``validate=False``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block

from ptoc.backend.program import Program
from ptoc.backend.target import MachineConfig
from ptoc.dialects.dtypes import DType, element_bits
from ptoc.dialects.reference import kernel_func, kernel_pes_of, output_names, tensor_args

from .allocate import AllocStats, allocate_func
from .diagnostics import CompileError
from .emit import AbiBinding, Emitted, emit_func
from .gc_pause import full_collections_paused
from .geometry import MAX_TILE_BYTES, default_tile_limit
from .legalize import legalize_func, needs_names
from .lower_compound import MATRIX_BYTES, lower_compound_func, lowers
from .stages import Stage, expect_stage, kernels
from .validate import Report, validate
from .walk import walk


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


@dataclass(frozen=True)
class Options:
    """Compiler choices that are not facts of the target.

    ``max_tile_bytes``: tiles larger than this per PE are split into row pieces (None:
    :func:`~ptoc.passes.geometry.default_tile_limit` of the target, one allocation
    without a target); ``matrix_bytes``: the byte budget of one merge compare-matrix
    chunk; ``validate``: replay the emitted program through the allocation validator.
    """

    max_tile_bytes: int | None = None
    matrix_bytes: int = MATRIX_BYTES
    validate: bool = True


@dataclass
class Compilation:
    """One kernel going through the pipeline: its module and ``func.func`` (rewritten in
    place, stage by stage, unless ``in_place`` is False), the target and options, and
    what the stages produced."""

    module: ModuleOp
    kernel: func.FuncOp
    #: the machine compiled for; None only for ``xdsl-opt ptoc-legalize`` without
    #: ``whole-budget`` (no machine: tiles are split at one allocation, kept whole)
    target: MachineConfig | None
    options: Options = Options()
    #: the stages run so far, in order
    done: list[str] = field(default_factory=list)
    #: the IR stage the last stage left the kernel at (None: not known, checked before
    #: the next stage runs): a stage's output needs no walk over its ops to know it
    known: Stage | None = None
    #: the kernel's tensor parameters (after lower-compound, which may add a scratch one)
    params: tuple[TensorParam, ...] = ()
    #: the PEs the kernel runs on (its ``tile.pes``)
    pes: int = 1
    stats: AllocStats | None = None
    emitted: Emitted | None = None
    report: Report | None = None
    #: False: legalize leaves ``module`` as it is and builds the legalized kernel in a new
    #: module (``module`` and ``kernel`` then name it); for a kernel that lower-compound
    #: leaves unchanged, so that no stage changes the module the pipeline was given
    in_place: bool = True

    @property
    def tile_limit(self) -> int:
        """Per-PE bytes above which legalize splits a tile into row pieces."""
        if self.options.max_tile_bytes:
            return self.options.max_tile_bytes
        return MAX_TILE_BYTES if self.target is None else default_tile_limit(self.target)

    def machine(self) -> MachineConfig:
        """The target (the default machine when none was given)."""
        return self.target or MachineConfig()

    def compiled(self) -> CompiledKernel:
        """The result of a run through emit."""
        assert self.emitted is not None and self.stats is not None, self.done
        em = self.emitted
        name = self.kernel.sym_name.data
        abi = KernelAbi(name, self.pes, self.params, em.bindings, em.scratch_bytes)
        return CompiledKernel(em.program, abi, em, self.stats, self.report, self.module)


def _lower_compound(c: Compilation) -> None:
    if c.in_place:  # (else compile_module found no op that it rewrites)
        lower_compound_func(c.kernel, c.options.matrix_bytes)
    c.params = _params(c.kernel)
    c.pes = kernel_pes_of(c.kernel)


def _legalize(c: Compilation) -> None:
    pes = kernel_pes_of(c.kernel)
    if c.target is not None and pes > c.target.pes:
        raise CompileError(
            f"@{c.kernel.sym_name.data} runs on {pes} PEs; the machine has {c.target.pes}"
        )
    f = legalize_func(c.kernel, c.target, c.tile_limit, in_place=c.in_place, check_stage=False)
    if f is not c.kernel:
        module = c.module.clone_without_regions()
        module.body.add_block(Block([f]))
        c.module, c.kernel = module, f


def _allocate(c: Compilation) -> None:
    c.stats = allocate_func(c.kernel, c.machine(), check_stage=False)


def _emit(c: Compilation) -> None:
    c.emitted = emit_func(c.kernel, check_stage=False)
    if c.options.validate:
        c.report = validate(c.emitted, c.machine())


@dataclass(frozen=True)
class PipelineStage:
    """One stage: its name (``ptoc compile --emit NAME``), the ``xdsl-opt`` pass that runs
    it alone, the IR stage it takes (checked before it runs, unless the stage before it
    left the kernel there), what it does, and the IR stage it leaves the kernel at."""

    name: str
    pass_name: str
    takes: Stage
    run: Callable[[Compilation], None]
    gives: Stage | None


#: the stages of a full compile, in order
PIPELINE: tuple[PipelineStage, ...] = (
    PipelineStage(
        "lower-compound", "ptoc-lower-compound", Stage.TILE, _lower_compound, Stage.TILE
    ),
    PipelineStage("legalize", "ptoc-legalize", Stage.TILE, _legalize, Stage.LEGALIZED),
    PipelineStage("allocate", "ptoc-allocate", Stage.LEGALIZED, _allocate, Stage.ALLOCATED),
    PipelineStage("emit", "ptoc-emit", Stage.ALLOCATED, _emit, None),
)

#: the stages by name
STAGES: dict[str, PipelineStage] = {s.name: s for s in PIPELINE}

#: called after each stage with its name and the compilation
OnStage = Callable[[str, Compilation], None]


def run_stage(stage: PipelineStage, c: Compilation) -> None:
    """Run one stage on one kernel, after checking that the kernel is at its IR stage
    (by a walk over its ops, unless the stage run before left it there)."""
    if c.known is not stage.takes:
        expect_stage(stage.pass_name, c.kernel, stage.takes)
    c.known = None  # (should the stage fail)
    stage.run(c)
    c.known = stage.gives
    c.done.append(stage.name)


def run_pipeline(
    module: ModuleOp,
    target: MachineConfig | None = None,
    *,
    options: Options = Options(),
    stop_after: str | None = None,
    on_stage: OnStage | None = None,
) -> Compilation:
    """Run the stages of :data:`PIPELINE` in place on the one kernel of ``module`` for
    ``target`` (default: the default machine), up to and including ``stop_after`` (a
    stage name; default: all), calling ``on_stage(name, compilation)`` after each.
    A stage that cannot lower the kernel raises :class:`CompileError`."""
    if stop_after is not None and stop_after not in STAGES:
        raise ValueError(f"unknown stage {stop_after!r}; stages are {', '.join(STAGES)}")
    c = Compilation(module, kernel_func(module), target or MachineConfig(), options)
    return _run(c, stop_after, on_stage)


def _run(c: Compilation, stop_after: str | None, on_stage: OnStage | None) -> Compilation:
    with full_collections_paused():
        for stage in PIPELINE:
            run_stage(stage, c)
            if on_stage is not None:
                on_stage(stage.name, c)
            if stage.name == stop_after:
                break
    return c


def run_pass(
    name: str, module: ModuleOp, target: MachineConfig | None, options: Options = Options()
) -> list[Compilation]:
    """The ``xdsl-opt`` pass of stage ``name``: run it on every kernel of ``module``."""
    stage = STAGES[name]
    out = []
    for f in kernels(stage.pass_name, module):
        c = Compilation(module, f, target, options)
        run_stage(stage, c)
        out.append(c)
    return out


def compile_module(
    module: ModuleOp,
    machine: MachineConfig | None = None,
    *,
    validate_program: bool = True,
    max_tile_bytes: int | None = None,
    verify_input: bool = True,
    on_stage: OnStage | None = None,
) -> CompiledKernel:
    """Compile the one ``tile`` kernel of ``module`` (not modified) for ``machine``
    (calling ``on_stage(name, compilation)`` after each stage, if given).

    Tiles larger than ``max_tile_bytes`` per PE are split into row pieces (default:
    :func:`default_tile_limit` of the machine). ``verify_input=False`` skips verifying
    ``module`` (for callers that just built and verified it). A kernel that
    lower-compound leaves as it is and whose ops all carry a location is compiled without
    a copy of ``module``: legalize builds the new kernel beside it.
    """
    if verify_input:
        module.verify()
    options = Options(max_tile_bytes=max_tile_bytes, validate=validate_program)
    with full_collections_paused():  # the copy allocates as much as a stage
        if _copy_free(module):
            # no stage before legalize changes the kernel, and legalize builds a new one
            c = Compilation(module, kernel_func(module), machine or MachineConfig(), options)
            c.in_place = False
            return _run(c, None, on_stage).compiled()
        copy = module.clone()
        return run_pipeline(copy, machine, options=options, on_stage=on_stage).compiled()


def _copy_free(module: ModuleOp) -> bool:
    """Whether the pipeline can leave ``module`` unchanged without copying it: its one op
    is the kernel, lower-compound has nothing to rewrite and legalize nothing to name."""
    ops = list(module.ops)
    if len(ops) != 1 or not isinstance(ops[0], func.FuncOp) or not ops[0].body.blocks:
        return False
    body = [op for op in walk(ops[0]) if op is not ops[0]]
    return not any(lowers(op) for op in body) and not needs_names(body)


def _params(f: func.FuncOp) -> tuple[TensorParam, ...]:
    outs = set(output_names(f))
    return tuple(
        TensorParam(a.name, a.type.dt, a.type.dims, a.type.stride, a.name in outs)
        for a in tensor_args(f)
    )


def run_passes(
    module: ModuleOp, names: tuple[str, ...] = tuple(s.pass_name for s in PIPELINE)
) -> None:
    """Apply named passes in order (the ``xdsl-opt -p`` equivalent, default options)."""
    from .universe import PASSES

    ctx = Context()
    for name in names:
        PASSES[name]()().apply(ctx, module)  # the universe maps names to pass loaders
