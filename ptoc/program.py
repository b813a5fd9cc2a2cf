"""``ptoc.Program``: a compiled kernel -- the bundle program plus how to call it.

It wraps the backend :class:`ptoc.backend.program.Program` (``.program``) with the
kernel ABI (which GPR holds which tensor, per PE), the machine it was compiled for, the
allocation statistics and the kernel source line of every bundle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ptoc.backend.asm import format_command
from ptoc.backend.program import Program as BundleProgram
from ptoc.backend.program import ScalarStart, TileStart, count_text

from .source import SourceLoc


@dataclass(frozen=True)
class LoopStats:
    """One iteration of a run-time loop's body (nested loops counted once): ``bundles``
    tile bundles, ``overhead`` of them inserted by the allocator, and ``scalar_blocks``
    (address computations and checks, and the latch that counts the iteration)."""

    line: int
    bundles: int
    overhead: int
    scalar_blocks: int


@dataclass(frozen=True)
class Stats:
    """What a compiled kernel costs.

    ``bundles``: tile bundles (docs/formats.md, "Counting"), the kernel's own and those
    the allocator inserted; ``by_op``: kernel bundles per operation; ``overhead``:
    inserted bundles by kind (``refresh``, ``spill``, ``reload``, ``filler``);
    ``scalar_blocks``: the scalar blocks that set GPRs (not bundles); ``peak_bytes``:
    the most Local tile storage live at once on a PE.
    """

    bundles: int
    by_op: dict[str, int]
    overhead: dict[str, int]
    peak_bytes: int
    pes: int
    binary_bytes: int = 0
    machine: str = ""
    scalar_blocks: int = 0
    #: per run-time loop, in program order: what one iteration of its body executes
    loops: tuple[LoopStats, ...] = ()

    @property
    def overhead_bundles(self) -> int:
        return sum(self.overhead.values())

    def summary(self) -> str:
        """``7 bundles, 1 scalar block``, as every command prints it."""
        return count_text(self.bundles, self.scalar_blocks)

    def text(self) -> str:
        ops = ", ".join(
            f"{k} {v}" for k, v in sorted(self.by_op.items(), key=lambda kv: -kv[1])
        )
        over = ", ".join(f"{k} {v}" for k, v in self.overhead.items() if v) or "none"
        return "\n".join(
            [
                f"bundles        {self.bundles} ({sum(self.by_op.values())} kernel, "
                f"{self.overhead_bundles} inserted)",
                f"scalar blocks  {self.scalar_blocks}",
                f"by op          {ops}",
                f"inserted       {over}",
                f"peak bytes/PE  {self.peak_bytes}",
                f"PEs            {self.pes}",
                f"binary         {self.binary_bytes} bytes",
                *([f"machine        {self.machine}"] if self.machine else []),
                *(
                    f"loop (line {lp.line or '?'}) {lp.bundles} bundles per iteration "
                    f"({lp.overhead} inserted), {lp.scalar_blocks} scalar blocks"
                    for lp in self.loops
                ),
            ]
        )


class Program:
    """A compiled kernel: ``.asm()``, ``.encode()``, ``.stats()``; run it with ``ptoc.run``.

    ``Program.parse(text)`` / ``Program.decode(data)`` give a Program without a kernel ABI
    (run those with :class:`ptoc.runtime.Machine`).
    """

    def __init__(
        self,
        program: BundleProgram,
        *,
        abi: Any = None,
        kernel: Any = None,
        machine: Any = None,
        alloc: Any = None,
        intents: Mapping[int, Any] | None = None,
        sources: dict[int, SourceLoc | None] | None = None,
        validation: Any = None,
        checks: dict[int, Any] | None = None,
        loops: tuple[Any, ...] = (),
    ) -> None:
        self.program = program
        self.abi = abi
        self.kernel = kernel
        self.machine = machine
        self.alloc = alloc
        self.intents = intents or {}
        self.sources = sources or {}
        #: what the allocation validator's replay saw (``ptoc.passes.validate.Report``)
        self.validation = validation
        #: the bounds checks of run-time windows by command index
        #: (``ptoc.passes.emit.program.CheckIntent``)
        self.checks = checks or {}
        #: the run-time loops (``ptoc.passes.emit.program.LoopIntent``), in program order
        self.loops = tuple(loops)

    def __repr__(self) -> str:
        name = self.abi.kernel if self.abi is not None else "<no kernel>"
        return f"<ptoc.Program {name}: {self.program.count_text()}>"

    def __len__(self) -> int:
        return len(self.program)

    @property
    def name(self) -> str | None:
        return self.abi.kernel if self.abi is not None else None

    # ---- text and binary

    def asm(self, source: bool = False) -> str:
        """Canonical bundle text; ``source=True`` adds ``// file:line: code`` comments
        naming the kernel line of each bundle (still valid assembler input)."""
        if not source or not self.sources:
            return self.program.asm()
        lines: list[str] = []
        shown: str | None = None  # one comment per run of bundles from the same line
        for i, c in enumerate(self.program.commands):
            note = None
            if isinstance(c, TileStart):
                note = self._comment(i)
            elif isinstance(c, ScalarStart):
                note = "// set scalar registers"
            if note is not None and note != shown:
                lines.append(note)
                shown = note
            lines.append(format_command(c))
        return "\n".join(lines) + "\n"

    def _comment(self, index: int) -> str:
        loc = self.sources.get(index)
        if loc is None:
            role = getattr(self.intents.get(index), "kind", "op")
            return f"// {role} (inserted by the allocator)"
        return f"// {_short(loc.file)}:{loc.line}: {_line_text(loc)}"

    def encode(self) -> bytes:
        """Little-endian instruction parcels."""
        return self.program.encode()

    @classmethod
    def parse(cls, text: str, file: str = "<asm>") -> Program:
        """Assemble canonical or ``;``-joined text (AsmError names FILE:LINE)."""
        return cls(BundleProgram.parse(text, file))

    @classmethod
    def decode(cls, data: bytes) -> Program:
        """Decode parcels (DecodeError names the byte offset)."""
        return cls(BundleProgram.decode(data))

    # ---- what it costs

    def stats(self) -> Stats:
        """Bundles by op, overhead bundles and peak Local bytes per PE."""
        by_op: Counter[str] = Counter()
        overhead: Counter[str] = Counter({"refresh": 0, "spill": 0, "reload": 0, "filler": 0})
        scalar = 0
        for i, c in enumerate(self.program.commands):
            if isinstance(c, TileStart):
                kind = getattr(self.intents.get(i), "kind", "op")
                if kind == "op":
                    by_op[_mnemonic(c)] += 1
                else:
                    overhead[kind] += 1
            elif isinstance(c, ScalarStart):
                scalar += 1
        peak = getattr(self.alloc, "peak_bytes", 0)
        pes = self.abi.pes if self.abi is not None else 0
        machine = self.machine.text() if self.machine is not None else ""
        loops = []
        for lp in self.loops:
            cmds = range(lp.header, lp.exit)
            tiles = [i for i in cmds if isinstance(self.program.commands[i], TileStart)]
            inserted = sum(
                1 for i in tiles if getattr(self.intents.get(i), "kind", "op") != "op"
            )
            blocks = sum(1 for i in cmds if isinstance(self.program.commands[i], ScalarStart))
            src = self.sources.get(lp.guard) or (self.source_of(tiles[0]) if tiles else None)
            loops.append(LoopStats(src.line if src else 0, len(tiles), inserted, blocks))
        return Stats(
            loops=tuple(loops),
            scalar_blocks=scalar,
            bundles=sum(by_op.values()) + sum(overhead.values()),
            by_op=dict(by_op),
            overhead=dict(overhead),
            peak_bytes=peak,
            pes=pes,
            binary_bytes=len(self.encode()),
            machine=machine,
        )

    def report(self, path: Any) -> Any:
        """Write the HTML report of this program to ``path`` (``ptoc.report``): timeline,
        dataflow graph, bundles with their kernel lines and every stage's IR."""
        from .reporting import report_program

        return report_program(self, path)

    def source_of(self, command: int) -> SourceLoc | None:
        """The kernel line of the bundle holding command ``command`` (None if unknown)."""
        starts = [s for s in self.sources if s <= command]
        return self.sources.get(max(starts)) if starts else None


def _mnemonic(c: TileStart) -> str:
    o = c.op
    return o.mnemonic if o is not None else str(format_command(c)).split()[0]


def _line_text(loc: SourceLoc) -> str:
    import linecache

    return linecache.getline(loc.file, loc.line).strip()


def _short(path: str) -> str:
    from pathlib import Path

    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return Path(path).name
