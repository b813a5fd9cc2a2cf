"""The floating-point scalar forms (FSU) of standard blocks.

Dispatch from ``asl/scalar/model/dispatch/fsu.asl`` (``ExecuteDecodedFSUForm``): every
source is read (and so snapshotted) before any effect, the flags the numeric profile
returns are ORed into the PE's sticky status (``ScalarFPRecordFlags``), then the result
is published to RegDst (1..23 a GPR, 30 U, 31 T, 0 and 24..29 discard). A reserved
SrcType or DstType never gets here: the block's decoding rejects it as
``Fault_IllegalInstruction`` first. The numerics are
:mod:`ptoc.backend.isa.semantics.fsu`, the carriers and rounding controls
:mod:`ptoc.backend.isa.scalar_fp`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptoc.backend.isa.scalar_fp import ACTIVE_ROUNDING, FIXED_ROUNDING, FSU_FORMS
from ptoc.backend.isa.semantics import fsu as sem

from .scalar import Decoded, ScalarContext, ScalarStep

Numerics = Callable[[ScalarContext, list[np.ndarray]], tuple[np.ndarray, np.ndarray]]


def is_fsu(mnemonic: str) -> bool:
    return mnemonic in FSU_FORMS


def _active(ctx: ScalarContext) -> int:
    """``ScalarFPActiveRoundingMode``: CORE_STATE[39:37]."""
    return ACTIVE_ROUNDING[ctx.fp_rounding & 7]


def _numerics(d: Decoded) -> tuple[tuple[str, ...], Numerics]:
    """The source fields of ``d`` and its computation."""
    m = d.command.mnemonic
    form = FSU_FORMS[m]
    t = d.fields.get("SrcType", 0)
    op = form.op
    if form.kind in ("binary", "minmax"):
        return ("SrcL", "SrcR"), lambda ctx, s: sem.binary(op, t, s[0], s[1], _active(ctx))
    if form.kind in ("unary", "abs"):
        return ("SrcL",), lambda ctx, s: sem.unary(op, t, s[0], _active(ctx))
    if form.kind == "fused":
        return ("SrcL", "SrcR", "SrcA"), lambda ctx, s: sem.fused(
            op, t, s[0], s[1], s[2], _active(ctx)
        )
    if form.kind == "compare":
        signalling = form.signalling
        return ("SrcL", "SrcR"), lambda ctx, s: sem.compare(op, t, s[0], s[1], signalling)
    dst = d.fields.get("DstType", 0)
    if op == "f2f":
        return ("SrcL",), lambda ctx, s: sem.convert_float(t, dst, s[0], _active(ctx))
    if op == "f2i":
        fixed = FIXED_ROUNDING[m]
        return ("SrcL",), lambda ctx, s: sem.convert_to_int(t, dst, s[0], fixed)
    signed = op == "s2f"
    return ("SrcL",), lambda ctx, s: sem.convert_from_int(signed, t, dst, s[0], _active(ctx))


def compile_fsu(d: Decoded) -> ScalarStep:
    """The step of one FSU instruction."""
    sources, numerics = _numerics(d)
    selectors = [d.fields.get(name, 0) for name in sources]
    rd, name = d.destination(), d.name

    def step(ctx: ScalarContext) -> None:
        values = [ctx.read(sel, name) for sel in selectors]
        result, flags = numerics(ctx, values)
        assert ctx.status is not None
        ctx.status = ctx.status | flags.astype(np.uint8)
        if rd is not None:
            ctx.write(rd, np.asarray(result, np.uint64))

    return step


__all__ = ["compile_fsu", "is_fsu"]
