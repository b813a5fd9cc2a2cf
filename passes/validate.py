"""The allocation validator: replay a Program symbolically and prove that every source
reference names the value the IR meant.

It shares no code with the allocator. It walks the emitted commands with its own model of
the machine state that allocation is about (DECISIONS D1-D3):

* hand queues of *value ids* with the SizeCode bytes of every entry, pushed in binding
  order at commit, evicting past ``depth``, and the per-PE byte total after eviction;
* the GPRs as symbolic values (a constant, or an ABI base plus a constant), updated by
  the scalar instructions;
* the contents of the spill scratch area (value id per byte range).

Every command must first meet every constraint of its catalog form
(:func:`~ptoc.backend.encoding.field_violation`). For every tile bundle it checks, against
the bundle's :class:`~ptoc.passes.emit.Intent`:
each ``T#k``-style source resolves to a non-empty entry within depth holding the value id
the IR reads; each B.IOR slot holds the intended constant or address; a reload brings
back the value that was spilled to that scratch range; and no commit exceeds the capacity.
Refresh copies and reloads carry their source's identity, so a wrong copy shows up at the
next bundle that reads the value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ptoc.backend.encoding import field_violation
from ptoc.backend.isa.fields import GPR_NAMES, size_bytes
from ptoc.backend.program import Ior, Iot, Scalar, ScalarStart, TileStart
from ptoc.backend.target import MachineConfig

from .allocate.gprs import Binding
from .allocate.gprs import Scalar as Sym
from .emit import Emitted, Intent

MASK64 = (1 << 64) - 1
#: resolution of the scratch-contents map (spill slots are 64-byte aligned)
GRANULE = 64


class ValidationError(Exception):
    """The program does not do what the IR means (bundle index and reason)."""


@dataclass
class Report:
    """What the replay saw."""

    bundles: int = 0
    scalar_blocks: int = 0
    peak_bytes: int = 0
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def overhead(self) -> int:
        """Bundles that are not kernel operations (refresh, spill, reload, filler, scalar)."""
        return self.scalar_blocks + sum(n for k, n in self.kinds.items() if k != "op")


class _Replay:
    def __init__(self, em: Emitted, hands: int, depth: int, capacity: int) -> None:
        self.em, self.hands, self.depth, self.capacity = em, hands, depth, capacity
        self.queues: list[list[tuple[int, int]]] = [[] for _ in range(hands)]
        self.used = 0
        self.gpr: dict[int, Sym | None] = dict.fromkeys(range(len(GPR_NAMES)))
        self.gpr[0] = Sym(0)
        for b, reg in em.abi.items():
            self.gpr[GPR_NAMES.index(reg)] = Sym(0, b)
        #: scratch contents per 64-byte granule: (offset, bytes, value id) of the spill
        #: that last wrote it
        self.scratch: dict[int, tuple[int, int, int]] = {}
        self.report = Report()

    def fail(self, i: int, why: str) -> ValidationError:
        return ValidationError(f"bundle at command {i}: {why}")

    # ------------------------------------------------------------------ scalar

    def scalar(self, c: Scalar) -> None:
        f = dict(c.fields)
        rd = f.get("RegDst", 0)
        m = c.mnemonic
        val: Sym | None
        if m == "C.MOVI":
            val = Sym(f["simm5"] & MASK64)
        elif m == "LUI":
            imm = f["imm20"] - (1 << 20) if f["imm20"] >> 19 else f["imm20"]
            val = Sym((imm << 12) & MASK64)
        elif m == "ADDI":
            val = _add(self.gpr.get(f["SrcL"]), Sym(f["uimm12"]))
        elif m == "ADD":
            right = _right(self.gpr.get(f["SrcR"]), f.get("SrcRType", 0), f.get("shamt", 0))
            val = _add(self.gpr.get(f["SrcL"]), right)
        elif m == "SLLI":
            src = self.gpr.get(f["SrcL"])
            val = Sym((src.value << f["shamt"]) & MASK64) if src and src.base is None else None
        else:
            val = None
        if rd != 0:
            self.gpr[rd] = val

    # ------------------------------------------------------------------ tile

    def bundle(self, i: int, start: TileStart, cmds: Iterable[object]) -> None:
        intent = self.em.intents.get(i)
        if intent is None:
            raise self.fail(i, "a tile bundle with no recorded meaning")
        ior = next((c for c in cmds if isinstance(c, Ior)), None)
        iots = [c for c in cmds if isinstance(c, Iot)]
        self._check_scalars(i, intent, ior)
        refs = [r for b in iots for r in b.srcs]
        dsts = [(b.dst, b.size) for b in iots if b.dst is not None]
        if len(refs) != len(intent.srcs) or len(dsts) != len(intent.dsts):
            raise self.fail(
                i,
                f"{intent.op} binds {len(refs)} sources / {len(dsts)} "
                f"destinations, the IR means {len(intent.srcs)} / {len(intent.dsts)}",
            )
        got = [self._resolve(i, r) for r in refs]
        for k, (g, want) in enumerate(zip(got, intent.srcs, strict=True)):
            if g != want:
                raise self.fail(
                    i,
                    f"{intent.op} source {k} ({refs[k]}) holds value {g}, the IR "
                    f"reads value {want}",
                )
        contents = list(intent.dsts)
        if intent.kind == "spill":
            self._spill(i, intent, got[0])
        if intent.kind == "reload":
            contents = [self._reloaded(i, intent)]
        for (hand, size), vid in zip(dsts, contents, strict=True):
            if int(hand) >= self.hands:
                raise self.fail(i, f"destination hand {hand.name} does not exist")
            q = self.queues[int(hand)]
            q.insert(0, (vid, size_bytes(size)))
            self.used += size_bytes(size)
            if len(q) > self.depth:
                self.used -= q.pop()[1]
        if self.used > self.capacity:
            raise self.fail(
                i,
                f"{intent.op} commit leaves {self.used} bytes per PE allocated, "
                f"above the capacity {self.capacity}",
            )
        self.report.peak_bytes = max(self.report.peak_bytes, self.used)
        self.report.bundles += 1
        self.report.kinds[intent.kind] = self.report.kinds.get(intent.kind, 0) + 1

    def _resolve(self, i: int, ref: object) -> int:
        hand, k = int(ref.hand), ref.index  # type: ignore[attr-defined]
        if hand >= self.hands or k > self.depth:
            raise self.fail(i, f"{ref} is outside the {self.hands}x{self.depth} queues")
        q = self.queues[hand]
        if k > len(q):
            raise self.fail(i, f"{ref} selects an empty queue position")
        return q[k - 1][0]

    def _check_scalars(self, i: int, intent: Intent, ior: Ior | None) -> None:
        if ior is None:
            if intent.scalars:
                raise self.fail(
                    i, f"{intent.op} has no B.IOR but reads {len(intent.scalars)} scalars"
                )
            return
        regs = ior.sources
        for k, want in enumerate(intent.scalars):
            have = self.gpr.get(regs[k])
            if have != want:
                raise self.fail(
                    i,
                    f"{intent.op} B.IOR slot {k} ({GPR_NAMES[regs[k]]}) holds "
                    f"{have}, the IR means {want}",
                )
        if any(regs[len(intent.scalars) :]) or ior.dst:
            raise self.fail(i, f"{intent.op} B.IOR binds slots the operation does not read")

    @staticmethod
    def _granules(off: int, n: int) -> range:
        return range(off // GRANULE, (off + max(n, 1) + GRANULE - 1) // GRANULE)

    def _spill(self, i: int, intent: Intent, vid: int) -> None:
        off, n = intent.scalars[0].value, intent.gm_bytes
        for g in self._granules(off, n):
            self.scratch[g] = (off, n, vid)

    def _reloaded(self, i: int, intent: Intent) -> int:
        """The value a reload reads: every granule it covers must still hold the one
        spill of exactly this range (a later overlapping spill would have replaced some)."""
        off, n = intent.scalars[0].value, intent.gm_bytes
        held = {self.scratch.get(g) for g in self._granules(off, n)}
        want = (off, n, intent.restores)
        if held != {want}:
            raise self.fail(
                i,
                f"reload of value {intent.restores} reads scratch offset {off} "
                f"holding {sorted(map(str, held))}",
            )
        return intent.restores


def _right(r: Sym | None, kind: int, shamt: int) -> Sym | None:
    """The ADD right operand after its modifier (ASL ``DecodeScalarBinaryRightModifier``:
    0 sign-extended word, 1 zero-extended word, 2 negated, 3 as is) and shift."""
    if r is None:
        return None
    if r.base is not None:
        return r if kind == 3 and shamt == 0 else None
    v = r.value
    if kind == 0:
        v = (v & 0xFFFFFFFF) - ((v & 0x80000000) << 1)
    elif kind == 1:
        v &= 0xFFFFFFFF
    elif kind == 2:
        v = -v
    return Sym((v << shamt) & MASK64, r.base)


def _add(a: Sym | None, b: Sym | None) -> Sym | None:
    if a is None or b is None or (a.base is not None and b.base is not None):
        return None
    return Sym((a.value + b.value) & MASK64, a.base or b.base)


def validate(em: Emitted, target: MachineConfig) -> Report:
    """Replay ``em.program`` on ``target``'s hands, depth and capacity; raises
    :class:`ValidationError` at the first bundle that does not mean what the IR means,
    else returns what it saw."""
    for i, c in enumerate(em.program.commands):
        # every constraint of the catalog form (c.movi never writes ra, no reserved
        # DataType or SizeCode, ...): the assembler would refuse the printed text and the
        # executor would fault on the words
        rule = field_violation(c)
        if rule is not None:
            raise ValidationError(f"command {i} breaks its catalog form: {rule}")
    r = _Replay(em, target.hands, target.depth, target.capacity)
    for block in em.program.blocks():
        if isinstance(block.start, ScalarStart):
            r.report.scalar_blocks += 1
            for c in block.commands:
                if isinstance(c, Scalar):
                    r.scalar(c)
        elif isinstance(block.start, TileStart):
            r.bundle(block.index, block.start, block.commands)
        else:
            raise ValidationError(f"commands outside any block at command {block.index}")
    missing = set(em.intents) - {b.index for b in em.program.blocks()}
    if missing:
        raise ValidationError(f"bundles {sorted(missing)} of the IR were not emitted")
    return r.report


__all__ = ["Binding", "Report", "ValidationError", "validate"]
