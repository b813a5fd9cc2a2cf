"""Compound interfaces: bundles per lowering and executor time against numpy.

One row per interface at a representative (mostly pto-isa) shape. ``time`` is one run of
the compiled kernel on ``ptoc.runtime.Machine`` (GM placement included); ``baseline`` is
the direct numpy implementation of the interface's reference (``compound_ref``) on the
same data. Both are timed per call over :data:`CALLS` calls in process time (a call takes
microseconds to a millisecond: timed alone, it mostly measures cold caches), the best of
three runs, the two sides' runs alternated; the kernel runs warm, as a user verifying
it over many inputs runs it. The note gives the bundles of the lowering (the compiled
kernel minus its own loads and stores; scalar blocks and allocator copies included) and
how many of them are GM-view round trips (a view is one TSTORE per source plus one TLOAD,
or one TLOAD of a tensor nothing writes). Goal: each at most 20x its numpy reference.
Nothing is asserted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ptoc.backend.isa import DataType, info
from ptoc.dialects import compound_ref as cr
from ptoc.dialects.reference import run_reference
from ptoc.dialects.tile_base import tile_type
from ptoc.passes.execute import compare, run_compiled
from ptoc.passes.pipeline import CompiledKernel, compile_module
from ptoc.testing import KernelBuilder

from .common import Row, per_call_pair

#: calls per timed run of each side
CALLS = 20


def _dtype(a: np.ndarray) -> str:
    for dt in DataType:
        ti = info(dt)
        if ti.exact_carrier and ti.bits >= 8 and ti.carrier == a.dtype:
            return dt.name
    raise TypeError(a.dtype)


@dataclass
class Case:
    name: str
    inputs: dict[str, np.ndarray]
    tiles: dict[str, tuple[str, tuple[int, int], tuple[int, int]]]
    body: Callable[[KernelBuilder, dict], dict]
    numpy: Callable[[], object]


def _module(c: Case) -> ModuleOp:
    kb = KernelBuilder(c.name.split()[0])
    tensors = {n: kb.tensor(n, _dtype(a), a.shape) for n, a in c.inputs.items()}
    x = {n: kb.load(tensors[src], shp, at) for n, (src, at, shp) in c.tiles.items()}
    for n, v in c.body(kb, x).items():
        t = tile_type(v)
        kb.store(kb.tensor(f"out_{n}", t.dt.value, t.valid), v)
    return kb.finish()


def _whole(inputs: dict[str, np.ndarray]) -> dict:
    return {n: (n, (0, 0), a.shape) for n, a in inputs.items()}


def _counts(ck: CompiledKernel) -> tuple[int, int]:
    """(bundles of the lowering, of which GM-view bundles): every tile bundle of the
    compiled kernel except the loads and stores of its own tensors (allocator copies
    and spills included); view bundles are the loads and stores of the scratch area."""
    from ptoc.dialects.pto import AddrOp, PtoOp
    from ptoc.passes.lower_compound import SCRATCH_NAME

    total = io = views = 0
    for op in ck.module.walk():
        if not isinstance(op, PtoOp):
            continue
        total += 1
        if op.MNEMONIC not in ("TLOAD", "TSTORE") or not op.scalars:
            continue
        addr = op.scalars[0].owner
        if isinstance(addr, AddrOp):
            if addr.tensor.name_hint == SCRATCH_NAME:
                views += 1
            else:
                io += 1
    return total - io, views


def _cases() -> list[Case]:
    rng = np.random.default_rng(0)
    f32 = np.float32
    cases: list[Case] = []

    def add(name, inputs, body, numpy, tiles=None):
        cases.append(Case(name, inputs, tiles or _whole(inputs), body, numpy))

    x = rng.uniform(-10, 10, (64, 128)).astype(f32)
    s = rng.uniform(0.5, 20, (64, 1)).astype(f32)
    o = rng.uniform(-50, 150, (64, 1)).astype(f32)
    add("quantize_rows U8 64x128", {"x": x, "s": s, "o": o},
        lambda kb, t: {"q": kb.quantize_rows(t["x"], t["s"], t["o"], "U8")},
        lambda: cr.quantize_rows(x, s, o, np.uint8))  # fmt: skip
    add("quantize_rows scalar S8 64x128", {"x": x},
        lambda kb, t: {"q": kb.quantize_rows(t["x"], 0.75)},
        lambda: cr.quantize_rows(x, np.full((64, 1), 0.75, f32)))  # fmt: skip
    q16 = rng.integers(-30000, 30000, (64, 64)).astype(np.int16)
    s2, o2 = s[:64], o[:64]
    add("dequantize_rows S16 64x64", {"q": q16, "s": s2, "o": o2},
        lambda kb, t: {"y": kb.dequantize_rows(t["q"], t["s"], t["o"])},
        lambda: cr.dequantize_rows(q16, s2, o2))  # fmt: skip
    mx = rng.uniform(-100, 100, (64, 128)).astype(f32)
    add("quantize_mx FP32 64x128", {"x": mx},
        lambda kb, t: dict(zip("esag", kb.quantize_mx(t["x"]), strict=True)),
        lambda: cr.quantize_mx(mx))  # fmt: skip
    q = cr.quantize_mx(mx)
    add("dequantize_mx 64x128", {"e": q.elements, "s": q.scales},
        lambda kb, t: {"y": kb.dequantize_mx(t["e"], t["s"])},
        lambda: cr.dequantize_mx(q.elements, q.scales))  # fmt: skip
    v = rng.uniform(-1, 1, (4, 128)).astype(f32)
    add("sort32 FP32 4x128 (column index)", {"v": v},
        lambda kb, t: dict(zip("vp", kb.sort32(t["v"]), strict=True)),
        lambda: cr.sort32(v))  # fmt: skip
    pay = rng.integers(0, 2**32, (4, 128), dtype=np.uint32)
    add("sort32 FP32 4x128 + payload", {"v": v, "p": pay},
        lambda kb, t: dict(zip("vp", kb.sort32(t["v"], t["p"]), strict=True)),
        lambda: cr.sort32(v, pay))  # fmt: skip
    lists = np.sort(rng.uniform(0, 1, (4, 64)).astype(f32), axis=1)[:, ::-1].copy()
    lp = np.arange(256, dtype=np.uint32).reshape(4, 64)
    tiles = {f"l{i}": ("L", (i, 0), (1, 64)) for i in range(4)}
    tiles |= {f"p{i}": ("P", (i, 0), (1, 64)) for i in range(4)}
    recs = [cr.Records(lists[i : i + 1], lp[i : i + 1]) for i in range(4)]
    add("merge_sorted 4x64 values", {"L": lists},
        lambda kb, t: dict(zip("vn", kb.merge_sorted([t[f"l{i}"] for i in range(4)]),
                               strict=True)),
        lambda: cr.merge_sorted(*[lists[i : i + 1] for i in range(4)]),
        {k: tl for k, tl in tiles.items() if k[0] == "l"})  # fmt: skip
    add("merge_sorted 4x64 records", {"L": lists, "P": lp},
        lambda kb, t: dict(zip("vpn", kb.merge_sorted(
            [t[f"l{i}"] for i in range(4)], [t[f"p{i}"] for i in range(4)]), strict=True)),
        lambda: cr.merge_sorted(*recs), tiles)  # fmt: skip
    small = {k: tl for k, tl in tiles.items() if k[1] in "01"}
    small = {k: (src, at, (1, 32)) for k, (src, at, _) in small.items()}
    add("merge_sorted 2x32 records exhausted", {"L": lists, "P": lp},
        lambda kb, t: dict(zip("vpn", kb.merge_sorted(
            [t["l0"], t["l1"]], [t["p0"], t["p1"]], exhausted=True), strict=True)),
        lambda: cr.merge_sorted(*[cr.Records(r.values[:, :32], r.payload[:, :32])
                                  for r in recs[:2]], exhausted=True), small)  # fmt: skip
    blocks = np.concatenate([lists[i] for i in range(4)])[None, :].copy()
    bp = np.arange(256, dtype=np.uint32)[None, :]
    add("merge_blocks 256 records (4x64) + payload", {"v": blocks[:, :256], "p": bp},
        lambda kb, t: dict(zip("vp", kb.merge_blocks(t["v"], 64, t["p"]), strict=True)),
        lambda: cr.merge_blocks(cr.Records(blocks[:, :256], bp), 64))  # fmt: skip
    rv = rng.standard_normal((8, 64)).astype(f32)
    rp = rng.integers(0, 2**32, (8, 64), dtype=np.uint32)
    add("pack_records + unpack FP32 8x64", {"v": rv, "p": rp},
        lambda kb, t: dict(zip("vp", kb.unpack_records(kb.pack_records(t["v"], t["p"])),
                               strict=True)),
        lambda: cr.unpack_records(cr.pack_records(rv, rp), f32))  # fmt: skip
    g = rng.standard_normal((7, 1024)).astype(f32)
    add("gather_pattern P1010 FP32 7x1024", {"g": g},
        lambda kb, t: {"r": kb.gather_pattern(t["g"], "P1010")},
        lambda: cr.gather_pattern(g, "P1010"))  # fmt: skip
    fs = rng.standard_normal((32, 1024)).astype(f32)
    fo = rng.integers(0, fs.size, (16, 64)).astype(np.int32)
    add("gather_flat F32 32x1024 -> 16x64", {"t": fs, "o": fo},
        lambda kb, t: {"r": kb.gather_flat(t["t"], t["o"])},
        lambda: cr.gather_flat(fs, fo))  # fmt: skip
    bs = rng.standard_normal((2, 128)).astype(f32)
    bo = (rng.permutation(32)[:32].reshape(2, 16) * 32).astype(np.uint32)
    add("gather_blocks F32 2x128 (2x16 blocks)", {"t": bs, "o": bo},
        lambda kb, t: {"r": kb.gather_blocks(t["t"], t["o"])},
        lambda: cr.gather_blocks(bs, bo))  # fmt: skip
    st = rng.standard_normal((7, 448)).astype(f32)
    so = (rng.integers(0, 7, (7, 448)) * 448 + np.arange(448)).astype(np.int32)
    add("scatter_flat F32 7x448 (duplicates)", {"t": st, "o": so},
        lambda kb, t: {"r": kb.scatter_flat(t["t"], t["o"], (7, 448))},
        lambda: cr.scatter_flat(st, so, (7, 448)))  # fmt: skip
    tr = rng.standard_normal((22, 63)).astype(np.float16)
    add("transpose F16 22x63 + scratch", {"t": tr},
        lambda kb, t: {"r": kb.transpose(t["t"], t["t"])},
        lambda: cr.transpose(tr, tr))  # fmt: skip
    pa = rng.standard_normal((104, 123)).astype(f32)
    pb = rng.standard_normal((122, 110)).astype(f32)
    add("partial_max 122x123 neither covers", {"a": pa, "b": pb},
        lambda kb, t: {"r": kb.partial("max", t["a"], t["b"], (122, 123))},
        lambda: cr.partial_max(pa, pb, (122, 123)))  # fmt: skip
    return cases


def rows(repeat: int = 3) -> list[Row]:
    out = []
    for c in _cases():
        module = _module(c)
        ck = compile_module(module)
        inputs = {n: a for n, a in c.inputs.items()}
        got = run_compiled(ck, inputs)  # untimed warm-up, and a correctness check
        compare(got, run_reference(module, inputs))
        bundles, views = _counts(ck)
        t, base = per_call_pair(
            partial(run_compiled, ck, inputs), c.numpy, CALLS, repeat, time.process_time
        )
        note = f"{bundles} bundles" + (f", {views} in GM views" if views else "")
        out.append(Row(f"compound {c.name}", t, base, "numpy compound_ref", 20.0, note))
    return out


if __name__ == "__main__":
    from .common import render

    print(render(rows()))
