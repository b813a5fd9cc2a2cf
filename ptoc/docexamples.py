"""Runnable examples for the reference page, generated from each entry's probe.

A probe (``ptoc.docgen``) is a call of one ``ptoc.lang`` function on tiles that ``make``
builds. Run once more with a :class:`Recorder` for ``make`` and a :class:`Lang` for
``pt``, it traces as usual and also writes what it did as kernel source: one tensor
parameter and one ``pt.load`` per tile it makes, one statement for the call, and one
``pt.store`` into an output tensor per result tile. The page shows that kernel with a
``ptoc.verify`` call, and the docs test runs every block of the page, so an example that
stops compiling or verifying fails the suite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dtypes import DType
from .tile import Tile

#: how a probe's random operand is drawn when plain random data would not be a valid
#: input (``shape`` is formatted in): expressions of ``rng`` (a numpy Generator)
ASCENDING = "np.sort(rng.standard_normal({shape}), axis=1)"
#: sorted descending within blocks of 16 columns (for pt.merge_blocks)
BLOCKS16 = "-np.sort(-rng.standard_normal(({rows}, {cols} // 16, 16)), axis=2).reshape({shape})"


@dataclass
class Var:
    """A value of the example: its name in the kernel text and its traced value."""

    name: str
    value: Any


@dataclass
class Param:
    """A tensor parameter of the example (``draw``: its generator expression, if any)."""

    name: str
    dtype: DType
    shape: tuple[int, int]
    draw: str | None = None


@dataclass
class Recorder:
    """The ``make`` of a probe that also writes the kernel text (see the module doc)."""

    real: Any  # the docgen make (traces the operands)
    params: list[Param] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    names: int = 0

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def _input(self, rows: int, cols: int, d: DType | None, draw: str | None = None) -> Var:
        d = d or self.real.dtype
        p = Param(f"x{len(self.params)}", d, (rows, cols), draw)
        self.params.append(p)
        name = self.fresh("t")
        self.lines.append(f"{name} = pt.load({p.name})")
        return Var(name, self.real(rows, cols, d))

    def __call__(self, rows: int, cols: int, d: DType | None = None) -> Var:
        return self._input(rows, cols, d)

    def drawn(self, rows: int, cols: int, d: DType | None, draw: str) -> Var:
        """A tile loaded from a tensor drawn by ``draw`` (see :data:`ASCENDING`)."""
        return self._input(rows, cols, d, draw)

    def pred(self, rows: int, cols: int) -> Var:
        from .dtypes import DTYPES

        t = self._input(rows, cols, DTYPES["fp32"])
        name = self.fresh("p")
        self.lines.append(f"{name} = {t.name} > 0.0")
        return Var(name, t.value > 0.0)

    def sorted(self, rows: int, cols: int, d: DType | None = None) -> Var:
        from . import lang

        t = self._input(rows, cols, d)
        name = self.fresh("r")
        self.lines.append(f"{name} = pt.sort32({t.name})")
        return Var(name, lang.sort32(t.value))

    def packed(self, rows: int, cols: int, d: DType | None = None) -> Var:
        from . import lang

        r = self.sorted(rows, cols, d)
        name = self.fresh("k")
        self.lines.append(f"{name} = pt.pack_records({r.name})")
        return Var(name, lang.pack_records(r.value))


def text(value: Any) -> str:
    """Python source for an argument of a recorded call."""
    if isinstance(value, Var):
        return value.name
    if isinstance(value, DType):
        return f"ptoc.{value.name}"
    if isinstance(value, tuple):
        inner = ", ".join(text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(text(v) for v in value) + "]"
    return repr(value)


def _real(value: Any) -> Any:
    if isinstance(value, Var):
        return value.value
    if isinstance(value, (tuple, list)):
        return type(value)(_real(v) for v in value)
    return value


class Lang:
    """``pt`` for a recorded probe: each call runs the real function and is written."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec

    def __getattr__(self, name: str) -> Callable[..., Var]:
        from . import lang

        fn = getattr(lang, name)

        def call(*args: Any, **kwargs: Any) -> Var:
            result = fn(*_real(list(args)), **{k: _real(v) for k, v in kwargs.items()})
            words = [text(a) for a in args] + [f"{k}={text(v)}" for k, v in kwargs.items()]
            var = Var(self.rec.fresh("y"), result)
            self.rec.lines.append(f"{var.name} = pt.{name}({', '.join(words)})")
            return var

        return call


def _results(var: Any) -> list[tuple[str, Tile]]:
    """(source text, tile) of every result tile of the probe's value (the tiles of a
    tuple of results, such as Records, by index)."""
    if not isinstance(var, Var):
        raise ValueError(f"a probe gave {var!r}, not a recorded value")

    def walk(expr: str, v: Any) -> list[tuple[str, Tile]]:
        if isinstance(v, Tile):
            return [(expr, v)]
        if isinstance(v, tuple):
            return [r for i, x in enumerate(v) for r in walk(f"{expr}[{i}]", x)]
        return []  # None: an absent payload

    return walk(var.name, var.value)


def _draw(p: Param) -> str:
    shape = f"({p.shape[0]}, {p.shape[1]})"
    if p.draw is not None:
        body = p.draw.format(shape=shape, rows=p.shape[0], cols=p.shape[1])
    elif p.dtype.is_float:
        body = f"rng.standard_normal({shape})"
    else:
        c = p.dtype.carrier
        lo, hi = np.iinfo(c).min, np.iinfo(c).max
        return f"rng.integers({lo}, {hi}, {shape}, endpoint=True, dtype=np.{c})"
    return f"({body}).astype(np.{p.dtype.carrier})"


def kernel_text(name: str, rec: Recorder, value: Any) -> str:
    """The example kernel (and its ``ptoc.verify`` call) of a recorded probe."""
    outs = []
    stores = []
    for k, (expr, t) in enumerate(_results(value)):
        if t.dtype.bits < 8 or t.dtype.name == "pred":
            raise ValueError(f"{name}: a result of {t.dtype.name} cannot be stored")
        out = Param(f"out{k}" if k else "out", t.dtype, t.shape)
        outs.append(out)
        stores.append(f"pt.store({out.name}, {expr})")
    params = [f"{p.name}: ptoc.Tensor[ptoc.{p.dtype.name}, {p.shape[0]}, {p.shape[1]}]"
              for p in [*rec.params, *outs]]  # fmt: skip
    lines = ["@ptoc.kernel", f"def {name}(", *(f"    {p}," for p in params), "):"]
    lines += [f"    {s}" for s in [*rec.lines, *stores]]
    if any(p.draw is not None for p in rec.params):
        lines += ["", "", f"@{name}.inputs", f"def _{name}_inputs(rng):", "    return {"]
        lines += [f'        "{p.name}": {_draw(p)},' for p in rec.params]
        lines += ["    }"]
    lines += ["", "", f"ptoc.verify({name})"]
    return "\n".join(lines) + "\n"
