"""Programs: a flat sequence of commands, seen as blocks.

A :class:`Program` keeps commands exactly as written or decoded, malformed sequences
included (a header command outside a bundle, a missing BSTOP), because the executor must
fault on them rather than the data model refusing them. :meth:`Program.blocks` segments
the sequence into bundles and scalar blocks.

Commands hold raw field values; whether a value is legal (a reserved DataType, SizeCode
11, a GPR selector 24) is decided by the assembler for text and by the executor for
words, both from ``ptoc.backend.isa``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import starmap

from .isa import DTYPE_NONE, DataType, Family, OpDef, op_by_selector
from .isa.fields import CMODE_NAMES, LAYOUT_NAMES, PAD_NAMES, RMODE_NAMES, Hand


@dataclass(frozen=True, slots=True)
class TileRef:
    """A relative Local tile name ``T#1``..``N#16`` (6-bit selector hand*16 + k-1)."""

    hand: Hand
    index: int

    @property
    def code(self) -> int:
        return int(self.hand) * 16 + self.index - 1

    @classmethod
    def from_code(cls, code: int) -> TileRef:
        return cls(Hand(code >> 4), (code & 15) + 1)

    def __str__(self) -> str:
        return f"{self.hand.name}#{self.index}"


class Command:
    """Base of every command; subclasses are frozen dataclasses."""

    __slots__ = ()

    @property
    def is_header(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class TileStart(Command):
    """``BSTART.VEC/SFU/TEPL`` or a named TLSU/CUBE ``BSTART.*`` word opening a tile bundle.

    ``selector`` is ``(Mode << 5) | Function`` for TEPL and the function for TLSU/CUBE;
    ``dtype`` is the raw 5-bit DataType code.
    """

    family: Family
    selector: int
    dtype: int
    #: the spelling the text used for a TEPL word: "" (canonical engine) or "TEPL"
    spelling: str = field(default="", compare=False)

    @property
    def op(self) -> OpDef | None:
        return op_by_selector(self.family, self.selector)


@dataclass(frozen=True, slots=True)
class ScalarStart(Command):
    """``BSTART.STD/FP/SYS <kind>[, offset]`` opening a scalar block."""

    block: str  # STD, FP, SYS
    kind: str  # FALL, COND, DIRECT, RET, IND
    offset: int = 0


@dataclass(frozen=True, slots=True)
class Stop(Command):
    """``BSTOP`` (32-bit) or ``C.BSTOP`` (16-bit): the commit boundary."""

    compressed: bool = False


@dataclass(frozen=True)
class DatrField:
    """One B.DATR field, mapped once: the :class:`Datr` attribute (also the ``pto``
    dialect's ``#pto.datr<...>`` key), the catalog field name, and the value spellings
    (REFERENCE 4.2) that assembly text and the dialect print and read."""

    attr: str
    #: the catalog field name (``PadValueOrByteId``)
    name: str
    #: code -> spelling; empty for a plain number (Sat, Canonicalize)
    names: Mapping[int, str] = field(default_factory=dict)
    #: further accepted spellings, never printed (``None`` for CMode 0)
    aliases: Mapping[str, int] = field(default_factory=dict)
    #: further accepted keys in keyed text (``PadValue=Max``, ``ByteId=2``)
    keys: tuple[str, ...] = ()

    def spell(self, code: int) -> str:
        """The printed spelling of ``code`` (its number when it has no name)."""
        return self.names.get(code, str(code))

    def code(self, name: str) -> int | None:
        """The code a spelling names, or None."""
        for c, n in self.names.items():
            if n == name:
                return c
        return self.aliases.get(name)


#: B.DATR fields in positional order (the catalog template's, ``B.DATR.asl``)
DATR_FIELDS: tuple[DatrField, ...] = (
    DatrField("layout", "Layout", LAYOUT_NAMES),
    DatrField(
        "dtype", "DataType", {int(d): d.name for d in DataType} | {DTYPE_NONE: "DTYPE_NONE"}
    ),
    DatrField(
        "pad", "PadValueOrByteId", dict(enumerate(PAD_NAMES)), keys=("PadValue", "ByteId")
    ),
    DatrField("cmode", "CMode", dict(enumerate(CMODE_NAMES)), {"None": 0}),
    DatrField("rmode", "RMode", dict(enumerate(RMODE_NAMES))),
    DatrField("sat", "Sat"),
    DatrField("canonicalize", "Canonicalize"),
)
DATR_BY_ATTR: dict[str, DatrField] = {m.attr: m for m in DATR_FIELDS}
DATR_BY_NAME: dict[str, DatrField] = {m.name: m for m in DATR_FIELDS}


@dataclass(frozen=True, slots=True)
class Datr(Command):
    """``B.DATR``: Layout, DataType, PadValueOrByteId, CMode, RMode, Sat, Canonicalize
    (attributes and field names: :data:`DATR_FIELDS`)."""

    layout: int = 0
    dtype: int = 0
    pad: int = 0
    cmode: int = 0
    rmode: int = 0
    sat: int = 0
    canonicalize: int = 0

    @property
    def is_header(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Dim(Command):
    """``B.DIM RegSrc, uimm17, ->LBn`` (value ``(GPR + uimm17)[15:0]``) or, when
    ``compressed``, the 16-bit ``C.B.DIMI imm8, ->LBn`` (``reg`` is 0)."""

    lb: int
    reg: int
    imm: int
    compressed: bool = False

    @property
    def is_header(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Ior(Command):
    """``B.IOR``: RegSrc0..2 and RegDst, absolute GPR selectors."""

    src0: int = 0
    src1: int = 0
    src2: int = 0
    dst: int = 0

    @property
    def is_header(self) -> bool:
        return True

    @property
    def sources(self) -> tuple[int, int, int]:
        return (self.src0, self.src1, self.src2)


@dataclass(frozen=True, slots=True)
class Iot(Command):
    """``B.IOT``: up to two relative Local sources, a mask, ``last`` and an optional
    destination hand with its per-PE SizeCode (``size`` 0 means no destination)."""

    srcs: tuple[TileRef, ...]
    mask: int
    last: bool
    dst: Hand | None = None
    size: int = 0

    @property
    def is_header(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Ios(Command):
    """``B.IOS``: one Shared tile S0..S255, as a source (size 0) or destination."""

    tid: int
    mask: int
    size: int = 0

    @property
    def is_header(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Generic(Command):
    """Any other catalog form (B.CATR, B.HINT, B.FPATR), kept as named field values."""

    form_id: str
    fields: tuple[tuple[str, int], ...]

    @property
    def is_header(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Scalar(Command):
    """A scalar instruction (``addi``, ``lui``, ``c.movi``, ...) as named field values."""

    mnemonic: str
    fields: tuple[tuple[str, int], ...]

    def get(self, name: str) -> int:
        for k, v in self.fields:
            if k == name:
                return v
        raise KeyError(name)


@dataclass(frozen=True)
class Block:
    """A view of one block: its opening command (or None for stray commands), its
    header/body commands, and its terminator (None when the next BSTART or the end of the
    program closed it)."""

    start: TileStart | ScalarStart | None
    commands: tuple[Command, ...]
    stop: Stop | None
    #: index of the first command of the block in the program
    index: int


#: a block as :meth:`Program.spans` yields it: ``(start, commands, stop, index)``
Span = tuple["TileStart | ScalarStart | None", tuple[Command, ...], "Stop | None", int]

#: what a command does to block segmentation, by its class (see :func:`_kind`)
_OPEN, _CLOSE, _BODY = "open", "close", "body"
_KINDS: dict[type, str] = {}


def _kind(cls: type) -> str:
    """Whether commands of ``cls`` open a block (a tile or scalar BSTART), close one
    (BSTOP) or belong to its body; kept per class (segmentation reads one per command)."""
    kind = (
        _OPEN
        if issubclass(cls, (TileStart, ScalarStart))
        else _CLOSE
        if issubclass(cls, Stop)
        else _BODY
    )
    _KINDS[cls] = kind
    if kind is _BODY:
        _BODY_TYPES.add(cls)
    return kind


#: the command classes :func:`_kind` found to be body commands
_BODY_TYPES: set[type] = set()


def _block(
    start: TileStart | ScalarStart | None, commands: tuple[Command, ...], stop: Stop | None,
    index: int,
) -> Block:  # fmt: skip
    """``Block(start, commands, stop, index)`` without the frozen dataclass's
    ``__init__``, which sets each field through ``object.__setattr__`` (segmentation
    makes one per block)."""
    b = object.__new__(Block)
    d = b.__dict__  # (its fields stored one by one: no keyword dictionary to merge)
    d["start"] = start
    d["commands"] = commands
    d["stop"] = stop
    d["index"] = index
    return b


@dataclass(frozen=True)
class Program:
    """An ordered sequence of commands. ``lines`` (source line per command, 0 when
    unknown) and ``offsets`` (byte offset per command in a binary) are not part of
    equality."""

    commands: tuple[Command, ...]
    lines: tuple[int, ...] = field(default=(), compare=False, repr=False)
    offsets: tuple[int, ...] = field(default=(), compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.commands)

    def __iter__(self) -> Iterator[Command]:
        return iter(self.commands)

    def __getstate__(self) -> dict[str, object]:
        """The fields only: what a run caches on the Program (its executable form, with
        closures and handles of compiled kernels) is rebuilt where the program runs,
        e.g. in another process of a grid launch."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def blocks(self) -> list[Block]:
        """Segment into blocks: a BSTART opens one, BSTOP/C.BSTOP or the next BSTART
        closes it; commands outside any block form blocks with ``start=None``."""
        return list(self.iter_blocks())

    def iter_blocks(self) -> Iterator[Block]:
        """:meth:`blocks` one by one."""
        return starmap(_block, self.spans())

    def spans(self) -> Iterator[Span]:
        """:meth:`blocks` one by one as plain tuples ``(start, commands, stop, index)``
        (for a reader of every block that keeps none: a tuple costs a fraction of a
        :class:`Block`)."""
        cmds = self.commands
        # the commands that may open or close a block first (a set test per command: the
        # classes known to be body commands), then each block's body as one slice of the
        # commands between them
        body_types = _BODY_TYPES
        marks = [i for i, cls in enumerate(map(type, cmds)) if cls not in body_types]
        start: TileStart | ScalarStart | None = None
        first = body = 0  # the block's first command and its body's (a stray run: equal)
        for i in marks:
            cls = type(cmds[i])
            k = _KINDS.get(cls) or _kind(cls)
            if k is _BODY:  # a body command of a class met for the first time
                continue
            if k is _OPEN:
                if start is not None or i > body:
                    yield start, cmds[body:i], None, first
                start, first, body = cmds[i], i, i + 1  # type: ignore[assignment]
            else:
                yield start, cmds[body:i], cmds[i], first  # type: ignore[misc]
                start, first, body = None, i + 1, i + 1
        if start is not None or len(cmds) > body:
            yield start, cmds[body:], None, first

    @classmethod
    def from_blocks(cls, blocks: Sequence[Sequence[Command]]) -> Program:
        return cls(tuple(c for b in blocks for c in b))

    def addresses(self) -> tuple[tuple[int, ...], int]:
        """The byte address of every command (the program starts at address 0) and the
        program's size: the decoded offsets, else the encoded lengths."""
        if len(self.offsets) == len(self.commands) and self.commands:
            from .encoding import encode_command

            last = self.commands[-1]
            return self.offsets, self.offsets[-1] + _length(last, encode_command)
        from .encoding import encode_command

        out, at = [], 0
        for c in self.commands:
            out.append(at)
            at += _length(c, encode_command)
        return tuple(out), at

    def graph(self) -> BlockGraph:
        """The blocks and their successors (docs/machine.md, "Control flow")."""
        return BlockGraph.of(self)

    def bundle_count(self) -> int:
        """Tile bundles (blocks opened by a tile BSTART); scalar blocks are not bundles
        (docs/formats.md, "Counting")."""
        return sum(1 for c in self.commands if isinstance(c, TileStart))

    def scalar_block_count(self) -> int:
        """Scalar blocks (``BSTART.STD``)."""
        return sum(1 for c in self.commands if isinstance(c, ScalarStart))

    def count_text(self) -> str:
        """``7 bundles, 1 scalar block``: the counts every command prints."""
        return count_text(self.bundle_count(), self.scalar_block_count())

    def asm(self) -> str:
        """Canonical text, one command per line."""
        from .asm import format_program

        return format_program(self)

    def encode(self) -> bytes:
        """Little-endian instruction parcels."""
        from .encoding import encode

        return encode(self)

    @classmethod
    def parse(cls, text: str, file: str = "<asm>") -> Program:
        """Assemble text (canonical or ``;``-joined); AsmError names FILE:LINE."""
        from .asm import parse

        return parse(text, file)

    @classmethod
    def decode(cls, data: bytes) -> Program:
        """Decode parcels; DecodeError names the byte offset."""
        from .encoding import decode

        return decode(data)


def _length(c: Command, encode: Callable[[Command], tuple[int, int]]) -> int:
    try:
        return encode(c)[1] // 8
    except Exception:  # a hand-built command no form encodes: one 32-bit parcel
        return 4


#: the continuation of the last block: the run ends
END = -1


@dataclass(frozen=True)
class BlockGraph:
    """A program as a graph of blocks (D12).

    ``blocks`` in program order; ``starts[i]`` the byte address of block ``i``;
    ``fall[i]`` the block its sequential continuation enters (the next block, or
    :data:`END`); ``target[i]`` for a DIRECT or COND block the block its
    ``BSTART ... <label>`` names (``P + (simm17 << 1)``, the BSTART's own address P), or
    None when that address starts no block (taking it faults), :data:`END` when it is the
    end of the program. RET targets are read from ``ra`` at run time (:meth:`at`).
    """

    blocks: tuple[Block, ...]
    starts: tuple[int, ...]
    size: int
    fall: tuple[int, ...]
    target: tuple[int | None, ...]

    @classmethod
    def of(cls, program: Program, blocks: Sequence[Block] | None = None) -> BlockGraph:
        """The graph of ``program`` (``blocks``: its :meth:`Program.blocks`, if known)."""
        blocks = tuple(program.blocks() if blocks is None else blocks)
        addrs, size = program.addresses()
        starts = tuple(addrs[b.index] if b.index < len(addrs) else size for b in blocks)
        by_addr = {a: i for i, a in enumerate(starts)}
        fall = tuple(i + 1 if i + 1 < len(blocks) else END for i in range(len(blocks)))
        target: list[int | None] = []
        for b, at in zip(blocks, starts, strict=True):
            s = b.start
            if isinstance(s, ScalarStart) and s.kind in ("DIRECT", "COND"):
                dest = at + 2 * s.offset
                target.append(END if dest == size else by_addr.get(dest))
            else:
                target.append(None)
        return cls(blocks, starts, size, fall, tuple(target))

    def at(self, address: int) -> int | None:
        """The block starting at ``address`` (END for the end of the program), or None."""
        if address == self.size:
            return END
        try:
            return self.starts.index(address)
        except ValueError:
            return None

    def successors(self, i: int) -> tuple[int, ...]:
        """The statically known successors of block ``i`` (RET's are not)."""
        s = self.blocks[i].start
        kind = s.kind if isinstance(s, ScalarStart) else "FALL"
        out: list[int] = []
        if kind in ("FALL", "COND"):
            out.append(self.fall[i])
        t = self.target[i]
        if kind in ("DIRECT", "COND") and t is not None:
            out.append(t)
        return tuple(dict.fromkeys(out))


def count_text(bundles: int, scalar_blocks: int) -> str:
    """``7 bundles, 1 scalar block``: how every ptoc command counts a program's blocks
    (a bundle is a tile bundle; scalar blocks are counted apart)."""
    b = f"{bundles} bundle{'' if bundles == 1 else 's'}"
    return f"{b}, {scalar_blocks} scalar block{'' if scalar_blocks == 1 else 's'}"
