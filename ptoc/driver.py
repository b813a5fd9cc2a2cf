"""``ptoc.compile``: the front end of the pipeline -- trace, stops and dumps.

    trace -> lower-compound -> legalize -> allocate -> emit

The kernel is traced here; the stages after ``trace`` are the compiler's one pipeline
(``ptoc.passes.pipeline.run_pipeline``), run on a clone of the traced module. Its
callback after each stage writes the dumps (``print_ir_after_all`` to stderr,
``dump_dir`` one file per stage) and checks what only the front end can say at the
kernel's source (PEs, global memory, tile rows); ``stop_after`` returns the IR of a
stage. A pass's :class:`CompileError` names its op; it is placed at the kernel line
the op was traced from (:func:`placed`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from xdsl.utils.exceptions import DiagnosticException

from ptoc.passes.pipeline import PIPELINE

from .errors import CompileError, Error, KernelError, OutputError
from .kernel import Kernel, Traced
from .program import Program
from .source import SourceLoc, def_location, param_location

#: the stages, in order; ``ptoc compile --emit`` also accepts the aliases
STAGES: tuple[str, ...] = ("trace", *(s.name for s in PIPELINE))
ALIASES = {"tile": "trace", "pto": "allocate", "asm": "emit", "bin": "emit"}

#: ``observe(stage, module, compilation)``: called after each stage (``compile_kernel``)
Observer = Callable[[str, Any, Any], None]


def stage_name(name: str) -> str:
    """The canonical stage of ``name`` (a stage or an alias); ValueError if unknown."""
    s = ALIASES.get(name, name)
    if s not in STAGES:
        raise ValueError(
            f"unknown stage {name!r}; stages are {', '.join(STAGES)} (aliases: "
            + ", ".join(f"{a}={s}" for a, s in ALIASES.items())
            + ")"
        )
    return s


def machine_config(machine: Any) -> Any:
    """A MachineConfig from None (the default machine), a config or ``"depth=4,..."``."""
    from ptoc.backend.target import MachineConfig

    if machine is None:
        return MachineConfig()
    if isinstance(machine, str):
        return MachineConfig.parse(machine)
    if not isinstance(machine, MachineConfig):
        raise TypeError(f"machine must be a ptoc.MachineConfig, not {type(machine).__name__}")
    return machine


class _Dumper:
    def __init__(self, out: TextIO | None, dump_dir: str | Path | None) -> None:
        self.out = out
        self.dir = Path(dump_dir) if dump_dir is not None else None
        if self.dir is not None:
            if self.dir.exists() and not self.dir.is_dir():
                raise OutputError(f"dump_dir {dump_dir}: is a file; name a folder to write to")
            try:
                self.dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise OutputError(
                    f"dump_dir {dump_dir}: cannot create the folder: {e.strerror or e}"
                ) from None

    def __call__(self, stage: str, text: Callable[[], str], suffix: str = ".mlir") -> None:
        if self.out is None and self.dir is None:
            return
        body = text()
        if self.out is not None:
            print(f"// -----// IR Dump After {stage} //----- //", file=self.out)
            print(body.rstrip("\n"), file=self.out)
        if self.dir is not None:
            n = STAGES.index(stage) + 1
            path = self.dir / f"{n:02d}-{stage}{suffix}"
            try:
                path.write_text(body.rstrip("\n") + "\n")
            except OSError as e:
                raise OutputError(f"{path}: cannot write the dump: {e.strerror or e}") from None


def compile_kernel(
    kernel: Kernel,
    machine: Any = None,
    stop_after: str | None = None,
    print_ir_after_all: bool = False,
    dump_dir: str | Path | None = None,
    *,
    validate: bool = True,
    max_tile_bytes: int | None = None,
    observe: Observer | None = None,
) -> Any:
    """``ptoc.compile``: compile ``kernel`` for ``machine``; a :class:`ptoc.Program`, or
    with ``stop_after``
    the IR module after that stage (``trace``/``tile``, ``lower-compound``, ``legalize``,
    ``allocate``/``pto``; ``emit`` gives the Program).

    ``max_tile_bytes``: tiles larger than this per PE are split into row pieces (default:
    the pipeline's limit for the machine, a quarter of its capacity). ``observe(stage,
    module, compilation)`` is called after every stage (``trace`` first, with no
    compilation yet), while the module is still that stage's IR (``ptoc.report``).
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"ptoc.compile takes a @ptoc.kernel function, not {kernel!r}")
    config = machine_config(machine)
    last = stage_name(stop_after) if stop_after is not None else "emit"
    dump = _Dumper(sys.stderr if print_ir_after_all else None, dump_dir)
    traced = kernel.trace()
    return _compile(kernel, traced, config, last, dump, validate, max_tile_bytes, observe)


def _compile(
    kernel: Kernel,
    traced: Traced,
    config: Any,
    last: str,
    dump: _Dumper,
    validate: bool,
    max_tile_bytes: int | None,
    observe: Observer | None = None,
) -> Any:
    """Run the pipeline (``ptoc.passes.pipeline.run_pipeline``) on a clone of the traced
    module; after each stage, dump it and check what only the front end can say well."""
    from ptoc.passes.pipeline import Options, run_pipeline

    module = traced.module.clone()
    dump("trace", lambda: str(module))
    if observe is not None:
        observe("trace", module, None)
    if last == "trace":
        return module

    def after(stage: str, c: Any) -> None:
        done.append(stage)
        if stage != "emit":  # the Program is dumped as assembly
            dump(stage, lambda: str(module))
        if stage == "lower-compound" and last != stage:
            _check_lowered(kernel, traced, c, config)
        if observe is not None:
            observe(stage, module, c)

    options = Options(max_tile_bytes=max_tile_bytes, validate=validate)
    done: list[str] = []
    try:
        c = run_pipeline(
            module,
            config,
            options=options,
            stop_after=None if last == "emit" else last,
            on_stage=after,
        )
    except CompileError as e:
        if e.loc is None:
            raise placed(e, traced, kernel) from None
        raise
    except Error:  # KernelError, OutputError: already at their place
        raise
    except DiagnosticException as e:  # an xDSL verifier inside a stage
        raise CompileError(str(e).strip()) from None
    except Exception as e:
        failed = STAGES[len(done) + 1]
        raise CompileError(
            f"internal error in the {failed} stage: {type(e).__name__}: {e}",
            None,
            hint="this is a ptoc bug; please report it with the kernel",
        ) from e
    if last != "emit":
        return module
    prog = _program(kernel, traced, c, config)
    dump("emit", lambda: prog.asm(source=True), ".s")
    return prog


def _check_lowered(kernel: Kernel, traced: Traced, c: Any, config: Any) -> None:
    """After lower-compound, before legalize: the kernel fits the machine's PEs and
    global memory, and every tile's row fits the tile size limit."""
    from ptoc.passes.execute import gm_end

    if kernel.pes > config.pes:
        raise KernelError(
            f"the kernel {kernel.name} runs on {kernel.pes} PEs; the machine has {config.pes}",
            def_location(kernel.fn),
            hint=f"compile for a machine with pes={kernel.pes}",
        )
    # after lower-compound: its GM scratch area is a tensor parameter too
    _check_gm(kernel, gm_end(c.params), config)
    _check_tile_rows(c.module, traced, c.tile_limit, config.capacity)


def _program(kernel: Kernel, traced: Traced, c: Any, config: Any) -> Program:
    """The Program of a compilation that ran through emit."""
    from ptoc.passes.execute import gm_end

    em = c.emitted
    slots = len(em.table)
    _check_gm(kernel, gm_end(c.params, em.scratch_bytes, kernel.pes, slots), config, spill=True)
    sources = _bundle_sources(c.kernel, traced)
    prog = Program(
        em.program,
        abi=c.compiled().abi,
        kernel=kernel,
        machine=config,
        alloc=c.stats,
        intents=em.intents,
        sources=dict(zip(sorted(em.intents), sources)),
        validation=c.report,
        checks=em.checks,
        loops=em.loops,
    )
    for at, check in em.checks.items():
        if check.where is not None:
            prog.sources[at] = traced.locations.get(check.where)
    for lp in em.loops:  # a loop's guard block is its pt.range line
        if lp.where is not None:
            prog.sources[lp.guard] = traced.locations.get(lp.where)
    return prog


def source_of(op: Any, traced: Traced) -> SourceLoc | None:
    """The kernel source span an op was traced from (lowering keeps it on what the op
    becomes), from the op's source location; None for an op without one."""
    from ptoc.passes.diagnostics import source_position

    key = source_position(op)
    if key is None:
        return None
    return traced.locations.get(key) or SourceLoc(key[0], key[1], max(key[2] - 1, 0))


def placed(e: CompileError, traced: Traced, kernel: Kernel) -> CompileError:
    """A pass's CompileError placed at the kernel line of its op (the kernel argument of
    a kernel-level rule, else the ``def`` line for a rule of the kernel ABI), naming the
    op the way kernel authors know it (TADD, pt.merge_sorted)."""
    loc = source_of(e.op, traced) if e.op is not None else None
    if loc is not None:
        assert e.op is not None
        return CompileError(f"{catalog_name(e.op.name)}: {e.rule}", e.op, e.hint, loc)
    if e.argument is not None:
        loc = abi_location(kernel, e.argument)
    return CompileError(str(e), e.op, e.hint, loc, argument=e.argument)


def catalog_name(op_name: str) -> str:
    """``pto.tadd`` -> ``TADD``, ``tile.rowmax`` -> ``TROWMAX``, and a compound op
    ``tile.merge_sorted`` -> ``pt.merge_sorted`` (the names a kernel author knows)."""
    from ptoc.dialects.compound_ops import COMPOUND_OPS

    dialect, _, name = op_name.partition(".")
    if op_name == "scf.for":
        return "pt.range"
    if dialect == "pto":
        return name.upper()
    if any(c.name == op_name for c in COMPOUND_OPS):
        return f"pt.{name}"
    return f"T{name.upper()}"


def abi_location(kernel: Kernel, argument: int) -> SourceLoc | None:
    """Where a kernel exceeds the ABI's base addresses: the tensor parameter whose base
    is one too many, or else (the spill area pushes it over) its ``def`` line."""
    if argument < len(kernel.params):
        loc = param_location(kernel.fn, kernel.params[argument].name)
        if loc is not None:
            return loc
    return def_location(kernel.fn)


def _check_gm(kernel: Kernel, end: int, config: Any, spill: bool = False) -> None:
    """The tensors (and spill area) ptoc.run places from 0x1000 fit the machine's GM."""
    if end <= config.gm_size:
        return
    need = -(-end // (1 << 20))
    what = "its tensors and spill area" if spill else "its tensors"
    raise KernelError(
        f"the kernel {kernel.name} needs global memory up to 0x{end:x} ({end} bytes) for "
        f"{what} (placed from 0x1000, 256-byte aligned), more than the machine's "
        f"gm_size={config.gm_size}",
        def_location(kernel.fn),
        hint=f"compile for a machine with more global memory: --machine gm_size={need}M "
        f"(ptoc.MachineConfig(gm_size={need} << 20))",
    )


def _check_tile_rows(module: Any, traced: Traced, limit: int, capacity: int) -> None:
    """Tiles larger than ``limit`` bytes per PE are split into row pieces; a tile whose
    single row is already larger cannot be split, so it is too large for the machine."""
    from ptoc.dialects.tile_matmul import only_read_directly
    from ptoc.dialects.tile_types import TileType
    from ptoc.passes.geometry import tile_bytes

    for op in module.walk():
        for r in op.results:
            t = r.type
            if not isinstance(t, TileType) or tile_bytes(t) <= limit:
                continue
            if only_read_directly(r):  # no tile of its own: the CUBE reads it by chunks
                continue
            row = tile_bytes(TileType(t.dtype, (1, t.extent[1]), (1, t.valid[1])))
            if row > limit:
                loc = source_of(op, traced)
                rows, cols = t.valid
                raise KernelError(
                    f"a {rows}x{cols} {t.dt.value.lower()} tile is too large for the machine: "
                    f"one row needs {row} bytes per PE, and tiles are split into row pieces "
                    f"of at most {limit} bytes (capacity {capacity} bytes per PE)",
                    loc,
                    hint="work on fewer columns at a time (pt.load(x, cols=(start, n))) or "
                    "compile for a machine with more capacity",
                )


def _bundle_sources(f: Any, traced: Traced) -> list[SourceLoc | None]:
    """The kernel line of every bundle, in emission order (inserted bundles: None)."""
    from xdsl.dialects.builtin import FileLineColLoc

    from ptoc.dialects.pto import PtoOp

    out: list[SourceLoc | None] = []
    for op in f.walk():  # emission order: loop bodies where their loop is
        if not isinstance(op, PtoOp):
            continue
        loc = op.location
        if isinstance(loc, FileLineColLoc) and op.role_name is None:
            key = (loc.filename.data, loc.line.data, loc.column.data)
            out.append(traced.locations.get(key))
        else:
            out.append(None)
    return out
