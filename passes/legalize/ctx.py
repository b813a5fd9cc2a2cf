"""State shared by the ``legalize`` rules: the new block, value maps and op builders.

A legalized tile value is a sequence of *pieces*: ``pto`` values that each hold a run of
its valid rows (one piece unless the tile exceeds one allocation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any, NamedTuple

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PEMODE_TO_MASK
from ptoc.dialects.dtypes import DTypeAttr, data_type, dtype_attr, is_pred
from ptoc.dialects.pto import PTO_OP_BY_MNEMONIC, AddrOp, ConstOp, ParamOp, RegOp
from ptoc.dialects.pto_base import OMITTED, mask_attr
from ptoc.dialects.pto_types import DatrAttr, PtoTileType
from ptoc.dialects.ragged import Counts
from ptoc.dialects.tile_types import TileType

from ..diagnostics import fail, value_name
from ..geometry import MAX_TILE_BYTES, pow2_ceil, pto_type, tile_bytes

#: PE count -> the PE_MASK of the first ``n`` PEs
PES_MASK = {
    1: PEMODE_TO_MASK[1],
    2: PEMODE_TO_MASK[5],
    3: PEMODE_TO_MASK[6],
    4: PEMODE_TO_MASK[7],
}


#: LB0..LB2 (None: the B.DIM is omitted)
Dims = tuple[int | None, int | None, int | None]


class Piece(NamedTuple):
    """A ``pto`` value holding valid rows ``row0 .. row0 + rows - 1`` of a tile (a named
    tuple: legalize makes one per bundle result)."""

    value: SSAValue
    row0: int
    rows: int
    #: extent rows of the piece's tile type (0: the whole, unsplit tile, whose every
    #: valid row the piece holds from row 0: ``tests/passes/test_legalize_pieces.py``)
    extent: int = 0


@dataclass(frozen=True)
class Cut:
    """One piece of an op's row range: rows ``row0 .. row0 + rows - 1``; ``extent`` is
    the piece's extent rows; ``whole`` when the op is not split at all."""

    row0: int
    rows: int
    extent: int
    whole: bool


@cache
def whole_cut(rows: int, extent: int) -> Cut:
    """The one cut of an op that is not split, whose driver has ``rows`` valid rows in
    ``extent`` rows (one object per shape: a tile type's facts keep theirs)."""
    return Cut(0, rows, extent, True)


def sign_extend(bits: int, width: int) -> int:
    """The signed value of the low ``width`` bits (a cheap GPR representative)."""
    bits &= (1 << width) - 1
    return bits - (1 << width) if width < 64 and bits >> (width - 1) else bits


def low_bits_const(dt: DataType, bits: int) -> int:
    """A GPR value whose low element-width bits are ``bits`` (sign-extended: cheapest)."""
    return sign_extend(bits, info(dt).bits)


@dataclass
class LegalizeCtx:
    """The block being built and the maps from tile values to pieces."""

    block: Block
    pes: int
    max_bytes: int = MAX_TILE_BYTES
    #: tile value -> its pieces (in row order; a list, or a tuple of an unsplit value's)
    pieces: dict[SSAValue, Sequence[Piece]] = field(default_factory=dict)
    tensors: dict[SSAValue, SSAValue] = field(default_factory=dict)
    #: tile values an unsplittable op needs in one allocation (kept whole up to 64 KiB)
    whole: set[SSAValue] = field(default_factory=set)
    #: tile values assembled from their row pieces into one allocation (for whole ops)
    assembled: dict[SSAValue, SSAValue] = field(default_factory=dict)
    #: predicates: the compare that computes them and its per-piece bundle builder
    remake: dict[SSAValue, tuple[Operation, Any]] = field(default_factory=dict)
    #: predicates computed again for other row pieces, by (value, first row, rows)
    remade: dict[tuple[SSAValue, int, int, int], SSAValue] = field(default_factory=dict)
    #: whether the kernel has a ``tile.matmul`` (only one reads a loaded tile straight
    #: from its tensor: ``tile_matmul.only_read_directly``)
    matmuls: bool = True
    #: ``tile.store`` ops whose bytes another rule has written already (a matmul's D
    #: stored straight into the window): their own rule emits nothing
    absorbed: set[Operation] = field(default_factory=set)
    #: (scratch tensor, sources) of the image the last ``tile.view`` stored in the scratch
    view_image: tuple[SSAValue, tuple[SSAValue, ...]] | None = None
    #: tensors no op of the kernel writes, by tensor (asked by ``tile.view``, once each)
    read_only: dict[SSAValue, bool] = field(default_factory=dict)
    #: run-time integers (``i64``) of the tile kernel -> their values in the new body
    scalars: dict[SSAValue, SSAValue] = field(default_factory=dict)
    #: the kernel's top block (the new one), where constants and addresses are defined
    top: Block | None = None
    #: the outermost run-time loop being legalized: top-block definitions go before it
    loop_anchor: Operation | None = None
    #: ragged tiles -> their (rows, columns) run-time counts (tile-level values)
    counts: dict[SSAValue, Counts] = field(default_factory=dict)
    #: while an op on ragged tiles is legalized: LB -> its count in the new body (every
    #: bundle emitted gets ``B.DIM count, ->LBn``), and the LBs describing its results
    lb_counts: dict[int, SSAValue] = field(default_factory=dict)
    result_lbs: list[int] = field(default_factory=list)
    _consts: dict[int, SSAValue] = field(default_factory=dict)
    _params: dict[SSAValue, SSAValue] = field(default_factory=dict)
    _addrs: dict[tuple[SSAValue, int, int], SSAValue] = field(default_factory=dict)
    #: the facts of every tile type object asked about, by ``id`` (the type is kept with
    #: them, so the id stays its own): types hash by value, slowly, and every op asks
    #: for its operands' and results' facts several times
    _facts: dict[int, TypeFacts] = field(default_factory=dict)
    #: (bytes per PE, descriptor) by (DType, extent, valid shape): see :meth:`facts`
    _facts_by_value: dict[tuple[Any, ...], tuple[int, Any]] = field(default_factory=dict)
    #: :meth:`piece_types` by (type id, kept whole), with the type
    _layouts: dict[tuple[int, bool], tuple[TileType, list[tuple[int, int, TileType]]]] = field(
        default_factory=dict
    )
    #: :func:`std_dims` of every descriptor object asked about, by ``id`` (with the
    #: descriptor, so the id stays its own)
    _std_dims: dict[int, tuple[PtoTileType, Dims]] = field(default_factory=dict)
    #: row-piece tile types by (type id, extent rows, valid rows), with the type
    _piece_tiles: dict[tuple[int, int, int], tuple[TileType, TileType]] = field(
        default_factory=dict
    )

    def facts(self, t: TileType) -> TypeFacts:
        """The valid shape, bytes per PE and descriptor of tile type ``t``."""
        f = self._facts.get(id(t))
        if f is None:
            f = self._facts[id(t)] = self._new_facts(t)
        return f

    def _new_facts(self, t: TileType) -> TypeFacts:
        # equal types built apart (every op's result type is its own object) share the
        # facts of the first, found by a key of plain values: a tile type hashes its
        # parameters recursively, and ``tile_bytes`` / ``pto_type`` are cached by type
        assert type(t) is TileType
        # (t.valid and t.extent, read from the parameters without the properties' calls
        # and generator: every op's result type is an object of its own)
        (v0, v1), (e0, e1) = t.valid_shape.data, t.shape.data
        valid, extent = (v0.data, v1.data), (e0.data, e1.data)
        key = (t.dtype.data, extent, valid)
        shared = self._facts_by_value.get(key)
        if shared is None:
            nbytes, descriptor = tile_bytes(t), pto_type(t)
            fits = descriptor is not None and nbytes <= self.max_bytes
            cut = whole_cut(valid[0], extent[0])
            bstart = None if is_pred(t.dtype) else dtype_attr(data_type(t.dtype))
            shared = self._facts_by_value[key] = (nbytes, descriptor, fits, cut, bstart)
        return TypeFacts(t, valid, *shared, extent)

    def valid_rows(self, v: SSAValue) -> int:
        """The valid rows of tile value ``v``."""
        # (legalize tests tile types by class: no class derives from TileType, and an
        # isinstance test against xDSL's ABC-based attribute classes is slow)
        t = v.type
        assert type(t) is TileType
        return self.facts(t).valid[0]

    def piece_tile(self, t: TileType, extent: int, rows: int) -> TileType:
        """The tile type of a row piece of ``t``: ``extent`` rows holding ``rows`` valid
        ones (the same object for the same piece, so its facts are asked once)."""
        key = (id(t), extent, rows)
        hit = self._piece_tiles.get(key)
        if hit is None:
            hit = self._piece_tiles[key] = (
                t,
                TileType(t.dtype, (extent, t.extent[1]), (rows, t.valid[1])),
            )
        return hit[1]

    def define(self, op: Operation) -> None:
        """Add a pure scalar definition to the top block (so that every region of the
        kernel may read it; in front of the loop being legalized, if any)."""
        top = self.top or self.block
        if self.loop_anchor is not None:
            top.insert_op_before(op, self.loop_anchor)
        else:
            append_new(top, op)  # (an op just built)

    def scalar(self, v: SSAValue) -> SSAValue:
        """The new body's value of run-time integer ``v``."""
        return self.scalars[v]

    @property
    def mask(self) -> int:
        return PES_MASK[self.pes]

    @cached_property  # (the PEs are the kernel's: emit asks once per bundle)
    def mask_attr(self) -> IntegerAttr:
        """The ``mask`` property every bundle of the kernel carries."""
        return mask_attr(PES_MASK[self.pes])

    # ------------------------------------------------------------------ scalars

    def const(self, value: int) -> SSAValue:
        """A (deduplicated) ``pto.const`` of a 64-bit pattern."""
        value &= (1 << 64) - 1
        if value not in self._consts:
            c = ConstOp(value)
            self.define(c)
            self._consts[value] = c.result
        return self._consts[value]

    def param(self, value: SSAValue, op: Operation) -> SSAValue:
        """The register of run-time scalar parameter ``value`` (a ``pto.param``) that
        ``op`` reads."""
        arg = self.scalar(value)
        if not isinstance(arg, BlockArgument) or arg.block is not (self.top or self.block):
            if isinstance(arg, BlockArgument):
                raise fail(
                    op,
                    "the run-time scalar of a tile-scalar op is a kernel parameter or a "
                    "value the program computes, not a loop index",
                )
            r = RegOp(arg)  # a computed value: the bundle reads its register
            self.block.add_op(r)
            return r.result
        if arg not in self._params:
            p = ParamOp(arg)
            self.define(p)
            self._params[arg] = p.result
        return self._params[arg]

    def addr(self, tensor: SSAValue, offset: int, pe_step: int) -> SSAValue:
        # (each lookup hashes the tensor value in Python: one of each)
        base = self.tensors[tensor]
        key = (base, offset, pe_step)
        found = self._addrs.get(key)
        if found is None:
            a = AddrOp(base, offset, pe_step)
            self.define(a)
            found = self._addrs[key] = _ITEM(a.results, 0)  # (a.result)
        return found

    # ------------------------------------------------------------------ tiles

    def piece_types(self, op: Operation, value: SSAValue) -> list[tuple[int, int, TileType]]:
        """How a tile value splits: ``(row0, rows, piece type)`` per piece (the list is
        shared by the values of the same type object: not to be changed)."""
        t = value.type
        assert type(t) is TileType
        whole = value in self.whole
        hit = self._layouts.get((id(t), whole))
        if hit is None:
            hit = self._layouts[(id(t), whole)] = (t, self._piece_types(op, value, t, whole))
        return hit[1]

    def _piece_types(
        self, op: Operation, value: SSAValue, t: TileType, whole: bool
    ) -> list[tuple[int, int, TileType]]:
        limit = MAX_TILE_BYTES if whole else self.max_bytes
        f = self.facts(t)
        if f.nbytes <= limit and f.descriptor is not None:
            return [(0, f.valid[0], t)]
        one_row = TileType(t.dtype, (1, t.extent[1]), (1, t.valid[1]))
        if tile_bytes(one_row) > self.max_bytes or pto_type(one_row) is None:
            raise fail(
                op,
                f"{value_name(value)} ({t}) has rows wider than the tile size limit "
                f"({self.max_bytes} bytes per PE; max-tile-bytes may raise it up to one "
                f"{MAX_TILE_BYTES}-byte allocation)",
            )
        per = pow2_ceil(t.extent[0])
        while per > 1 and tile_bytes(TileType(t.dtype, (per, t.extent[1]))) > self.max_bytes:
            per //= 2
        out = []
        for r0 in range(0, t.valid[0], per):
            n = min(per, t.valid[0] - r0)
            out.append((r0, n, TileType(t.dtype, (per, t.extent[1]), (n, t.valid[1]))))
        return out

    def std_dims(self, t: PtoTileType) -> Dims:
        """:func:`std_dims` of descriptor ``t`` (computed once per descriptor object: the
        rules ask once per bundle, of the few descriptors of the kernel's tile types)."""
        hit = self._std_dims.get(id(t))
        if hit is None:
            hit = self._std_dims[id(t)] = (t, std_dims(t))
        return hit[1]

    def descriptor(self, t: TileType) -> PtoTileType:
        d = self.facts(t).descriptor
        assert d is not None, t
        return d

    def emit(
        self,
        mnemonic: str,
        dtype: DataType | str | DTypeAttr,
        srcs: Sequence[SSAValue] = (),
        scalars: Sequence[SSAValue] = (),
        dims: Sequence[int | None] = (None, None, None),
        datr: DatrAttr | None = None,
        results: Sequence[PtoTileType] = (),
        source: Operation | None = None,
    ) -> Operation:
        """Append one ``pto`` op (``dims`` None = omitted B.DIM)."""
        cls = PTO_OP_BY_MNEMONIC[mnemonic]
        d = dtype if type(dtype) is DTypeAttr else dtype_attr(dtype)  # type: ignore[arg-type]
        counts = self.lb_counts
        if counts and 0 in counts and dims[2] is None:  # Col: the storage's, not the count
            dims = (dims[0], dims[1], dims[0])
        props = {"dtype": d, "dims": dims_attr(tuple(dims)), "mask": self.mask_attr}
        if datr is not None:
            props["datr"] = datr
        counted: Sequence[SSAValue] = ()
        if counts:
            lbs = sorted(lb for lb in counts if dims[lb] is not None)
            counted = [counts[lb] for lb in lbs]
            if lbs:
                props["dyn_lbs"] = DenseArrayBase.from_list(i64, lbs)
                outs = [lb for lb in self.result_lbs if lb in lbs]
                if outs and results:
                    props["dst_lbs"] = DenseArrayBase.from_list(i64, outs)
        location = None if source is None else source.location
        new = cls.make(srcs, scalars, results, props, counted, location)
        append_new(self.block, new)
        return new


#: item access of the tuples under xDSL's value lists (without their Python-level one)
_ITEM = tuple.__getitem__


def append_new(block: Block, op: Operation) -> None:
    """``block.add_op(op)`` for an op just built (in no block, without regions): the same
    links, without the checks that such an op passes (legalize appends an op or more per
    tile op)."""
    last = block._last_op
    op.parent = block
    op._prev_op = last
    op._next_op = None
    if last is None:
        block._first_op = op
    else:
        last._next_op = op
    block._last_op = op


class TypeFacts(NamedTuple):
    """What legalize asks of a tile type: its valid shape, bytes per PE (may exceed one
    allocation) and descriptor (None when it does)."""

    type: TileType
    valid: tuple[int, int]
    nbytes: int
    descriptor: PtoTileType | None
    #: one piece within the context's tile size limit (a value of this type is split
    #: only when it is not)
    fits: bool
    #: the one cut of an unsplit op whose driver has this type
    cut: Cut
    #: the BSTART DataType of its elements, as the attribute :meth:`LegalizeCtx.emit`
    #: writes (None for predicates, which have none)
    bstart: DTypeAttr | None
    #: the extent (rows, columns)
    extent: tuple[int, int]


@cache
def dims_attr(dims: tuple[int | None, ...]) -> DenseArrayBase:
    """The ``dims`` property (-1 = omitted); cached, attributes are immutable."""
    return DenseArrayBase.from_list(i64, [OMITTED if v is None else v for v in dims])


def explicit_dims(t: PtoTileType) -> tuple[int, int, int]:
    """LB0..LB2 = ValidCol, ValidRow, Col, all encoded (for operations whose omitted
    LB1/LB2 default from a source rather than to 1 / ValidCol)."""
    vr, vc = t.valid
    return (vc, vr, t.cols.data)


def std_dims(t: PtoTileType) -> tuple[int | None, int | None, int | None]:
    """LB0..LB2 of the standard schema describing ``t``: ValidCol, ValidRow, Col
    (omitting LB1 = 1 and LB2 = ValidCol, which are the defaults)."""
    vr, vc = t.valid
    return (vc, None if vr == 1 else vr, None if t.cols.data == vc else t.cols.data)
