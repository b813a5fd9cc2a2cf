"""Random ``tile`` kernels: DAGs of loads, elementwise, scalar, reduce/expand and convert
ops over mixed tile sizes and DataTypes, used by the property tests and benchmarks.

Every generated kernel is legal and fault-free on any inputs of its DataTypes: no integer
division or remainder, no operation whose legality depends on values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa import op as catalog_op
from ptoc.backend.isa.semantics.core import round_float

from .builder import KernelBuilder
from .dtypes import carrier
from .tile_base import tile_type

FLOATS = ("FP32", "FP16", "BF16")
INTS = ("S32", "S16", "S8", "U32", "U16", "U8")
BINARY = ("TADD", "TSUB", "TMUL", "TMAX", "TMIN", "TAND", "TOR", "TXOR")
UNARY_FLOAT = ("TEXP", "TABS", "TNEG", "TSQRT", "TRELU", "TRECIP")
SCALAR = ("TADDS", "TSUBS", "TMULS", "TMAXS", "TMINS")
REDUCE = ("TROWSUM", "TROWMAX", "TROWMIN")
EXPAND = ("TROWEXPANDADD", "TROWEXPANDSUB", "TROWEXPANDMUL", "TROWEXPANDMAX")


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


def _legal(mnemonic: str, dt: str) -> bool:
    return DataType[dt] in catalog_op(mnemonic).dtypes


#: rows of each tensor that belong to one PE
PE_ROWS = 64
TENSOR_COLS = 128


def random_kernel(seed: int, spec: KernelSpec) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """A random kernel and inputs for it (deterministic in ``seed``).

    At most three DataTypes per kernel, one input and one output tensor each (the ABI
    passes at most eight bases); every PE works on its own ``PE_ROWS`` rows.
    """
    rng = random.Random(seed)
    kb = KernelBuilder(f"random{seed}", pes=spec.pes)
    dtypes = rng.sample(spec.dtypes, min(3, len(spec.dtypes)))
    shape_rows = PE_ROWS * spec.pes
    ins = {dt: kb.tensor(f"in_{dt}", dt, (shape_rows, TENSOR_COLS)) for dt in dtypes}
    outs = {dt: kb.tensor(f"out_{dt}", dt, (shape_rows, TENSOR_COLS)) for dt in dtypes}
    pool: list[SSAValue] = []
    pe = (PE_ROWS, 0)

    def load() -> SSAValue:
        dt, shape = rng.choice(dtypes), rng.choice(spec.shapes)
        row = rng.randrange(PE_ROWS - shape[0] + 1)
        return kb.load(ins[dt], shape, (row, rng.randrange(TENSOR_COLS - shape[1] + 1)), pe=pe)

    for _ in range(max(2, spec.ops // 8)):
        pool.append(load())
    n_stores = max(1, spec.ops // 8)
    while len(pool) + n_stores < spec.ops:
        pool.append(_step(kb, rng, pool, load, dtypes, spec))
    for v in pool[-(n_stores - n_stores // 2) :] + rng.sample(pool, n_stores // 2):
        t = tile_type(v)
        row = rng.randrange(PE_ROWS - t.valid[0] + 1)
        kb.store(outs[t.dt.value], v, (row, rng.randrange(TENSOR_COLS - t.valid[1] + 1)), pe=pe)
    module = kb.finish()
    return module, random_inputs(module, rng.randrange(1 << 30))


def _step(
    kb: KernelBuilder, rng: random.Random, pool: list[SSAValue], load, dtypes, spec: KernelSpec
) -> SSAValue:  # type: ignore[no-untyped-def]
    recent = pool[-spec.window :]
    a = rng.choice(recent if not spec.reach_back or rng.random() < 0.7 else pool)
    t = tile_type(a)
    dt = t.dt.value
    scope = pool if spec.reach_back else recent
    same = [v for v in scope if v.type == t and v is not a]
    r = rng.random()
    if r < 0.08:
        return load()
    if r < 0.35 and same:
        m = rng.choice([m for m in BINARY if _legal(m, dt)])
        return kb.binary(m, a, rng.choice(same[-6:]))
    if r < 0.5:
        m = rng.choice([m for m in SCALAR if _legal(m, dt)])
        return kb.binary(
            m[:-1],
            a,
            rng.choice((1, 2, 3)) if dt not in FLOATS else rng.choice((0.5, -1.25, 3.0)),
        )
    if r < 0.62 and dt in FLOATS:
        return kb.unary(rng.choice(UNARY_FLOAT), a)
    if r < 0.78 and _legal("TROWMAX", dt):
        red = kb.reduce(rng.choice(REDUCE), a)
        m = rng.choice([m for m in EXPAND if _legal(m, dt)])
        return kb.binary("T" + m[10:], a, red)
    if r < 0.9 and len(dtypes) > 1:
        return kb.cvt(a, rng.choice([d for d in dtypes if d != dt]), sat=True)
    return kb.binary("TADD" if _legal("TADD", dt) else "TOR", a, a)


def random_inputs(module: ModuleOp, seed: int) -> dict[str, np.ndarray]:
    """Random contents for every tensor parameter named ``in_*``."""
    from .reference import kernel_func, tensor_args

    rng = np.random.default_rng(seed)
    out = {}
    for a in tensor_args(kernel_func(module)):
        if not a.name.startswith("in_"):
            continue
        shape, dt = a.type.dims, DataType[a.type.dt.value]
        c = carrier(a.type.dtype)
        if info(dt).is_float:
            vals = rng.standard_normal(shape) * 4
            if not info(dt).exact_carrier and c.kind == "f":  # TF32/HF32: valid encodings
                out[a.name] = round_float(dt, vals)[0]
                continue
            out[a.name] = vals.astype(ml_dtypes.bfloat16 if dt == DataType.BF16 else c)
        else:
            ii = np.iinfo(c)
            out[a.name] = rng.integers(ii.min, ii.max, size=shape, endpoint=True, dtype=c)
    return out
