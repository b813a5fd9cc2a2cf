"""The B.FPATR bundle state of the ASL (``SetBundleFixedPointAttributeState``), bound to ptoc.

A test sets the fixed-point attributes of the open matrix bundle with this call instead
of issuing the B.FPATR header word; the harness turns it into the B.FPATR command ptoc's
bundle will see (:func:`.bundle.headers` issues the pending header commands), after the
field check ptoc's preflight applies (``semantics.fpatr.fields_legal``, the ASL's
``BundleFPATRFieldsLegal``), which faults Fault_TileLegality and leaves the state
unchanged, as the ASL does.
"""

from __future__ import annotations

from typing import Any

from ptoc.backend.isa import form
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.program import Generic

from .core import PtocModel, binding

#: (ASL argument, B.FPATR field) in the order of the ASL function's parameters
_FIELDS = (
    ("pre_quant_mode", "PreQuantMode"),
    ("relu_mode", "ReluMode"),
    ("group_n_code", "GroupNCode"),
    ("row_max", "RowMaxEn"),
    ("group_max", "GroupMaxEn"),
    ("row_max_init", "RowMaxInit"),
    ("max_abs", "MaxAbsEn"),
    ("trans_a", "TransA"),
    ("trans_b", "TransB"),
)


#: the code-valued fields; the others are enables
_CODES = frozenset({"pre_quant_mode", "relu_mode", "group_n_code"})


def _int(v: Any) -> int:
    return int(v.value) if hasattr(v, "value") else int(v)


@binding("SetBundleFixedPointAttributeState")
def set_fixed_point_attribute_state(m: PtocModel, *args: Any) -> None:
    """Latch B.FPATR (the 7-argument form leaves TransA/TransB clear)."""
    values = [_int(a) for a in args] + [0] * (len(_FIELDS) - len(args))
    named = {name: v for (name, _), v in zip(_FIELDS, values, strict=True)}
    flags = {k: bool(v) for k, v in named.items() if k not in _CODES}
    f = sf.Fpatr(**{k: v for k, v in named.items() if k in _CODES}, **flags)
    if not sf.fields_legal(f):
        m.set_fault("Fault_TileLegality")
        return
    fpatr = form("B.FPATR")
    by_field = {field: v for (_, field), v in zip(_FIELDS, values, strict=True)}
    words = tuple((fd.name, by_field.get(fd.name, fd.omitted)) for fd in fpatr.fields)
    # one B.FPATR per bundle: a second call replaces the first, as the ASL's state does
    m.pending = [
        c for c in m.pending if not (isinstance(c, Generic) and c.form_id == fpatr.form_id)
    ]
    m.pending.append(Generic(fpatr.form_id, words))
