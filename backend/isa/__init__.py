"""The PTO instruction set: the single source of truth for codes, forms and semantics.

``catalog.py`` is generated from the PTO-ISA 0.58.3 JSON catalogs plus the seed overrides
(``python -m ptoc.backend.isa.generate``); this module indexes it.
"""

from __future__ import annotations

from functools import cache

from . import catalog
from .datatypes import (
    DTYPE_NONE,
    DTYPES,
    RESERVED_DTYPE_CODES,
    DataType,
    DTypeInfo,
    TypeClass,
    dtype_by_name,
    info,
)
from .schema import CommandForm, DimDef, Engine, Family, Fault, FieldDef, IorSlot, OpDef

__all__ = [
    "DTYPES",
    "DTYPE_NONE",
    "OPS",
    "RESERVED_DTYPE_CODES",
    "CommandForm",
    "DTypeInfo",
    "DataType",
    "DimDef",
    "Engine",
    "Family",
    "Fault",
    "FieldDef",
    "IorSlot",
    "OpDef",
    "TypeClass",
    "command_forms",
    "dtype_by_name",
    "form",
    "info",
    "op",
    "op_by_selector",
    "scalar_form",
]

OPS: dict[str, OpDef] = {o.mnemonic: o for o in catalog.OPS}
RESERVED_TEPL_SELECTORS = catalog.RESERVED_TEPL_SELECTORS
DELETED_NAMES = catalog.DELETED_NAMES
REJECTED_NAMES = catalog.REJECTED_NAMES

_BY_SELECTOR: dict[tuple[Family, int], OpDef] = {(o.family, o.selector): o for o in catalog.OPS}
#: named BSTART words of TLSU and CUBE ops: ``BSTART.TLOAD`` -> TLOAD
_BY_BSTART: dict[str, OpDef] = {o.bstart: o for o in catalog.OPS if o.family != Family.TEPL}


def op(mnemonic: str) -> OpDef:
    """The catalog row of a tile operation; KeyError if there is none."""
    return OPS[mnemonic.upper()]


def op_by_selector(family: Family, selector: int) -> OpDef | None:
    """The operation a TEPL selector (Mode<<5|Function) or TLSU/CUBE function selects."""
    return _BY_SELECTOR.get((family, selector))


def op_by_bstart(word_mnemonic: str) -> OpDef | None:
    """The TLSU/CUBE operation of a named BSTART word such as ``BSTART.TLOAD``."""
    return _BY_BSTART.get(word_mnemonic)


@cache
def command_forms(mnemonic: str) -> tuple[CommandForm, ...]:
    """Every form of a header/boundary command mnemonic, in catalog order."""
    forms = tuple(f for f in catalog.COMMAND_FORMS if f.mnemonic == mnemonic)
    if not forms:
        raise KeyError(mnemonic)
    return forms


def form(mnemonic: str, asm_contains: str = "") -> CommandForm:
    """The single form of ``mnemonic`` whose asm template contains ``asm_contains``."""
    found = [f for f in command_forms(mnemonic) if asm_contains in f.asm]
    if len(found) != 1:
        raise KeyError(f"{mnemonic} {asm_contains!r}: {len(found)} forms")
    return found[0]


_SCALAR = {f.mnemonic: f for f in catalog.SCALAR_FORMS}


def scalar_form(mnemonic: str) -> CommandForm:
    """The form of a scalar instruction ptoc uses (ADDI, LUI, C.MOVI, ...)."""
    return _SCALAR[mnemonic.upper()]


def scalar_load(size: int, signed: bool) -> str:
    """The AGU load of ``size`` bytes at a register plus an immediate offset (no address
    update), sign-extending when ``signed`` (a 64-bit load extends nothing): LBI .. LDI."""
    found = sorted(
        m
        for m, a in catalog.SCALAR_AGU.items()
        if a.action == "Load"
        and a.address_kind == "Immediate"
        and a.update_mode == "None"
        and "." not in m
        and a.size_bytes == size
        and (a.signed_load == signed or size == 8)
    )
    if len(found) != 1:
        raise KeyError(f"no single {size}-byte {'signed' if signed else 'unsigned'} load")
    return found[0]


def scalar_mnemonics() -> tuple[str, ...]:
    return tuple(_SCALAR)


# The operation table reads the semantics, which index the catalog through ``op`` above.
from .optable import (  # noqa: E402
    TABLE,
    Access,
    Axis,
    BindingShape,
    Executor,
    IorKind,
    IorOperand,
    LegalizeRule,
    OperandKind,
    OpRow,
    TileFamily,
    TileOperand,
    row,
    rows,
)

__all__ += [
    "TABLE",
    "Access",
    "Axis",
    "BindingShape",
    "Executor",
    "IorKind",
    "IorOperand",
    "LegalizeRule",
    "OpRow",
    "OperandKind",
    "TileFamily",
    "TileOperand",
    "row",
    "rows",
]
