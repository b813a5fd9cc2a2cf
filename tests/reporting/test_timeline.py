"""The report's timeline: the occupancy replay agrees with the machine's trace, the
liveness bound of a hand-built graph, and binning of long programs."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptoc
from ptoc.loader import load_kernel
from ptoc.reporting import build, compile_observed
from ptoc.reporting.timeline import bins, lower_bound, replay

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TINY = ptoc.MachineConfig(depth=4, capacity=16384)


def _graph(ops: dict[str, tuple[list[str], dict[str, int]]]) -> nx.DiGraph:
    """op name -> (tiles it reads, {tile it produces: bytes})."""
    g = nx.DiGraph()
    for name, (reads, makes) in ops.items():
        g.add_node(name, kind="op")
        for t in reads:
            g.add_edge(t, name)
        for t, nbytes in makes.items():
            g.add_node(t, kind="tile", bytes=nbytes)
            g.add_edge(name, t)
    return g


# a -> t1; b reads t1 -> t2; c reads t1, t2 -> t3; d reads t3 (a store: no result);
# e -> t4 that nobody reads
HAND = {
    "a": ([], {"t1": 100}),
    "b": (["t1"], {"t2": 50}),
    "c": (["t1", "t2"], {"t3": 10}),
    "d": (["t3"], {}),
    "e": ([], {"t4": 7}),
}


def test_lower_bound_of_a_hand_built_graph() -> None:
    g = _graph(HAND)
    # at a: t1 (100); at b: t1 (read again by c) + t2 (50) = 150; at c: t3 only (t1 and t2
    # are last read by c); at d: nothing; at e: t4 (its producer commits it) = 7
    assert lower_bound(g, ["a", "b", "c", "d", "e"]) == 150
    # e first: t4 is never read, so it is live only at e
    assert lower_bound(g, ["e", "a", "b", "c", "d"]) == 150
    # without c's second read of t1, t1 dies at b: at b only t2 (50) remains live
    g.remove_edge("t1", "c")
    assert lower_bound(g, ["a", "b", "c", "d", "e"]) == 100


def test_lower_bound_depends_on_the_order() -> None:
    # two independent chains x1 -> u (64) -> x2 and y1 -> v (32) -> y2
    g = _graph(
        {
            "x1": ([], {"u": 64}),
            "x2": (["u"], {}),
            "y1": ([], {"v": 32}),
            "y2": (["v"], {}),
        }
    )
    assert lower_bound(g, ["x1", "x2", "y1", "y2"]) == 64
    assert lower_bound(g, ["x1", "y1", "x2", "y2"]) == 96  # both live across y1


def test_lower_bound_ignores_memory_order_edges() -> None:
    g = _graph(HAND)
    g.add_edge("a", "d", memory=True)
    assert lower_bound(g, ["a", "b", "c", "d", "e"]) == 150


def _kernel(spec: str) -> ptoc.Kernel:
    file, _, name = spec.partition("::")
    return load_kernel(f"{EXAMPLES / file}.py::{name or file}")


@pytest.mark.parametrize(
    "spec,machine",
    [
        ("softmax", None),
        ("layernorm", TINY),
        ("vector_add", None),
        ("topk", None),  # refresh copies, spills and reloads
        ("merge4", TINY),
    ],
)
def test_replay_agrees_with_the_machine_trace(spec: str, machine) -> None:
    """Entries per hand and bytes per PE after every tile bundle are what the executor's
    own state holds after it (its trace records both)."""
    k = _kernel(spec)
    prog = ptoc.compile(k, machine)
    config = prog.machine
    kinds = {i: it.kind for i, it in prog.intents.items()}
    tl = replay(
        prog.program.blocks(), config.hands, config.depth, config.capacity, config.pes, kinds
    )
    out = ptoc.run(prog, trace=True, **k.random_inputs(0))
    records = [r for r in out.trace.records if r.kind == "tile"]
    tile_steps = [s for s, kind in enumerate(tl.kinds) if kind != "scalar"]
    assert len(records) == len(tile_steps) == prog.stats().bundles
    for r, s in zip(records, tile_steps, strict=True):
        start = prog.program.commands[tl.commands[s]]
        assert r.op.split()[0] == start.op.mnemonic, (spec, s)
        assert list(r.used) == list(tl.used[s]), (spec, s)
        assert [len(serials) for _, serials in r.queues] == list(tl.entries[s]), (spec, s)
    assert tl.peak == prog.stats().peak_bytes
    assert set(tl.kinds) - {"op", "scalar"} == {
        k for k, n in prog.stats().overhead.items() if n
    }


@pytest.mark.parametrize("spec", ["softmax", "layernorm", "quant_int8", "topk", "mxfp8"])
def test_peak_against_the_liveness_bound(spec: str) -> None:
    """Without spills the peak is never below the live set; with spills (topk) part of
    the live set lives in global memory and the peak may be below it."""
    prog, collector = compile_observed(_kernel(spec))
    data = build(prog, collector)
    assert data.bound > 0
    if not prog.stats().overhead["spill"]:
        assert data.bound <= data.timeline.peak
    else:
        assert data.bound > data.timeline.peak


def test_binning_keeps_every_step_when_it_fits() -> None:
    b = bins(7, 1200)
    assert b.columns == 7 and list(b.starts) == list(range(7))
    assert [b.column_of(s) for s in range(7)] == list(range(7))


@given(st.integers(1, 20000), st.integers(1, 1300), st.integers(0, 2**32 - 1))
def test_binning_shows_the_max_of_every_bin(steps: int, width: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 1 << 20, size=(steps, 2))
    b = bins(steps, width)
    assert b.columns == min(steps, width)
    ends = [*b.starts[1:], steps]
    got = b.max(values)
    for c, (lo, hi) in enumerate(zip(b.starts, ends, strict=True)):
        assert lo < hi  # no empty column
        assert list(got[c]) == list(values[lo:hi].max(axis=0))
        assert b.column_of(int(lo)) == c and b.column_of(int(hi) - 1) == c
    flags = [bool(v) for v in values[:, 0] % 2]
    assert list(b.any(flags)) == [any(flags[lo:hi]) for lo, hi in zip(b.starts, ends)]
