"""Row types of the operation table (:mod:`.optable`).

The catalog (:mod:`.catalog`) says what the specification says about an operation: its
selector, operand roles as prose, B.IOR slots, legal DataTypes. A :class:`OpRow` adds
what ptoc itself knows about it -- typed operand roles, the executor preparer that runs
it, the ``tile`` dialect family that models it, the legalize rule that lowers it, its
``ptoc.lang`` name and its numpy semantics -- and keeps the catalog record by reference,
so nothing the catalog states is copied.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .schema import OpDef


class Access(enum.StrEnum):
    """How an operation uses a tile operand (Cranelift-style ``r``/``w``/``rw`` roles).

    PTO destinations are always newly allocated (renamed) tiles, so READ_WRITE marks a
    *source* whose tile the destination replaces: TINSERT's old destination, a CUBE
    accumulator. An allocator may give the destination that source's storage.
    """

    READ = "r"
    WRITE = "w"
    READ_WRITE = "rw"


class OperandKind(enum.StrEnum):
    """What a tile operand holds, where consumers must tell it apart from plain values."""

    #: numeric elements of the operation's DataType (or the B.DATR one)
    VALUE = "value"
    #: a packed one-bit-per-element predicate tile (TCMP result, TSEL/TSELS selector)
    PREDICATE = "predicate"
    #: row or element indices (TGATHER/TSCATTER row index, ARG reductions, TSORT's U32
    #: original-index result, MGATHER/MSCATTER byte displacements)
    INDEX = "index"
    #: an unpacked zero-or-one element mask (MGATHER_MASK/MSCATTER_MASK)
    MASK = "mask"


class IorKind(enum.StrEnum):
    """What a B.IOR source slot carries (the catalog's ``IorSlot.meaning``, classified)."""

    #: an element-typed scalar operand (low element-width raw bits)
    SCALAR = "scalar"
    #: an exact zero-or-one selector (sort direction, TCI direction, TTRI orientation)
    FLAG = "flag"
    #: a per-PE GM base address
    ADDRESS = "address"
    #: a per-PE row stride (bytes for TLOAD/TSTORE, elements for TPREFETCH)
    STRIDE = "stride"
    #: TQUANT/TDEQUANT positive finite FP32 multiplier
    MULTIPLIER = "multiplier"
    #: TQUANT/TDEQUANT integer zero point
    ZERO_POINT = "zero_point"
    #: TCI typed sequence start
    START = "start"
    #: TTRI signed diagonal displacement
    DIAGONAL = "diagonal"
    #: TFILLPAD padding scalar
    PAD = "pad"
    #: TEXTRACT/TINSERT row offset
    ROW = "row"
    #: TEXTRACT/TINSERT column offset
    COL = "col"
    #: TIMG2COL low-sixteen-bit posM
    POS_M = "pos_m"
    #: TIMG2COL low-sixteen-bit posK
    POS_K = "pos_k"
    #: GMOV absolute peer tile id
    PEER = "peer"


class Axis(enum.StrEnum):
    """The axis of a reduction or broadcast expansion."""

    ROW = "row"
    COL = "col"


class Executor(enum.StrEnum):
    """Which executor preparer (``runtime/ops``) runs the operation."""

    BINARY = "binary"
    UNARY = "unary"
    FMA = "fma"
    CMP = "cmp"
    SEL = "sel"
    CVT = "cvt"
    TILE_SCALAR = "tile_scalar"
    CMPS = "cmps"
    SELS = "sels"
    EXPANDS = "expands"
    REDUCTION = "reduction"
    EXPANSION = "expansion"
    CONCAT = "concat"
    EXTRACT = "extract"
    INSERT = "insert"
    IMG2COL = "img2col"
    FILLPAD = "fillpad"
    GENERATION = "generation"
    HISTOGRAM = "histogram"
    QUANTIZE = "quantize"
    SORT = "sort"
    MRGSORT = "mrgsort"
    TRANS = "trans"
    GATHER = "gather"
    SCATTER = "scatter"
    PART = "part"
    LOAD = "load"
    STORE = "store"
    MOV = "mov"
    MATMUL = "matmul"


class TileFamily(enum.StrEnum):
    """Which ``tile`` dialect op family models the operation.

    The value is the name of the family's base class in ``dialects/tile_*.py`` (the class
    that derives from ``TileOp`` directly), so the dialect can be checked against it.
    """

    BINARY = "BinaryOp"
    UNARY = "UnaryOp"
    SCALAR = "ScalarOp"
    FMA = "FmaOp"
    CVT = "CvtOp"
    CMP = "CmpOp"
    CMPS = "CmpsOp"
    SEL = "SelOp"
    SELS = "SelsOp"
    FULL = "FullOp"
    REDUCE = "ReduceOp"
    EXPAND_BINARY = "ExpandBinaryOp"
    EXPAND_COPY = "ExpandCopyOp"
    EXPDIF = "ExpdifOp"
    INSERT = "InsertOp"
    FILLPAD = "FillPadOp"
    HISTOGRAM = "HistogramOp"
    TRANS = "TransOp"
    CONCAT = "ConcatOp"
    EXTRACT = "ExtractOp"
    SORT = "SortOp"
    MRGSORT = "MrgSortOp"
    GATHER = "GatherOp"
    SCATTER = "ScatterOp"
    PART = "PartOp"
    CI = "CiOp"
    TRI = "TriOp"
    QUANT = "QuantBase"
    ACCESS = "AccessOp"


class LegalizeRule(enum.StrEnum):
    """Which legalize rule lowers the operation (the value names the rule function)."""

    ELEMENTWISE = "elementwise"
    TILE_SCALAR = "tile_scalar"
    COMPARE = "compare"
    CVT = "cvt"
    FULL = "full"
    REDUCE = "reduce"
    EXPAND = "expand"
    EXPAND_COPY = "expand_copy"
    EXPDIF = "expdif"
    LAYOUT = "layout"
    CONCAT = "concat"
    EXTRACT = "extract"
    INSERT = "insert"
    FILLPAD = "fillpad"
    HISTOGRAM = "histogram"
    SORT = "sort"
    MRGSORT = "mrgsort"
    CI = "ci"
    TRI = "tri"
    QUANT = "quant"
    LOAD = "load"
    STORE = "store"


@dataclass(frozen=True)
class TileOperand:
    """One tile source or destination: a short role name, its access and its content."""

    name: str
    access: Access
    kind: OperandKind = OperandKind.VALUE


@dataclass(frozen=True)
class IorOperand:
    """One consumed B.IOR source slot (``RegSrc0``...), its kind and its omission default
    (the raw 64-bit GPR value; None when derived from the descriptor)."""

    slot: str
    kind: IorKind
    default: int | None

    @property
    def index(self) -> int:
        """The slot number: 0 for ``RegSrc0``."""
        return int(self.slot.removeprefix("RegSrc"))


@dataclass(frozen=True)
class BindingShape:
    """The operand binding an operation accepts.

    ``iots`` is the exact effective B.IOT stream, one ``(sources, has destination)`` pair
    per B.IOT; None means any grouping that binds ``sources`` sources and
    ``destinations`` destinations (TSORT's two destinations need two B.IOTs; the executor
    accepts any grouping for TSORT, TMRGSORT and TPART*). ``ior_slots`` 0 means B.IOR is
    illegal; ``shared`` means B.IOS is legal.
    """

    sources: int
    destinations: int
    iots: tuple[tuple[int, bool], ...] | None
    ior_slots: int
    shared: bool


@dataclass(frozen=True)
class OpRow:
    """Everything ptoc knows about one catalog operation, each fact once.

    ``semantics`` is the numpy function of ``backend/isa/semantics`` (None for pure data
    movement and operations not modelled); ``executor``/``tile``/``legalize`` are None
    where no executor preparer, ``tile`` op or legalize rule exists. ``lang`` is the
    ``ptoc.lang`` function that emits exactly this operation (None when it is reached only
    through operators, broadcasting or compound lowerings). ``arith`` is the arithmetic
    kind an operation shares with its relatives (``"add"`` for TADD, TADDS, TROWEXPANDADD
    and TPARTADD; ``"sum"``/``"argmax"`` for reductions; None for the plain expansions);
    ``axis`` the axis of a reduction or expansion.
    """

    op: OpDef
    semantics: Callable[..., Any] | None
    sources: tuple[TileOperand, ...]
    destinations: tuple[TileOperand, ...]
    ior: tuple[IorOperand, ...]
    binding: BindingShape
    executor: Executor | None
    tile: TileFamily | None
    legalize: LegalizeRule | None
    lang: str | None
    arith: str | None = None
    axis: Axis | None = None

    @property
    def mnemonic(self) -> str:
        return self.op.mnemonic

    def source_index(self, name: str) -> int:
        """The binding position of the source called ``name``; KeyError if none."""
        for i, s in enumerate(self.sources):
            if s.name == name:
                return i
        raise KeyError(f"{self.mnemonic} has no source {name!r}")

    def ior_slot(self, kind: IorKind) -> IorOperand:
        """The B.IOR slot of ``kind``; KeyError if the operation has none."""
        for s in self.ior:
            if s.kind is kind:
                return s
        raise KeyError(f"{self.mnemonic} has no {kind.value} B.IOR slot")
