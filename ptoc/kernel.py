"""``@ptoc.kernel``: a Python function whose body is traced into a ``tile`` kernel.

    @ptoc.kernel(pes=4)
    def vadd(x: ptoc.Tensor[ptoc.fp32, 32, 64], y: ..., out: ...):
        rows = (pt.pe() * 8, 8)
        pt.store(out, pt.load(x, rows=rows) + pt.load(y, rows=rows), rows=rows)

Tracing runs the body once with proxy values: Python loops and conditions on
compile-time values unroll and select code at trace time. The traced module is cached
on the kernel.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoc.backend.isa import info

from .errors import Error, InputError, Interrupted, KernelError
from .source import SourceLoc, def_location, is_library_frame, user_location
from .tensor import ScalarSpec, TensorSpec

#: keywords of ptoc.run / ptoc.reference / ptoc.verify, which take arrays as **kwargs
RESERVED = frozenset(
    {"program", "kernel", "machine", "trace", "expected", "rtol", "atol", "runs", "seed"}
)

#: a string annotation: numpy loads ``numpy.random`` on first access, not at ``import ptoc``
InputGen = Callable[["np.random.Generator"], dict[str, np.ndarray]]


@dataclass(frozen=True)
class Param:
    name: str
    spec: TensorSpec | ScalarSpec

    @property
    def is_scalar(self) -> bool:
        return isinstance(self.spec, ScalarSpec)


@dataclass(frozen=True)
class Traced:
    """The result of tracing: the ``tile`` module and what the kernel reads and writes."""

    module: Any  # xdsl ModuleOp (kept untyped so importing ptoc stays light)
    inputs: tuple[str, ...]  # tensors the kernel loads from
    outputs: tuple[str, ...]  # tensors the kernel stores to
    locations: dict[tuple[str, int, int], SourceLoc]


class Kernel:
    """A traced-on-demand PTO kernel. Use it with :func:`ptoc.compile`,
    :func:`ptoc.reference`, :func:`ptoc.run` and :func:`ptoc.verify`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        pes: int = 1,
        name: str | None = None,
        scope: dict[str, Any] | None = None,
        grid: int = 1,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.pes = pes
        #: cores a launch runs by default (D13; ``ptoc.run(..., grid=N)`` overrides it)
        self.grid = grid
        # string annotations (from __future__ import annotations) may name locals of the
        # function that defined the kernel: evaluate them in that scope
        self.scope = scope if scope is not None else annotation_scope(fn)
        self.params = _params(fn, self.scope)
        self._traced: Traced | None = None
        self._inputs: InputGen | None = None
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        args = ", ".join(f"{p.name}: {p.spec!r}" for p in self.params)
        grid = f" grid={self.grid}" if self.grid != 1 else ""
        return f"<ptoc.kernel {self.name}({args}) pes={self.pes}{grid}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise KernelError(
            f"the kernel {self.name} is not called like a Python function",
            user_location(2),
            hint=f"compile it with ptoc.compile({self.name}), evaluate it with "
            f"ptoc.reference({self.name}, ...), or check it with ptoc.verify({self.name}, ...)",
        )

    @property
    def file(self) -> str:
        return self.fn.__code__.co_filename

    def trace(self) -> Traced:
        """The traced ``tile`` module (traced once, then cached)."""
        if self._traced is None:
            try:
                self._traced = _trace(self)
            except KernelError as e:  # show the kernel line, not the tracer's frames
                raise e.with_traceback(None) from None
        return self._traced

    # ---- input data for verify / run / bench

    def inputs(self, gen: InputGen) -> InputGen:
        """Decorator: register ``gen(rng) -> {name: array}`` producing valid random inputs
        (for kernels whose inputs must be sorted, in range, ...)."""
        self._inputs = gen
        return gen

    def random_inputs(self, seed: int = 0) -> dict[str, np.ndarray]:
        """Random inputs from ``seed``: the registered generator, else standard normal
        floats and full-range integers for every tensor the kernel loads."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError(f"a random-input seed is a non-negative integer, not {seed!r}")
        rng = np.random.default_rng(int(seed))
        if self._inputs is not None:
            return self._generated(rng)
        specs = {p.name: p.spec for p in self.params}
        scalars = [p.name for p in self.params if p.is_scalar]
        if scalars:
            raise InputError(
                f"{self.name} has run-time scalar parameters ({', '.join(scalars)}): give "
                "their values by name, or register an input generator with "
                f"@{self.name}.inputs that returns them"
            )
        return {n: random_array(rng, specs[n]) for n in self.trace().inputs}  # type: ignore[arg-type]

    def _generated(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """The registered generator's arrays; its Python errors become one InputError."""
        from .pyerror import exception_text, raised_at

        assert self._inputs is not None
        try:
            arrays = self._inputs(rng)
            return dict(arrays)
        except (Error, KeyboardInterrupt):
            raise
        except Exception as e:
            raise InputError(
                f"{raised_at(e)}the input generator of {self.name} raised {exception_text(e)}"
            ) from None


def random_array(rng: np.random.Generator, spec: TensorSpec) -> np.ndarray:
    """A random array of a tensor's shape and element type."""
    carrier = spec.dtype.carrier
    if spec.dtype.is_float:
        values = rng.standard_normal(spec.shape)
        dt = spec.dtype.datatype
        if not info(dt).exact_carrier and carrier.kind == "f":
            # TF32/HF32 keep reduced fractions in float32: round to valid encodings (the
            # semantics are imported here: they are heavy for ``import ptoc``)
            from ptoc.backend.isa.semantics.core import round_float

            return round_float(dt, values)[0]
        return values.astype(carrier)
    lim = np.iinfo(carrier)
    return rng.integers(lim.min, lim.max, spec.shape, dtype=carrier, endpoint=True)


def kernel(
    fn: Callable[..., Any] | None = None,
    *,
    pes: int = 1,
    name: str | None = None,
    grid: int = 1,
) -> Any:
    """Decorate a kernel function: ``@ptoc.kernel`` or ``@ptoc.kernel(pes=4)``.

    Parameters are global-memory tensors annotated ``ptoc.Tensor[dtype, rows, cols]``;
    ``pes`` (1..4) is the number of PEs that run the kernel; ``grid`` the number of cores
    a launch runs it on by default (D13: every core over one global memory).
    """
    from ptoc.runtime.grid import MAX_GRID

    if isinstance(grid, bool) or not isinstance(grid, int) or not 1 <= grid <= MAX_GRID:
        raise KernelError(
            f"a kernel runs on 1 to {MAX_GRID} cores, not grid={grid!r}",
            user_location(2),
            hint="grid is the number of cores of a launch (DECISIONS D13)",
        )
    if isinstance(pes, bool) or not isinstance(pes, int) or not 1 <= pes <= 4:
        raise KernelError(
            f"a kernel runs on 1 to 4 PEs, not pes={pes!r}",
            user_location(2),
            hint="the machine has four PEs (DECISIONS D3)",
        )

    def wrap(f: Callable[..., Any]) -> Kernel:
        return Kernel(f, pes, name, annotation_scope(f), grid)

    return wrap if fn is None else wrap(fn)


def annotation_scope(fn: Callable[..., Any]) -> dict[str, Any]:
    """The defining scope's locals when ``fn`` has string annotations (which may name
    them), else nothing (a kernel keeps no references it does not need)."""
    annotations = getattr(fn, "__annotations__", None) or {}
    if any(isinstance(a, str) for a in annotations.values()):
        return defining_scope()
    return {}


def defining_scope() -> dict[str, Any]:
    """The local names of the innermost frame outside ptoc: the scope whose ``def``
    statement is being decorated (empty at module level, where globals serve)."""
    frame = sys._getframe(1)
    while frame is not None and is_library_frame(frame):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None or frame.f_locals is frame.f_globals:
        return {}
    return dict(frame.f_locals)


def _annotation_scope(fn: Callable[..., Any], scope: dict[str, Any]) -> dict[str, Any]:
    """``scope`` plus the values of ``fn``'s closure cells."""
    names = dict(scope)
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    for var, cell in zip(code.co_freevars if code else (), cells):
        with contextlib.suppress(ValueError):  # a cell not yet assigned
            names[var] = cell.cell_contents
    return names


def _params(fn: Callable[..., Any], scope: dict[str, Any] | None = None) -> tuple[Param, ...]:
    loc = def_location(fn)
    if not inspect.isfunction(fn):
        raise KernelError(f"@ptoc.kernel decorates a function, not {fn!r}", user_location(3))
    if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn):
        raise KernelError(
            "a kernel cannot be a generator or a coroutine",
            loc,
            hint="write a plain function that stores its results with pt.store",
        )
    try:
        hints = inspect.get_annotations(
            fn, eval_str=True, locals=_annotation_scope(fn, scope or {})
        )
    except KernelError as e:  # a bad Tensor[...] in a string annotation
        raise KernelError(e.message, loc, e.hint) from None
    except Exception as e:
        raise KernelError(f"cannot evaluate the parameter annotations: {e}", loc) from None
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY):
            raise KernelError(
                f"kernel parameter '{p.name}' is {p.kind.description}; kernels take tensor "
                "parameters only",
                loc,
                hint="declare each tensor as a plain parameter: "
                "x: ptoc.Tensor[ptoc.fp32, 8, 64]",
            )
        spec = hints.get(p.name)
        if not isinstance(spec, (TensorSpec, ScalarSpec)):
            what = "has no annotation" if spec is None else f"is annotated {spec!r}"
            raise KernelError(
                f"kernel parameter '{p.name}' {what}; every parameter is a tensor or a "
                "run-time scalar",
                loc,
                hint=f"annotate it: {p.name}: ptoc.Tensor[ptoc.fp32, ROWS, COLS] (or "
                "ptoc.Scalar[ptoc.s32]); use Python globals or closures for compile-time "
                "constants",
            )
        if p.name in RESERVED:
            raise KernelError(
                f"kernel parameter '{p.name}' clashes with a keyword of ptoc.run / "
                "ptoc.verify, which take the arrays as keywords",
                loc,
                hint=f"rename it; reserved names: {', '.join(sorted(RESERVED))}",
            )
        if p.default is not p.empty:
            raise KernelError(f"kernel parameter '{p.name}' has a default value", loc)
        out.append(Param(p.name, spec))
    return tuple(out)


def _trace(k: Kernel) -> Traced:
    from xdsl.dialects import func
    from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
    from xdsl.ir import Block, Region

    from ptoc.dialects.tile_memory import PES_ATTR
    from ptoc.dialects.tile_types import TensorType

    from .pyerror import kernel_body_error, traceback_location
    from .tile import TensorParam
    from .trace import TraceState, tracing

    types = [
        i64 if p.is_scalar else TensorType(p.spec.dtype.catalog_name, p.spec.shape)  # type: ignore[union-attr]
        for p in k.params
    ]
    block = Block(arg_types=types)
    for arg, p in zip(block.args, k.params):
        arg.name_hint = p.name
    f = func.FuncOp(k.name, (types, []), Region(block))
    f.attributes[PES_ATTR] = IntegerAttr(k.pes, i64)
    module = ModuleOp([f])
    ret = func.ReturnOp()
    block.add_op(ret)
    state = TraceState(k.name, k.pes, block, ret)
    from .lang.control import Index, RunScalar

    def proxy(p: Param, a: Any) -> Any:
        if not p.is_scalar:
            return TensorParam(p.name, p.spec, a)  # type: ignore[arg-type]
        dtype = p.spec.dtype
        return RunScalar(a, dtype) if dtype.is_float else Index(a)

    proxies = [proxy(p, a) for p, a in zip(k.params, block.args)]
    with tracing(state):
        try:
            result = k.fn(*proxies)
        except KernelError:
            raise
        except KeyboardInterrupt as e:
            where, _ = traceback_location(e.__traceback__)
            at = f"{where}: " if where else ""
            raise Interrupted(f"{at}interrupted while tracing the kernel {k.name}") from None
        except Error:  # InputError, CompileError, ...: already one message
            raise
        except (Exception, SystemExit) as e:  # a Python error of the kernel's own code
            raise kernel_body_error(e, k.fn, k.name) from None
    state.finish()
    if result is not None:
        raise KernelError(
            "a kernel returns nothing; its results are the tensors it stores to",
            _return_location(k.fn) or def_location(k.fn),
            hint="store the result: pt.store(out, t), with out a tensor parameter",
        )
    if not state.stored:
        raise KernelError(
            f"the kernel {k.name} stores nothing, so it has no outputs",
            def_location(k.fn),
            hint="store results with pt.store(out, t)",
        )
    return Traced(module, tuple(state.loaded), tuple(state.stored), state.locations)


def _return_location(fn: Callable[..., Any]) -> SourceLoc | None:
    """The first ``return <value>`` of the kernel body (for the 'returns nothing' error)."""
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, SyntaxError, TypeError):
        return None
    indent = len(lines[0]) - len(lines[0].lstrip())
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            line = first + node.lineno - 1
            return SourceLoc(
                fn.__code__.co_filename,
                line,
                node.col_offset + indent,
                line,
                (node.end_col_offset or 0) + indent,
            )
    return None
