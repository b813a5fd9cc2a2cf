"""The ``legalize`` rule of ``tile.matmul``: CUBE bundles over blocks and K chunks.

Why a legalize rule and not a compound lowering: the CUBE operands live in CUBE layouts
(CUBE_M16/M32 for A, C and D, CUBE_N8 for B), which no ``tile`` type describes; only
``pto`` tile types carry them, so the blocking, the transport conversions and the bundle
forms are chosen here, where the descriptors are.

No TMOV converts into or out of a CUBE layout (a TMOV with B.DATR Layout 21..26 is routed
to the CUBE transport path and rejected), so every operand reaches the CUBE from GM:

* A, B: read straight from their tensor when the operand is a ``tile.load`` of it (and
  the kernel never stores to that tensor), else each row piece is TSTOREd row-major into
  the op's scratch region first;
* the accumulator and the bias are stored to scratch as well (the bias row is reloaded
  per N block as an ordinary 1 x N tile);
* per block of at most 32 rows (CUBE_M32; CUBE_M16 for a block of at most 16 rows) and
  N columns: per K chunk a TLOAD ND2M16/ND2M32 of A's chunk and a TLOAD ND2N8 of B's,
  then TMATMUL (TMATMUL_BIAS when the bias is added in the bundle, TMATMUL_ACC from
  the accumulator's block) for the first chunk and TMATMUL_ACC for the next, each C the
  previous D (D11: the chain equals one fold over all of K, bit for bit); M = 1 uses the
  TGEMV forms;
* D leaves through TSTORE M162ND/M322ND into the scratch and is loaded back row-major
  into the result's row pieces -- unless the result's only reader is a ``tile.store`` of
  it at a compile-time window, later in the same block with nothing between them
  touching that tensor, and of D's own type: then D's blocks go straight into that
  window and the store emits nothing (:func:`direct_result`);
* with one K chunk the N blocks are the outer loop, so B's chunk of an N block is loaded
  once and read by every M block.

There is no ACC+BIAS form, and the reference adds the bias after the whole fold: with
more than one K chunk (or an accumulator) the bias is one TCOLEXPANDADD after the
reload (the same single RNE rounding, D5 = D11 for one FP32 addition), and ReLU then a
TRELU; otherwise the bias and ReLU go into the last bundle (TMATMUL_BIAS, B.FPATR
ReluMode 1). Block sizes keep every CUBE tile within the split limit of the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.dialects.builtin import i64
from xdsl.ir import Block, Operation, Region, SSAValue

from ptoc.backend.isa import DTYPE_NONE, Axis, DataType, Executor, info, rows
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects.dtypes import data_type
from ptoc.dialects.pto import IndexAddrOp
from ptoc.dialects.pto_types import DatrAttr, PtoTileType
from ptoc.dialects.scalars import constant
from ptoc.dialects.tile_base import tile_type
from ptoc.dialects.tile_matmul import MatmulOp
from ptoc.dialects.tile_memory import LoadOp, StoreOp
from ptoc.dialects.tile_types import TensorType, TileType

from ..diagnostics import fail
from ..lower_compound.build import by_arith
from .ctx import LegalizeCtx, Piece, std_dims

#: B.DATR Layout codes of the transport conversions
_LOAD_CODE = {v: k for k, v in isa_cube.LOAD_CODES.items()}
_STORE_CODE = {v: k for k, v in isa_cube.STORE_CODES.items()}
#: B.FPATR fields (PreQuantMode .. TransB) of no post-processing / of ReLU
_FPATR_NONE = (0,) * 9
_FPATR_RELU = (0, 1, 0, 0, 0, 0, 0, 0, 0)


@dataclass(frozen=True)
class Gm:
    """Where an operand's row-major image is in GM: the tensor, the byte offset of its
    element [0, 0] on PE 0, the bytes between rows and between PEs."""

    tensor: SSAValue
    offset: int
    row_bytes: int
    pe_step: int
    elem: int

    def at(self, row: int, col: int) -> int:
        return self.offset + row * self.row_bytes + col * self.elem


def _ebytes(dt: DataType) -> int:
    return info(dt).bits // 8


def size_code(nbytes: int) -> int:
    """The smallest SizeCode (128 bytes << (code - 1)) holding ``nbytes``."""
    code = 1
    while (64 << code) < nbytes:
        code += 1
    return code


def _direct(v: SSAValue, direct: bool) -> Gm | None:
    """The tensor image of an operand the CUBE reads from its tensor (None otherwise)."""
    load = v.owner
    if not direct:
        return None
    assert isinstance(load, LoadOp)
    return _window(load)


def _window(access: LoadOp | StoreOp) -> Gm:
    """The GM image of a compile-time ``tile.load`` / ``tile.store`` window."""
    tt = access.tensor.type
    assert isinstance(tt, TensorType)
    eb = tt.row_stride_bytes // tt.stride
    (r0, c0), (pr, pc) = access.origin, access.pe_offsets
    return Gm(
        access.tensor,
        r0 * tt.row_stride_bytes + c0 * eb,
        tt.row_stride_bytes * access.row_step,
        pr * tt.row_stride_bytes + pc * eb,
        eb,
    )


def direct_result(op: MatmulOp) -> StoreOp | None:
    """The ``tile.store`` that may receive D's blocks straight from the CUBE, or None.

    It must be the result's only reader, store it at a compile-time window of a tensor of
    D's DataType (the CUBE store converts nothing here), and come later in the same
    block with no op between them (nested ones included) naming that tensor: then the
    tensor holds the same bytes whether D is written at the matmul or at the store.
    The late bias (a TCOLEXPANDADD after the reload) is not decided here; the caller
    asks for it separately."""
    uses = list(op.result.uses)
    if len(uses) != 1:
        return None
    store = uses[0].operation
    if type(store) is not StoreOp or store.dynamic_axes or store.value is not op.result:
        return None
    tt = store.dest.type
    if not isinstance(tt, TensorType) or data_type(tt.dtype) != op.acc_type:
        return None
    if store.parent is None or store.parent is not op.parent:
        return None
    dest = store.dest
    between = op.next_op
    while between is not None and between is not store:
        if any(dest in inner.operands for inner in between.walk()):
            return None
        between = between.next_op
    return store if between is store else None


def _scratch_image(ctx: LegalizeCtx, op: MatmulOp, v: SSAValue, region: int) -> Gm:
    """TSTORE every row piece of ``v`` densely at ``region`` of the scratch row."""
    assert op.scratch is not None
    tt = op.scratch.type
    assert isinstance(tt, TensorType)
    t = tile_type(v)
    dt = data_type(t.dtype)
    row = t.valid[1] * _ebytes(dt)
    for p in ctx.pieces[v]:
        scalars = [ctx.addr(op.scratch, region + p.row0 * row, tt.row_stride_bytes)]
        if p.rows > 1:
            scalars.append(ctx.const(row))
        ctx.emit(StoreOp.MNEMONIC, dt, [p.value], scalars, source=op)
    return Gm(op.scratch, region, row, tt.row_stride_bytes, _ebytes(dt))


def _gm_scalars(ctx: LegalizeCtx, g: Gm, row: int, col: int, rows: int) -> list[SSAValue]:
    out = [ctx.addr(g.tensor, g.at(row, col), g.pe_step)]
    if rows > 1:
        out.append(ctx.const(g.row_bytes))
    return out


def _cube_load(
    ctx: LegalizeCtx, op: Operation, g: Gm, dt: DataType, layout: CubeLayout,
    row: int, col: int, rows: int, cols: int, move: _Move | None = None, name: str = "",
) -> SSAValue:  # fmt: skip
    """TLOAD ND2M16/ND2M32/ND2N8 of ``rows`` x ``cols`` at (``row``, ``col``) of ``g``
    (moved at run time by ``move``)."""
    need = isa_cube.geometry(layout, dt, rows, cols).bytes
    rt = PtoTileType.cube_tile(dt.name, (rows, cols), layout, size_code(need))
    datr = DatrAttr(layout=_LOAD_CODE[layout], dtype=DTYPE_NONE)
    scalars = _moved(ctx, _gm_scalars(ctx, g, row, col, rows), move,
                     f"the K chunk of operand {name} of tile.matmul")  # fmt: skip
    return ctx.emit(LoadOp.MNEMONIC, dt, [], scalars,
                    (cols, rows, None), datr, [rt], op).results[0]  # fmt: skip


def _fits(layout: CubeLayout, dt: DataType, rows: int, cols: int, limit: int) -> bool:
    g = isa_cube.geometry(layout, dt, rows, cols)
    return g.legal and g.bytes <= limit


def blocking(
    m: int, n: int, k: int, at: DataType, bt: DataType, acc: DataType, limit: int,
    mx: bool = False,
) -> tuple[int, int, int]:  # fmt: skip
    """(rows per M block, columns per N block, K chunk): the largest blocks whose CUBE
    tiles (A mb x kc, B kc x nb, D mb x nb) each fit ``limit`` bytes per PE; MX chunks
    are whole 32-element scale blocks."""
    mb = 16 if m <= 16 else 32
    lay = CubeLayout.M16 if mb == 16 else CubeLayout.M32
    nb = min(n, 8)
    while nb < n and _fits(lay, acc, mb, min(n, nb * 2), limit):
        nb = min(n, nb * 2)
    kc = 1
    while (
        kc < k
        and _fits(lay, at, mb, min(k, kc * 2), limit)
        and _fits(CubeLayout.N8, bt, min(k, kc * 2), nb, limit)
    ):
        kc = min(k, kc * 2)
    if mx and kc < k:
        kc = max(sm.MX_BLOCK, kc // sm.MX_BLOCK * sm.MX_BLOCK)
    return mb, nb, kc


def cube_form(gemv: bool, acc: bool, bias: bool, mx: bool = False) -> str:
    """The catalog CUBE operation with these Function bits (``TileMatrixFunction*``)."""
    code = (isa_cube.GEMV if gemv else 0) | (isa_cube.ACC if acc else 0)
    code |= (isa_cube.BIAS if bias else 0) | (isa_cube.MX if mx else 0)
    return _FORMS[code]


#: CUBE Function code -> mnemonic, from the operation table
_FORMS = {r.op.selector: r.mnemonic for r in rows(executor=Executor.MATMUL)}


def matmul(ctx: LegalizeCtx, op: Operation) -> None:
    """Lower one ``tile.matmul`` (see the module docstring)."""
    assert isinstance(op, MatmulOp)
    if op.scratch is None:
        raise fail(op, "tile.matmul needs its scratch tensor: run lower-compound first")
    m, n, k = op.mnk
    at, bt, dt = op.a_type, op.b_type, op.acc_type
    # an ACC bundle holds C, A, B and D at once (four tiles within the split limit fit the
    # capacity); MX bundles add two scale tiles, so their CUBE tiles get 3/4 of the limit
    limit = ctx.max_bytes * 3 // 4 if op.is_mx else ctx.max_bytes
    mb, nb, kc = blocking(m, n, k, at, bt, dt, limit, op.is_mx)
    chunks = list(range(0, k, kc))
    late_bias = op.bias is not None and (len(chunks) > 1 or op.acc is not None)
    relu = op.relu is not None
    reg = op.scratch_layout()
    direct = op.direct_operands()
    images: list[Gm | None] = []
    operands = (op.a, op.b, op.a_scale, op.b_scale)
    regions = (reg.a, reg.b, reg.a_scale, reg.b_scale)
    for v, d_ok, region in zip(operands, direct, regions, strict=True):
        if v is None:
            images.append(None)
        else:
            images.append(_direct(v, d_ok) or _scratch_image(ctx, op, v, region))
    ga, gb, gsa, gsb = images
    assert ga is not None and gb is not None
    gc = None if op.acc is None else _scratch_image(ctx, op, op.acc, reg.acc)
    gbias = None if op.bias is None else _scratch_image(ctx, op, op.bias, reg.bias)
    assert op.scratch is not None
    st = op.scratch.type
    assert isinstance(st, TensorType)
    out = None if late_bias else direct_result(op)
    if out is None:
        gd = Gm(op.scratch, reg.d, n * _ebytes(dt), st.row_stride_bytes, _ebytes(dt))
    else:
        gd = _window(out)
        ctx.absorbed.add(out)  # its rule emits nothing: D's blocks are stored here
    src = _Sources(op, ga, gb, gsa, gsb, DatrAttr(dtype=int(bt)) if bt != at else None, kc)
    # one K chunk: N blocks outside, so each B chunk is loaded once for every M block
    blocks = [(m0, n0) for m0 in range(0, m, mb) for n0 in range(0, n, nb)]
    if len(chunks) == 1:
        blocks.sort(key=lambda b: (b[1], b[0]))
    shared_b: tuple[int, list[SSAValue]] | None = None  # (n0, B's chunk tiles)
    for m0, n0 in blocks:
        mr = min(mb, m - m0)
        lay = CubeLayout.M16 if mr <= 16 else CubeLayout.M32
        blk = _Block(m0, n0, mr, min(nb, n - n0), lay)
        d = None if gc is None else _cube_load(ctx, op, gc, dt, blk.lay, m0, n0, mr, blk.nr)
        last = len(chunks) - 1
        looped = last - 1 >= LOOP_CHUNKS  # chunks 1 .. last-1 as a run-time loop
        for i, k0 in enumerate(chunks):
            if looped and 0 < i < last:
                if i == 1:
                    assert d is not None
                    _store_block(ctx, op, gd, blk, d)
                    _k_loop(ctx, src, gd, blk, 1, last - 1)
                    d = _cube_load(ctx, op, gd, dt, blk.lay, m0, n0, mr, blk.nr)
                continue
            bias = None
            if gbias is not None and not late_bias and d is None:
                bias = _bias_load(ctx, op, gbias, n0, blk.nr)
            if last == 0 and (shared_b is None or shared_b[0] != n0):
                shared_b = (n0, _b_chunk(ctx, src, blk, k0, min(kc, k - k0)))
            d = _chunk(ctx, src, blk, d, k0, min(kc, k - k0), bias,
                       relu and i == last and not late_bias,
                       b=shared_b[1] if last == 0 and shared_b else None)  # fmt: skip
        assert d is not None
        _store_block(ctx, op, gd, blk, d)
    if out is None:
        _reload(ctx, op, gd, late_bias, relu and late_bias)


#: fewest K chunks between the first and the last one of a block that run as a run-time
#: loop (fewer stay unrolled: a loop costs a scalar block per iteration and carries D
#: through GM)
LOOP_CHUNKS = 16


@dataclass(frozen=True)
class _Sources:
    """What every K chunk of the op reads: the op, the GM images of A, B and their MX
    scales, the B.DATR naming BType (None when it is AType) and the K chunk depth."""

    op: MatmulOp
    a: Gm
    b: Gm
    a_scale: Gm | None
    b_scale: Gm | None
    datr: DatrAttr | None
    kc: int


@dataclass(frozen=True)
class _Block:
    """One output block: rows ``m0 ..`` (``mr`` of them) and columns ``n0 ..`` (``nr``),
    in CUBE layout ``lay``."""

    m0: int
    n0: int
    mr: int
    nr: int
    lay: CubeLayout


#: a run-time move of a window: (index, bytes per unit, axis 0 rows / 1 columns,
#: (lowest, highest) index), as ``pto.index`` takes it
_Move = tuple[SSAValue, int, int, tuple[int, int]]


def _moved(
    ctx: LegalizeCtx, scalars: list[SSAValue], move: _Move | None, what: str
) -> list[SSAValue]:
    """``scalars`` with the address moved by ``move`` (a ``pto.index``)."""
    if move is None:
        return scalars
    index, unit, axis, bounds = move
    addr = IndexAddrOp(scalars[0], [(index, unit)], [bounds], [axis], what)
    ctx.block.add_op(addr)
    return [addr.result, *scalars[1:]]


def _chunk(
    ctx: LegalizeCtx, src: _Sources, blk: _Block, c: SSAValue | None, k0: int, kr: int,
    bias: SSAValue | None, relu: bool, move: SSAValue | None = None,
    span: tuple[int, int] = (0, 0), b: list[SSAValue] | None = None,
) -> SSAValue:  # fmt: skip
    """One K chunk of a block: the CUBE loads of A's and B's chunk (and their scales)
    and the matrix bundle (``_ACC`` from ``c`` when given); D. ``move`` (a loop index
    in ``span``) moves the chunk by ``move * kc`` along K; ``b``: B's chunk tiles (and
    its scales') loaded already (:func:`_b_chunk`)."""
    op = src.op
    at, dt = op.a_type, op.acc_type
    m0, mr, nr = blk.m0, blk.mr, blk.nr

    def step(g: Gm, axis: int, per: int) -> _Move | None:
        unit = per * (g.row_bytes if axis == 0 else g.elem)
        return None if move is None else (move, unit, axis, span)

    blocks = sm.scale_blocks(kr)
    srcs = [] if c is None else [c]
    srcs.append(_cube_load(ctx, op, src.a, at, blk.lay, m0, k0, mr, kr,
                           step(src.a, 1, src.kc), "A"))  # fmt: skip
    if src.a_scale is not None:  # A's scales of the chunk: rows m0.., blocks k0 / 32..
        srcs.append(_scale_load(ctx, op, src.a_scale, m0, k0 // sm.MX_BLOCK, mr, blocks,
                                step(src.a_scale, 1, src.kc // sm.MX_BLOCK)))  # fmt: skip
    srcs.extend(b or _b_chunk(ctx, src, blk, k0, kr, move, span))
    if bias is not None:
        srcs.append(bias)
    need = isa_cube.geometry(blk.lay, dt, mr, nr).bytes
    rt = PtoTileType.cube_tile(dt.name, (mr, nr), blk.lay, size_code(need))
    form = cube_form(op.mnk[0] == 1, c is not None, bias is not None, op.is_mx)
    new = ctx.emit(form, at, srcs, (), (mr, nr, kr), src.datr, [rt], op)
    new.properties["fpatr"] = _fpatr_attr(_FPATR_RELU if relu else _FPATR_NONE)
    return new.results[0]


def _b_chunk(
    ctx: LegalizeCtx, src: _Sources, blk: _Block, k0: int, kr: int,
    move: SSAValue | None = None, span: tuple[int, int] = (0, 0),
) -> list[SSAValue]:  # fmt: skip
    """The CUBE load of B's K chunk for the columns of ``blk`` (and of its MX scales)."""
    op = src.op
    step = None if move is None else (move, src.kc * src.b.row_bytes, 0, span)
    out = [_cube_load(ctx, op, src.b, op.b_type, CubeLayout.N8, k0, blk.n0, kr, blk.nr,
                      step, "B")]  # fmt: skip
    if src.b_scale is not None:
        g = src.b_scale
        scale_step = None if move is None else (
            move, src.kc // sm.MX_BLOCK * g.row_bytes, 0, span)  # fmt: skip
        out.append(_scale_load(ctx, op, g, k0 // sm.MX_BLOCK, blk.n0, sm.scale_blocks(kr),
                               blk.nr, scale_step))  # fmt: skip
    return out


def _k_loop(
    ctx: LegalizeCtx, src: _Sources, gd: Gm, blk: _Block, first: int, last: int
) -> None:
    """Chunks ``first .. last`` of a block as a run-time loop (an ``scf.for`` over the
    chunk index ``j`` that carries nothing: C is loaded from D's GM image, where each
    iteration stores its D -- no TMOV or spill moves a CUBE tile across a back edge)."""
    op = src.op
    values: dict[int, SSAValue] = {}
    for v in (first, last + 1, 1):
        if v not in values:
            c = constant(v)
            ctx.define(c)
            values[v] = c.result
    bounds = [values[v] for v in (first, last + 1, 1)]
    body = Block(arg_types=[i64])
    loop = scf.ForOp(*bounds, [], Region(body))
    loop.location = op.location
    ctx.block.add_op(loop)
    saved, anchor = ctx.block, ctx.loop_anchor
    ctx.block, ctx.loop_anchor = body, anchor or loop
    c = _cube_load(ctx, op, gd, op.acc_type, blk.lay, blk.m0, blk.n0, blk.mr, blk.nr)
    d = _chunk(ctx, src, blk, c, 0, src.kc, None, False, body.args[0], (first, last))
    _store_block(ctx, op, gd, blk, d)
    body.add_op(scf.YieldOp())
    ctx.block, ctx.loop_anchor = saved, anchor


def _store_block(ctx: LegalizeCtx, op: MatmulOp, gd: Gm, blk: _Block, d: SSAValue) -> None:
    """TSTORE M162ND/M322ND of block D into its place of D's row-major GM image."""
    ctx.emit(StoreOp.MNEMONIC, op.acc_type, [d], _gm_scalars(ctx, gd, blk.m0, blk.n0, blk.mr),
             (blk.nr, blk.mr, None), DatrAttr(layout=_STORE_CODE[blk.lay], dtype=DTYPE_NONE),
             source=op)  # fmt: skip


def _bias_load(ctx: LegalizeCtx, op: MatmulOp, g: Gm, n0: int, nr: int) -> SSAValue:
    """The bias of columns ``n0 ..`` as an ordinary 1 x ``nr`` tile."""
    assert op.bias is not None
    bias_t = ctx.descriptor(TileType(tile_type(op.bias).dtype, (1, nr)))
    return ctx.emit(LoadOp.MNEMONIC, op.acc_type, [], _gm_scalars(ctx, g, 0, n0, 1),
                    std_dims(bias_t), None, [bias_t], op).results[0]  # fmt: skip


def _scale_load(
    ctx: LegalizeCtx, op: Operation, g: Gm, row: int, col: int, rows: int, cols: int,
    move: _Move | None = None,
) -> SSAValue:  # fmt: skip
    """An ordinary row-major TLOAD of an E8M0 scale block (the scales are RowMajor,
    ``TileMatrixLocalScaleSchemaLegal``)."""
    desc = ctx.descriptor(TileType("E8M0", (rows, cols)))
    scalars = _moved(ctx, _gm_scalars(ctx, g, row, col, rows), move,
                     "the K chunk of an MX scale of tile.matmul")  # fmt: skip
    return ctx.emit(LoadOp.MNEMONIC, DataType.E8M0, [], scalars,
                    std_dims(desc), None, [desc], op).results[0]  # fmt: skip


def _fpatr_attr(fields: tuple[int, ...]):  # type: ignore[no-untyped-def]
    from .ctx import dims_attr

    return dims_attr(fields)


def _reload(ctx: LegalizeCtx, op: MatmulOp, gd: Gm, bias: bool, relu: bool) -> None:
    """Load D back row-major into the result's row pieces (then the late bias / ReLU)."""
    rt = tile_type(op.result)
    dt = data_type(rt.dtype)
    layout = ctx.piece_types(op, op.result)
    whole = len(layout) == 1
    bias_v = None
    if bias:
        assert op.bias is not None
        ps = ctx.pieces[op.bias]
        bias_v = ps[0].value
    pieces = []
    for r0, nrows, pt in layout:
        desc = ctx.descriptor(pt)
        v = ctx.emit(LoadOp.MNEMONIC, dt, [], _gm_scalars(ctx, gd, r0, 0, nrows),
                     std_dims(desc), None, [desc], op).results[0]  # fmt: skip
        if bias_v is not None:
            v = ctx.emit(_COL_ADD, dt, [v, bias_v], (), std_dims(desc), None, [desc],
                         op).results[0]  # fmt: skip
        if relu:
            v = ctx.emit(_RELU, dt, [v], (), std_dims(desc), None, [desc], op).results[0]
        v.name_hint = op.result.name_hint
        pieces.append(Piece(v, r0, nrows, 0 if whole else pt.extent[0]))
    ctx.pieces[op.result] = pieces


def _mnemonic_of(cls: type) -> str:
    m = cls.MNEMONIC
    assert isinstance(m, str)
    return m


_RELU = _mnemonic_of(by_arith(ew.UNARY_OPS, "relu"))
#: the column-broadcast addition (``dst[r, c] = src[r, c] + bcast[0, c]``)
_COL_ADD = next(
    r.mnemonic
    for r in rows(executor=Executor.EXPANSION)
    if r.axis is Axis.COL and r.arith == "add"
)
