"""The shape-changing steps of the random kernels (:mod:`ptoc.testing.random_kernel`):
fill-pad, concat, extract, insert, transpose, gather and scatter, column reductions and
expansions, sort and merge, casts between widths, partial ops, iota and tri, histograms,
compare and select.

Every step builds ops that are legal for any input data: the data-dependent rules are
met by construction -- gather indices are masked below the value rows, scatter indices
are per-column permutations (the transposed TSORT index of a full-width sort), merged
rows come from TSORT (or earlier merges) in the same direction, and no integer division
is ever built. A step whose ops the ``tile`` verifier rejects (a DataType or shape rule)
is undone and reported as ``None``; the caller then draws another step.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType
from ptoc.backend.isa import op as catalog_op
from ptoc.backend.isa.semantics.indexed import (
    GATHER_INDEX_DTYPES,
    GATHER_VALUE_DTYPES,
    SCATTER_INDEX_DTYPES,
)
from ptoc.dialects import tile_elementwise as tew
from ptoc.dialects import tile_irregular as tirr
from ptoc.dialects import tile_reduce as tred
from ptoc.dialects.dtypes import element_bits
from ptoc.dialects.modes import CMode, RMode
from ptoc.dialects.tile_base import tile_type
from ptoc.dialects.tile_types import TileType

from .builder import KernelBuilder

FLOATS = ("FP32", "FP16", "BF16")
INTS = ("S32", "S16", "S8", "U32", "U16", "U8")
SORTABLE = ("FP32", "FP16")
#: the widest TSORT group
SORT_WIDTH = 64


def legal(mnemonic: str, dt: str) -> bool:
    """``dt`` is one of the catalog DataTypes of ``mnemonic``."""
    return DataType[dt] in catalog_op(mnemonic).dtypes


def _pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def estimate_bytes(t: TileType) -> int:
    """Per-PE bytes a tile of this type is likely to occupy once legalized (power-of-two
    rows and columns of its extent, at least 128 elements): the generator's size budget."""
    rows, cols = t.extent
    return max(_pow2(rows) * _pow2(cols), 128) * max(element_bits(t.dtype), 8) // 8


def _dt(v: SSAValue) -> str:
    return tile_type(v).dt.value


def _shape(v: SSAValue) -> tuple[int, int]:
    return tile_type(v).valid


@dataclass
class ShapeSteps:
    """Draws shape-changing ops over a pool of tile values.

    ``box`` bounds every new tile's valid shape (rows, cols) so that the kernel fits the
    machine it is drawn for; ``sorted_rows`` remembers the single-row tiles known to be
    sorted (True: descending) so merges only ever see sorted streams.
    """

    kb: KernelBuilder
    rng: random.Random
    box: tuple[int, int]
    dtypes: Sequence[str]
    budget: int = 16384
    sorted_rows: dict[SSAValue, bool] = field(default_factory=dict)

    # ------------------------------------------------------------------ plumbing

    def attempt(self, make: Callable[[], SSAValue | None]) -> SSAValue | None:
        """Run one step; if the tile verifier rejects any op it built, undo them all."""
        block = self.kb._block
        before = block.last_op
        try:
            out = make()
            for op in self._since(before):
                op.verify()
                if not all(self.small(r) for r in op.results if isinstance(r.type, TileType)):
                    out = None
        except (VerifyException, ValueError):
            out = None
        if out is None:
            for op in reversed(list(self._since(before))):
                op.detach()
                op.erase(safe_erase=False)
            self.sorted_rows = {v: d for v, d in self.sorted_rows.items() if v.owner.parent}
        return out

    def _since(self, before: Operation | None) -> list[Operation]:
        block = self.kb._block
        op = block.first_op if before is None else before.next_op
        out = []
        while op is not None:
            out.append(op)
            op = op.next_op
        return out

    def small(self, v: SSAValue) -> bool:
        """``v`` is within the size budget of the shape-changing ops."""
        return estimate_bytes(tile_type(v)) <= self.budget

    def within(self, a: SSAValue, pool: Sequence[SSAValue]) -> list[SSAValue]:
        """The values of ``a``'s DataType whose valid shape fits inside ``a``'s."""
        r, c = _shape(a)
        return [v for v in pool if _dt(v) == _dt(a) and _shape(v)[0] <= r and _shape(v)[1] <= c]

    def fits(self, shape: tuple[int, int]) -> bool:
        return 1 <= shape[0] <= self.box[0] and 1 <= shape[1] <= self.box[1]

    def grow(self, n: int, limit: int) -> int:
        """A size from ``n`` up to ``limit`` (mostly small steps, sometimes to the limit)."""
        if n >= limit:
            return n
        r = self.rng.random()
        if r < 0.2:
            return limit
        return self.rng.randint(n, min(limit, n + self.rng.choice((1, 2, 5, 16))))

    def window(self, shape: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
        """A random (offset, shape) window inside ``shape``."""
        rows, cols = shape
        r0, c0 = self.rng.randrange(rows), self.rng.randrange(cols)
        return (r0, c0), (self.rng.randint(1, rows - r0), self.rng.randint(1, cols - c0))

    def scalar(self, dt: str) -> float | int:
        """A fill scalar: exceptional values included for floats, the extremes for ints."""
        if dt in FLOATS:
            return self.rng.choice(
                (0.0, -0.0, 1.5, -2.75, math.inf, -math.inf, math.nan, 65504.0, 2.0**-20)
            )
        bits = int(dt[1:])
        lo, hi = (
            (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
            if dt[0] == "S"
            else (0, (1 << bits) - 1)
        )
        return self.rng.choice((0, 1, lo, hi, self.rng.randint(lo, hi)))

    # ------------------------------------------------------------------ steps

    def fillpad(self, a: SSAValue) -> SSAValue | None:
        r, c = _shape(a)
        shape = (self.grow(r, self.box[0]), self.grow(c, self.box[1]))
        if shape == (r, c):
            shape = (r, min(c + 1, self.box[1]))
        return self.kb.fillpad(a, self.scalar(_dt(a)), shape)

    def concat(self, a: SSAValue, pool: Sequence[SSAValue]) -> SSAValue | None:
        r, c = _shape(a)
        mates = [
            v
            for v in pool
            if _dt(v) == _dt(a) and _shape(v)[0] == r and c + _shape(v)[1] <= self.box[1]
        ]
        if not mates:
            return None
        b = self.rng.choice(mates)
        return self.kb.concat(*((a, b) if self.rng.random() < 0.5 else (b, a)))

    def extract(self, a: SSAValue) -> SSAValue | None:
        at, shape = self.window(_shape(a))
        return self.kb.extract(a, at, shape)

    def insert(self, a: SSAValue, pool: Sequence[SSAValue]) -> SSAValue | None:
        r, c = _shape(a)
        small = [
            v for v in pool if _dt(v) == _dt(a) and _shape(v)[0] <= r and _shape(v)[1] <= c
        ]
        src = self.rng.choice(small) if small else self.kb.extract(a, *self.window((r, c)))
        sr, sc = _shape(src)
        at = (self.rng.randint(0, r - sr), self.rng.randint(0, c - sc))
        return self.kb.insert(a, src, at)

    def transpose(self, a: SSAValue) -> SSAValue | None:
        r, c = _shape(a)
        return self.kb.trans(a) if self.fits((c, r)) else None

    def gather(self, a: SSAValue, pool: Sequence[SSAValue]) -> SSAValue | None:
        if DataType[_dt(a)] not in GATHER_VALUE_DTYPES:
            return None
        vr, vc = _shape(a)
        names = {d.name for d in GATHER_INDEX_DTYPES}
        idx = [v for v in pool if _dt(v) in names and _shape(v)[1] <= vc]
        if idx and self.rng.random() < 0.7:
            index = self.rng.choice(idx)
        else:
            n, start = self.rng.randint(1, vc), self.rng.randint(-8, 100)
            desc, dt = self.rng.random() < 0.3, self.rng.choice(sorted(names))
            index = self.kb.iota(n, start, desc, dt)
        # every index below the value rows: keep the low bits (also clears a sign)
        mask = (1 << (vr.bit_length() - 1)) - 1
        return self.kb.gather(a, self.kb.binary(tew.AndOp.MNEMONIC, index, mask))

    def scatter(self, a: SSAValue) -> SSAValue | None:
        """``a`` (w x n) scattered by per-column permutations of 0..w-1: the transposed
        index of a full-width TSORT of ``a``'s transpose (as FP32)."""
        allowed = SCATTER_INDEX_DTYPES.get(DataType[_dt(a)])
        w, n = _shape(a)
        if allowed is None or w > SORT_WIDTH or not self.fits((n, w)):
            return None
        keys = a if _dt(a) in SORTABLE else self.kb.cvt(a, "FP32")
        _, perm = self.kb.sort(self.kb.trans(keys), width=w, descending=self.rng.random() < 0.5)
        index = self.kb.trans(perm)
        want = sorted(d.name for d in allowed)
        if "U32" not in want:
            index = self.kb.cvt(index, self.rng.choice(want))
        rows = self.grow(w, self.box[0])
        return self.kb.scatter(a, index, rows)

    def sort(self, a: SSAValue) -> SSAValue | None:
        if _dt(a) not in SORTABLE:
            return None
        r, c = _shape(a)
        width = self.rng.randint(1, min(c, SORT_WIDTH))
        desc = self.rng.random() < 0.5
        values, index = self.kb.sort(a, width, desc)
        if r == 1 and width == c:
            self.sorted_rows[values] = desc
        return values if self.rng.random() < 0.6 else index

    def sorted_row(self, a: SSAValue, descending: bool) -> SSAValue | None:
        """A sorted single row drawn from a FP32/FP16 tile (a full-width TSORT of one of
        its rows), or an earlier sorted row of that direction and DataType."""
        known = [v for v, d in self.sorted_rows.items() if d == descending and _dt(v) == _dt(a)]
        if known and self.rng.random() < 0.5:
            return self.rng.choice(known)
        r, c = _shape(a)
        n = self.rng.randint(1, min(c, SORT_WIDTH))
        row = self.kb.extract(a, (self.rng.randrange(r), self.rng.randint(0, c - n)), (1, n))
        values, _ = self.kb.sort(row, n, descending)
        self.sorted_rows[values] = descending
        return values

    def merge(self, a: SSAValue) -> SSAValue | None:
        if _dt(a) not in SORTABLE:
            return None
        desc = self.rng.random() < 0.5
        x, y = self.sorted_row(a, desc), self.sorted_row(a, desc)
        if x is None or y is None or _shape(x)[1] + _shape(y)[1] > self.box[1]:
            return None
        m = self.kb.mrgsort(x, y, desc)
        self.sorted_rows[m] = desc
        return m

    def col_reduce(self, a: SSAValue, pool: Sequence[SSAValue]) -> SSAValue | None:
        kind = self.rng.choice(("SUM", "MAX", "MIN", "PROD", "ARGMAX", "ARGMIN"))
        red = self.kb.reduce(f"TCOL{kind}", a)
        if kind.startswith("ARG") or self.rng.random() < 0.3:
            return red
        return self._expand(a, red, row=False)

    def row_reduce(self, a: SSAValue) -> SSAValue | None:
        kind = self.rng.choice(("SUM", "MAX", "MIN", "PROD", "ARGMAX", "ARGMIN"))
        red = self.kb.reduce(f"TROW{kind}", a)
        if kind.startswith("ARG") or self.rng.random() < 0.3:
            return red
        return self._expand(a, red, row=True)

    def _expand(self, a: SSAValue, red: SSAValue, row: bool) -> SSAValue:
        dt = _dt(a)
        r = self.rng.random()
        if r < 0.25:
            return self.kb.expand(red, _shape(a), row=row)
        if r < 0.4 and dt in FLOATS and legal(tred.RowExpandExpdifOp.MNEMONIC, dt):
            return self.kb.expdif(a, red)
        kinds = ["ADD", "SUB", "MUL", "MAX", "MIN"] + (["DIV"] if dt in FLOATS else [])
        return self.kb.binary("T" + self.rng.choice(kinds), a, red)

    def cast(self, a: SSAValue) -> SSAValue | None:
        """TCVT to a DataType of another width (any rounding mode, saturating or not),
        sometimes straight back to one of the kernel's types."""
        dt = _dt(a)
        to = self.rng.choice([d for d in FLOATS + INTS if d != dt])
        rmode = self.rng.choice((None, *RMode))
        out = self.kb.cvt(a, to, rmode, sat=self.rng.random() < 0.7)
        if to not in self.dtypes and self.rng.random() < 0.7:
            out = self.kb.cvt(out, self.rng.choice(list(self.dtypes)), sat=True)
        return out

    def partial(self, a: SSAValue, pool: Sequence[SSAValue]) -> SSAValue | None:
        r, c = _shape(a)
        small = [
            v for v in pool if _dt(v) == _dt(a) and _shape(v)[0] <= r and _shape(v)[1] <= c
        ]
        if small and self.rng.random() < 0.7:
            b = self.rng.choice(small)
        else:
            b = self.kb.extract(a, (0, 0), self.window((r, c))[1])
        kinds = [k for k in ("add", "mul", "max", "min") if legal(f"TPART{k.upper()}", _dt(a))]
        if not kinds:
            return None
        pair = (a, b) if self.rng.random() < 0.5 else (b, a)
        return self.kb.part(self.rng.choice(kinds), *pair)

    def generate(self) -> SSAValue | None:
        """TCI (one row) or TTRI of a kernel DataType where legal, else of S32."""
        if self.rng.random() < 0.5:
            dt = self.rng.choice(
                [d for d in self.dtypes if legal(tirr.CiOp.MNEMONIC, d)] or ["S32"]
            )
            n, start = self.rng.randint(1, self.box[1]), self.rng.randint(-70000, 70000)
            return self.kb.iota(n, start, self.rng.random() < 0.5, dt)
        dt = self.rng.choice(
            [d for d in self.dtypes if legal(tirr.TriOp.MNEMONIC, d)] or ["S32"]
        )
        shape = (self.rng.randint(1, self.box[0]), self.rng.randint(1, self.box[1]))
        diagonal = self.rng.randint(-shape[0], shape[1])
        return self.kb.tri(shape, diagonal, self.rng.random() < 0.5, dt)

    def histogram(self, a: SSAValue, pool: Sequence[SSAValue]) -> SSAValue | None:
        """THISTOGRAM of ``a`` as U16 or U32 (converted when it is another type), with a
        U8 filter of enough rows from the pool or converted from ``a`` itself."""
        src = a
        if _dt(a) not in ("U16", "U32"):
            src = self.kb.cvt(a, self.rng.choice(("U16", "U32")), sat=True)
        dt, rows = _dt(src), _shape(src)[0]
        byte = self.rng.randint(0, 1 if dt == "U16" else 3)
        need = (rows if byte == 0 else 0) if dt == "U16" else 3 - byte
        filters = [v for v in pool if _dt(v) == "U8" and _shape(v)[0] >= need]
        if filters and self.rng.random() < 0.5:
            filt = self.rng.choice(filters)
        elif rows >= need:
            filt = self.kb.cvt(src, "U8", sat=self.rng.random() < 0.5)
        else:
            return None
        return self.kb.histogram(src, filt, byte)

    def select(self, a: SSAValue, pool: Sequence[SSAValue]) -> SSAValue | None:
        """TCMP/TCMPS and at once TSEL/TSELS (a predicate cannot be copied or spilled, so
        it is consumed right away)."""
        dt = _dt(a)
        same = [v for v in pool if v.type == a.type and v is not a]
        other: SSAValue | float | int = (
            self.rng.choice(same) if same and self.rng.random() < 0.6 else self.scalar(dt)
        )
        if isinstance(other, float) and math.isnan(other) and dt in INTS:
            other = 0
        pred = self.kb.cmp(self.rng.choice(list(CMode)), a, other)
        alt: SSAValue | float | int = (
            self.rng.choice(same) if same and self.rng.random() < 0.5 else self.scalar(dt)
        )
        return self.kb.sel(pred, a, alt)
