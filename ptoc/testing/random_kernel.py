"""Random ``tile`` kernels: DAGs of loads (windows, row steps, padded extents),
elementwise, tile-scalar, reduce/expand and convert ops and -- with ``shape_ops`` -- every
shape-changing op (:mod:`ptoc.testing.random_shapes`), over mixed tile sizes and
DataTypes; used by the property tests, the fuzz target and the benchmarks.

Every generated kernel is legal and fault-free on *any* inputs of its DataTypes: no
integer division or remainder, and every data-dependent rule (gather and scatter
indices, sorted merge streams) is met by construction. :func:`random_inputs` draws
ordinary values; ``adversarial=True`` draws every binade, subnormals, +-0, +-inf and
NaNs with random payloads (quiet and signalling) for the floats, and the extremes for
the integers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.semantics.core import round_float
from ptoc.dialects import tile_elementwise as tew
from ptoc.dialects import tile_reduce as tred
from ptoc.dialects.dtypes import carrier, is_pred
from ptoc.dialects.tile_base import tile_type
from ptoc.dialects.tile_types import TileType

from .builder import KernelBuilder
from .random_shapes import FLOATS, INTS, ShapeSteps, estimate_bytes, legal

BINARY = (
    tew.AddOp.MNEMONIC,
    tew.SubOp.MNEMONIC,
    tew.MulOp.MNEMONIC,
    tew.MaxOp.MNEMONIC,
    tew.MinOp.MNEMONIC,
    tew.AndOp.MNEMONIC,
    tew.OrOp.MNEMONIC,
    tew.XorOp.MNEMONIC,
)
UNARY_FLOAT = (
    tew.ExpOp.MNEMONIC,
    tew.AbsOp.MNEMONIC,
    tew.NegOp.MNEMONIC,
    tew.SqrtOp.MNEMONIC,
    tew.ReluOp.MNEMONIC,
    tew.RecipOp.MNEMONIC,
)
SCALAR = (
    tew.AddsOp.MNEMONIC,
    tew.SubsOp.MNEMONIC,
    tew.MulsOp.MNEMONIC,
    tew.MaxsOp.MNEMONIC,
    tew.MinsOp.MNEMONIC,
)
REDUCE = (tred.RowSumOp.MNEMONIC, tred.RowMaxOp.MNEMONIC, tred.RowMinOp.MNEMONIC)
EXPAND = (
    tred.RowExpandAddOp.MNEMONIC,
    tred.RowExpandSubOp.MNEMONIC,
    tred.RowExpandMulOp.MNEMONIC,
    tred.RowExpandMaxOp.MNEMONIC,
)


@dataclass(frozen=True)
class KernelSpec:
    """Shape of a random kernel: op count, the tile shapes to draw from, PEs."""

    ops: int
    shapes: tuple[tuple[int, int], ...] = ((4, 32), (8, 64), (16, 16), (1, 128), (8, 8))
    dtypes: tuple[str, ...] = FLOATS + INTS
    pes: int = 1
    #: operands come from the newest ``window`` values, else (30%) from any earlier one;
    #: None always draws from the window (lifetimes then do not grow with ``ops``)
    reach_back: bool = True
    window: int = 12
    #: share of the steps that draw a shape-changing op (fill-pad, concat, extract,
    #: insert, transpose, gather/scatter, column reductions, sort/merge, casts, partial
    #: ops, iota/tri, histograms, compare/select); 0 keeps the elementwise mix only
    shape_ops: float = 0.0
    #: loads and stores with row steps
    windows: bool = False
    #: loads with padded extents (valid smaller than the extent; no DSL spelling)
    extents: bool = False
    #: inputs from :func:`adversarial_inputs` instead of ordinary values
    adversarial: bool = False
    #: per-PE bytes of the largest tile a shape-changing op takes or makes (those ops
    #: keep their tiles whole): at most the split size of the machine the kernel is for
    budget: int = 16384

    @property
    def box(self) -> tuple[int, int]:
        """The largest valid shape a shape-changing op may produce."""
        return (max(r for r, _ in self.shapes), max(c for _, c in self.shapes))


#: rows of each tensor that belong to one PE
PE_ROWS = 64
TENSOR_COLS = 128


def random_kernel(seed: int, spec: KernelSpec) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """A random kernel and inputs for it (deterministic in ``seed``).

    At most three DataTypes per kernel, one input and one output tensor each (the ABI
    passes at most eight bases); every PE works on its own ``PE_ROWS`` rows.
    """
    rng = random.Random(seed)
    gen = _Gen(KernelBuilder(f"random{seed}", pes=spec.pes), rng, spec)
    module = gen.build()
    make = adversarial_inputs if spec.adversarial else random_inputs
    return module, make(module, rng.randrange(1 << 30))


class _Gen:
    """One kernel being drawn: the tensors, the pool of values and the step mix."""

    def __init__(self, kb: KernelBuilder, rng: random.Random, spec: KernelSpec) -> None:
        self.kb, self.rng, self.spec = kb, rng, spec
        self.dtypes = rng.sample(spec.dtypes, min(3, len(spec.dtypes)))
        rows = PE_ROWS * spec.pes
        self.ins = {dt: kb.tensor(f"in_{dt}", dt, (rows, TENSOR_COLS)) for dt in self.dtypes}
        self.outs = {dt: kb.tensor(f"out_{dt}", dt, (rows, TENSOR_COLS)) for dt in self.dtypes}
        self.pool: list[SSAValue] = []
        self.shapes = ShapeSteps(kb, rng, spec.box, self.dtypes, spec.budget)

    def build(self) -> ModuleOp:
        spec, rng = self.spec, self.rng
        for _ in range(max(2, spec.ops // 8)):
            self.pool.append(self.load())
        n_stores = max(1, spec.ops // 8)
        while len(self.pool) + n_stores < spec.ops:
            v = None
            if rng.random() < spec.shape_ops:
                v = self.shapes.attempt(self.shape_step)
            self.pool.append(v if v is not None else self.step())
        # store the values nothing reads (converted to a kernel DataType where needed),
        # newest first, so that few ops are dead; then random others
        leaves = [self.storable_form(v) for v in reversed(self.pool) if not v.uses]
        chosen = [v for v in leaves if v is not None][: 2 * n_stores]
        storable = [v for v in self.pool if self.storable(v) and v not in chosen]
        more = max(0, n_stores - len(chosen))
        for v in chosen + rng.sample(storable, min(len(storable), more)):
            self.store(v)
        return self.kb.finish()

    def storable_form(self, v: SSAValue) -> SSAValue | None:
        """``v``, or its conversion to a kernel DataType, if it fits a tensor window."""
        t = tile_type(v)
        if t.valid[0] > PE_ROWS or t.valid[1] > TENSOR_COLS or is_pred(t.dtype):
            return None
        if t.dt.value in self.outs:
            return v
        return self.kb.cvt(v, self.rng.choice(self.dtypes), sat=True)

    # ------------------------------------------------------------------ memory

    def storable(self, v: SSAValue) -> bool:
        t = tile_type(v)
        return t.dt.value in self.outs and t.valid[0] <= PE_ROWS and t.valid[1] <= TENSOR_COLS

    def load(self) -> SSAValue:
        rng = self.rng
        dt, shape = rng.choice(self.dtypes), rng.choice(self.spec.shapes)
        step, extent = 1, None
        if self.spec.windows and rng.random() < 0.3:
            step = rng.randint(1, max(1, (PE_ROWS - 1) // max(1, shape[0] - 1)))
            step = min(step, 3)
        if self.spec.extents and rng.random() < 0.3:
            extent = (shape[0] + rng.choice((0, 1, 3)), shape[1] + rng.choice((0, 1, 7)))
            if estimate_bytes(TileType(dt, extent, shape)) > estimate_bytes(
                TileType(dt, shape)
            ):
                extent = None  # a padded extent, but never a larger allocation
        span = (shape[0] - 1) * step + 1
        row = rng.randrange(PE_ROWS - span + 1)
        col = rng.randrange(TENSOR_COLS - shape[1] + 1)
        return self.kb.load(
            self.ins[dt], shape, (row, col), step=step, pe=(PE_ROWS, 0), extent=extent
        )

    def store(self, v: SSAValue) -> None:
        rng = self.rng
        t = tile_type(v)
        rows, cols = t.valid
        step = 1
        if self.spec.windows and rows > 1 and rng.random() < 0.3:
            step = min(3, (PE_ROWS - 1) // (rows - 1))
        span = (rows - 1) * step + 1
        at = (rng.randrange(PE_ROWS - span + 1), rng.randrange(TENSOR_COLS - cols + 1))
        self.kb.store(self.outs[t.dt.value], v, at, step=step, pe=(PE_ROWS, 0))

    # ------------------------------------------------------------------ steps

    def operand(self) -> SSAValue:
        spec, pool = self.spec, self.pool
        recent = pool[-spec.window :]
        return self.rng.choice(
            recent if not spec.reach_back or self.rng.random() < 0.7 else pool
        )

    def scope(self) -> list[SSAValue]:
        return self.pool if self.spec.reach_back else self.pool[-self.spec.window :]

    def shape_step(self) -> SSAValue | None:
        s, a = self.shapes, self.operand()
        scope = [v for v in self.scope() if s.small(v)]
        if not s.small(a):
            return None
        steps = (
            lambda: s.fillpad(a),
            lambda: s.concat(a, scope),
            lambda: s.extract(a),
            lambda: s.insert(a, scope),
            lambda: s.transpose(a),
            lambda: s.gather(a, scope),
            lambda: s.scatter(a),
            lambda: s.sort(a),
            lambda: s.merge(a),
            lambda: s.col_reduce(a, scope),
            lambda: s.row_reduce(a),
            lambda: s.cast(a),
            lambda: s.partial(a, scope),
            lambda: s.generate(),
            lambda: s.histogram(a, scope),
            lambda: s.select(a, scope),
        )
        return self.rng.choice(steps)()

    def step(self) -> SSAValue:
        """One op of the elementwise mix (always legal for the operand's DataType)."""
        kb, rng = self.kb, self.rng
        a = self.operand()
        t = tile_type(a)
        dt = t.dt.value
        same = [v for v in self.scope() if v.type == t and v is not a]
        r = rng.random()
        if r < 0.08:
            return self.load()
        if r < 0.35 and same and any(legal(m, dt) for m in BINARY):
            m = rng.choice([m for m in BINARY if legal(m, dt)])
            return kb.binary(m, a, rng.choice(same[-6:]))
        if r < 0.5 and any(legal(m, dt) for m in SCALAR):
            m = rng.choice([m for m in SCALAR if legal(m, dt)])
            return kb.binary(
                m[:-1],
                a,
                rng.choice((1, 2, 3)) if dt not in FLOATS else rng.choice((0.5, -1.25, 3.0)),
            )
        if r < 0.62 and dt in FLOATS:
            return kb.unary(rng.choice(UNARY_FLOAT), a)
        if (
            r < 0.78
            and legal(tred.RowMaxOp.MNEMONIC, dt)
            and dt in self.dtypes
            and t.valid[1] > 1
        ):
            red = kb.reduce(rng.choice(REDUCE), a)
            m = rng.choice([m for m in EXPAND if legal(m, dt)])
            return kb.binary("T" + m[10:], a, red)
        if (r < 0.9 and len(self.dtypes) > 1) or dt not in self.dtypes:
            return kb.cvt(a, rng.choice([d for d in self.dtypes if d != dt]), sat=True)
        return kb.binary(
            tew.AddOp.MNEMONIC if legal(tew.AddOp.MNEMONIC, dt) else tew.OrOp.MNEMONIC, a, a
        )


def _grows(dt: str, shape: tuple[int, int], extent: tuple[int, int]) -> bool:
    """A padded extent that would need a larger allocation than the valid shape."""
    return estimate_bytes(TileType(dt, extent, shape)) > estimate_bytes(TileType(dt, shape))


def _inputs(module: ModuleOp) -> list[tuple[str, tuple[int, int], DataType]]:
    from ptoc.dialects.reference import kernel_func, tensor_args

    return [
        (a.name, a.type.dims, DataType[a.type.dt.value])
        for a in tensor_args(kernel_func(module))
        if a.name.startswith("in_")
    ]


def random_inputs(module: ModuleOp, seed: int) -> dict[str, np.ndarray]:
    """Random contents for every tensor parameter named ``in_*``: N(0, 16) floats and
    full-range integers."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape, dt in _inputs(module):
        c = carrier(dt.name)
        if info(dt).is_float:
            vals = rng.standard_normal(shape) * 4
            if not info(dt).exact_carrier and c.kind == "f":  # TF32/HF32: valid encodings
                out[name] = round_float(dt, vals)[0]
                continue
            out[name] = vals.astype(ml_dtypes.bfloat16 if dt == DataType.BF16 else c)
        else:
            ii = np.iinfo(c)
            out[name] = rng.integers(ii.min, ii.max, size=shape, endpoint=True, dtype=c)
    return out


def adversarial_inputs(module: ModuleOp, seed: int) -> dict[str, np.ndarray]:
    """Inputs that reach every binade and exceptional value: see :func:`adversarial`."""
    rng = np.random.default_rng(seed)
    return {name: adversarial(rng, dt, shape) for name, shape, dt in _inputs(module)}


def adversarial(rng: np.random.Generator, dt: DataType, shape: tuple[int, ...]) -> np.ndarray:
    """An array of ``dt``: for floats a mix of ordinary values, values of a uniformly drawn
    binade (subnormals and the top binade included), +-0, +-inf, the largest finite
    magnitudes and NaNs with random payloads, quiet and signalling; for integers the
    full range and the extremes (0, +-1, min, max)."""
    c = np.dtype(carrier(dt.name))
    n = int(np.prod(shape))
    if not info(dt).is_float:
        ii = np.iinfo(c)
        vals = rng.integers(ii.min, ii.max, size=n, endpoint=True, dtype=c)
        edge = np.array(
            [0, 1, ii.max, ii.min, ii.max - 1, ii.min + 1] + ([-1] if ii.min else [])
        )
        pick = rng.random(n) < 0.3
        vals[pick] = rng.choice(np.array(edge), size=int(pick.sum())).astype(c)
        return vals.reshape(shape)
    fi = ml_dtypes.finfo(c)
    width, mant = c.itemsize * 8, int(fi.nmant)
    exp_bits = width - 1 - mant
    top = (1 << exp_bits) - 1
    ub = np.dtype(f"u{c.itemsize}")
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(width - 1)
    exp = rng.integers(0, top, n, dtype=np.uint64)  # every finite binade, subnormals (0)
    frac = rng.integers(0, 1 << mant, n, dtype=np.uint64)
    bits = sign | (exp << np.uint64(mant)) | frac
    kind = rng.random(n)
    inf = np.uint64(top << mant)
    quiet = np.uint64(1 << (mant - 1))
    payload = rng.integers(1, 1 << (mant - 1), n, dtype=np.uint64)
    bits = np.where(kind < 0.06, sign, bits)  # +-0
    bits = np.where((kind >= 0.06) & (kind < 0.10), sign | inf, bits)  # +-inf
    bits = np.where((kind >= 0.10) & (kind < 0.14), sign | inf | quiet | payload, bits)  # qNaN
    bits = np.where((kind >= 0.14) & (kind < 0.17), sign | inf | payload, bits)  # sNaN
    bits = np.where((kind >= 0.17) & (kind < 0.20), sign | (inf - np.uint64(1)), bits)  # max
    out = bits.astype(ub).view(c)
    ordinary = kind >= 0.6  # the rest: ordinary values near 1
    out[ordinary] = (rng.standard_normal(int(ordinary.sum())) * 4).astype(c)
    return out.reshape(shape)
