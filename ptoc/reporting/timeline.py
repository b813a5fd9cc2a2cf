"""The timeline of a bundle program: queue occupancy per hand and Local bytes per PE after
every block, the overhead blocks, and the lower bound of the peak from liveness.

The occupancy is replayed from the program alone, the way the machine commits a bundle
(DECISIONS D1, D2): each destination is pushed onto its hand in binding order as ``#1``,
the entry pushed past ``depth`` is released, and every entry counts its SizeCode bytes
on the PEs of the bundle's mask. A test holds the replay against the executor's trace.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoc.backend.isa.fields import Hand, mask_pes, size_bytes
from ptoc.backend.program import Block, ScalarStart, TileStart
from ptoc.runtime.bundle import build_plan

#: the most timeline columns drawn; longer programs are binned (max per bin)
MAX_COLUMNS = 1200

#: kinds of block that are not kernel operations, in drawing order
OVERHEAD_KINDS = ("refresh", "spill", "reload", "filler", "scalar")


@dataclass(frozen=True)
class Timeline:
    """Per block of the program (``steps`` of them, in program order): its ``kind``
    (``op``, an inserted bundle's role, or ``scalar`` for a block setting GPRs), its first
    command, the entries of every hand (``entries[step, hand]``) and the Local bytes of
    every PE (``used[step, pe]``) after it commits."""

    kinds: tuple[str, ...]
    commands: tuple[int, ...]
    entries: np.ndarray
    used: np.ndarray
    hands: int
    depth: int
    capacity: int

    @property
    def steps(self) -> int:
        return len(self.kinds)

    @property
    def peak(self) -> int:
        """The most Local bytes any PE holds after any block."""
        return int(self.used.max(initial=0))


def replay(
    blocks: Sequence[Block],
    hands: int,
    depth: int,
    capacity: int,
    pes: int,
    kinds: dict[int, str],
) -> Timeline:
    """Occupancy after every block (``Program.blocks()``) on a machine of ``hands`` x
    ``depth`` queues and ``pes`` PEs of ``capacity`` bytes; ``kinds`` maps a tile bundle's first
    command to its kind (missing: ``op``)."""
    queues: list[list[tuple[int, int]]] = [[] for _ in range(hands)]  # (mask, bytes)
    used = [0] * pes
    step_kinds: list[str] = []
    commands: list[int] = []
    entries: list[list[int]] = []
    usage: list[list[int]] = []
    for block in blocks:
        start = block.start
        if isinstance(start, TileStart):
            plan = build_plan(start, block.commands)
            step_kinds.append(kinds.get(block.index, "op"))
            pushes = [(int(h), plan.mask, size_bytes(s)) for h, s in plan.destinations]
            for hand, mask, nbytes in pushes:
                if hand >= hands:
                    continue  # the machine faults; the timeline only draws what exists
                q = queues[hand]
                q.insert(0, (mask, nbytes))
                for pe in mask_pes(mask):
                    if pe < pes:
                        used[pe] += nbytes
                if len(q) > depth:
                    old_mask, old_bytes = q.pop()
                    for pe in mask_pes(old_mask):
                        if pe < pes:
                            used[pe] -= old_bytes
        elif isinstance(start, ScalarStart):
            step_kinds.append("scalar")
        else:
            continue  # commands outside any block change no queue
        commands.append(block.index)
        entries.append([len(q) for q in queues])
        usage.append(list(used))
    return Timeline(
        tuple(step_kinds),
        tuple(commands),
        np.array(entries, dtype=np.int64).reshape(len(entries), hands),
        np.array(usage, dtype=np.int64).reshape(len(usage), pes),
        hands,
        depth,
        capacity,
    )


def lower_bound(graph: Any, order: Sequence[Hashable]) -> int:
    """The most bytes per PE that must be live at once when the ops run in ``order``.

    ``graph`` (a networkx ``DiGraph``) has op nodes and tile nodes (``kind`` attribute
    ``op`` or ``tile``; a tile node has ``bytes``): an edge op -> tile means the op produces the
    tile, tile -> op that the op reads it (other edges, such as memory order between ops,
    are ignored). When op ``i`` commits, its results and every tile produced before ``i``
    and read after ``i`` occupy Local storage at once, whatever the allocation; the bound
    is the maximum of that sum over the ops: no allocation of this schedule that keeps
    every tile in Local storage (no spills) has a lower peak.
    """
    position = {n: i for i, n in enumerate(order)}
    born: dict[Hashable, int] = {}
    dies: dict[Hashable, int] = {}
    for n, data in graph.nodes(data=True):
        if data.get("kind") != "tile":
            continue
        producers = [p for p in graph.predecessors(n) if p in position]
        readers = [r for r in graph.successors(n) if r in position]
        if not producers:
            continue
        born[n] = position[producers[0]]
        dies[n] = max((position[r] for r in readers), default=born[n])
    # sweep: +bytes when a tile is produced, -bytes after its last reader
    delta = np.zeros(len(order) + 1, dtype=np.int64)
    for t, b in born.items():
        nbytes = int(graph.nodes[t]["bytes"])
        delta[b] += nbytes
        # counted at its producer and at every op between it and its last reader (at the
        # last reader its bytes may already be released by that op's own commit)
        delta[max(dies[t], b + 1)] -= nbytes
    live = np.cumsum(delta)[: len(order)]
    return int(live.max(initial=0))


@dataclass(frozen=True)
class Bins:
    """Columns of the timeline: column ``c`` covers steps ``starts[c]`` ..
    ``starts[c + 1] - 1`` (the last one up to the end)."""

    starts: np.ndarray
    steps: int

    @property
    def columns(self) -> int:
        return len(self.starts)

    def column_of(self, step: int) -> int:
        return int(np.searchsorted(self.starts, step, side="right") - 1)

    def max(self, values: np.ndarray) -> np.ndarray:
        """The largest value of each column (``values`` per step along axis 0)."""
        if not self.steps:
            return values[:0]
        return np.maximum.reduceat(values, self.starts, axis=0)

    def any(self, flags: Iterable[bool]) -> np.ndarray:
        """Whether any step of each column is flagged."""
        arr = np.fromiter(flags, dtype=bool, count=self.steps)
        return self.max(arr.astype(np.int8)).astype(bool)


def bins(steps: int, width: int = MAX_COLUMNS) -> Bins:
    """One column per step, or ``width`` columns of (nearly) equal numbers of steps."""
    cols = min(steps, width)
    starts = (np.arange(cols, dtype=np.int64) * steps) // max(cols, 1)
    return Bins(starts, steps)


#: line colour of each PE
PE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")
#: mark colour of each overhead kind
KIND_COLOURS = {
    "refresh": "#e67e22",
    "spill": "#c0392b",
    "reload": "#8e44ad",
    "filler": "#7f8c8d",
    "scalar": "#2980b9",
}
LEFT, PE_H, HAND_H, MARK_H, GAP = 92, 150, 26, 14, 10


def svg(tl: Timeline, bound: int, width: int = MAX_COLUMNS) -> tuple[str, Bins]:
    """The timeline drawing and its columns: Local bytes per PE (one line each) against
    the capacity, the peak and the liveness lower bound ``bound``; the entries of every
    hand; a mark per overhead block. Columns past ``width`` are binned, showing each
    bin's max."""
    b = bins(tl.steps, width)
    cw = min(24.0, width / max(b.columns, 1))
    plot_w = cw * b.columns
    top_value = max(tl.peak, bound, 1)
    scale_max = top_value * 1.15
    if tl.capacity <= scale_max * 1.5:
        scale_max = max(scale_max, tl.capacity * 1.05)
    hands_y = GAP + PE_H + GAP
    marks_y = hands_y + tl.hands * (HAND_H + 4) + GAP
    height = marks_y + MARK_H + GAP + 14
    total_w = LEFT + plot_w + 12

    def y_of(v: float) -> float:
        return GAP + PE_H - PE_H * v / scale_max

    out = [
        f'<svg id="timeline" width="{total_w:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {total_w:.0f} {height:.0f}" data-left="{LEFT}" data-cw="{cw:.4f}" '
        f'data-columns="{b.columns}">',
        f'<rect class="frame" x="{LEFT}" y="{GAP}" width="{plot_w:.1f}" height="{PE_H}"/>',
        f'<text class="axis" x="{LEFT - 4}" y="{GAP + 10}">{int(scale_max)} B</text>',
        f'<text class="axis" x="{LEFT - 4}" y="{GAP + PE_H}">0</text>',
        f'<text class="label" x="4" y="{GAP + PE_H / 2}">bytes/PE</text>',
    ]

    def hline(v: int, cls: str, text: str, right: bool = False, under: bool = False) -> None:
        if v > scale_max or v <= 0:
            return
        y = y_of(v)
        x, anchor = (LEFT + plot_w - 4, "end") if right else (LEFT + 4, "start")
        below = y + 11 if under else y - 3  # labels of nearby lines apart
        out.append(
            f'<line class="{cls}" x1="{LEFT}" x2="{LEFT + plot_w:.1f}" y1="{y:.1f}" '
            f'y2="{y:.1f}"/><text class="{cls}-t" x="{x:.1f}" y="{below:.1f}" '
            f'text-anchor="{anchor}">{text}</text>'
        )

    hline(tl.capacity, "cap", f"capacity {tl.capacity} B")
    hline(tl.peak, "peak", f"peak {tl.peak} B", right=True, under=True)
    hline(bound, "bound", f"live set {bound} B (liveness lower bound without spills)")
    if tl.steps:
        used = b.max(tl.used)
        for pe in range(used.shape[1]):
            out.append(
                f'<path class="pe" stroke="{PE_COLOURS[pe % len(PE_COLOURS)]}" '
                f'd="{_steps_path(used[:, pe], cw, y_of)}"><title>PE{pe}</title></path>'
            )
        entries = b.max(tl.entries)
        for h in range(tl.hands):
            y0 = hands_y + h * (HAND_H + 4)
            out.append(
                f'<rect class="frame" x="{LEFT}" y="{y0}" width="{plot_w:.1f}" '
                f'height="{HAND_H}"/><text class="label" x="4" y="{y0 + 16}">'
                f"hand {Hand(h).name} /{tl.depth}</text>"
            )
            bars = "".join(
                f"M{LEFT + c * cw:.2f} {y0 + HAND_H}v{-HAND_H * n / tl.depth:.2f}h{cw:.2f}"
                f"v{HAND_H * n / tl.depth:.2f}z"
                for c, n in enumerate(entries[:, h])
                if n
            )
            out.append(f'<path class="hand" d="{bars}"/>')
        out.append(f'<text class="label" x="4" y="{marks_y + 11}">overhead</text>')
        for kind in OVERHEAD_KINDS:
            flags = b.any(k == kind for k in tl.kinds)
            mw = max(cw, 1.0)
            d = "".join(
                f"M{LEFT + c * cw:.2f} {marks_y}h{mw:.2f}v{MARK_H}h{-mw:.2f}z"
                for c in range(b.columns)
                if flags[c]
            )
            if d:
                out.append(
                    f'<path class="mark" fill="{KIND_COLOURS[kind]}" d="{d}">'
                    f"<title>{kind}</title></path>"
                )
    out.append(
        f'<rect id="cursor" x="{LEFT}" y="0" width="{max(cw, 1.0):.2f}" height="{height - 14}" '
        'visibility="hidden"/>'
    )
    out.append(
        f'<rect id="hit" x="{LEFT}" y="0" width="{plot_w:.1f}" height="{height}" '
        'fill="transparent"/>'
    )
    out.append("</svg>")
    return "\n".join(out), b


def _steps_path(values: np.ndarray, cw: float, y_of: Any) -> str:
    """A step line through one value per column."""
    parts = [f"M{LEFT} {y_of(values[0]):.1f}"]
    for c, v in enumerate(values):
        parts.append(f"V{y_of(v):.1f}H{LEFT + (c + 1) * cw:.2f}")
    return "".join(parts)


def legend(pes: int) -> str:
    """The line colours of ``pes`` PEs and the overhead mark colours, as HTML swatches."""
    shown = " ".join(
        f'<span class="sw" style="background:{PE_COLOURS[i % 4]}"></span>PE{i}'
        for i in range(pes)
    )
    kinds = " ".join(
        f'<span class="sw" style="background:{c}"></span>{k}' for k, c in KIND_COLOURS.items()
    )
    return f"{shown} &nbsp; overhead: {kinds}"
