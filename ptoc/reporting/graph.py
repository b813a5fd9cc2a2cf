"""A layered drawing of the dataflow graph as SVG.

Layers are longest paths from the sources (a node sits one layer below its deepest
predecessor); within a layer, nodes are ordered by the barycentre of their neighbours in
the layer above, then below, for a few sweeps (Sugiyama's heuristic, without dummy nodes
for long edges). A graph of more than :data:`MAX_NODES` nodes is summarised: first
without its tile nodes, then one node per kernel source line, and at most
:data:`MAX_NODES` of those.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

#: the most nodes drawn
MAX_NODES = 400
#: barycentre sweeps (each one down and one up)
SWEEPS = 4

#: fill colour of an op node by engine; tile nodes are grey
ENGINE_COLOURS = {
    "TLSU": "#7fb3d5",
    "VEC": "#82c99a",
    "SFU": "#f5b971",
    "CUBE": "#c39bd3",
}
TILE_COLOUR = "#d5d8dc"

NODE_W, NODE_H, TILE_W, TILE_H = 96, 24, 64, 14
GAP_X, GAP_Y, MARGIN = 16, 34, 12


@dataclass(frozen=True)
class Layout:
    """Node positions (centres) and the drawing's size."""

    pos: dict[Hashable, tuple[float, float]]
    layers: list[list[Hashable]]
    width: float
    height: float


def topological(g: Any) -> list[Hashable] | None:
    """The nodes of the directed graph ``g`` (networkx interface) in a topological order
    (Kahn's algorithm, ties in insertion order); None when ``g`` has a cycle."""
    indeg = {n: g.in_degree(n) for n in g.nodes}
    ready = [n for n in g.nodes if indeg[n] == 0]
    out: list[Hashable] = []
    while ready:
        n = ready.pop()
        out.append(n)
        for m in g.successors(n):
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
    return out if len(out) == len(indeg) else None


def layers_of(g: Any) -> list[list[Hashable]]:
    """Longest-path layering: sources in layer 0, every node one below its deepest
    predecessor; within a layer, in graph insertion order."""
    depth: dict[Hashable, int] = {}
    order = topological(g)
    assert order is not None, "the dataflow graph has a cycle"
    for n in order:
        depth[n] = max((depth[p] + 1 for p in g.predecessors(n)), default=0)
    out: list[list[Hashable]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for n in g.nodes:
        out[depth[n]].append(n)
    return out


def order_layers(g: Any, layers: list[list[Hashable]], sweeps: int = SWEEPS) -> None:
    """Reorder each layer in place by the barycentre of its neighbours' positions in the
    layer above (downward sweep) and below (upward sweep)."""
    index = {n: i for layer in layers for i, n in enumerate(layer)}

    def sweep(rows: list[list[Hashable]], neighbours: Any) -> None:
        for layer in rows:

            def key(n: Hashable) -> tuple[float, int]:
                ns = [index[m] for m in neighbours(n)]
                return (sum(ns) / len(ns) if ns else index[n], index[n])

            layer.sort(key=key)
            for i, n in enumerate(layer):
                index[n] = i

    for _ in range(sweeps):
        sweep(layers[1:], g.predecessors)
        sweep(list(reversed(layers[:-1])), g.successors)


def _size(g: Any, n: Hashable) -> tuple[int, int]:
    return (TILE_W, TILE_H) if g.nodes[n].get("kind") == "tile" else (NODE_W, NODE_H)


def layout(g: Any) -> Layout:
    """Layered positions of every node of the acyclic graph ``g``."""
    layers = layers_of(g)
    order_layers(g, layers)
    slot = NODE_W + GAP_X
    widest = max((len(layer) for layer in layers), default=0)
    width = widest * slot + 2 * MARGIN
    pos: dict[Hashable, tuple[float, float]] = {}
    y = MARGIN
    for layer in layers:
        h = max((_size(g, n)[1] for n in layer), default=0)
        x0 = MARGIN + (widest - len(layer)) * slot / 2
        for i, n in enumerate(layer):
            pos[n] = (x0 + i * slot + NODE_W / 2, y + h / 2)
        y += h + GAP_Y
    return Layout(pos, layers, width, max(y - GAP_Y + MARGIN, 2 * MARGIN))


def summarise(g: Any) -> tuple[Any, str]:
    """A graph of at most :data:`MAX_NODES` nodes standing for ``g``, and what was done.

    Op nodes of the result have ``steps`` (the timeline steps they stand for; set on the
    op nodes of ``g`` too)."""
    for _, d in g.nodes(data=True):
        if d.get("kind") == "op":
            d.setdefault("steps", [d["step"]] if "step" in d else [])
    if g.number_of_nodes() <= MAX_NODES:
        return g, ""
    ops = [n for n, d in g.nodes(data=True) if d.get("kind") == "op"]
    if len(ops) <= MAX_NODES:
        h = type(g)()  # a graph of the same kind (networkx is a dependency of passes/)
        h.add_nodes_from((n, g.nodes[n]) for n in ops)
        for t, d in g.nodes(data=True):
            if d.get("kind") == "tile":
                for p in g.predecessors(t):
                    h.add_edges_from((p, r) for r in g.successors(t))
        h.add_edges_from((a, b) for a, b, d in g.edges(data=True) if d.get("memory"))
        return h, f"{g.number_of_nodes() - len(ops)} tile nodes left out ({len(ops)} ops)"
    return _by_line(g, ops)


def _by_line(g: Any, ops: list[Hashable]) -> tuple[Any, str]:
    """One node per kernel source line (ops without one: per mnemonic)."""
    group: dict[Hashable, Hashable] = {}
    h = type(g)()
    for n in ops:
        d = g.nodes[n]
        loc = d.get("source")
        key = ("line", loc.file, loc.line) if loc is not None else ("op", d["mnemonic"])
        group[n] = key
        if key not in h:
            label = f"line {loc.line}" if loc is not None else d["mnemonic"]
            h.add_node(
                key,
                kind="op",
                mnemonic=label,
                engine=d["engine"],
                steps=[],
                count=0,
                source=loc,
            )
        h.nodes[key]["steps"].extend(d.get("steps", []))
        h.nodes[key]["count"] += 1
    for t, d in g.nodes(data=True):
        if d.get("kind") != "tile":
            continue
        for p in g.predecessors(t):
            for r in g.successors(t):
                if group[p] != group[r]:  # no self loops
                    h.add_edge(group[p], group[r])
    note = f"{len(ops)} ops drawn as {h.number_of_nodes()} kernel lines"
    if topological(h) is None:  # lines feeding each other: keep the edges in line order
        h.remove_edges_from([(a, b) for a, b in h.edges if _line_key(a) >= _line_key(b)])
    if h.number_of_nodes() > MAX_NODES:
        keep = list(h.nodes)[:MAX_NODES]
        note += f"; the first {MAX_NODES} shown"
        h = h.subgraph(keep).copy()
    return h, note


def _line_key(key: Any) -> tuple[str, int]:
    return (key[1], key[2]) if key[0] == "line" else ("~", 0)


def svg(g: Any, lay: Layout) -> str:
    """The drawing: edges as curves, op nodes as coloured boxes with their mnemonic
    (``data-steps``: the timeline steps they stand for), tile nodes as grey pills."""
    ident = {n: i for i, n in enumerate(g.nodes)}
    out = [
        f'<svg id="graph" width="{lay.width:.0f}" '
        f'height="{lay.height:.0f}" viewBox="0 0 {lay.width:.0f} {lay.height:.0f}">',
        '<g class="edges">',
    ]
    for a, b, d in g.edges(data=True):
        (x1, y1), (x2, y2) = lay.pos[a], lay.pos[b]
        y1 += _size(g, a)[1] / 2
        y2 -= _size(g, b)[1] / 2
        my = (y1 + y2) / 2
        dash = ' stroke-dasharray="4 3"' if d.get("memory") else ""
        out.append(
            f'<path d="M{x1:.1f} {y1:.1f} C{x1:.1f} {my:.1f} {x2:.1f} {my:.1f} '
            f'{x2:.1f} {y2:.1f}"{dash}/>'
        )
    out.append('</g><g class="nodes">')
    for n, d in g.nodes(data=True):
        x, y = lay.pos[n]
        w, h = _size(g, n)
        if d.get("kind") == "tile":
            out.append(
                f'<g class="tile"><rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w}" '
                f'height="{h}" rx="7" fill="{TILE_COLOUR}"/><text x="{x:.1f}" y="{y + 3:.1f}">'
                f"{d['bytes']}B</text><title>{escape(d.get('label', ''))}</title></g>"
            )
            continue
        steps = " ".join(str(s) for s in d.get("steps", []))
        fill = ENGINE_COLOURS.get(d.get("engine", ""), "#eeeeee")
        count = f" x{d['count']}" if d.get("count", 1) > 1 else ""
        tip = f"{d['mnemonic']} ({d.get('engine', '')} {d.get('executor', '')})"
        if d.get("count", 1) > 1 and d.get("source") is not None:
            tip = f"{d['count']} ops of {Path(d['source'].file).name}:{d['source'].line}"
        out.append(
            f'<g class="op" id="n{ident[n]}" data-steps="{steps}"><rect x="{x - w / 2:.1f}" '
            f'y="{y - h / 2:.1f}" width="{w}" height="{h}" rx="4" fill="{fill}"/>'
            f'<text x="{x:.1f}" y="{y + 4:.1f}">{escape(d["mnemonic"])}{count}</text>'
            f"<title>{escape(tip)}</title></g>"
        )
    out.append("</g></svg>")
    return "\n".join(out)


def legend() -> str:
    """The engine colours, as small HTML swatches."""
    items = [*ENGINE_COLOURS.items(), ("tile", TILE_COLOUR)]
    return " ".join(
        f'<span class="sw" style="background:{c}"></span>{escape(e)}' for e, c in items
    )
