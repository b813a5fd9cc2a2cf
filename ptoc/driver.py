"""``ptoc.compile``: run the pipeline stage by stage, with stops and dumps.

    trace -> lower-compound -> legalize -> allocate -> emit

Each stage is a public function of ``ptoc.passes`` applied to a clone of the traced
module; ``stop_after`` returns the IR of that stage, ``print_ir_after_all`` prints every
stage to stderr and ``dump_dir`` writes one file per stage. Pass diagnostics
(``file:line:col: tile.op: rule``) become :class:`CompileError` at the kernel line.
"""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from .errors import CompileError, KernelError, OutputError
from .kernel import Kernel, Traced
from .program import Program
from .source import SourceLoc, def_location, param_location

#: the stages, in order; ``ptoc compile --emit`` also accepts the aliases
STAGES: tuple[str, ...] = ("trace", "lower-compound", "legalize", "allocate", "emit")
ALIASES = {"tile": "trace", "pto": "allocate", "asm": "emit", "bin": "emit"}

#: ``pto.tadd: rule`` -> ``TADD: rule`` (kernel authors know the catalog names)
_OP_PREFIX = re.compile(r"^(?P<dialect>pto|tile)\.(?P<name>\w+): ")
_PASS_LOC = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<rule>.*)$", re.DOTALL)


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
    from ptoc.runtime.config import MachineConfig

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


def compile(
    kernel: Kernel,
    machine: Any = None,
    stop_after: str | None = None,
    print_ir_after_all: bool = False,
    dump_dir: str | Path | None = None,
    *,
    validate: bool = True,
    max_tile_bytes: int | None = None,
) -> Any:
    """Compile ``kernel`` for ``machine``; a :class:`ptoc.Program`, or with ``stop_after``
    the IR module after that stage (``trace``/``tile``, ``lower-compound``, ``legalize``,
    ``allocate``/``pto``; ``emit`` gives the Program).

    ``max_tile_bytes``: tiles larger than this per PE are split into row pieces (default:
    the pipeline's limit for the machine, a quarter of its capacity).
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"ptoc.compile takes a @ptoc.kernel function, not {kernel!r}")
    config = machine_config(machine)
    last = stage_name(stop_after) if stop_after is not None else "emit"
    dump = _Dumper(sys.stderr if print_ir_after_all else None, dump_dir)
    traced = kernel.trace()
    # as compile_module does: compilation makes many long-lived objects, and the cyclic
    # GC would rescan them ever more often as the kernel grows
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _compile(kernel, traced, config, last, dump, validate, max_tile_bytes)
    finally:
        if enabled:
            gc.enable()


def _compile(
    kernel: Kernel,
    traced: Traced,
    config: Any,
    last: str,
    dump: _Dumper,
    validate: bool,
    max_tile_bytes: int | None,
) -> Any:
    """The steps of ``ptoc.passes.pipeline.compile_module``, with stops and dumps between
    them (a test checks that both give the same program)."""
    from xdsl.dialects import func

    from ptoc.dialects.reference import output_names, tensor_args
    from ptoc.passes.allocate import allocate_func
    from ptoc.passes.emit import emit_func
    from ptoc.passes.execute import gm_end
    from ptoc.passes.legalize import legalize_func
    from ptoc.passes.lower_compound import lower_compound_func
    from ptoc.passes.pipeline import KernelAbi, TensorParam, default_tile_limit
    from ptoc.passes.validate import validate as validate_program

    module = traced.module.clone()
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    dump("trace", lambda: str(module))
    if last == "trace":
        return module

    with _stage("lower-compound", traced, kernel):
        lower_compound_func(f)
    dump("lower-compound", lambda: str(module))
    if last == "lower-compound":
        return module

    if kernel.pes > config.pes:
        raise KernelError(
            f"the kernel {kernel.name} runs on {kernel.pes} PEs; the machine has {config.pes}",
            def_location(kernel.fn),
            hint=f"compile for a machine with pes={kernel.pes}",
        )
    outputs = set(output_names(f))
    params = tuple(  # after lower-compound: its GM scratch area is a tensor parameter too
        TensorParam(a.name, a.type.dt, a.type.dims, a.type.stride, a.name in outputs)
        for a in tensor_args(f)
    )
    _check_gm(kernel, gm_end(params), config)
    limit = max_tile_bytes or default_tile_limit(config)
    _check_tile_rows(module, traced, limit, config.capacity)
    with _stage("legalize", traced, kernel):
        legalize_func(f, limit, config.capacity)
    dump("legalize", lambda: str(module))
    if last == "legalize":
        return module

    with _stage("allocate", traced, kernel):
        alloc = allocate_func(f, config.hands, config.depth, config.capacity)
    dump("allocate", lambda: str(module))
    if last == "allocate":
        return module

    sources = _bundle_sources(f, traced)
    with _stage("emit", traced, kernel):
        em = emit_func(f)
        report = None
        if validate:
            report = validate_program(em, config.hands, config.depth, config.capacity)
    _check_gm(kernel, gm_end(params, em.scratch_bytes, kernel.pes), config, spill=True)
    abi = KernelAbi(kernel.name, kernel.pes, params, em.bindings, em.scratch_bytes)
    prog = Program(
        em.program,
        abi=abi,
        kernel=kernel,
        machine=config,
        alloc=alloc,
        intents=em.intents,
        sources=dict(zip(sorted(em.intents), sources)),
        report=report,
    )
    dump("emit", lambda: prog.asm(source=True), ".s")
    return prog


@contextmanager
def _stage(name: str, traced: Traced, kernel: Kernel | None = None) -> Iterator[None]:
    """Turn a pass failure into a CompileError at the kernel line of the failing op."""
    from xdsl.utils.exceptions import DiagnosticException

    try:
        yield
    except (KernelError, CompileError):
        raise
    except DiagnosticException as e:  # the passes' CompileError and xDSL verifiers
        loc, rule = locate(str(e), traced)
        if loc is None and kernel is not None and "base addresses" in rule:
            loc = abi_location(kernel)
        raise CompileError(rule, loc, hint=_hint(rule, kernel)) from None
    except Exception as e:
        raise CompileError(
            f"internal error in the {name} stage: {type(e).__name__}: {e}",
            None,
            hint="this is a ptoc bug; please report it with the kernel",
        ) from e


def locate(message: str, traced: Traced) -> tuple[SourceLoc | None, str]:
    """Split a pass diagnostic ``file:line:col: rule`` into a SourceLoc and the rule."""
    m = _PASS_LOC.match(message.strip())
    if m is None:
        return None, message.strip()
    key = (m["file"], int(m["line"]), int(m["col"]))
    loc = traced.locations.get(key) or SourceLoc(key[0], key[1], max(key[2] - 1, 0))
    rule = _OP_PREFIX.sub(_catalog_name, m["rule"], count=1)
    return loc, rule


def _catalog_name(m: re.Match[str]) -> str:
    """``pto.tadd`` -> ``TADD``, ``tile.rowmax`` -> ``TROWMAX``, and a compound op
    ``tile.merge_sorted`` -> ``pt.merge_sorted`` (the names a kernel author knows)."""
    from ptoc.dialects.compound_ops import COMPOUND_OPS

    if m["dialect"] == "pto":
        return f"{m['name'].upper()}: "
    if any(c.name == f"tile.{m['name']}" for c in COMPOUND_OPS):
        return f"pt.{m['name']}: "
    return f"T{m['name'].upper()}: "


def _hint(rule: str, kernel: Kernel | None = None) -> str | None:
    if "base addresses" in rule:
        extra = ""
        if kernel is not None and len(kernel.params) > ABI_BASES:
            past = kernel.params[ABI_BASES]
            loc = param_location(kernel.fn, past.name)
            where = f" ({loc.file}:{loc.line})" if loc is not None else ""
            extra = f"; the tensor {past.name!r}{where} is the first past the limit"
        return (
            f"the ABI passes one base address per tensor in a0..a7 (one per distinct "
            f"pt.pe() step of its windows, plus one for a spill area): use at most "
            f"{ABI_BASES} tensors, or the same PE step for every window of a tensor{extra}"
        )
    if "capacity" in rule or "no room" in rule:
        return (
            "work on smaller tiles (load fewer rows at a time), or compile for a machine "
            "with more capacity"
        )
    return None


#: base-address registers of the kernel ABI (a0..a7; DECISIONS D7)
ABI_BASES = 8


def abi_location(kernel: Kernel) -> SourceLoc | None:
    """Where a kernel exceeds the ABI's base addresses: its first tensor parameter past
    the limit, or else (PE steps or the spill area push it over) its ``def`` line."""
    if len(kernel.params) > ABI_BASES:
        loc = param_location(kernel.fn, kernel.params[ABI_BASES].name)
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


def _loc_text(op: Any) -> str:
    from ptoc.passes.diagnostics import location

    return location(op)


def _check_tile_rows(module: Any, traced: Traced, limit: int, capacity: int) -> None:
    """Tiles larger than ``limit`` bytes per PE are split into row pieces; a tile whose
    single row is already larger cannot be split, so it is too large for the machine."""
    from ptoc.dialects.tile_types import TileType
    from ptoc.passes.geometry import tile_bytes

    for op in module.walk():
        for r in op.results:
            t = r.type
            if not isinstance(t, TileType) or tile_bytes(t) <= limit:
                continue
            row = tile_bytes(TileType(t.dtype, (1, t.extent[1]), (1, t.valid[1])))
            if row > limit:
                loc, _ = locate(f"{_loc_text(op)}: x", traced)
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
    for op in f.body.block.ops:
        if not isinstance(op, PtoOp):
            continue
        loc = op.location
        if isinstance(loc, FileLineColLoc) and op.role_name is None:
            key = (loc.filename.data, loc.line.data, loc.column.data)
            out.append(traced.locations.get(key))
        else:
            out.append(None)
    return out
