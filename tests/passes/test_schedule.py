"""The schedule: a topological order that keeps memory order and lowers pressure."""

from __future__ import annotations

import networkx as nx

from ptoc.dialects.pto import PtoOp
from ptoc.passes.allocate.schedule import build_dataflow, live_ops, schedule
from ptoc.passes.legalize import legalize_func
from ptoc.testing import KernelBuilder, KernelSpec, random_kernel


def _bundles(module) -> list[PtoOp]:  # type: ignore[no-untyped-def]
    f = next(iter(module.clone().ops))
    legalize_func(f)
    return [op for op in f.body.block.ops if isinstance(op, PtoOp)]


def _peak_live_bytes(ops: list[PtoOp]) -> int:
    last = {v: t for t, op in enumerate(ops) for v in op.srcs}
    live, peak = {}, 0
    for t, op in enumerate(ops):
        for d in op.dsts:
            live[d] = d.type.nbytes  # type: ignore[attr-defined]
        peak = max(peak, sum(live.values()))
        for v in set(op.srcs):
            if last[v] == t:
                live.pop(v, None)
    return peak


def test_order_is_topological_and_keeps_each_tensors_stores_in_order() -> None:
    module, _ = random_kernel(5, KernelSpec(200))
    ops = _bundles(module)
    df = build_dataflow(ops)
    keep = live_ops(df)
    order = schedule(df, keep)
    pos = {n: i for i, n in enumerate(order)}
    assert all(pos[a] < pos[b] for a, b in df.graph.edges if keep[a] and keep[b])
    by_tensor: dict[object, list[int]] = {}
    for i in order:
        if ops[i].MNEMONIC == "TSTORE":
            by_tensor.setdefault(ops[i].scalars[0].owner.tensor, []).append(i)  # type: ignore[attr-defined]
    assert by_tensor and all(s == sorted(s) for s in by_tensor.values())
    assert nx.is_directed_acyclic_graph(df.graph.to_networkx())


def test_dead_bundles_are_dropped() -> None:
    kb = KernelBuilder("k")
    x = kb.tensor("x", "FP32", (8, 64))
    o = kb.tensor("o", "FP32", (8, 64))
    t = kb.load(x, (8, 64))
    kb.exp(t)  # never stored
    kb.store(o, kb.abs(t))
    ops = _bundles(kb.finish())
    keep = live_ops(build_dataflow(ops))
    assert [op.MNEMONIC for op, k in zip(ops, keep, strict=True) if not k] == ["TEXP"]


def test_loads_are_interleaved_with_their_consumers() -> None:
    """Eight independent load->reduce->store chains written loads-first: the schedule
    finishes chains instead of keeping all eight tiles live."""
    kb = KernelBuilder("k")
    x = kb.tensor("x", "FP32", (64, 64))
    o = kb.tensor("o", "FP32", (64, 1))
    tiles = [kb.load(x, (8, 64), (8 * i, 0)) for i in range(8)]
    for i, t in enumerate(tiles):
        kb.store(o, kb.rowsum(t), (8 * i, 0))
    ops = _bundles(kb.finish())
    df = build_dataflow(ops)
    order = schedule(df, live_ops(df))
    assert _peak_live_bytes([ops[i] for i in order]) < _peak_live_bytes(ops) / 3


def test_dataflow_records_each_bundles_bytes_and_the_largest_bundle() -> None:
    """``most`` is the largest sum of one bundle's distinct sources and results (what the
    allocator's capacity check asks of every bundle), ``nbytes`` every value's bytes."""
    module, _ = random_kernel(3, KernelSpec(120))
    ops = _bundles(module)
    df = build_dataflow(ops)
    needs = [
        sum(v.type.nbytes for v in {id(v): v for v in op.srcs}.values())  # type: ignore[attr-defined]
        + sum(d.type.nbytes for d in op.dsts)  # type: ignore[attr-defined]
        for op in ops
    ]
    assert df.most == max(needs) > 0
    for op in ops:
        for v in (*op.srcs, *op.dsts):
            assert df.nbytes[id(v)] == v.type.nbytes  # type: ignore[attr-defined]
    assert all((g is None) == any(d.type.cube is not None for d in op.dsts)  # type: ignore[attr-defined]
               for g, op in zip(df.grows, ops, strict=True))  # fmt: skip
