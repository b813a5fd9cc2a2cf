"""The CUBE engine: the transport conversions (TLOAD/TSTORE with B.DATR Layout 21..26)
and the twelve matrix operations (TMATMUL, TGEMV and their ACC, BIAS and MX forms).

A CUBE tile is kept as its logical array plus its descriptor: the layout
(:class:`~ptoc.runtime.tiles.Layout` ``CUBE_*``), the storage shape (``rows`` x
``cols`` = ``TileCubeStorageRows`` x ``TileCubeStorageColumns``) and the capacity; the
cell order is :func:`ptoc.backend.isa.cube.payload_index`, which no architectural
access observes (every ASL access goes through logical coordinates,
``TileStorageIndex``).

Transport (``asl/block/model/dispatch/tlsu-layout-conversion.asl``,
``ExecuteBundleCubeTransportOperation``): load codes only with TLOAD, store codes only
with TSTORE; LB0 = valid columns and LB1 = valid rows present, LB2 absent; B.DATR
DataType NONE and CMode/RMode/Sat/Canonicalize zero (PadValue pads the storage outside
the valid region; Null leaves it undefined); one B.IOT with ``last``; no B.IOS; the
BSTART DataType CUBE-supported. GM is read and written row-major with the B.IOR row
stride exactly as an ordinary TLOAD/TSTORE. There is no TMOV conversion (a TMOV with
Layout 21..26 is rejected here, and a TMOV of a CUBE tile by the source rule of
:class:`~ptoc.runtime.engine.Ctx`).

Matrix operations (``ExecuteBundleTMATMULOperation`` in
``asl/block/model/dispatch/cube-tmatmul.asl``), checked in the ASL's order: B.FPATR
present (else Fault_BundleControl); the AType/BType pair; B.FPATR fields, the binding
counts B.FPATR implies, the B.IOR schema and parameter words; B.DATR Layout, PadValue,
CMode, Canonicalize zero (``BundleTMATMULDataAttributesLegal``; RMode and Sat are the
fold's and the conversion's controls, and the matrix dispatch does not apply
``BundleFPATRDATRFieldsLegal``, which only the tile-schema path of other operations
calls: the ASL's own test PTO-AVS-BLOCK-TMATMUL-EXEC-001 executes PreQuantMode 0 with
RMode 1 and Sat set); M, N, K nonzero; TGEMV M = 1; TransA/TransB only for
a Shared primary; the auxiliary sources (RowMaxIn, quant and PReLU vectors and their
words); the mathematical sources (C, A, A scale, B, B scale, bias in stream order); C's
selector distinct from D's hand; then the destination group (Fault_TileAllocation). The
result is :func:`ptoc.backend.isa.semantics.matmul.matmul` once per participating PE
(DECISIONS D11), published with RowMaxOut and GroupMaxOut as one group.

Speed: once warm, the transport conversions and the plain matrix operations run their
fused forms (:mod:`.cube_fused`), which compute the same results without the generic
context and fall back here for anything unusual.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ptoc.backend.isa import DTYPE_NONE, TABLE, DataType, Executor, info, rows
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.cube import LOAD_CODES, STORE_CODES, CubeLayout, MatrixFunction
from ptoc.backend.isa.fields import LAYOUT_NAMES
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.backend.isa.semantics.core import SemanticError

from ..alloc import Dests, Slot
from ..bundle import BundlePlan
from ..engine import Ctx, Preparer, Runner
from ..faults import BundleControlFault, TileAllocationFault
from ..memory import dense_stride, footprint, gather, scatter_plan
from ..spec import Spec
from ..tiles import Layout, Tile, derived_rows, size_code_bytes
from .cube_fused import MatrixForm, fused_load, fused_matrix, fused_store

RM = Layout.ROW_MAJOR
_MAX_AUX_ELEMENTS = isa_cube.MAX_ELEMENTS


# ---------------------------------------------------------------- shared pieces


def cube_slot(
    ctx: Ctx, k: int, layout: CubeLayout, dt: DataType, valid_rows: int, valid_cols: int
) -> Slot | str:
    """The descriptor of CUBE destination ``k`` at its SizeCode, or why none exists
    (``TileCubeDescriptorShapeLegal``)."""
    return plan_slot(ctx.plan, ctx.mask, k, layout, dt, valid_rows, valid_cols)


def plan_slot(
    plan: BundlePlan, mask: int, k: int, layout: CubeLayout, dt: DataType, valid_rows: int,
    valid_cols: int,
) -> Slot | str:  # fmt: skip
    """:func:`cube_slot` of a bundle ``plan`` running on the PEs of ``mask`` (static: the
    preparers derive it once)."""
    hand, size = plan.destinations[k]
    cap = size_code_bytes(size)
    rule = isa_cube.shape_rule(cap, layout, dt, valid_rows, valid_cols)
    if rule is not None:
        return rule
    g = isa_cube.geometry(layout, dt, valid_rows, valid_cols)
    return Slot(k, int(hand), dt, g.rows, g.cols, valid_rows, valid_cols,
                Layout.of_cube(layout), mask, cap, info(dt).carrier)  # fmt: skip


def cube_descriptor_rule(t: Tile) -> str | None:
    """``TileCubeDescriptorLegal`` for a published tile: a numeric CUBE tile whose storage
    shape is the one its valid shape derives and fits its capacity."""
    layout = t.layout.cube
    if layout is None or t.dtype is None:
        return "is not a CUBE tile"
    rule = isa_cube.shape_rule(t.capacity, layout, t.dtype, t.valid_rows, t.valid_cols)
    if rule is not None:
        return f"has an illegal CUBE descriptor: {rule}"
    g = isa_cube.geometry(layout, t.dtype, t.valid_rows, t.valid_cols)
    if (t.rows, t.cols) != (g.rows, g.cols):
        return (
            f"has a {t.rows}x{t.cols} storage, not the {g.rows}x{g.cols} its valid shape "
            "derives (TileCubeDescriptorLegal)"
        )
    return None


# ---------------------------------------------------------------- transport


def transport(spec: Spec) -> Runner:
    """Any bundle whose B.DATR Layout is a CUBE conversion code (21..26)."""
    assert spec.datr is not None
    code = spec.datr.layout
    lname = LAYOUT_NAMES.get(code, str(code))
    kind = TABLE[spec.name].executor
    load = kind is Executor.LOAD and code in LOAD_CODES
    store = kind is Executor.STORE and code in STORE_CODES
    if not (load or store):
        want = Executor.LOAD if code in LOAD_CODES else Executor.STORE
        (which,) = (r.mnemonic for r in rows(executor=want))
        raise spec.illegal(
            f"B.DATR.Layout={lname} is a CUBE {want.value} conversion: only {which} takes "
            f"it, not {spec.name} (BundleCubeTransportDataAttributesLegal)"
        )
    vc, vr, lb2 = spec.dims
    if vc is None or vr is None or lb2 is not None or vc == 0 or vr == 0:
        raise spec.illegal(
            f"a CUBE {lname} {spec.name} needs LB0 = valid columns and LB1 = valid rows "
            "(both nonzero) and no LB2 (BundleCubeTransportDimensionsLegal)"
        )
    d = spec.datr
    if d.dtype != DTYPE_NONE or d.cmode or d.rmode or d.sat or d.canonicalize:
        raise spec.illegal(
            f"a CUBE {lname} {spec.name} takes B.DATR DataType DTYPE_NONE and zero CMode, "
            "RMode, Sat and Canonicalize (BundleCubeTransportDataAttributesLegal)"
        )
    if spec.plan.shared:
        raise spec.illegal(f"a CUBE {lname} {spec.name} takes no B.IOS")
    spec.require_bindings()
    if len(spec.plan.bindings) != 1:
        raise spec.illegal(f"a CUBE {lname} {spec.name} takes exactly one B.IOT")
    spec.require_ior_slots()
    code_dt = spec.dtype_code
    dt = None if code_dt == DTYPE_NONE else DataType(code_dt)
    if dt is None or not isa_cube.supported(dt):
        name = "DTYPE_NONE" if dt is None else dt.name
        raise spec.illegal(
            f"{name} cannot live in a CUBE tile (TileCubeDataTypeSupported): a CUBE "
            f"{lname} {spec.name} needs a CUBE-supported BSTART DataType"
        )
    layout = (LOAD_CODES if load else STORE_CODES)[code]
    return (
        _cube_load(spec, dt, layout, vr, vc) if load else _cube_store(spec, dt, layout, vr, vc)
    )


def _cube_load(spec: Spec, dt: DataType, layout: CubeLayout, vr: int, vc: int) -> Runner:
    pad = spec.datr.pad if spec.datr is not None else 0
    # a transport bundle binds one B.IOT: it runs on that binding's mask (participation)
    slot = plan_slot(spec.plan, spec.plan.mask, 0, layout, dt, vr, vc)
    dests = (
        None
        if isinstance(slot, str)
        else Dests((slot,), ((slot.hand, slot.mask, slot.capacity),))
    )
    default_stride = dense_stride(vc, dt)

    def run(ctx: Ctx) -> None:
        if dests is None:
            assert isinstance(slot, str)
            raise TileAllocationFault(slot, ctx.name)
        ctx.reserve(dests)
        (dest,) = dests.slots
        base = ctx.gpr_slot(0)
        stride = ctx.gpr_slot(1, default_stride)
        fp = footprint(dt, base, stride, vr, vc, ctx.state.config.gm_size, ctx.name,
                       False, ctx.pes)  # fmt: skip
        if ctx.state.access_log is not None:  # a grid launch records what it read (D13)
            ctx.state.access_log.read_footprint(fp)
        ctx.publish(dest, gather(ctx.state.gm, fp, dt), pad)

    run.fused = fused_load(spec.plan, spec.name, dt, slot, vr, vc, pad, default_stride)  # type: ignore[attr-defined]
    return run


def _cube_store(spec: Spec, dt: DataType, layout: CubeLayout, vr: int, vc: int) -> Runner:
    spec.reads_cube = True
    want = Layout.of_cube(layout)
    default_stride = dense_stride(vc, dt)

    def run(ctx: Ctx) -> None:
        t = ctx.sources[0]
        rule = cube_descriptor_rule(t)
        if rule is None and (t.layout, t.dtype, t.valid_rows, t.valid_cols) != (
            want, dt, vr, vc,
        ):  # fmt: skip
            rule = f"is {t.shape_text}; this store converts {dt.name} {vr}x{vc} {want.value}"
        if rule is not None:
            raise ctx.illegal(f"the CUBE store source {ctx.ref(0)} {rule}")
        ctx.source(0, dt, layout=want)  # definedness
        base = ctx.gpr_slot(0)
        stride = ctx.gpr_slot(1, default_stride)
        fp = footprint(dt, base, stride, vr, vc, ctx.state.config.gm_size, ctx.name,
                       True, ctx.pes)  # fmt: skip
        vals = t.payload[ctx.pidx, :vr, :vc]
        ctx.gm_writes.extend(scatter_plan(ctx.state.gm, fp, vals, stride))

    run.fused = fused_store(spec.plan, spec.name, dt, layout, vr, vc, default_stride)  # type: ignore[attr-defined]
    return run


# ---------------------------------------------------------------- matrix operations


class _Plan:
    """What the static preflight of one matrix bundle decided."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.fn = MatrixFunction(spec.op.function)
        self.a_type = DataType(spec.dtype_code)
        self.b_type = self.a_type
        self.m = self.n = self.k = 1
        self.f = sf.Fpatr()
        self.acc_type = DataType.FP32
        self.out_type = DataType.FP32
        self.a_scale = self.b_scale = False
        #: stream position of each role (None: absent)
        self.pos: dict[str, int] = {}
        self.scalars: tuple[str, ...] = ()
        #: the operand groups B.IOS carries, and each Shared role's B.IOS ordinal
        self.groups = isa_shared.SharedGroups.NONE
        self.shared_pos: dict[str, int] = {}


def _fpatr(spec: Spec) -> sf.Fpatr:
    g = spec.plan.fpatr
    if g is None:
        raise BundleControlFault(
            f"{spec.name} needs exactly one B.FPATR (an all-zero one selects no "
            "post-processing)",
            spec.name,
        )
    return isa_cube.fpatr_of(dict(g.fields))


def matmul(spec: Spec) -> Runner:
    """Every matrix operation: static preflight, then the runner (module docstring)."""
    spec.reads_cube = True
    p = _Plan(spec)
    p.f = f = _fpatr(spec)
    # 4. types (BType is B.DATR.DataType when B.DATR is present)
    if spec.datr is not None:
        if spec.datr.dtype == DTYPE_NONE:
            raise spec.illegal(
                f"{spec.name}: a present B.DATR names BType in its DataType field; "
                "DTYPE_NONE names none (restate AType to keep it)"
            )
        p.b_type = DataType(spec.datr.dtype)
    mx = p.fn.mx
    if not sm.pair_legal(p.a_type, p.b_type, mx):
        rule = "TileMXOperandPairLegal" if mx else "TileOrdinaryMatrixInputTypesSameClass"
        legal = ", ".join(
            sorted(t.name for t in (sm.MX_INPUT_TYPES if mx else sm.MATRIX_INPUT_TYPES))
        )
        raise spec.illegal(
            f"AType {p.a_type.name} x BType {p.b_type.name} is not a legal {spec.name} pair "
            f"({rule}; types {legal}"
            + ("" if mx else ", both floating, both signed or both unsigned")
            + ")"
        )
    p.acc_type = sm.accumulator_type(p.a_type, p.b_type, mx)
    if not sf.fields_legal(f):
        raise spec.illegal(
            "B.FPATR fields are inconsistent (BundleFPATRFieldsLegal: RowMaxInit needs "
            "RowMaxEn, GroupMaxEn exactly when GroupNCode is nonzero, MaxAbsEn needs a "
            "reduction)"
        )
    p.a_scale = sm.needs_scale(p.a_type, mx)
    p.b_scale = sm.needs_scale(p.b_type, mx)
    if spec.plan.shared and not spec.op.ios_legal:
        raise spec.illegal(f"{spec.name} is Local-only: it takes no B.IOS")
    _shared_groups(spec, p)
    _stream(spec, p)
    _ior_schema(spec, p)
    _datr(spec)
    # dimensions: an absent LB is 1, an encoded zero is illegal
    m, n, k = (1 if v is None else v for v in spec.dims)
    if 0 in (m, n, k):
        raise spec.illegal(f"{spec.name} needs nonzero M (LB0), N (LB1) and K (LB2)")
    shared = p.groups is not isa_shared.SharedGroups.NONE
    if shared and not all(isa_shared.is_power_of_two(v) for v in (m, n, k)):
        raise spec.illegal(
            f"{spec.name} with Shared operands needs M (LB0), N (LB1) and K (LB2) powers "
            f"of two, not {m}, {n}, {k} (BundleTMATMULDimensionsLegal)"
        )
    _masks_agree(spec)
    p.m, p.n, p.k = m, n, k
    if p.fn.gemv and m != 1:
        raise spec.illegal(f"{spec.name} computes one row: M (LB0) must be 1, not {m}")
    if (f.trans_a or f.trans_b) and not shared:
        raise spec.illegal(
            "B.FPATR TransA/TransB transpose a Shared primary only; this bundle's "
            "primaries are Local (BundleMatrixSharedSchemasLegal)"
        )
    if f.trans_a and p.groups is not isa_shared.SharedGroups.BOTH:
        raise spec.illegal(
            "B.FPATR TransA transposes a Shared A; this bundle's A is Local (only B is "
            "Shared) (BundleMatrixSharedSchemasLegal)"
        )
    p.out_type = (
        sf.output_type(f, p.acc_type) if f.pre_quant_mode in sf.PRE_QUANT else p.acc_type
    )

    form = _plain_form(spec, p)
    if form is None:

        def run(ctx: Ctx) -> None:
            _run(ctx, p)

        return run

    def run_plain(ctx: Ctx) -> None:
        form.accept(ctx.sources, _run(ctx, p))  # passed: the fused form may take these

    run_plain.fused = fused_matrix(spec.plan, spec.name, form)  # type: ignore[attr-defined]
    return run_plain


def _plain_form(spec: Spec, p: _Plan) -> MatrixForm | None:
    """The fused form's facts when the bundle is a plain matrix operation (Local A and
    B, C for the ACC forms, nothing else: the only data-dependent checks left are on
    the sources' descriptors), else None."""
    f = p.f
    if (
        p.scalars
        or p.shared_pos
        or spec.plan.shared
        or p.a_scale
        or p.b_scale
        or p.fn.bias
        or f.row_max
        or f.group_max
        or not {"A", "B"} <= set(p.pos) <= {"A", "B", "C"}
    ):
        return None
    return MatrixForm(p.a_type, p.b_type, p.fn.mx, f, p.pos, spec.rmode, spec.sat)


def _shared_groups(spec: Spec, p: _Plan) -> None:
    """The complete operand groups the B.IOS sources carry
    (``TileMatrixSharedSourceCountLegal``), in stream order: the left group (A, its
    scale) before the right group (B, its scale); every B.IOS is a source."""
    ios = spec.plan.shared
    groups = isa_shared.shared_groups(p.fn, p.a_scale, p.b_scale, len(ios))
    if groups is None:
        right = isa_shared.group_size(p.fn, p.b_scale)
        both = isa_shared.group_size(p.fn, p.a_scale) + right
        raise spec.illegal(
            f"{spec.name} takes Shared operands in complete groups: {right} B.IOS (the right "
            f"group) or {both} (both groups), not {len(ios)} "
            "(TileMatrixSharedSourceCountLegal)"
        )
    p.groups = groups
    roles: list[str] = []
    if groups is isa_shared.SharedGroups.BOTH:
        roles += ["A"] + (["A scale"] if p.a_scale else [])
    if groups is not isa_shared.SharedGroups.NONE:
        roles += ["B"] + (["B scale"] if p.b_scale else [])
    p.shared_pos = {r: i for i, r in enumerate(roles)}
    for i, b in enumerate(ios):
        if b.size:
            raise spec.illegal(
                f"{spec.name} reads its Shared operands: B.IOS {i} (S{b.tid}) must be a "
                "source (no ->S destination) (BundleMatrixSharedSourceSchemaLegal)"
            )


def _masks_agree(spec: Spec) -> None:
    """``BundleTMATMULMasksAgree``: every Local and Shared binding has one PE_MASK."""
    masks = {b.mask for b in spec.plan.bindings} | {b.mask for b in spec.plan.shared}
    if len(masks) > 1:
        raise spec.illegal(
            f"{spec.name}: every B.IOT and B.IOS of a matrix bundle uses one PE_MASK, not "
            + ", ".join(sorted(f"{m:04b}" for m in masks))
        )


def _stream(spec: Spec, p: _Plan) -> None:
    """Local source stream positions and the counts B.FPATR implies, after the Shared
    groups are removed (``BundleMatrixDynamicBindingsComplete``,
    ``TileMatrixLocalMathematicalSourceCount``)."""
    fn, f = p.fn, p.f
    roles: list[str] = []
    if fn.acc:
        roles.append("C")
    if "A" not in p.shared_pos:
        roles.append("A")
        if p.a_scale:
            roles.append("A scale")
    if "B" not in p.shared_pos:
        roles.append("B")
        if p.b_scale:
            roles.append("B scale")
    if fn.bias:
        roles.append("bias")
    roles.extend(sf.vector_sources(f))
    p.pos = {r: i for i, r in enumerate(roles)}
    dsts = 1 + f.row_max + f.group_max
    got_s, got_d = len(spec.plan.sources), len(spec.plan.destinations)
    if (got_s, got_d) != (len(roles), dsts):
        outs = ["D"] + ["RowMaxOut"] * f.row_max + ["GroupMaxOut"] * f.group_max
        shared = f" beside {len(spec.plan.shared)} Shared" if spec.plan.shared else ""
        raise spec.illegal(
            f"{spec.name} with this B.FPATR{shared} binds {len(roles)} Local sources "
            f"({', '.join(roles)}) and {dsts} destination(s) ({', '.join(outs)}); the "
            f"bundle binds {got_s} and {got_d}"
        )


def _ior_schema(spec: Spec, p: _Plan) -> None:
    """B.IOR carries the scalar post-processing words, quant first, in RegSrc0, RegSrc1."""
    p.scalars = sf.scalar_parameters(p.f)
    ior = spec.plan.ior
    need = len(p.scalars)
    if ior is None:
        if need:
            raise spec.illegal(
                f"B.FPATR selects scalar parameter(s) {', '.join(p.scalars)}: B.IOR must "
                f"bind them in RegSrc0..{need - 1}"
            )
        return
    extra = [i for i, r in enumerate(ior.sources) if i >= need and r]
    if extra or ior.dst:
        raise spec.illegal(
            f"{spec.name} reads {need} B.IOR word(s) ({', '.join(p.scalars) or 'none'}); "
            "the other RegSrc slots and RegDst must be zero "
            "(BundleOperationScalarBindingSchemaLegal)"
        )


def _datr(spec: Spec) -> None:
    d = spec.datr
    if d is None:
        return
    if d.layout or d.pad or d.cmode or d.canonicalize:
        raise spec.illegal(
            f"{spec.name} takes only BType, RMode and Sat in B.DATR: Layout, PadValue, "
            "CMode and Canonicalize must be zero (BundleTMATMULDataAttributesLegal)"
        )


def _scalar_words(ctx: Ctx, p: _Plan) -> dict[str, np.ndarray]:
    """The B.IOR words per participating PE, checked
    (``BundleOperationGPRBindingValuesLegal``)."""
    out: dict[str, np.ndarray] = {}
    for slot, what in enumerate(p.scalars):
        w = ctx.gpr_slot(slot)
        ok = (
            sf.quant_param_legal(p.f.pre_quant_mode, w)
            if what == "quant"
            else sf.relu_param_legal(w)
        )
        if not bool(np.all(ok)):
            bad = int(w[~ok][0])
            rule = (
                "BundleFPATRQuantParameterWordLegal" if what == "quant"
                else "BundleFPATRReluParameterWordLegal"
            )  # fmt: skip
            raise ctx.illegal(
                f"the B.IOR RegSrc{slot} {what} parameter word 0x{bad:x} is not legal for "
                f"this B.FPATR ({rule})"
            )
        out[what] = w
    return out


def _row_major(ctx: Ctx, i: int, role: str, dt: DataType, rows: int, cols: int) -> Tile:
    """An auxiliary or supplementary RowMajor source of the given valid shape and type."""
    t = ctx.sources[i]
    if t.dtype is None or t.layout is not RM:
        raise ctx.illegal(
            f"the {role} {ctx.ref(i)} must be a RowMajor {dt.name} tile, not {t.shape_text}"
        )
    if t.dtype != dt or (t.valid_rows, t.valid_cols) != (rows, cols):
        raise ctx.illegal(
            f"the {role} {ctx.ref(i)} must be {dt.name} {rows}x{cols}, not {t.shape_text}"
        )
    return ctx.source(i, dt, layout=RM)


def _cube_source(
    ctx: Ctx, i: int, role: str, dt: DataType, rows: int, cols: int, layout: Layout | None
) -> Tile:
    """A CUBE primary or accumulator (``TileMatrixLocalPrimaryInfoLegal``)."""
    t = ctx.sources[i]
    rule = cube_descriptor_rule(t)
    if rule is not None:
        raise ctx.illegal(f"the {role} {ctx.ref(i)} {rule}")
    want = f"{dt.name} {rows}x{cols}" + (f" {layout.value}" if layout else "")
    if (t.dtype, t.valid_rows, t.valid_cols) != (dt, rows, cols) or (
        layout is not None and t.layout is not layout
    ):
        raise ctx.illegal(f"the {role} {ctx.ref(i)} must be {want}, not {t.shape_text}")
    return ctx.source(i, dt, layout=t.layout)


def _m_layout_legal(ctx: Ctx, layout: Layout, m: int) -> None:
    """``TileMatrixMLayoutLegal``: M fits the rows of the M layout of A, C and D."""
    limit = isa_cube.M_LIMIT[layout.value]
    if m > limit:
        raise ctx.illegal(
            f"M = {m} exceeds the {limit} rows a {layout.value} primary holds "
            "(TileMatrixMLayoutLegal)"
        )


def _per_pe(ctx: Ctx, operand: Tile | np.ndarray) -> np.ndarray:
    """(P, rows, cols) values of a Local tile on the participating PEs, or of a Shared
    operand (one core-wide array: every PE reads the same values)."""
    if isinstance(operand, Tile):
        return ctx.values(operand)
    return np.broadcast_to(operand, (ctx.P, *operand.shape))


def _shared_operands(ctx: Ctx, p: _Plan) -> dict[str, np.ndarray]:
    """Each Shared operand's logical values, after its readiness and read schema
    (``BundleMatrixSharedSchemasLegal``): the register is cooperatively ready
    (``SharedTileCooperativeMatrixReady``) and RowMajor, of the operand's DataType, its
    Col is the stored operand's columns and its valid region covers the stored rectangle
    (``SharedTileReadSchemaLegal``). A TransA/TransB primary is stored transposed (K x M,
    N x K) and read as its transpose (``MaterializeBundleSharedMatrixPrimary``)."""
    m, n, k = p.m, p.n, p.k
    blocks = sm.scale_blocks(k)
    want = {
        "A": (m, k, p.a_type, p.f.trans_a),
        "A scale": (m, blocks, DataType.E8M0, False),
        "B": (k, n, p.b_type, p.f.trans_b),
        "B scale": (blocks, n, DataType.E8M0, False),
    }
    out: dict[str, np.ndarray] = {}
    for role, i in p.shared_pos.items():
        tid = ctx.plan.shared[i].tid
        rows, cols, dt, trans = want[role]
        s_rows, s_cols = (cols, rows) if trans else (rows, cols)
        rec = ctx.state.shared.get(tid)
        if rec is None or not rec.matrix_ready:
            state = "unallocated" if rec is None else rec.shape_text
            raise ctx.illegal(
                f"the Shared {role} S{tid} is not cooperatively ready ({state}): a matrix "
                "operand is allocated and initialized on all four PEs and published "
                "(SharedTileCooperativeMatrixReady)"
            )
        if (
            rec.layout is not RM
            or rec.dtype != dt
            or rec.cols != s_cols
            or s_rows > rec.valid_rows
            or s_cols > rec.valid_cols
        ):
            what = f"{dt.name} {s_rows}x{s_cols} of Col {s_cols}"
            raise ctx.illegal(
                f"the Shared {role} S{tid} is {rec.shape_text}; this bundle reads "
                f"{what}{' (stored transposed)' if trans else ''} RowMajor "
                "(SharedTileReadSchemaLegal)"
            )
        vals = rec.payload[:s_rows, :s_cols]
        out[role] = vals.T if trans else vals
    return out


def _run(ctx: Ctx, p: _Plan) -> Slot:
    """Run a matrix bundle (module docstring: checks in the ASL's order); returns D's
    descriptor."""
    f, fn = p.f, p.fn
    m, n, k = p.m, p.n, p.k
    pos = p.pos
    words = _scalar_words(ctx, p)
    shared_vals = _shared_operands(ctx, p)
    # 7. the accumulator class the PreQuantMode converts, then the auxiliary sources
    try:
        sf.check_accumulator(f, p.acc_type)
    except SemanticError as e:
        raise ctx.illegal(e.rule) from None
    vec: dict[str, Tile] = {}
    if "RowMaxIn" in pos:
        vec["RowMaxIn"] = _row_major(ctx, pos["RowMaxIn"], "RowMaxIn", p.acc_type, m, 1)
    for name, legal in (("QuantVector", "quant"), ("ReluVector", "relu")):
        if name in pos:
            t = _row_major(ctx, pos[name], name, DataType.U64, 1, n)
            w = ctx.values(t)
            ok = (
                sf.quant_param_legal(f.pre_quant_mode, w)
                if legal == "quant"
                else (sf.relu_param_legal(w))
            )
            if not bool(np.all(ok)):
                raise ctx.illegal(
                    f"the {name} {ctx.ref(pos[name])} holds a word that is not a legal "
                    f"{legal} parameter (TileMatrixVector"
                    f"{'Quant' if legal == 'quant' else 'Relu'}ContentsLegal)"
                )
            vec[name] = t
    # 8. mathematical sources, in stream order (Local ones; the Shared ones were read
    # above)
    blocks = sm.scale_blocks(k)
    a_local = "A" in pos
    a_layout = ctx.sources[pos["A"]].layout if a_local else None
    c = None
    if fn.acc:
        want = a_layout if a_layout is not None and a_layout.cube is not CubeLayout.N8 else None
        c = _cube_source(ctx, pos["C"], "accumulator C", p.acc_type, m, n, want)
    a: Tile | np.ndarray
    if a_local:
        a_i = pos["A"]
        a_t = ctx.sources[a_i]
        if a_t.layout.cube not in (CubeLayout.M16, CubeLayout.M32):
            raise ctx.illegal(
                f"the left operand A {ctx.ref(a_i)} must be a CUBE_M16 or CUBE_M32 tile, "
                f"not {a_t.shape_text} (TileMatrixLocalMOperandSchemaLegal)"
            )
        _m_layout_legal(ctx, a_t.layout, m)
        a = _cube_source(ctx, a_i, "left operand A", p.a_type, m, k, a_t.layout)
        d_layout = a_t.layout
    else:
        a = shared_vals["A"]
        # BundleMatrixCooperativeMLayout: C's layout, else the smallest that holds M
        d_layout = c.layout if c is not None else (
            Layout.CUBE_M16 if m <= 16 else Layout.CUBE_M32
        )  # fmt: skip
        if c is not None and c.layout.cube not in (CubeLayout.M16, CubeLayout.M32):
            raise ctx.illegal(
                f"the accumulator C {ctx.ref(pos['C'])} must be a CUBE_M16 or CUBE_M32 "
                f"tile, not {c.shape_text} (BundleMatrixCooperativeMLayout)"
            )
        _m_layout_legal(ctx, d_layout, m)
    sa: Tile | np.ndarray | None = None
    if p.a_scale:
        sa = (
            _row_major(ctx, pos["A scale"], "A scale", DataType.E8M0, m, blocks)
            if "A scale" in pos
            else shared_vals["A scale"]
        )
    b: Tile | np.ndarray = (
        _cube_source(ctx, pos["B"], "right operand B", p.b_type, k, n, Layout.CUBE_N8)
        if "B" in pos
        else shared_vals["B"]
    )
    sb: Tile | np.ndarray | None = None
    if p.b_scale:
        sb = (
            _row_major(ctx, pos["B scale"], "B scale", DataType.E8M0, blocks, n)
            if "B scale" in pos
            else shared_vals["B scale"]
        )
    bias = _row_major(ctx, pos["bias"], "bias", p.acc_type, 1, n) if fn.bias else None
    # 9. C's encoded selector differs from D's zero-extended hand code
    d_hand, d_size = ctx.plan.destinations[0]
    c_code = ctx.plan.sources[pos["C"]].code if c is not None else -1
    if c_code == int(d_hand):
        raise ctx.illegal(
            f"the accumulator selector {ctx.ref(pos['C'])} (code {c_code}) "
            f"equals D's DstTile hand code {int(d_hand)} "
            "(BundleMatrixAccumulatorDestinationIndicesDistinct)"
        )
    if c is not None and f.pre_quant_mode == 0 and c.capacity != size_code_bytes(d_size):
        raise ctx.illegal(
            f"the accumulator C {ctx.ref(pos['C'])} has a {c.capacity}-byte TSize, D's is "
            f"{size_code_bytes(d_size)} (TileMatrixLocalCubeAccumulatorSchemaLegal: equal "
            "unless B.FPATR converts the output)"
        )
    # 11. the destination group
    layout = d_layout.cube
    assert layout is not None
    d_slot = cube_slot(ctx, 0, layout, p.out_type, m, n)
    if isinstance(d_slot, str):
        raise TileAllocationFault(f"D: {d_slot}", ctx.name)
    slots = [d_slot]
    aux_cols = []
    if f.row_max:
        aux_cols.append(("RowMaxOut", 1))
    if f.group_max:
        aux_cols.append(("GroupMaxOut", sf.group_columns(n, f)))
    for j, (name, cols) in enumerate(aux_cols, start=1):
        hand, size = ctx.plan.destinations[j]
        cap = size_code_bytes(size)
        rows = derived_rows(cap, cols, info(p.acc_type).bits)
        if rows == 0 or rows < m or rows * cols > _MAX_AUX_ELEMENTS:
            raise TileAllocationFault(
                f"{name}: a {cap}-byte TSize holds no {p.acc_type.name} {m}x{cols} RowMajor "
                "tile (TileDescriptorShapeLegal)",
                ctx.name,
            )
        slots.append(Slot(j, int(hand), p.acc_type, rows, cols, m, cols, RM, ctx.mask, cap,
                          info(p.acc_type).carrier))  # fmt: skip
    ctx.reserve(Dests(tuple(slots), tuple((s.hand, s.mask, s.capacity) for s in slots)))
    # 12. compute per participating PE, publish the group at once
    av, bv = _per_pe(ctx, a), _per_pe(ctx, b)
    cv = None if c is None else ctx.values(c)
    sav = None if sa is None else _per_pe(ctx, sa)
    sbv = None if sb is None else _per_pe(ctx, sb)
    biasv = None if bias is None else ctx.values(bias)
    rmi = None if "RowMaxIn" not in vec else ctx.values(vec["RowMaxIn"])
    qv = None if "QuantVector" not in vec else ctx.values(vec["QuantVector"])
    rv = None if "ReluVector" not in vec else ctx.values(vec["ReluVector"])
    rmode = ctx.spec.rmode
    sat = ctx.spec.sat
    ds, rms, gms, status = [], [], [], np.zeros(ctx.P, np.uint8)
    for q in range(ctx.P):
        quant: int | np.ndarray | None = None
        if "quant" in words:
            quant = int(words["quant"][q])
        elif qv is not None:
            quant = qv[q]
        relu: int | np.ndarray | None = None
        if "relu" in words:
            relu = int(words["relu"][q])
        elif rv is not None:
            relu = rv[q]
        r = sm.matmul(
            av[q], p.a_type, bv[q], p.b_type,
            acc=None if cv is None else cv[q],
            bias=None if biasv is None else biasv[q],
            a_scale=None if sav is None else sav[q],
            b_scale=None if sbv is None else sbv[q],
            mx=fn.mx, rmode=rmode, sat=sat, fpatr=f, quant=quant, relu_param=relu,
            row_max_in=None if rmi is None else rmi[q],
        )  # fmt: skip
        ds.append(r.d)
        rms.append(r.row_max)
        gms.append(r.group_max)
        status[q] = r.status
    ctx.publish(d_slot, _stack(ds, d_slot))
    j = 1
    if f.row_max:
        ctx.publish(slots[j], _stack(rms, slots[j]))
        j += 1
    if f.group_max:
        ctx.publish(slots[j], _stack(gms, slots[j]))
    ctx.add_status(status)
    return d_slot


def _stack(parts: list[np.ndarray | None], slot: Slot) -> np.ndarray:
    arr = np.stack([np.asarray(x) for x in parts])
    if arr.dtype != slot.carrier:
        arr = arr.astype(slot.carrier)
    return arr


__all__ = ["cube_descriptor_rule", "cube_slot", "matmul", "plan_slot", "transport"]


#: the preparers of this family, by the executor kind the operation table names (the
#: CUBE transport conversions are TLOAD/TSTORE bundles routed here by their B.DATR Layout)
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType({Executor.MATMUL: matmul})
