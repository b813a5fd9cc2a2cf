"""The base of every catalog op of the ``pto`` dialect and its catalog-driven verifier.

A ``pto`` op is one bundle with every descriptor field explicit:

    %d = pto.tadd FP32 %a, %b dims [64, 8, 64] mask 15
           : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, ...) -> !pto.tile<...>

``srcs`` are the Local tile sources in binding order, ``gpr (...)`` the B.IOR source
slots (RegSrc0, RegSrc1, RegSrc2), results the destinations in binding order (their
SizeCode is in the result type). ``dims`` are LB0..LB2 (-1 = the B.DIM is omitted),
``datr`` an explicit B.DATR, ``fpatr`` the nine B.FPATR fields of a CUBE matrix bundle
(in the catalog's order: PreQuantMode, ReluMode, GroupNCode, RowMaxEn, GroupMaxEn,
RowMaxInit, MaxAbsEn, TransA, TransB). After ``allocate`` the op also carries where its operands
live: ``refs`` (``T#2`` ...), ``hands`` (destination hands), ``gprs`` (B.IOR registers)
and, for inserted copies and spills, a ``role``. The verifier is the catalog row's
legality: operand roles, DataTypes, dimensions, B.DATR applicability and B.IOR slots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any, ClassVar, Self

from xdsl.dialects.builtin import (
    I64,
    UNKNOWN_LOC,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    LocationAttr,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue, SSAValues, Use
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import (
    DTYPE_NONE,
    TABLE,
    DataType,
    Executor,
    OpDef,
    OperandKind,
    legality,
    op,
)
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.fields import PEMODE_TO_MASK
from ptoc.backend.isa.semantics.matmul import MATRIX_INPUT_TYPES, MX_INPUT_TYPES

from .dtypes import DTypeAttr, data_type, is_pred
from .pto_types import DATR_CATALOG_NAMES, GPR, DatrAttr, PtoTileType

#: dims value meaning "this B.DIM is omitted"
OMITTED = -1


class PtoOp(IRDLOperation):
    """One bundle of catalog operation ``MNEMONIC`` (see the module docstring)."""

    MNEMONIC: ClassVar[str] = ""

    dtype = prop_def(DTypeAttr)
    srcs = var_operand_def(PtoTileType)
    scalars = var_operand_def(GPR)
    #: the run-time values of the LBs named in ``dyn_lbs`` (B.DIM's register form)
    dim_values = var_operand_def(i64)
    dims = prop_def(DenseArrayBase.constr(i64))
    #: LBs whose value is a run-time integer (``dim_values``, in order); ``dims`` keeps
    #: their largest value, which every static rule checks
    dyn_lbs = opt_prop_def(DenseArrayBase.constr(i64))
    #: the LBs of ``dyn_lbs`` whose count is the results' valid rows (LB1) or columns
    #: (LB0): a copy or reload of a result runs with them
    dst_lbs = opt_prop_def(DenseArrayBase.constr(i64))
    datr = opt_prop_def(DatrAttr)
    fpatr = opt_prop_def(DenseArrayBase.constr(i64))
    mask = prop_def(IntegerAttr[I64])
    refs = opt_prop_def(ArrayAttr[StringAttr])
    hands = opt_prop_def(ArrayAttr[StringAttr])
    gprs = opt_prop_def(ArrayAttr[StringAttr])
    role = opt_prop_def(StringAttr)
    dsts = var_result_def(PtoTileType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$dtype ($srcs^)? (`gpr` `(` $scalars^ `)`)? `dims` $dims "
        "(`lbregs` $dyn_lbs^ `(` $dim_values `)`)? (`counts` $dst_lbs^)? (`datr` $datr^)? "
        "(`fpatr` $fpatr^)? "
        "`mask` $mask "
        "(`refs` $refs^)? (`hands` $hands^)? (`gprs` $gprs^)? (`role` $role^)? attr-dict `:` "
        "functional-type($srcs, $dsts)"
    )

    @classmethod
    def make(
        cls,
        srcs: Sequence[SSAValue],
        scalars: Sequence[SSAValue],
        results: Sequence[Attribute],
        properties: dict[str, Attribute],
        dim_values: Sequence[SSAValue] = (),
        location: LocationAttr | None = None,
    ) -> Self:
        """The op ``build`` would make from these operands, result types and properties
        (the same properties in the same order, the segment sizes last), without xDSL's
        generic argument checks: legalize and allocate build one op per bundle, and the
        generic builder was a fifth of compile time. Like ``build``, it does not
        verify. ``properties`` gets the segment sizes added and becomes the op's own
        mapping (not a copy: callers pass a dict built for the op, and legalize and
        allocate build one per bundle)."""
        properties[_SEGMENTS] = _segment_sizes(len(srcs), len(scalars), len(dim_values))
        op = cls.__new__(cls)
        # (most bundles have tile sources only: no tuple of the three)
        operands = (*srcs, *scalars, *dim_values) if scalars or dim_values else srcs
        lean_init(op, operands, results, properties, location, shared=True)
        op._segments = None  # type: ignore[attr-defined]  # (every op made gets the key)
        return op

    def __post_init__(self) -> None:
        """Nothing: IRDL's fills in the default of every absent property and attribute,
        and no pto op property has one (``tests/dialects``); legalize and allocate build
        one op per bundle."""

    @property
    def opdef(self) -> OpDef:
        return op(self.MNEMONIC)

    @property
    def lbs(self) -> tuple[int | None, int | None, int | None]:
        """LB0..LB2 as written (None = omitted)."""
        a, b, c = (int(v) for v in self.dims.get_values())
        return tuple(None if v == OMITTED else v for v in (a, b, c))  # type: ignore[return-value]

    @property
    def dynamic_lbs(self) -> dict[int, SSAValue]:
        """LB index -> the run-time integer giving its value (B.DIM's register form)."""
        if self.dyn_lbs is None:
            return {}
        lbs = [int(v) for v in self.dyn_lbs.get_values()]
        return dict(zip(lbs, self.dim_values, strict=True))

    @property
    def result_counts(self) -> dict[int, SSAValue]:
        """LB index -> the run-time count of the results' valid rows (1) or columns (0)."""
        if self.dst_lbs is None:
            return {}
        dyn = self.dynamic_lbs
        return {int(lb): dyn[int(lb)] for lb in self.dst_lbs.get_values()}

    @property
    def bound_srcs(self) -> tuple:
        """The sources the bundle binds through B.IOT (a reload binds none)."""
        return () if self.role_name == "reload" else tuple(self.srcs)

    @property
    def data_type(self) -> DataType:
        return data_type(self.dtype)

    @property
    def role_name(self) -> str | None:
        return None if self.role is None else self.role.data

    # ------------------------------------------------------------------ verifier

    def verify_(self) -> None:
        o = self.opdef
        self._verify_roles(o)
        self._verify_types(o)
        self._verify_dims(o)
        self._verify_datr(o)
        self._verify_ior(o)
        if int(self.mask.value.data) not in PEMODE_TO_MASK[1:]:
            raise VerifyException(f"{self.name} mask {self.mask.value.data:04b} has no PEMode")

    def _verify_roles(self, o: OpDef) -> None:
        if self.role_name == "reload":
            # a reload names the value it restores as its one operand; it binds nothing
            if len(self.srcs) != 1 or TABLE[o.mnemonic].executor is not Executor.LOAD:
                raise VerifyException("a reload is a TLOAD naming the one value it restores")
            return
        _check(legality.binding_counts(o, len(self.srcs), len(self.dsts)))

    def _verify_types(self, o: OpDef) -> None:
        if is_pred(self.dtype):
            if TABLE[o.mnemonic].executor is Executor.MOV:
                return  # a predicate copy: BSTART.TMOV DTYPE_NONE
            _check(legality.dtype(o, None))
        if TABLE[o.mnemonic].executor is Executor.MATMUL:
            # the CUBE rows carry no BSTART type set: AType is a matrix input type
            # (``TileOrdinaryMatrixInputTypeSupported`` / ``TileMXInputTypeSupported``)
            mx = isa_cube.MatrixFunction(o.function).mx
            allowed = MX_INPUT_TYPES if mx else MATRIX_INPUT_TYPES
            _check(legality.dtype(o, self.data_type, frozenset(allowed)))
            if self.fpatr is None or len(self.fpatr.get_values()) != 9:
                raise VerifyException(f"{self.name} needs its nine B.FPATR fields")
            return
        if self.fpatr is not None:
            raise VerifyException(f"{self.name} takes no B.FPATR (CUBE matrix bundles only)")
        _check(legality.dtype(o, self.data_type))
        if o.type_rules.get("dst") and self.dsts:
            dst = self.dsts[0].type
            assert isinstance(dst, PtoTileType)
            _check(legality.destination_dtype(o, dst.data_type))
        if self.dsts:  # type pairs: the BSTART (source) type against the destination's
            dst = self.dsts[0].type
            assert isinstance(dst, PtoTileType)
            if not is_pred(dst.dtype):
                _check(legality.source_dtype_for(o, self.data_type, dst.data_type))
        index_rule = o.type_rules.get("index")
        # the tile source the table marks as an index (TGATHER/TSCATTER rows), whose
        # DataType the catalog's index rule constrains
        at = [i for i, s in enumerate(TABLE[o.mnemonic].sources) if s.kind is OperandKind.INDEX]
        if index_rule and at and len(self.srcs) > at[0]:
            idx = self.srcs[at[0]].type
            assert isinstance(idx, PtoTileType)
            if idx.data_type not in index_rule:
                raise VerifyException(
                    f"{self.name} index DataType {idx.dtype.data.value} is illegal"
                )
            if o.type_pairs and (self.data_type, idx.data_type) not in o.type_pairs:
                raise VerifyException(
                    f"{self.name} index DataType {idx.dtype.data.value} does not pair with "
                    f"{self.dtype.data.value}"
                )

    def _verify_dims(self, o: OpDef) -> None:
        values = self.dims.get_values()
        if len(values) != 3:
            raise VerifyException(f"{self.name} dims are [LB0, LB1, LB2]")
        dyn = [] if self.dyn_lbs is None else [int(v) for v in self.dyn_lbs.get_values()]
        if len(dyn) != len(self.dim_values) or len(set(dyn)) != len(dyn):
            raise VerifyException(f"{self.name} names one run-time value per register LB")
        outs = [] if self.dst_lbs is None else [int(v) for v in self.dst_lbs.get_values()]
        if any(lb not in dyn or lb not in (0, 1) for lb in outs):
            raise VerifyException(f"{self.name} counts its results with register LB0/LB1 only")
        for lb in dyn:
            if lb not in (0, 1, 2) or self.lbs[lb] is None:
                raise VerifyException(
                    f"{self.name} LB{lb} from a register needs its largest value in dims"
                )
        for lb, v in enumerate(self.lbs):
            if v is not None and not 0 <= v <= 0xFFFF:
                raise VerifyException(f"{self.name} LB{lb} = {v} is not a 16-bit value")
        _check(legality.dims(o, self.lbs))

    def _verify_datr(self, o: OpDef) -> None:
        fields = None
        if self.datr is not None:
            values = self.datr.values()
            if values["layout"] in isa_cube.TRANSPORT_CODES:
                # a CUBE transport conversion (``BundleCubeTransportDataAttributesLegal``):
                # DataType NONE, only Layout and PadValue otherwise
                loads = TABLE[o.mnemonic].executor is Executor.LOAD
                codes = isa_cube.LOAD_CODES if loads else isa_cube.STORE_CODES
                if TABLE[o.mnemonic].executor not in (Executor.LOAD, Executor.STORE) or (
                    values["layout"] not in codes
                ):
                    raise VerifyException(
                        f"B.DATR Layout {values['layout']} is a CUBE "
                        f"{'load' if values['layout'] in isa_cube.LOAD_CODES else 'store'} "
                        f"conversion, not one of {o.mnemonic}"
                    )
                rest = {k: v for k, v in values.items() if k not in ("layout", "pad", "dtype")}
                if values["dtype"] != DTYPE_NONE or any(rest.values()):
                    raise VerifyException(
                        "a CUBE transport B.DATR has DataType NONE and no CMode, RMode, Sat "
                        "or Canonicalize (BundleCubeTransportDataAttributesLegal)"
                    )
                return
            fields = {DATR_CATALOG_NAMES[f]: v for f, v in values.items()}
        _check(legality.datr_fields(o, fields))

    def _verify_ior(self, o: OpDef) -> None:
        # each GPR operand selects its B.IOR slot (RegSrc0, RegSrc1, ...)
        _check(legality.ior_slots(o, bool(self.scalars), [1] * len(self.scalars)))
        if self.gprs is not None and len(self.gprs) != len(self.scalars):
            raise VerifyException(f"{self.name} names one GPR per scalar operand")
        if self.refs is not None and len(self.refs) != len(self.bound_srcs):
            raise VerifyException(f"{self.name} names one tile reference per source")
        if self.hands is not None and len(self.hands) != len(self.dsts):
            raise VerifyException(f"{self.name} names one hand per destination")


def _share_value_attributes() -> None:
    """Make the attributes xDSL sets on SSA values after construction (``first_use``, the
    name hint ``_name``) part of their classes' shared instance layout.

    CPython keeps an instance's attributes in a compact array laid out by keys its class
    shares, and stops adding keys to that layout once many instances exist. xDSL's values
    get ``first_use`` and ``_name`` only after construction, so when a kernel's first
    thousands of values were built before any got a name, every value named later got a
    dictionary of its own instead: about 230 bytes each, a tenth of a compiled kernel's
    memory. Setting both keys, in xDSL's order, on one value of each class at import time
    puts them in the shared layout before that happens (a no-op where the interpreter lays
    out instances otherwise)."""
    for value in (OpResult(i32, None, 0), BlockArgument(i32, None, 0)):  # type: ignore[arg-type]
        value.first_use = None
        value._name = None


_share_value_attributes()


#: the attributes of every op :func:`lean_init` builds: none, in one read-only mapping
#: (an empty dictionary per op was a tenth of a kernel's IR; no pass gives these ops
#: attributes, and writing one fails rather than reaching every op)
_NO_ATTRIBUTES: MappingProxyType[str, Attribute] = MappingProxyType({})


def lean_init(
    op: Operation,
    operands: Sequence[SSAValue] = (),
    result_types: Sequence[Attribute] = (),
    properties: Mapping[str, Attribute] | None = None,
    location: LocationAttr | None = None,
    shared: bool = False,
) -> None:
    """``Operation.__init__`` of an op without attributes, successors or regions, then
    :func:`unlinked`: the same instance state, set in the same order (CPython shares the
    instance dictionaries' keys across the ops of a class only then), without the generic
    setters' work for the parts such an op lacks, and without ``__post_init__`` (IRDL's
    filling of absent properties with defaults, which no op built here has:
    ``tests/dialects``). Legalize and allocate build an op or two per bundle. With
    ``shared``, the op holds ``properties`` itself rather than a copy (a read-only
    mapping shared by many ops of a class, or a dict built for this op alone)."""
    values = SSAValues(operands) if operands else NO_VALUES
    links = []
    for i, v in enumerate(values):
        # ``v.add_use(Use(op, i))``: the new use goes first in the value's use list
        first = v.first_use
        use = Use(op, i, None, first)
        if first is not None:
            first._prev_use = use
        v.first_use = use
        links.append(use)
    uses = tuple(links)
    op._operands = values
    op._operand_uses = uses
    n = len(result_types)
    if n == 1:  # most ops: one result, without a generator
        op.results = SSAValues((OpResult(result_types[0], op, 0),))
    else:
        op.results = (
            SSAValues([OpResult(t, op, i) for i, t in enumerate(result_types)])
            if n
            else NO_VALUES
        )
    op.properties = (
        {} if properties is None else properties if shared else dict(properties)  # type: ignore[assignment]
    )
    op.attributes = _NO_ATTRIBUTES  # type: ignore[assignment]
    op.location = UNKNOWN_LOC if location is None else location
    op._successors = ()
    op._successor_uses = ()
    op.regions = ()
    unlinked(op)


def unlinked(op: Operation) -> None:
    """Give a new op its (empty) block links as attributes of its own, the values of the
    class defaults: an op that gets them only when a block takes it, after many ops of
    its class were built (allocate builds the inserted bundles and register writes
    first, then lays the block out), gets a full instance dictionary there (CPython
    3.11), some 400 bytes more."""
    op.parent = None
    op._prev_op = None
    op._next_op = None


class _Segment:
    """``srcs`` (``idx`` 0), ``scalars`` (1) or ``dim_values`` (2) of a pto op: the same
    slices of the operands as xDSL's accessor, but cut once per operand tuple and kept
    on the op (``PtoOp._segments``, with the tuple they were cut from: xDSL replaces the
    tuple whenever an operand changes). xDSL's accessor unpacks the segment sizes
    attribute's bytes at every read, and the allocator, emitter and validator read every
    op's sources many times."""

    __slots__ = ("idx",)

    def __init__(self, idx: int) -> None:
        self.idx = idx

    def __get__(self, obj: PtoOp | None, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        cut = obj._segments  # type: ignore[attr-defined]
        if cut is None or cut[0] is not obj._operands:
            cut = obj._segments = _cut(obj)  # type: ignore[attr-defined]
        return cut[self.idx + 1]

    def __set__(self, obj: PtoOp, value: object) -> None:
        raise NotImplementedError("Cannot write to named operands; create a new operation")


def segments(pto: PtoOp) -> tuple[Any, SSAValues, SSAValues, SSAValues]:
    """``(operands, srcs, scalars, dim_values)`` of ``pto``, as :class:`_Segment` keeps
    them, for a reader that reads an op once (the emitter): without keeping them."""
    cut = pto._segments  # type: ignore[attr-defined]
    if cut is None or cut[0] is not pto._operands:
        cut = _cut(pto)
    return cut


def release_segments(ops: Iterable[Operation]) -> None:
    """Drop the operand segments :class:`_Segment` keeps on ``ops`` (after the pass that
    reads them many times: the kernel's ops outlive the compilation)."""
    for o in ops:
        if isinstance(o, PtoOp):
            o._segments = None  # type: ignore[attr-defined]


def _cut(op: PtoOp) -> tuple[Any, SSAValues, SSAValues, SSAValues]:
    """``(operands, srcs, scalars, dim_values)`` of ``op`` (see :class:`_Segment`)."""
    sizes = op.properties[_SEGMENTS]
    key = sizes.data.data  # type: ignore[attr-defined]
    starts = _STARTS.get(key)
    if starts is None:
        n = sizes.get_values()  # type: ignore[attr-defined]
        starts = _STARTS[key] = tuple(sum(n[:i]) for i in range(len(n) + 1))
    # the same SSAValues the xDSL accessor returns, sliced without its Python-level
    # __getitem__ (``_operands`` is the op's operand tuple)
    operands = op._operands
    a, b, c, d = starts
    return (
        operands,
        SSAValues(_TUPLE_SLICE(operands, slice(a, b))) if b > a else NO_VALUES,
        SSAValues(_TUPLE_SLICE(operands, slice(b, c))) if c > b else NO_VALUES,
        SSAValues(_TUPLE_SLICE(operands, slice(c, d))) if d > c else NO_VALUES,
    )


#: the empty operand or result list every op without one shares (tuples are immutable;
#: kernels hold tens of thousands of ops, most without scalars or results)
NO_VALUES: SSAValues[Any] = SSAValues()


_TUPLE_SLICE = tuple.__getitem__


class _Results:
    """``dsts`` of a pto op: all its results (its one, variadic, result definition), the
    op's own immutable result tuple rather than xDSL's generic slice of it."""

    __slots__ = ()

    def __get__(self, obj: PtoOp | None, objtype: type | None = None) -> Any:
        return self if obj is None else obj.results

    def __set__(self, obj: PtoOp, value: object) -> None:
        raise NotImplementedError("Cannot write to named results; create a new operation")


#: the operand segment sizes' property name (AttrSizedOperandSegments)
_SEGMENTS = AttrSizedOperandSegments.attribute_name


@cache
def _segment_sizes(srcs: int, scalars: int, dim_values: int) -> DenseArrayBase:
    """The ``operandSegmentSizes`` property of ``srcs`` tile, ``scalars`` GPR and
    ``dim_values`` run-time LB operands (cached: attributes are immutable)."""
    return DenseArrayBase.from_list(i32, [srcs, scalars, dim_values])


#: segment start offsets (and the end) by the sizes attribute's bytes
_STARTS: dict[bytes, tuple[int, ...]] = {}


def fast_segments(cls: type[PtoOp]) -> type[PtoOp]:
    """Replace the ``srcs`` / ``scalars`` / ``dim_values`` / ``dsts`` accessors of a
    defined pto op class (after ``irdl_op_definition`` set xDSL's) with :class:`_Segment`
    and :class:`_Results`."""
    cls.srcs = _Segment(0)  # type: ignore[assignment]
    cls.scalars = _Segment(1)  # type: ignore[assignment]
    cls.dim_values = _Segment(2)  # type: ignore[assignment]
    cls.dsts = _Results()  # type: ignore[assignment]
    # the operand segments as _Segment last cut them, with the operand tuple they were
    # cut from (None: not yet; set on the defined class: IRDL allows no such field)
    cls._segments = None  # type: ignore[attr-defined]
    return cls


def _check(rule: str | None) -> None:
    """Raise the wording of a broken ``backend.isa.legality`` rule as a verify error."""
    if rule is not None:
        raise VerifyException(rule)


@cache
def mask_attr(mask: int) -> IntegerAttr:
    return IntegerAttr(mask, i64)


@lru_cache(maxsize=1 << 14)
def i64_attr(value: int) -> IntegerAttr:
    """An ``i64`` integer attribute (cached: attributes are immutable, and building one
    checks the value's range)."""
    return IntegerAttr(value, i64)
