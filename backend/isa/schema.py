"""Row types of the instruction catalog (``catalog.py`` is generated from the spec).

A :class:`CommandForm` is one machine-word form: fixed bits (mask/match) and fields whose
pieces give their bit positions. The same description drives encoding and decoding.
An :class:`OpDef` is one tile operation: how it is selected, which operands it binds,
which header commands it accepts and with which defaults, and which DataTypes it accepts.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from .datatypes import DataType


class Engine(enum.StrEnum):
    """The execution engine that names an operation's canonical BSTART spelling."""

    VEC = "VEC"
    SFU = "SFU"
    TLSU = "TLSU"
    CUBE = "CUBE"


class Family(enum.StrEnum):
    """The binary carrier family of a tile operation."""

    TEPL = "TEPL"
    TLSU = "TLSU"
    CUBE = "CUBE"


class Fault(enum.StrEnum):
    """Architectural fault classes (``asl/arch/data-types/fault.asl``)."""

    ILLEGAL_INSTRUCTION = "Fault_IllegalInstruction"
    TILE_LEGALITY = "Fault_TileLegality"
    TILE_ALLOCATION = "Fault_TileAllocation"
    BUNDLE_CONTROL = "Fault_BundleControl"
    BUNDLE_POST_COMMIT = "Fault_BundlePostCommit"
    DATA_ALIGNMENT = "Fault_DataAlignment"
    DATA_PAGE = "Fault_DataPage"
    INSTRUCTION_PC = "Fault_InstructionPC"


@dataclass(frozen=True)
class FieldPiece:
    """``width`` bits of a field value starting at ``value_lsb`` live at ``instruction_lsb``."""

    instruction_lsb: int
    value_lsb: int
    width: int


@dataclass(frozen=True)
class FieldDef:
    """One named field of a command form."""

    name: str
    width: int
    pieces: tuple[FieldPiece, ...]
    signed: bool = False
    #: the only legal values, when the catalog restricts them
    allowed: frozenset[int] | None = None
    #: a single excluded value (``not-equal`` constraint)
    excluded: int | None = None

    @property
    def omitted(self) -> int:
        """The value an omitted operand has: the only legal one when the catalog fixes
        the field (B.FPATR's Func and opcode fields), else 0."""
        a = self.allowed
        return next(iter(a)) if a is not None and len(a) == 1 else 0

    def legal(self, value: int) -> bool:
        if self.allowed is not None and value not in self.allowed:
            return False
        return value != self.excluded

    def extract(self, word: int) -> int:
        value = 0
        for p in self.pieces:
            value |= ((word >> p.instruction_lsb) & ((1 << p.width) - 1)) << p.value_lsb
        if self.signed and value >> (self.width - 1):
            value -= 1 << self.width
        return value

    def insert(self, value: int) -> int:
        raw = value & ((1 << self.width) - 1)
        word = 0
        for p in self.pieces:
            word |= ((raw >> p.value_lsb) & ((1 << p.width) - 1)) << p.instruction_lsb
        return word

    def fits(self, value: int) -> bool:
        if self.signed:
            return -(1 << (self.width - 1)) <= value < (1 << (self.width - 1))
        return 0 <= value < (1 << self.width)


@dataclass(frozen=True)
class CommandForm:
    """One encoding form of a header command, BSTART word or scalar instruction."""

    form_id: str
    mnemonic: str
    asm: str
    length_bits: int
    #: fixed-bit mask and match of the whole instruction (little-endian parcels joined)
    mask: int
    match: int
    fields: tuple[FieldDef, ...]
    summary: str = ""

    def field(self, name: str) -> FieldDef:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.mnemonic} has no field {name!r}")

    def matches(self, word: int) -> bool:
        return word & self.mask == self.match

    def encode(self, values: Mapping[str, int]) -> int:
        word = self.match
        for f in self.fields:
            word |= f.insert(values.get(f.name, 0))
        return word

    def decode(self, word: int) -> dict[str, int]:
        return {f.name: f.extract(word) for f in self.fields}


@dataclass(frozen=True)
class AguDef:
    """The catalog's AGU record of a scalar load or store (``scalar-forms.json``)."""

    #: ``Load``, ``Store`` (pairs and prefetches are not listed)
    action: str
    #: ``Immediate`` (base + simm), ``Register`` (base + modified SrcR), ``PCRelative``
    address_kind: str
    size_bytes: int
    #: a load sign-extends its value (else zero-extends)
    signed_load: bool
    #: the immediate (or a register offset without ``shamt``) is shifted left by this
    offset_scale: int
    #: ``None``, ``PreIndex``, ``PostIndex``
    update_mode: str


@dataclass(frozen=True)
class DimDef:
    """What B.DIM LBn means for an operation."""

    lb: int
    meaning: str
    required: bool
    #: the omission default, as the contract states it (``"1"``, ``"ValidCol"``, ``"32"``)
    default: str | None
    #: True when an explicitly encoded zero is legal (and then means ``zero_means``)
    zero_legal: bool = False
    zero_means: str | None = None


@dataclass(frozen=True)
class IorSlot:
    """One B.IOR source slot an operation consumes."""

    field: str  # RegSrc0, RegSrc1, RegSrc2
    meaning: str
    #: value used when B.IOR is omitted (raw 64-bit GPR value); None when the default is
    #: derived from the descriptor (TLOAD/TSTORE dense row stride)
    default: int | None


@dataclass(frozen=True)
class OpDef:
    """One tile operation of the catalog, with the seed overrides applied."""

    mnemonic: str
    family: Family
    engine: Engine
    #: TEPL Mode (None for TLSU and CUBE)
    mode: int | None
    function: int
    #: 7-bit TEPL selector ``(Mode << 5) | Function``; TLSU/CUBE: the function
    selector: int
    #: canonical BSTART spelling, e.g. ``BSTART.VEC`` or ``BSTART.TLOAD``
    bstart: str
    classification: tuple[str, ...]
    summary: str
    #: tile sources in binding order (role names)
    sources: tuple[str, ...]
    #: tile destinations in binding order (role names)
    destinations: tuple[str, ...]
    #: every operand of the contract, ``(field, role)``
    operands: tuple[tuple[str, str], ...]
    dims: tuple[DimDef, ...]
    #: B.IOR slots consumed; empty and ``ior_legal`` False means B.IOR is illegal
    ior: tuple[IorSlot, ...]
    ior_legal: bool
    ios_legal: bool
    #: B.DATR fields that may be nonzero
    datr_fields: frozenset[str]
    pad_union: str
    datr_required: bool
    #: legal BSTART DataTypes
    dtypes: frozenset[DataType]
    #: where ``dtypes`` comes from: a seed sentence (D4), an ASL predicate (D9) or the
    #: contract prose
    dtype_source: str = ""
    #: further type rules keyed by what they constrain (``"dst"``, ``"index"``, ...)
    type_rules: Mapping[str, frozenset[DataType]] = field(default_factory=dict)
    #: legal (first, second) pairs where the contract lists pairs
    type_pairs: frozenset[tuple[DataType, DataType]] = frozenset()
    block: tuple[str, ...] = ()
    defaults: tuple[str, ...] = ()
    legality: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    field_zero_meanings: Mapping[str, str] = field(default_factory=dict)
    examples: tuple[str, ...] = ()
    #: where a seed sentence replaced the 0.58.3 catalog (DECISIONS D4)
    seed_notes: tuple[str, ...] = ()

    @property
    def selector_text(self) -> str:
        return f"0x{self.selector:03X}"

    def sources_for(self, dst: DataType) -> frozenset[DataType] | None:
        """The source DataTypes legal with destination ``dst`` where a type rule
        ``<dst>_sources`` restricts them (TCVT: ``e8m0_sources``); None: no restriction."""
        return self.type_rules.get(f"{dst.name.lower()}_sources")

    def dim(self, lb: int) -> DimDef | None:
        for d in self.dims:
            if d.lb == lb:
                return d
        return None
