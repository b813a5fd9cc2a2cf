"""Assembly builders for CUBE bundles: transport loads/stores and matrix operations."""

from __future__ import annotations

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.cube import CubeLayout

from ._progs import PE_SPAN, Rig, block, const_lines, dim_lines, iot, p2, size_name, std

LOAD_CODE = {CubeLayout.M16: "ND2M16", CubeLayout.M32: "ND2M32", CubeLayout.N8: "ND2N8"}
STORE_CODE = {CubeLayout.M16: "M162ND", CubeLayout.M32: "M322ND", CubeLayout.N8: "N82ND"}
ZERO_FPATR = "B.FPATR 0, 0, 0, 0, 0, 0, 0, 0, 0"


def cube_size(dt: DataType, layout: CubeLayout, rows: int, cols: int) -> int:
    """The smallest SizeCode whose bytes hold the CUBE storage of a valid shape."""
    need = isa_cube.geometry(layout, dt, rows, cols).bytes
    assert need, (dt, layout, rows, cols)
    for code in range(1, 11):
        if 1 << (code + 6) >= need:
            return code
    raise ValueError("no SizeCode holds it")


def cube_load(
    rig: Rig,
    values: np.ndarray,
    dt: DataType,
    layout: CubeLayout,
    *,
    hand: str = "T",
    size: int | None = None,
    mask: str = "1111",
    pad: str = "",
) -> str:
    """TLOAD of raw ``values`` ((R, C) or (P, R, C)) through the layout's load conversion."""
    v = np.asarray(values)
    r, c = v.shape[-2:]
    size = size or cube_size(dt, layout, r, c)
    datr = f"B.DATR Layout={LOAD_CODE[layout]}, DataType=DTYPE_NONE" + (
        f", {pad}" if pad else ""
    )
    return rig.load(v, dt, col=c, hand=hand, size=size, mask=mask, datr=datr)


def cube_store(
    dt: DataType, layout: CubeLayout, src: str, rows: int, cols: int, *, mask: str = "1111"
) -> str:
    """TSTORE of a CUBE tile to GM at a0 (stride a1) through the store conversion."""
    return block(
        "TSTORE",
        dt,
        f"B.DATR Layout={STORE_CODE[layout]}, DataType=DTYPE_NONE",
        dim_lines(cols, rows),
        "B.IOR a0, a1",
        iot(src, mask=mask),
    )


def matrix(
    op: str,
    atype: DataType,
    dims: tuple[int | None, int | None, int | None],
    srcs: list[str],
    dsts: list[tuple[str, int]],
    *,
    fpatr: str = ZERO_FPATR,
    datr: str = "",
    ior: str = "",
    mask: str = "1111",
    shared: tuple[int, ...] = (),
) -> str:
    """A matrix bundle: Shared sources ``S<id>`` (B.IOS, in order), Local sources two per
    B.IOT, destinations on the last B.IOTs."""
    groups = [srcs[i : i + 2] for i in range(0, len(srcs), 2)] or [[]]
    while len(groups) < len(dsts):
        groups.append([])
    first_dst = len(groups) - len(dsts)
    lines = []
    for i, g in enumerate(groups):
        d = dsts[i - first_dst] if i >= first_dst else None
        lines.append(
            iot(*g, mask=mask, last=i == len(groups) - 1,
                dst=None if d is None else d[0], size=None if d is None else size_name(d[1]))
        )  # fmt: skip
    m, n, k = dims
    dim = [f"B.DIM zero, {v}, ->LB{lb}" for lb, v in enumerate((m, n, k)) if v is not None]
    ios = [f"B.IOS S{t}, mask={mask}" for t in shared]
    return block(op, atype, datr, fpatr, *dim, ior, *ios, *lines)


def shared_size(dt: DataType, rows: int, col: int) -> int:
    """The smallest B.IOS SizeCode whose RowMajor Rows x Col tile holds ``rows`` rows."""
    need = max(128, rows * col * info(dt).bits // 8)
    code = max(1, (need - 1).bit_length() - 6)
    assert 1 << (code + 6) >= need and code <= 12
    return code


def shared_load(
    rig: Rig,
    values: np.ndarray,
    dt: DataType,
    tid: int,
    *,
    col: int | None = None,
    size: int | None = None,
    mask: str = "1111",
) -> str:
    """TLOAD of raw ``values`` ((R, C) on every PE, or (P, R, C): PE ``p``'s copy) into
    Shared register ``S<tid>``: LB0 = C, LB1 = R, LB2 = Col (default the next power of
    two); each PE loads its own quarter from its own copy."""
    v = np.asarray(values)
    if v.ndim == 2:
        v = np.broadcast_to(v, (rig.pes, *v.shape))
    _, r, c = v.shape
    col = col or p2(c)
    size = size or shared_size(dt, r, col)
    four = bits_of(dt) == 4
    stride = (c + 1) // 2 if four else c * info(dt).carrier.itemsize
    addr = rig.cursor
    for pe in range(rig.pes):
        rig.m.load_gm(addr + pe * PE_SPAN, rig._bytes(v[pe], dt))
    rig.cursor += (stride * r + 63) // 64 * 64 + 64
    assert rig.cursor < PE_SPAN, "rig GM window exhausted"
    text = std(*const_lines("a2", addr), "add a2, s8, ->a2", *const_lines("a3", stride))
    return text + block(
        "TLOAD", dt, dim_lines(c, r, col), "B.IOR a2, a3",
        f"B.IOS mask={mask}, ->S{tid}<{size_name(size)}>",
    )  # fmt: skip


def bits_of(dt: DataType) -> int:
    return info(dt).bits


__all__ = [
    "ZERO_FPATR",
    "cube_load",
    "cube_size",
    "cube_store",
    "matrix",
    "shared_load",
    "shared_size",
]
