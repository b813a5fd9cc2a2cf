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
  into the result's row pieces.

There is no ACC+BIAS form, and the reference adds the bias after the whole fold: with
more than one K chunk (or an accumulator) the bias is one TCOLEXPANDADD after the
reload (the same single RNE rounding, D5 = D11 for one FP32 addition), and ReLU then a
TRELU; otherwise the bias and ReLU go into the last bundle (TMATMUL_BIAS, B.FPATR
ReluMode 1). Block sizes keep every CUBE tile within the split limit of the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from ptoc.backend.isa import DTYPE_NONE, Axis, DataType, Executor, info, rows
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects.dtypes import data_type
from ptoc.dialects.pto_types import DatrAttr, PtoTileType
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
    tt = load.tensor.type
    assert isinstance(tt, TensorType)
    eb = tt.row_stride_bytes // tt.stride
    (r0, c0), (pr, pc) = load.origin, load.pe_offsets
    return Gm(
        load.tensor,
        r0 * tt.row_stride_bytes + c0 * eb,
        tt.row_stride_bytes * load.row_step,
        pr * tt.row_stride_bytes + pc * eb,
        eb,
    )


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
    row: int, col: int, rows: int, cols: int,
) -> SSAValue:  # fmt: skip
    need = isa_cube.geometry(layout, dt, rows, cols).bytes
    rt = PtoTileType.cube_tile(dt.name, (rows, cols), layout, size_code(need))
    datr = DatrAttr(layout=_LOAD_CODE[layout], dtype=DTYPE_NONE)
    return ctx.emit(LoadOp.MNEMONIC, dt, [], _gm_scalars(ctx, g, row, col, rows),
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
    gd = Gm(op.scratch, reg.d, n * _ebytes(dt), st.row_stride_bytes, _ebytes(dt))
    datr = DatrAttr(dtype=int(bt)) if bt != at else None
    gemv = m == 1
    for m0 in range(0, m, mb):
        mr = min(mb, m - m0)
        lay = CubeLayout.M16 if mr <= 16 else CubeLayout.M32
        for n0 in range(0, n, nb):
            nr = min(nb, n - n0)
            d: SSAValue | None = None
            if gc is not None:
                d = _cube_load(ctx, op, gc, dt, lay, m0, n0, mr, nr)
            for i, k0 in enumerate(chunks):
                kr = min(kc, k - k0)
                last = i == len(chunks) - 1
                srcs = [] if d is None else [d]
                srcs.append(_cube_load(ctx, op, ga, at, lay, m0, k0, mr, kr))
                if gsa is not None:  # A's scales of the chunk: rows m0.., blocks k0 / 32..
                    srcs.append(_scale_load(ctx, op, gsa, m0, k0 // sm.MX_BLOCK, mr,
                                            sm.scale_blocks(kr)))  # fmt: skip
                srcs.append(_cube_load(ctx, op, gb, bt, CubeLayout.N8, k0, n0, kr, nr))
                if gsb is not None:
                    srcs.append(_scale_load(ctx, op, gsb, k0 // sm.MX_BLOCK, n0,
                                            sm.scale_blocks(kr), nr))  # fmt: skip
                bias_here = gbias is not None and not late_bias and d is None
                if bias_here:
                    assert gbias is not None and op.bias is not None
                    bias_t = ctx.descriptor(TileType(tile_type(op.bias).dtype, (1, nr)))
                    srcs.append(ctx.emit(LoadOp.MNEMONIC, dt, [],
                                         _gm_scalars(ctx, gbias, 0, n0, 1), std_dims(bias_t),
                                         None, [bias_t], op).results[0])  # fmt: skip
                need = isa_cube.geometry(lay, dt, mr, nr).bytes
                rt = PtoTileType.cube_tile(dt.name, (mr, nr), lay, size_code(need))
                form = cube_form(gemv, d is not None, bias_here, op.is_mx)
                new = ctx.emit(form, at, srcs, (), (mr, nr, kr), datr, [rt], op)
                fp = _FPATR_RELU if last and relu and not late_bias else _FPATR_NONE
                new.properties["fpatr"] = _fpatr_attr(fp)
                d = new.results[0]
            assert d is not None
            ctx.emit(StoreOp.MNEMONIC, dt, [d], _gm_scalars(ctx, gd, m0, n0, mr),
                     (nr, mr, None), DatrAttr(layout=_STORE_CODE[lay], dtype=DTYPE_NONE),
                     source=op)  # fmt: skip
    _reload(ctx, op, gd, late_bias, relu and late_bias)


def _scale_load(
    ctx: LegalizeCtx, op: Operation, g: Gm, row: int, col: int, rows: int, cols: int
) -> SSAValue:
    """An ordinary row-major TLOAD of an E8M0 scale block (the scales are RowMajor,
    ``TileMatrixLocalScaleSchemaLegal``)."""
    desc = ctx.descriptor(TileType("E8M0", (rows, cols)))
    return ctx.emit(LoadOp.MNEMONIC, DataType.E8M0, [], _gm_scalars(ctx, g, row, col, rows),
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
