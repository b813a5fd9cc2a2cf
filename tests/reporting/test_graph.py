"""The report's graph drawing: longest-path layers, barycentre ordering, summaries of
large graphs."""

from __future__ import annotations

import re

import networkx as nx

from ptoc.reporting import graph as G


def _crossings(g: nx.DiGraph, layers: list[list[object]]) -> int:
    pos = {n: i for layer in layers for i, n in enumerate(layer)}
    depth = {n: k for k, layer in enumerate(layers) for n in layer}
    edges = [(a, b) for a, b in g.edges if depth[b] == depth[a] + 1]
    return sum(
        1
        for i, (a, b) in enumerate(edges)
        for c, d in edges[i + 1 :]
        if depth[a] == depth[c] and (pos[a] - pos[c]) * (pos[b] - pos[d]) < 0
    )


def test_layers_are_longest_paths() -> None:
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("a", "c"), ("d", "c"), ("c", "e")])
    layers = G.layers_of(g)
    assert layers == [["a", "d"], ["b"], ["c"], ["e"]]


def test_topological_detects_cycles() -> None:
    assert G.topological(nx.DiGraph([(1, 2), (2, 3)])) == [1, 2, 3]
    assert G.topological(nx.DiGraph([(1, 2), (2, 1)])) is None


def test_barycentre_ordering_removes_crossings() -> None:
    # two parallel chains listed crosswise: a1 -> b2, a2 -> b1
    g = nx.DiGraph()
    g.add_nodes_from(["a1", "a2", "b1", "b2"])
    g.add_edges_from([("a1", "b2"), ("a2", "b1")])
    layers = G.layers_of(g)
    assert _crossings(g, layers) == 1
    G.order_layers(g, layers)
    assert _crossings(g, layers) == 0


def test_layout_places_every_node_apart() -> None:
    g = nx.DiGraph([(i, i + 5) for i in range(5)] + [(i, (i + 1) % 5 + 5) for i in range(5)])
    for n in g.nodes:
        g.nodes[n].update(kind="op", mnemonic=f"OP{n}", engine="VEC", steps=[n])
    lay = G.layout(g)
    assert len(set(lay.pos.values())) == g.number_of_nodes()
    for a, b in g.edges:
        assert lay.pos[a][1] < lay.pos[b][1]  # edges point down
    text = G.svg(g, lay)
    assert text.count('class="op"') == 10 and text.count("<path") == g.number_of_edges()
    assert re.search(r'data-steps="3"', text)


def _chain(ops: int, lines: int) -> nx.DiGraph:
    """A chain op -> tile -> op ... of ``ops`` ops over ``lines`` source lines."""
    from ptoc.source import SourceLoc

    g = nx.DiGraph()
    prev = None
    for i in range(ops):
        op = ("op", i)
        g.add_node(op, kind="op", mnemonic="TADD", engine="VEC", step=i,
                   source=SourceLoc("k.py", 10 + i % lines))  # fmt: skip
        if prev is not None:
            g.add_edge(prev, op)
        t = ("tile", i)
        g.add_node(t, kind="tile", bytes=64)
        g.add_edge(op, t)
        prev = t
    return g


def test_small_graphs_are_drawn_whole() -> None:
    g = _chain(10, 3)
    h, note = G.summarise(g)
    assert h is g and note == ""


def test_large_graphs_drop_tiles_then_group_by_line() -> None:
    h, note = G.summarise(_chain(300, 3))  # 600 nodes, 300 ops: ops only
    assert h.number_of_nodes() == 300 and "tile nodes left out" in note
    assert all(d["kind"] == "op" for _, d in h.nodes(data=True))
    assert h.number_of_edges() == 299
    h, note = G.summarise(_chain(2000, 7))  # by kernel line; lines feed each other
    assert h.number_of_nodes() == 7 and "7 kernel lines" in note
    assert G.topological(h) is not None
    assert sum(d["count"] for _, d in h.nodes(data=True)) == 2000
    assert sorted(s for _, d in h.nodes(data=True) for s in d["steps"]) == list(range(2000))
    h, note = G.summarise(_chain(3000, 1000))
    assert h.number_of_nodes() == G.MAX_NODES and f"the first {G.MAX_NODES}" in note
