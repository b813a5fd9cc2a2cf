"""The CUBE engine's ASL functions, bound to ptoc.

Cell geometry and descriptor rules are ``ptoc.backend.isa.cube`` (the one source of
truth); matrix type rules are ``ptoc.backend.isa.semantics.matmul``. A direct call of a
matrix handler (``TMATMUL(d, a, b)``, ``TMATMUL_ACC(d, c, a, b)``, the MX forms with
both scale slots) becomes the ptoc bundle that means it: AType = A's type, a B.DATR
naming BType when it differs, an all-zero B.FPATR, LB0..LB2 = M, N, K from the operand
descriptors, the sources in stream order (an MX side's scale only when its type needs
one). The ASL reference profile computes floating matrix products on raw carrier words
(``TileProfileMatrixAccumulate`` and its siblings are impdef); DECISIONS D11 replaces
that profile with IEEE arithmetic, so a direct execution with floating operands is "not
applicable" (D11), while integer operands, where both agree, run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa import DataType, Family, catalog, form
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa import op as op_def
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.cube import CubeLayout, MatrixFunction
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.backend.isa.semantics.core import from_bits, to_bits
from ptoc.backend.program import Generic

from ..outcome import NotApplicable
from ..values import AslRuntimeError, Bits, ElementBits, Enum
from .core import PtocModel, binding
from .elements import ROUNDINGS
from .harness import allocate_numeric
from .tiles import TileInfo, data_type, dtype_enum, element_bits

_LAYOUTS = {f"TileLayout_{c.value}": c for c in CubeLayout}


def _int(v: Any) -> int:
    return v.value if isinstance(v, Bits) else int(v)


def cube_layout(e: Any) -> CubeLayout | None:
    return _LAYOUTS.get(e.name) if isinstance(e, Enum) else None


def _dt(e: Any) -> DataType | None:
    try:
        return data_type(e)
    except Exception:
        return None


def _geometry(layout: Any, vr: Any, vc: Any, dt: Any) -> isa_cube.CubeGeometry:
    lay, d = cube_layout(layout), _dt(dt)
    if lay is None or d is None:
        return isa_cube.CubeGeometry(0, 0, 0, 0, 0, 0, 0)
    return isa_cube.geometry(lay, d, _int(vr), _int(vc))


# ----------------------------------------------------------------------------- geometry


@binding("TileLayoutIsCube")
def layout_is_cube(m: PtocModel, layout: Enum) -> bool:
    return cube_layout(layout) is not None


@binding("TileCubeDataTypeSupported")
def cube_type_supported(m: PtocModel, dt: Enum) -> bool:
    d = _dt(dt)
    return d is not None and isa_cube.supported(d)


@binding("TileCubeCellRows")
def cell_rows(m: PtocModel, layout: Enum, dt: Enum) -> int:
    lay, d = cube_layout(layout), _dt(dt)
    return 0 if lay is None or d is None else isa_cube.cell_shape(lay, d)[0]


@binding("TileCubeCellColumns")
def cell_columns(m: PtocModel, layout: Enum, dt: Enum) -> int:
    lay, d = cube_layout(layout), _dt(dt)
    return 0 if lay is None or d is None else isa_cube.cell_shape(lay, d)[1]


@binding("TileCubeStorageRows")
def storage_rows(m: PtocModel, layout: Enum, vr: Any, dt: Enum) -> int:
    return _geometry(layout, vr, 1, dt).rows


@binding("TileCubeStorageColumns")
def storage_columns(m: PtocModel, layout: Enum, vc: Any, dt: Enum) -> int:
    return _geometry(layout, 1, vc, dt).cols


@binding("TileCubeKRepeat")
def k_repeat(m: PtocModel, layout: Enum, vr: Any, vc: Any, dt: Enum) -> int:
    return _geometry(layout, vr, vc, dt).k_repeat


@binding("TileCubeNRepeat")
def n_repeat(m: PtocModel, layout: Enum, vc: Any, dt: Enum) -> int:
    return _geometry(layout, 1, vc, dt).n_repeat


@binding("TileCubeCellCount")
def cell_count(m: PtocModel, layout: Enum, vr: Any, vc: Any, dt: Enum) -> int:
    return _geometry(layout, vr, vc, dt).cells


@binding("TileCubeStorageElements")
def storage_elements(m: PtocModel, layout: Enum, vr: Any, vc: Any, dt: Enum) -> int:
    return _geometry(layout, vr, vc, dt).elements


@binding("TileCubeRequiredBytes")
def required_bytes(m: PtocModel, layout: Enum, vr: Any, vc: Any, dt: Enum) -> int:
    return _geometry(layout, vr, vc, dt).bytes


def _capacity_legal(cap: int) -> bool:
    """``TileCapacityIsLegal``: whole cells up to the largest allocation (64 KiB)."""
    return 128 <= cap <= 65536 and cap % 128 == 0


@binding("TileCubeDescriptorShapeLegal")
def descriptor_shape_legal(
    m: PtocModel, cap: Any, vr: Any, vc: Any, dt: Enum, layout: Enum
) -> bool:
    lay, d = cube_layout(layout), _dt(dt)
    if lay is None or d is None or not _capacity_legal(_int(cap)):
        return False
    return isa_cube.shape_rule(_int(cap), lay, d, _int(vr), _int(vc)) is None


@binding("TileCubeCellElementIndex")
def cell_element_index(m: PtocModel, layout: Enum, dt: Enum, row: Any, col: Any) -> int:
    lay, d = cube_layout(layout), _dt(dt)
    assert lay is not None and d is not None
    return isa_cube.cell_element_index(lay, d, _int(row), _int(col))


@binding("TileCubePayloadIndex")
def payload_index(m: PtocModel, tile: TileInfo, row: Any, col: Any) -> int:
    lay = cube_layout(tile.layout)
    assert lay is not None
    return isa_cube.payload_index(
        lay, tile.dtype, tile.valid_rows, tile.valid_columns, _int(row), _int(col)
    )


@binding("TileCubeDescriptorLegal")
def descriptor_legal(m: PtocModel, tile: TileInfo) -> bool:
    lay = cube_layout(tile.layout)
    if not tile.allocated or tile.predicate or lay is None:
        return False
    if tile.location.name != "TileLocation_Matrix":
        return False
    if not descriptor_shape_legal(
        m, tile.capacity_bytes, tile.valid_rows, tile.valid_columns, tile.data_type, tile.layout
    ):
        return False
    g = isa_cube.geometry(lay, tile.dtype, tile.valid_rows, tile.valid_columns)
    return (
        (tile.rows, tile.columns, tile.cube_k_repeat, tile.cube_n_repeat)
        == (g.rows, g.cols, g.k_repeat, g.n_repeat)
        and (tile.cube_cell_count, tile.cube_storage_bytes) == (g.cells, g.bytes)
        and g.bytes <= tile.capacity_bytes
    )


# ----------------------------------------------------------------------------- allocation


@binding("ConfigureCubeTileForMask", harness=True)
def configure_cube_tile_for_mask(
    m: PtocModel, index: Any, cap: Any, vr: Any, vc: Any, dt: Enum, layout: Enum,
    location: Enum, mask: Any,
) -> bool:  # fmt: skip
    """``ConfigureCubeTileForMask``: FALSE (nothing changes) for a zero mask, a location
    other than Matrix, an illegal CUBE descriptor or exhausted capacity."""
    i, cap, vr, vc, mask = _int(index), _int(cap), _int(vr), _int(vc), _int(mask)
    if mask == 0 or location.name != "TileLocation_Matrix":
        return False
    if not descriptor_shape_legal(m, cap, vr, vc, dt, layout):
        return False
    if m.capacity_in_use(i) + bin(mask).count("1") * cap > m.tile_capacity:
        return False
    g = _geometry(layout, vr, vc, dt)
    t = allocate_numeric(m, i, mask, cap, (g.rows, g.cols), (vr, vc), dt)
    t.layout = layout
    t.location = location
    t.cube_k_repeat, t.cube_n_repeat = g.k_repeat, g.n_repeat
    t.cube_cell_count, t.cube_storage_bytes = g.cells, g.bytes
    return True


@binding("ConfigureCubeTile", harness=True)
def configure_cube_tile(
    m: PtocModel, index: Any, cap: Any, vr: Any, vc: Any, dt: Enum, layout: Enum,
    location: Enum,
) -> bool:  # fmt: skip
    return configure_cube_tile_for_mask(m, index, cap, vr, vc, dt, layout, location, 0b0001)


# ----------------------------------------------------------------------------- types


@binding("TileMXInputTypeSupported")
def mx_type_supported(m: PtocModel, dt: Enum) -> bool:
    return _dt(dt) in sm.MX_INPUT_TYPES


@binding("TileMXInputTypeNeedsScale")
def mx_needs_scale(m: PtocModel, dt: Enum) -> bool:
    return _dt(dt) in sm.MX_SCALED_TYPES


@binding("TileMXOperandPairLegal")
def mx_pair_legal(m: PtocModel, a: Enum, b: Enum) -> bool:
    da, db = _dt(a), _dt(b)
    return da is not None and db is not None and sm.pair_legal(da, db, mx=True)


@binding("TileOrdinaryMatrixInputTypesSameClass")
def same_class(m: PtocModel, a: Enum, b: Enum) -> bool:
    da, db = _dt(a), _dt(b)
    return da is not None and db is not None and sm.pair_legal(da, db)


@binding("TileOrdinaryMatrixInputTypeSupported")
def ordinary_type_supported(m: PtocModel, dt: Enum) -> bool:
    return _dt(dt) in sm.MATRIX_INPUT_TYPES


@binding("TileOrdinaryMatrixAccumulatorType")
def accumulator_type(m: PtocModel, a: Enum, b: Enum) -> Enum:
    da, db = data_type(a), data_type(b)
    if not sm.pair_legal(da, db):
        # the ASL function is total over its inputs: FP32 for floats, else by A's class
        cls = sm.type_class(da)
        return dtype_enum(
            {"float": DataType.FP32, "signed": DataType.S32}.get(cls, DataType.U32)
        )
    return dtype_enum(sm.accumulator_type(da, db))


@binding("TileMatrixFunctionAssigned")
def function_assigned(m: PtocModel, fn: Any) -> bool:
    return _int(fn) in {o.function for o in catalog.OPS if o.family is Family.CUBE}


def _function(fn: Any) -> MatrixFunction | None:
    """The assigned CUBE function ``fn`` names, or None (the ASL predicates are FALSE
    for an unassigned code even where its bits would say otherwise)."""
    code = _int(fn)
    assigned = {o.function for o in catalog.OPS if o.family is Family.CUBE}
    return MatrixFunction(code) if code in assigned else None


@binding("TileMatrixFunctionIsGEMV")
def function_is_gemv(m: PtocModel, fn: Any) -> bool:
    f = _function(fn)
    return f is not None and f.gemv


@binding("TileMatrixFunctionUsesMX")
def function_uses_mx(m: PtocModel, fn: Any) -> bool:
    f = _function(fn)
    return f is not None and f.mx


@binding("TileMatrixFunctionUsesBias")
def function_uses_bias(m: PtocModel, fn: Any) -> bool:
    f = _function(fn)
    return f is not None and f.bias


@binding("TileMatrixFunctionUsesAccumulator")
def function_uses_accumulator(m: PtocModel, fn: Any) -> bool:
    f = _function(fn)
    return f is not None and f.acc


def _groups(fn: Any, left: Enum, right: Enum) -> tuple[MatrixFunction, int, int]:
    """(function, left and right group sizes): ``TileMatrix{Left,Right}GroupSourceCount``."""
    f = _function(fn)
    if f is None:
        raise AslRuntimeError(f"CUBE function {_int(fn)} is not assigned")
    a, b = data_type(left), data_type(right)
    return (
        f,
        isa_shared.group_size(f, sm.needs_scale(a, f.mx)),
        isa_shared.group_size(f, sm.needs_scale(b, f.mx)),
    )


@binding("TileMatrixMathematicalSourceCount")
def mathematical_source_count(m: PtocModel, fn: Any, left: Enum, right: Enum) -> int:
    f, lg, rg = _groups(fn, left, right)
    return lg + rg + (1 if f.bias or f.acc else 0)


@binding("TileMatrixSharedSourceCountLegal")
def shared_source_count_legal(
    m: PtocModel, fn: Any, left: Enum, right: Enum, count: Any
) -> bool:
    f = _function(fn)
    if f is None:
        raise AslRuntimeError(f"CUBE function {_int(fn)} is not assigned")
    a, b = data_type(left), data_type(right)
    groups = isa_shared.shared_groups(
        f, sm.needs_scale(a, f.mx), sm.needs_scale(b, f.mx), _int(count)
    )
    return groups is not None


@binding("TileMatrixLocalMathematicalSourceCount")
def local_source_count(m: PtocModel, fn: Any, left: Enum, right: Enum, count: Any) -> int:
    """The Local mathematical sources once the Shared groups are taken out (ACC's C or
    the bias stays Local)."""
    f, lg, rg = _groups(fn, left, right)
    a, b = data_type(left), data_type(right)
    groups = isa_shared.shared_groups(
        f, sm.needs_scale(a, f.mx), sm.needs_scale(b, f.mx), _int(count)
    )
    if groups is None:
        raise AslRuntimeError(f"{_int(count)} Shared sources form no complete operand group")
    local = {isa_shared.SharedGroups.NONE: lg + rg, isa_shared.SharedGroups.RIGHT: lg}
    return local.get(groups, 0) + (1 if f.bias or f.acc else 0)


# ----------------------------------------------------------------------------- primaries


@binding("TileMatrixMLayoutLegal")
def m_layout_legal(m: PtocModel, layout: Enum, rows: Any) -> bool:
    """A/C/D in CUBE_M16 or CUBE_M32 with M within the layout's limit."""
    lay = cube_layout(layout)
    limit = isa_cube.M_LIMIT.get(lay.value) if lay is not None else None
    return limit is not None and 1 <= _int(rows) <= limit


@binding("TileMatrixLocalPrimaryInfoLegal")
def local_primary_info_legal(
    m: PtocModel, tile: TileInfo, vr: Any, vc: Any, dt: Enum, layout: Enum
) -> bool:
    return (
        descriptor_legal(m, tile)
        and tile.contents_defined
        and (tile.valid_rows, tile.valid_columns) == (_int(vr), _int(vc))
        and tile.data_type == dt
        and tile.layout == layout
    )


@binding("TileMatrixCubeInfosMatchDimensions")
def cube_infos_match(
    m: PtocModel, left: TileInfo, right: TileInfo, mm: Any, nn: Any, kk: Any
) -> bool:
    """A is an M x K primary in an M layout, B a K x N CUBE_N8 primary."""
    mm, nn, kk = _int(mm), _int(nn), _int(kk)
    if 0 in (mm, nn, kk):
        return False
    n8 = Enum(f"TileLayout_{CubeLayout.N8.value}")
    return (
        m_layout_legal(m, left.layout, mm)
        and local_primary_info_legal(m, left, mm, kk, left.data_type, left.layout)
        and local_primary_info_legal(m, right, kk, nn, right.data_type, n8)
    )


@binding("FP32ToFP19")
def fp32_to_fp19(m: PtocModel, value: Bits) -> Bits:
    return Bits(19, sf.fp19_from_fp32(value.value & 0xFFFFFFFF))


@binding("TileProfileMatrixPostProcessWithFlags")
def postprocess_value(
    m: PtocModel,
    value: Bits,
    pre_quant_mode: Bits,
    relu_mode: Bits,
    group_n_code: Bits,
    output_type: Enum,
    quant_param: Bits,
    relu_param: Bits,
    control: Any,
) -> Any:
    """ptoc's B.FPATR post-processing (``semantics.fpatr.postprocess``) of one
    accumulator element: the accumulator class is the mode's (the output type itself for
    PreQuantMode 0), ``control`` the B.DATR rounding and saturation."""
    mode, relu = _int(pre_quant_mode), _int(relu_mode)
    pq = sf.PRE_QUANT.get(mode)
    if pq is None:
        raise AslRuntimeError(f"PreQuantMode {mode} is reserved")
    acc = data_type(output_type) if mode == 0 else next(iter(pq.accumulator))
    f = sf.Fpatr(pre_quant_mode=mode, relu_mode=relu, group_n_code=_int(group_n_code))
    rounding = control.fields["rounding_mode"].member.removeprefix("NumericRound_")
    rmode = ROUNDINGS.index(rounding) + 1
    word = np.array([[value.value & 0xFFFFFFFF]], np.uint64)
    res, status = sf.postprocess(
        from_bits(word, acc), acc, f, quant_param.value, relu_param.value, rmode,
        bool(control.fields["saturating"]),
    )  # fmt: skip
    bits = element_bits(sf.output_type(f, acc))
    raw = int(to_bits(np.asarray(res)).reshape(-1)[0]) & ((1 << bits) - 1)
    return (ElementBits(64, raw, bits), Bits(5, status))


@binding("TileProfileMatrixPostProcess")
def postprocess_word(m: PtocModel, *args: Any) -> Any:
    return postprocess_value(m, *args)[0]


@binding("MatrixShiftParameter")
def shift_parameter(m: PtocModel, code: Any) -> Bits:
    return Bits(64, sf.shift_param(_int(code)))


@binding("BundleFPATRPreQuantModeLegal")
def pre_quant_mode_legal(m: PtocModel, code: Bits) -> bool:
    return _int(code) in sf.PRE_QUANT


@binding("BundleFPATRReluModeLegal")
def relu_mode_legal(m: PtocModel, code: Bits) -> bool:
    return _int(code) in sf.RELU_MODES


@binding("BundleFPATRModeFinalSatProgrammable")
def mode_final_sat_programmable(m: PtocModel, code: Bits) -> bool:
    pq = sf.PRE_QUANT.get(_int(code))
    return pq is not None and pq.code != 0 and not pq.shift


@binding("BundleFPATRModeFixedRounding")
def mode_fixed_rounding(m: PtocModel, code: Bits) -> bool:
    pq = sf.PRE_QUANT.get(_int(code))
    return pq is not None and pq.rounding is not None


@binding("BundleFPATRDATRFieldsLegal")
def datr_fields_legal(m: PtocModel, code: Bits, rounding_mode: Bits, saturating: bool) -> bool:
    # the ASL predicate as a table fact; ptoc's matrix dispatch, like the ASL's
    # ExecuteBundleTMATMULOperation, does not apply it to a bundle
    f = sf.Fpatr(pre_quant_mode=_int(code))
    return sf.datr_legal(f, _int(rounding_mode), bool(saturating))


@binding("BundleFPATRAccumulatorTypeLegal")
def accumulator_type_legal(m: PtocModel, code: Bits, accumulator_type: Enum) -> bool:
    pq = sf.PRE_QUANT.get(_int(code))
    return pq is not None and data_type(accumulator_type) in pq.accumulator


@binding("MatrixQuantParameter")
def quant_parameter(m: PtocModel, fp19: Bits, offset: Bits, width: Any) -> Bits:
    return Bits(64, sf.quant_param(fp19.value, offset.value, _int(width)))


# ----------------------------------------------------------------------------- direct calls


def zero_fpatr() -> Generic:
    """An all-zero B.FPATR command (no post-processing)."""
    f = form("B.FPATR")
    return Generic(f.form_id, tuple((fd.name, fd.omitted) for fd in f.fields))


def matrix_sources(
    m: PtocModel, mnemonic: str, fields: dict[str, Any]
) -> tuple[list[int], int, tuple[int, int, int], DataType, DataType]:
    """(source slots in stream order, destination slot, (M, N, K), AType, BType) of a
    direct matrix call whose operands are ``fields`` (``source0``.. in catalog order)."""
    o = op_def(mnemonic)
    fn = MatrixFunction(o.function)
    roles = [r for _, r in o.operands if _ != "destination0"]
    slots = {r: _int(fields[f]) for f, r in o.operands}
    left = "left-vector" if fn.gemv else "left"
    right = "right-matrix" if fn.gemv else "right"
    a, b = m.tile(slots[left]), m.tile(slots[right])
    a_t, b_t = a.dtype, b.dtype
    out: list[int] = []
    for r in roles:
        if r == "row-scale" and not sm.needs_scale(a_t, fn.mx):
            continue
        if r == "column-scale" and not sm.needs_scale(b_t, fn.mx):
            continue
        out.append(slots[r])
    dims = (a.valid_rows, b.valid_columns, a.valid_columns)
    return out, slots["destination"], dims, a_t, b_t


def floating_direct(a_t: DataType, b_t: DataType) -> None:
    if sm.type_class(a_t) == "float" or sm.type_class(b_t) == "float":
        raise NotApplicable(
            "D11 matrix numerics",
            f"a direct {a_t.name} x {b_t.name} matrix call computes on the reference "
            "profile's raw carrier words, which D11's IEEE matrix arithmetic replaces",
        )


# ------------------------------------------------------------ bundle binding queries


@binding("BundleMatrixDestinationAt")
def matrix_destination_at(m: PtocModel, ordinal: int) -> int:
    """The slot of the ``ordinal``-th destination binding of the bundle (D, then the
    enabled auxiliary outputs in stream order): the slot :func:`bundle.commit` stored
    the tile ptoc published into; 0 when there is no such binding (as the ASL)."""
    seen = 0
    for rec in m.bindings.items:
        f = rec.fields
        if f["valid"] and f["destination_valid"]:
            if seen == _int(ordinal):
                return _int(f["destination"])
            seen += 1
    return 0


@binding("BundleMatrixSourceAt")
def matrix_source_at(m: PtocModel, ordinal: int) -> int:
    """The slot of the ``ordinal``-th source of the bundle's binding stream (source0 then
    source1 of each valid binding, in stream order); 0 when there is none."""
    seen = 0
    for rec in m.bindings.items:
        f = rec.fields
        if not f["valid"]:
            continue
        for valid, slot in (("source0_valid", "source0"), ("source1_valid", "source1")):
            if f[valid]:
                if seen == _int(ordinal):
                    return _int(f[slot])
                seen += 1
    return 0


__all__ = ["floating_direct", "matrix_sources", "zero_fpatr"]
