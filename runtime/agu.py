"""AGU scalar loads and stores between GPRs and global memory.

``asl/scalar/model/dispatch/agu.asl`` (``ExecuteDecodedAGUForm``) and
``asl/scalar/model/agu/memory.asl``: the base is SrcL (SrcR for the immediate stores,
the word-aligned instruction address for the PC-relative forms; the compressed ``c.ldi``
/ ``c.sdi`` forms load to T and store T#1); the offset is the
sign-extended immediate shifted by the form's ``offset_scale``, or SrcR after its address
modifier (``DecodeScalarAddressRightModifier``) shifted by ``shamt`` or by the scale.
Every access is probed first (``ProbeDataAccess``): an address not aligned to the access
size raises ``Fault_DataAlignment``, one reaching past the modelled memory
``Fault_DataPage``, as the tile memory path does (:mod:`ptoc.runtime.memory`); the first
faulting PE names the fault. A load sign- or zero-extends its little-endian value
(``NormalizeScalarLoadResult``); stores run in PE order, so where PEs store to the same
bytes the highest PE wins. The size, signedness, scale and addressing of every form come
from the catalog's AGU record (:data:`ptoc.backend.isa.catalog.SCALAR_AGU`).
"""

from __future__ import annotations

import numpy as np

from ptoc.backend.isa.catalog import SCALAR_AGU

from .faults import DataAlignmentFault, DataPageFault, unsupported
from .scalar import Decoded, ScalarContext, ScalarStep, _modify, _word

_U = np.uint64


def is_agu(mnemonic: str) -> bool:
    return mnemonic in SCALAR_AGU


def _probe(addr: np.ndarray, size: int, gm_size: int, op: str, write: bool) -> None:
    """``ProbeDataAccess`` on every PE: alignment first, then the memory bound."""
    verb = "writes" if write else "reads"
    for pe, a in enumerate(int(x) for x in addr):
        if a % size:
            raise DataAlignmentFault(
                f"{op} {verb} {size} byte(s) at GM address 0x{a:x} (PE{pe}), which is not "
                f"aligned to {size} bytes",
                op,
            )
        if a + size > gm_size:
            raise DataPageFault(
                f"{op} {verb} {size} byte(s) at GM address 0x{a:x} (PE{pe}), beyond the "
                f"0x{gm_size:x}-byte global memory (machine parameter gm_size)",
                op,
            )


def compile_agu(d: Decoded) -> ScalarStep:
    """The step of one AGU load or store."""
    agu = SCALAR_AGU[d.command.mnemonic]
    if agu.update_mode != "None" or agu.action not in ("Load", "Store"):
        raise unsupported(f"scalar instruction {d.name}", d.name)  # pragma: no cover
    size, scale, name = agu.size_bytes, agu.offset_scale, d.name
    store = agu.action == "Store"
    kind = agu.address_kind
    if kind == "PCRelative":
        base_reg = None
        pc_base = _word(d.pc & ~3)
    else:
        base_reg = d.source("SrcR" if store and kind == "Immediate" else "SrcL")
    if kind == "Register":
        off_reg = d.source("SrcR")
        code = d.fields.get("SrcRType", 0)
        shift = _U((d.fields["shamt"] if d.has("shamt") else scale) & 63)
        imm = _U(0)
    else:
        off_reg = None
        (imm_name,) = [fd.name for fd in d.form.fields if "imm" in fd.name]
        imm = _word(d.word(imm_name) << scale)
    # ReadDecodedAGUStoreSource: SrcD, T#1 for the compressed stores, else SrcL
    if not store:
        data = 0
    elif d.has("SrcD"):
        data = d.source("SrcD")
    else:
        data = 24 if kind == "Compressed" else d.source("SrcL")
    rd = None if store else d.destination()
    lanes = np.arange(size, dtype=np.intp)
    sign_bit = _U(1 << (size * 8 - 1)) if size < 8 else None
    high = _U(((1 << 64) - 1) ^ ((1 << (size * 8)) - 1)) if size < 8 else None

    def address(ctx: ScalarContext) -> np.ndarray:
        pes = ctx.gpr.shape[0]
        if base_reg is not None:
            base = ctx.read(base_reg, name)
        else:
            base = np.full(pes, pc_base, _U)
        if off_reg is not None:
            return base + (_modify(ctx.read(off_reg, name), code, "address") << shift)
        return base + imm

    def load(ctx: ScalarContext) -> None:
        addr = address(ctx)
        _probe(addr, size, ctx.gm_size, name, False)
        if ctx.log is not None:
            ctx.log.window(addr, size, False)
        idx = addr.astype(np.intp)[:, None] + lanes
        raw = np.ascontiguousarray(ctx.gm[idx])  # (pes, size) little-endian bytes
        value = np.zeros(len(addr), _U)
        for k in range(size):
            value |= raw[:, k].astype(_U) << _U(8 * k)
        if agu.signed_load and sign_bit is not None and high is not None:
            value = np.where(value & sign_bit, value | high, value)
        if rd is not None:
            ctx.write(rd, value)

    def save(ctx: ScalarContext) -> None:
        addr = address(ctx)
        values = ctx.read(data, name).copy()  # snapshot the data before any byte is written
        _probe(addr, size, ctx.gm_size, name, True)
        if ctx.log is not None:
            ctx.log.window(addr, size, True)
        for pe in range(len(addr)):
            idx = int(addr[pe]) + lanes
            ctx.undo.append((idx, ctx.gm[idx].copy()))
            v = int(values[pe])
            ctx.gm[idx] = np.frombuffer(v.to_bytes(8, "little")[:size], np.uint8)

    return save if store else load
