"""``ptoc.run``, ``ptoc.reference`` and ``ptoc.verify``.

``run`` places the inputs in global memory as the kernel ABI says, sets each PE's
argument registers, executes the bundles on the machine model and reads the outputs
back by name. ``reference`` evaluates the traced ``tile`` ops with their numpy
reference semantics. ``verify`` compares the two bit for bit -- raw bit patterns, so
NaN payloads and the sign of zero count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from ptoc.backend.isa.fields import CORE_COUNT_GPR
from ptoc.runtime.arrays import array_dtype_rule

from .driver import source_of
from .errors import Error, InputError, Mismatch, ReferenceFault, VerifyError
from .kernel import Kernel
from .program import Program
from .tensor import ScalarSpec, TensorSpec

#: how many differing elements a VerifyError lists
SHOWN = 8


class Outputs(dict[str, np.ndarray]):
    """The output tensors by parameter name, plus what the run saw: ``trace`` (the
    per-bundle trace when asked for), ``status`` (numeric status bits per PE),
    ``bundles`` (tile bundles executed) and ``scalar_blocks``."""

    trace: Any = None
    status: Any = None
    bundles: int = 0
    scalar_blocks: int = 0
    #: with ``verify(expected=...)``: the largest (abs, rel) error of each output
    closeness: dict[str, tuple[float, float]] | None = None
    #: with ``verify(workers=N)`` or ``verify(cluster=...)``: the campaign's report
    campaign: Any = None
    #: with ``run(cluster=...)``: where the cores ran (:class:`ptoc.cluster.ClusterReport`)
    cluster: Any = None


def _specs(kernel: Kernel) -> dict[str, TensorSpec]:
    return {p.name: p.spec for p in kernel.params if isinstance(p.spec, TensorSpec)}


def _scalar_specs(kernel: Kernel) -> dict[str, ScalarSpec]:
    return {p.name: p.spec for p in kernel.params if isinstance(p.spec, ScalarSpec)}


def _scalar_value(kernel: str, name: str, spec: ScalarSpec, value: Any) -> np.ndarray:
    """A scalar argument as a 0-d int64 array, checked against its element type (an
    FP32 scalar: its bit pattern, the value rounded to FP32 as numpy rounds, RNE)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if spec.dtype.is_float:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise InputError(
                f"{kernel}: the scalar '{name}' ({spec.dtype.name}) is a number, not "
                f"{type(value).__name__} {value!r}"[:200]
            )
        with np.errstate(over="ignore"):
            bits = np.array(value, np.float32).view(np.uint32)
        return np.array(int(bits), np.int64)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(
            f"{kernel}: the scalar '{name}' ({spec.dtype.name}) is an integer, not "
            f"{type(value).__name__} {value!r}"[:200]
        )
    bits = spec.dtype.bits
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not lo <= int(value) <= hi:
        raise InputError(f"{kernel}: the scalar '{name}' = {value} is outside {lo}..{hi}")
    return np.array(int(value), np.int64)


class _Inputs(NamedTuple):
    """What :func:`check_inputs` reads of a kernel, computed once per kernel: its tensor
    and scalar specs by name, each tensor's (shape, carrier), and the names it must be
    given (the tensors it reads, then its scalars)."""

    specs: dict[str, TensorSpec]
    scalars: dict[str, ScalarSpec]
    expected: dict[str, tuple[tuple[int, ...], np.dtype]]
    required: tuple[str, ...]


def _inputs_of(kernel: Kernel) -> _Inputs:
    got = kernel.__dict__.get("_input_facts")
    if got is None:
        specs, scalars = _specs(kernel), _scalar_specs(kernel)
        expected = {n: (tuple(s.shape), s.dtype.carrier) for n, s in specs.items()}
        required = (*kernel.trace().inputs, *scalars)
        got = kernel.__dict__["_input_facts"] = _Inputs(specs, scalars, expected, required)
    return got


def check_inputs(kernel: Kernel, arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The arrays converted to each tensor's element type; InputError naming the rule for
    an unknown or missing name, a wrong shape, or values the type cannot hold."""
    facts = _inputs_of(kernel)
    specs, scalars, expected = facts.specs, facts.scalars, facts.expected

    def sig() -> str:
        out = ", ".join(
            f"{n} ({s.dtype.name} {s.shape[0]}x{s.shape[1]})" for n, s in specs.items()
        )
        if scalars:
            out += "; its scalars are " + ", ".join(
                f"{n} ({s.dtype.name})" for n, s in scalars.items()
            )
        return out

    out: dict[str, np.ndarray] = {}
    for name, value in arrays.items():
        want = expected.get(name)
        if (  # the common case: an array of the tensor's shape and carrier, contiguous
            want is not None
            and type(value) is np.ndarray
            and value.dtype == want[1]
            and value.shape == want[0]
            and value.flags.c_contiguous
        ):
            out[name] = value
            continue
        if name in scalars:
            out[name] = _scalar_value(kernel.name, name, scalars[name], value)
            continue
        if name not in specs:
            raise InputError(f"{kernel.name} has no tensor '{name}'; its tensors are {sig()}")
        out[name] = _convert(kernel.name, name, specs[name], value)
    missing = [n for n in facts.required if n not in out]
    if missing:
        raise InputError(
            f"{kernel.name} reads {', '.join(repr(m) for m in missing)}, which "
            f"{'was' if len(missing) == 1 else 'were'} not given; its tensors are {sig()}"
        )
    return out


def _convert(kernel: str, name: str, spec: TensorSpec, value: Any) -> np.ndarray:
    arr = np.asarray(value)
    carrier = spec.dtype.carrier
    if arr.shape != spec.shape:
        raise InputError(
            f"{kernel}: '{name}' has shape {arr.shape}, the tensor is {spec.shape}"
        )
    if arr.dtype == carrier:
        return np.ascontiguousarray(arr)
    why = array_dtype_rule(arr.dtype)
    if why is not None or arr.dtype.kind == "V":  # never drop an imaginary part or a field
        raise InputError(
            f"{kernel}: '{name}' cannot be a {spec.dtype.name} tensor: "
            f"{why or f'{arr.dtype} is raw bytes'}"
        )
    if arr.dtype.kind == "b":
        raise InputError(f"{kernel}: '{name}' is a bool array; the tensor is {spec.dtype.name}")
    if spec.dtype.is_int:
        if arr.dtype.kind not in "iu":
            raise InputError(
                f"{kernel}: '{name}' holds {arr.dtype} values; the tensor is {spec.dtype.name} "
                "(pass integers)"
            )
        info = np.iinfo(carrier)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise InputError(
                f"{kernel}: '{name}' has values outside {info.min}..{info.max} "
                f"({spec.dtype.name})"
            )
    # floats round to nearest even at the element type (numpy's conversion)
    return np.ascontiguousarray(arr.astype(carrier))


def reference(kernel: Kernel, **arrays: Any) -> dict[str, np.ndarray]:
    """The kernel's outputs from the numpy reference semantics of its traced ops.

    An operation whose inputs break a data-dependent rule raises :class:`ReferenceFault`
    at its kernel line (where the machine would raise Fault_TileLegality).
    """
    return reference_of(kernel, arrays)


def reference_of(
    kernel: Kernel, arrays: Mapping[str, Any], grid: int | None = None
) -> dict[str, np.ndarray]:
    """:func:`reference` with the arrays as one mapping (``grid`` cores: default the
    kernel's)."""
    kernel = _kernel(kernel, "ptoc.reference")
    inputs = check_inputs(kernel, arrays)
    cores = grid if grid is not None else getattr(kernel, "grid", 1)
    try:
        return evaluate(kernel, inputs, cores)
    except Error as e:
        raise e.with_traceback(None) from None


def evaluate(
    kernel: Kernel, inputs: Mapping[str, np.ndarray], cores: int = 1
) -> dict[str, np.ndarray]:
    """The reference interpreter's walk (``ptoc.dialects.reference``), op by op, so that
    a rejected operation is reported at its kernel line; for a grid launch of ``cores``
    cores, once per core in index order over the same tensors (a race-free kernel's
    result does not depend on the order)."""
    from ptoc.backend.isa.semantics.core import SemanticError
    from ptoc.dialects import reference as ref
    from ptoc.dialects.compound_ref import CompoundError
    from ptoc.dialects.scalars import ElementError
    from ptoc.dialects.tile_base import RefEnv
    from ptoc.dialects.tile_memory import WindowError

    traced = kernel.trace()
    f = ref.kernel_func(traced.module)
    tensors = ref.initial_tensors(f, {k: v for k, v in inputs.items() if v.ndim})

    def apply(op: Any, env: RefEnv, args: list[np.ndarray]) -> Any:
        try:
            return op.reference(env, args)
        except (SemanticError, CompoundError) as e:
            loc = source_of(op, traced)
            name = _op_name(op)
            rule = e.rule if name in e.rule else f"{name}: {e.rule}"
            hint = "the machine raises Fault_TileLegality at this operation on these inputs"
            raise ReferenceFault(rule, loc, hint) from None
        except WindowError as e:
            loc = source_of(op, traced)
            hint = "the machine stops with a fault at this access for these scalar arguments"
            raise ReferenceFault(e.rule, loc, hint) from None

    # dead ops are not evaluated (nor compiled)
    try:
        for core in range(cores):
            env = RefEnv(ref.kernel_pes_of(f), core=(core, cores))
            for a in ref.tensor_args(f):
                env.tensors[a.value] = tensors[a.name]
            scalars = {a.name: int(inputs[a.name]) for a in ref.scalar_args(f)}
            ref.bind_scalars(f, env, scalars)
            ref.evaluate_kernel(f, env, apply)
    except ElementError as e:
        loc = source_of(e.op, traced)  # type: ignore[attr-defined]
        hint = "the machine stops with a fault at this read for these scalar arguments"
        raise ReferenceFault(e.rule, loc, hint) from None
    return {name: tensors[name] for name in ref.output_names(f)}


def _op_name(op: Any) -> str:
    """TDIV for a direct op, pt.merge_sorted for a compound one."""
    interface = getattr(op, "INTERFACE", "")
    return f"pt.{interface}" if interface else getattr(op, "MNEMONIC", None) or op.name


def run(
    program: Program | Kernel,
    machine: Any = None,
    trace: bool = False,
    *,
    grid: int | None = None,
    workers: int = 1,
    cluster: Any = None,
    check_races: bool = False,
    **arrays: Any,
) -> Outputs:
    """Execute a compiled kernel on the machine model; returns :class:`Outputs` by name.

    ``machine`` defaults to the machine the program was compiled for. A machine fault
    names the bundle, the operation, the rule and the kernel line the bundle came from.

    ``grid`` (default: the kernel's ``@ptoc.kernel(grid=N)``) launches that many cores
    over one global memory (D13, docs/many-cores.md); ``check_races`` reports cores
    whose GM accesses conflict; ``workers`` runs the cores in that many processes.
    ``cluster`` (a Dask scheduler address, ``local[:N]`` or a ``distributed.Client``)
    runs them as tasks on a Dask cluster instead, ``workers`` chunks of consecutive cores
    (default: one per worker thread); the result is the serial run's, faults included.
    """
    return run_on(program, arrays, machine, trace, grid=grid, workers=workers,
                  cluster=cluster, check_races=check_races)  # fmt: skip


_RUN_DEPS: tuple[Any, ...] | None = None


def _run_deps() -> tuple[Any, ...]:
    """What :func:`run_on` uses of the compiler and the machine, imported on the first
    run (``import ptoc`` stays light) and kept (a run pays no import statements)."""
    global _RUN_DEPS
    if _RUN_DEPS is None:
        from ptoc.passes.execute import place, read_outputs, tensor_layout
        from ptoc.runtime import MachineFault
        from ptoc.runtime.spare import keep_machine, spare_machine

        from .driver import compile_kernel, machine_config

        _RUN_DEPS = (place, read_outputs, tensor_layout, spare_machine, keep_machine,
                     MachineFault, compile_kernel, machine_config)  # fmt: skip
    return _RUN_DEPS


def run_on(
    program: Program | Kernel,
    arrays: Mapping[str, Any],
    machine: Any = None,
    trace: bool = False,
    *,
    grid: int | None = None,
    workers: int = 1,
    cluster: Any = None,
    check_races: bool = False,
) -> Outputs:
    """:func:`run` with the arrays as one mapping."""
    deps = _run_deps()
    place, read_outputs, tensor_layout, spare_machine, keep_machine = deps[:5]
    MachineFault, compile_kernel, machine_config = deps[5:]
    if isinstance(program, Kernel):
        program = compile_kernel(program, machine)
    if not isinstance(program, Program) or program.abi is None or program.kernel is None:
        raise InputError(
            "ptoc.run needs a program from ptoc.compile (a parsed or decoded program has no "
            "kernel ABI; run it with ptoc.runtime.Machine)"
        )
    inputs = check_inputs(program.kernel, arrays)
    config = program.machine if machine is None else machine_config(machine)
    abi = program.abi
    end = tensor_layout(abi).end
    if end > config.gm_size:
        need = -(-end // (1 << 20))
        raise InputError(
            f"{abi.kernel}: its tensors and spill area need global memory up to 0x{end:x}, "
            f"more than the machine's gm_size={config.gm_size}; run on a machine with "
            f"gm_size={need}M (--machine gm_size={need}M)"
        )
    cores = launch_size(program, grid, workers)
    if cores > 1 or workers > 1 or cluster is not None:
        from .launch import run_grid

        return run_grid(program, inputs, config, cores, workers, check_races, trace, cluster)
    m = spare_machine(config)
    placement = place(program, m, inputs)
    m.set_gpr(CORE_COUNT_GPR, 1)  # the grid ABI of a one-core launch (core index 0)
    try:
        report = m.run(program.program, trace=trace)
    except MachineFault as f:
        raise locate_fault(program, f, m).with_traceback(None) from None
    out = Outputs(read_outputs(program, m, placement))
    out.trace, out.status = report.trace, m.status
    out.bundles, out.scalar_blocks = report.bundles, report.scalar_blocks
    if not trace:  # (outputs and status are copies: nothing refers to the machine)
        keep_machine(m)
    return out


def locate_fault(program: Program, f: Any, m: Any = None) -> Any:
    """Machine fault ``f`` named after the kernel: the kernel line of its bundle (source
    and a note with the excerpt) and, for a bounds check's trap, which window left which
    tensor (with the index's value when the machine ``m`` is given)."""
    _window_fault(program, m, f)
    loc = program.source_of(f.bundle.command) if f.bundle is not None else None
    if loc is not None:
        f.source = loc
        excerpt = loc.excerpt()
        f.add_note(f"from the kernel at {loc}" + (f"\n{excerpt}" if excerpt else ""))
    return f


def _window_fault(program: Program, m: Any, f: Any) -> None:
    """A bounds check's trap (``Fault_InstructionPC`` in a check block): say which window
    left which tensor, with the index's value."""
    if f.bundle is None or not program.checks:
        return
    # the block holding the faulting command: a check block is keyed by its BSTART
    starts = [b.index for b in program.program.blocks() if b.index <= f.bundle.command]
    check = program.checks.get(starts[-1]) if starts else None
    if check is None:
        return
    value = "" if m is None else f" {int(np.int64(np.uint64(m.gpr(_gpr_name(check.reg)))))}"
    f.rule = (
        f"the run-time {check.axis} start{value} moves {check.what} out of the tensor "
        f"(the {check.axis} starts {check.low}..{check.high} keep it inside); the bounds "
        "check before the access branched into no block"
    )
    f.op = "bounds check"


def _gpr_name(code: int) -> str:
    from ptoc.backend.isa.fields import GPR_NAMES

    return GPR_NAMES[code]


def launch_size(program: Program, grid: int | None, workers: int) -> int:
    """The number of cores of a launch: ``grid``, else the kernel's ``grid``."""
    from ptoc.runtime.grid import MAX_GRID

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers is a positive integer, not {workers!r}")
    if grid is None:
        return getattr(program.kernel, "grid", 1)
    if isinstance(grid, bool) or not isinstance(grid, int) or not 1 <= grid <= MAX_GRID:
        raise InputError(f"grid is the number of cores, 1 to {MAX_GRID}, not {grid!r}")
    return grid


def verify(
    kernel: Kernel | Program,
    machine: Any = None,
    *,
    expected: Callable[..., Any] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    runs: int = 1,
    seed: int = 0,
    grid: int | None = None,
    workers: int = 1,
    cluster: Any = None,
    check_races: bool = True,
    **arrays: Any,
) -> Outputs:
    """Compile, run and compare with :func:`reference` bit for bit; raises
    :class:`VerifyError` listing the first differing elements. Returns the machine's
    outputs (of the last run).

    Inputs: the arrays given by tensor name, or else ``runs`` random input sets from
    seeds ``seed .. seed + runs - 1`` (``kernel.random_inputs``).

    ``expected``: the author's numpy function of the input arrays (called with them by
    tensor name), returning the intended outputs (a dict by name, or one array); the
    machine's outputs must lie within ``atol + rtol * |expected|`` of it element by
    element, else :class:`ToleranceError` lists the worst elements. The defaults are
    exact for integer outputs and, for float outputs, two units of the type's epsilon
    (at least 1e-5) and ``atol=1e-8``.

    ``grid`` launches that many cores (default: the kernel's), with the race detector on
    unless ``check_races=False``. ``workers`` verifies the random runs in that many
    processes, ``cluster`` (a Dask scheduler address, ``local[:N]`` or a
    ``distributed.Client``) on a cluster; the first failing seed is reported as a serial
    run reports it (docs/many-cores.md).
    """
    return verify_on(kernel, arrays, machine, expected=expected, rtol=rtol, atol=atol,
                     runs=runs, seed=seed, grid=grid, workers=workers, cluster=cluster,
                     check_races=check_races)  # fmt: skip


def input_sets(
    kernel: Kernel, arrays: Mapping[str, Any], runs: int, seed: int
) -> list[tuple[str, Mapping[str, Any] | None]]:
    """(context, arrays) per run: the given arrays once, or one random set per seed
    (None: drawn when the run starts)."""
    for what, v in (("runs", runs), ("seed", seed)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InputError(f"{what} is an integer, not {v!r}")
    if runs < 1:
        raise InputError(f"runs must be at least 1, not {runs}")
    if seed < 0:
        raise InputError(f"a random-input seed is a non-negative integer, not {seed}")
    if arrays:
        if runs != 1 or seed != 0:
            raise InputError(
                f"verify {kernel.name}: give input arrays or runs=/seed= for random inputs, "
                "not both"
            )
        return [("", arrays)]
    return [(f"seed {s}", None) for s in range(seed, seed + runs)]


def verify_on(
    kernel: Kernel | Program,
    arrays: Mapping[str, Any],
    machine: Any = None,
    *,
    expected: Callable[..., Any] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    runs: int = 1,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    context: str | None = None,
    grid: int | None = None,
    workers: int = 1,
    cluster: Any = None,
    check_races: bool = True,
) -> Outputs:
    """:func:`verify` with the arrays as one mapping; ``progress(i)`` is called after run
    ``i`` (1-based); ``context`` names the given arrays in messages."""
    from .driver import compile_kernel

    if isinstance(kernel, Program):
        program, k = kernel, kernel.kernel
        if k is None:
            raise InputError("ptoc.verify needs a kernel, or a program from ptoc.compile")
    else:
        k = _kernel(kernel, "ptoc.verify")
        program = compile_kernel(k, machine)
        machine = None  # run on the machine it was compiled for
    if expected is not None and not callable(expected):
        raise InputError(f"expected is a function of the input arrays, not {expected!r}")
    for what, tol in (("rtol", rtol), ("atol", atol)):
        if tol is not None and (
            isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol >= 0
        ):
            raise InputError(f"{what} is a non-negative number, not {tol!r}")
    sets = input_sets(k, arrays, runs, seed)
    if (workers != 1 or cluster is not None) and not arrays:
        from .campaign import verify_campaign

        return verify_campaign(program, seed, runs, workers, cluster, progress,
                               expected=expected, rtol=rtol, atol=atol, grid=grid,
                               check_races=check_races)  # fmt: skip
    got = Outputs()
    for i, (what, given) in enumerate(sets):
        inputs = given if given is not None else k.random_inputs(int(what.split()[1]))
        what = what or (context or "")
        want = reference_of(k, inputs, grid)
        got = run_on(program, inputs, machine, grid=grid, check_races=check_races)
        compare(k.name, got, want, context=what)
        if expected is not None:
            from .expected import compare_close, expected_outputs

            ref = expected_outputs(k, expected, check_inputs(k, inputs))
            name = getattr(expected, "__name__", "expected")
            got.closeness = compare_close(k.name, got, ref, rtol, atol, what, name)
        if progress is not None:
            progress(i + 1)
    return got


def compare(
    kernel: str,
    got: Mapping[str, np.ndarray],
    want: Mapping[str, np.ndarray],
    context: str = "",
) -> None:
    """Raise VerifyError unless every output has the same shape and raw bits."""
    mismatches: list[Mismatch] = []
    counts: dict[str, tuple[int, int]] = {}
    outputs: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for name, w in want.items():
        g = got[name]
        if g.shape != w.shape or g.dtype.itemsize != w.dtype.itemsize:
            raise VerifyError(
                kernel,
                [],
                {name: (max(g.size, w.size), w.size)},
                f"shape {g.shape} vs {w.shape}",
            )
        gb, wb = _bits(g), _bits(w)
        diff = np.argwhere(gb != wb)
        if not len(diff):
            continue
        counts[name] = (len(diff), w.size)
        outputs[name] = (g, w, gb != wb)
        width = w.dtype.itemsize * 8
        for idx in diff[: max(SHOWN - len(mismatches), 0)]:
            i = tuple(int(k) for k in idx)
            mismatches.append(Mismatch(name, i, g[i], w[i], int(gb[i]), int(wb[i]), width))
    if counts:
        e = VerifyError(kernel, mismatches, counts, context)
        e.outputs = outputs
        raise e


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.itemsize in (1, 2, 4, 8) else a


def _kernel(k: Any, fn: str) -> Kernel:
    if not isinstance(k, Kernel):
        raise TypeError(f"{fn} takes a @ptoc.kernel function, not {k!r}")
    return k
