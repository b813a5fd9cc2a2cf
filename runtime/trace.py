"""Per-bundle execution trace: structured records and a readable text rendering.

Tiles are identified by their creation serial (``#s12``) so a tile can be followed as
its relative name changes (``T#1`` becomes ``T#2`` when the next ``->T`` commits).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptoc.backend.isa.fields import GPR_NAMES, Hand, status_text
from ptoc.backend.program import Block

from .bundle import BundlePlan
from .engine import Ctx
from .state import MachineState
from .tiles import Tile


@dataclass(frozen=True)
class TileNote:
    """One tile in a trace record: relative name at that moment, serial and descriptor."""

    name: str
    serial: int
    descriptor: str


@dataclass(frozen=True)
class TraceRecord:
    """One executed block."""

    index: int
    op: str
    kind: str  # "tile", "noop" or "scalar"
    mask: int = 0
    sources: tuple[TileNote, ...] = ()
    destinations: tuple[TileNote, ...] = ()
    released: tuple[TileNote, ...] = ()
    status_before: tuple[int, ...] = ()
    status_after: tuple[int, ...] = ()
    gm_bytes_written: int = 0
    gpr_changes: tuple[tuple[int, str, int, int], ...] = ()
    queues: tuple[tuple[str, tuple[int, ...]], ...] = ()
    used: tuple[int, ...] = ()

    def text(self) -> str:
        head = f"[{'scalar ' if self.kind == 'scalar' else ''}{self.index}] {self.op}"
        if self.kind == "noop":
            return head + "  (PE_MASK=0000: strict no-op)"
        lines = [head + (f"  mask={self.mask:04b}" if self.kind == "tile" else "")]
        for s in self.sources:
            lines.append(f"    read  {s.name:6} #s{s.serial} {s.descriptor}")
        for d in self.destinations:
            lines.append(f"    wrote {d.name:6} #s{d.serial} {d.descriptor}")
        for r in self.released:
            lines.append(f"    freed #s{r.serial} {r.descriptor}")
        if self.gm_bytes_written:
            lines.append(f"    GM    {self.gm_bytes_written} byte(s) stored")
        if self.status_before != self.status_after:
            st = ", ".join(
                f"PE{pe} {status_text(a)}->{status_text(b)}"
                for pe, (a, b) in enumerate(zip(self.status_before, self.status_after))
                if a != b
            )
            lines.append(f"    status {st}")
        for pe, reg, old, new in self.gpr_changes:
            lines.append(f"    PE{pe} {reg} 0x{old:x} -> 0x{new:x}")
        if self.queues:
            q = "  ".join(
                f"{h}[{' '.join(f'#s{s}' for s in serials)}]" for h, serials in self.queues
            )
            lines.append(f"    queues {q}  used/PE {list(self.used)}")
        return "\n".join(lines)


@dataclass
class Trace:
    """Records of one ``Machine.run``."""

    records: list[TraceRecord] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(r.text() for r in self.records)


def _note(name: str, t: Tile) -> TileNote:
    return TileNote(name, t.serial, t.shape_text)


def _queues(state: MachineState) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple((Hand(h).name, tuple(t.serial for t in q)) for h, q in enumerate(state.queues))


def _name_of(state: MachineState, t: Tile) -> str:
    for h, q in enumerate(state.queues):
        for k, x in enumerate(q, 1):
            if x is t:
                return f"{Hand(h).name}#{k}"
    return "-"


def record_bundle(
    index: int,
    plan: BundlePlan,
    outcome: Ctx | None,
    state: MachineState,
    before: np.ndarray | None,
) -> TraceRecord:
    status_before = tuple(int(x) for x in before) if before is not None else ()
    if outcome is None:
        return TraceRecord(index, plan.name, "noop", 0, status_before=status_before,
                           status_after=status_before)  # fmt: skip
    srcs = tuple(_note(str(r), t) for r, t in zip(plan.sources, outcome.sources, strict=True))
    dsts = tuple(_note(_name_of(state, t), t) for t in outcome.tiles if t is not None)
    rel = tuple(_note("-", t) for t in outcome.released)
    nbytes = sum(int(w.index.size) for w in outcome.gm_writes)
    return TraceRecord(
        index, plan.name, "tile", plan.mask, srcs, dsts, rel, status_before,
        tuple(int(x) for x in state.status), nbytes, (), _queues(state), tuple(state.used),
    )  # fmt: skip


def record_scalar(
    index: int, block: Block, before: np.ndarray | None, after: np.ndarray
) -> TraceRecord:
    changes = []
    if before is not None:
        for pe, reg in zip(*np.nonzero(before != after), strict=True):
            changes.append((int(pe), GPR_NAMES[reg], int(before[pe, reg]), int(after[pe, reg])))
    name = "BSTART.STD" if block.start is not None else "(stray)"
    n = sum(1 for c in block.commands if type(c).__name__ == "Scalar")
    return TraceRecord(index, f"{name} ({n} scalar instruction(s))", "scalar",
                       gpr_changes=tuple(changes))  # fmt: skip
