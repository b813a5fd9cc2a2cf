"""The PTO instruction set: the single source of truth for codes, forms and semantics.

``catalog.py`` is generated from the PTO-ISA 0.58.3 JSON catalogs plus the seed overrides
(``python -m ptoc.backend.isa.generate``); this module indexes it.

The catalog and the operation table (which pulls in the numpy semantics) are loaded on
first use of a name that needs them, so the DataTypes and the schema stay cheap to import
(``import ptoc`` needs only those).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from . import catalog
    from .optable import (
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

    OPS: dict[str, OpDef]
    RESERVED_TEPL_SELECTORS = catalog.RESERVED_TEPL_SELECTORS
    DELETED_NAMES = catalog.DELETED_NAMES
    REJECTED_NAMES = catalog.REJECTED_NAMES


class _Index:
    """The catalog's lookup tables, built once on first use."""

    def __init__(self) -> None:
        from . import catalog

        self.ops: dict[str, OpDef] = {o.mnemonic: o for o in catalog.OPS}
        self.by_selector: dict[tuple[Family, int], OpDef] = {
            (o.family, o.selector): o for o in catalog.OPS
        }
        #: named BSTART words of TLSU and CUBE ops: ``BSTART.TLOAD`` -> TLOAD
        self.by_bstart: dict[str, OpDef] = {
            o.bstart: o for o in catalog.OPS if o.family != Family.TEPL
        }
        #: (family, selector) -> the named BSTART word that encodes it
        self.bstart_of: dict[tuple[Family, int], str] = {
            (o.family, o.selector): o.bstart for o in catalog.OPS if o.family != Family.TEPL
        }
        # an encoding variant (``BSTART.TSTORE.SPART``) selects its form's operation
        # under its own TLSU Function (``BundleOperationDecodeCode``)
        for variant, (form_mnemonic, function) in catalog.FORM_VARIANTS.items():
            o = self.by_bstart[form_mnemonic]
            self.by_bstart[variant] = o
            self.by_selector[(o.family, function)] = o
            self.bstart_of[(o.family, function)] = variant
        self.scalar: dict[str, CommandForm] = {f.mnemonic: f for f in catalog.SCALAR_FORMS}


@cache
def _index() -> _Index:
    return _Index()


#: names loaded on first use: from the catalog, and from the operation table
_FROM_CATALOG = ("RESERVED_TEPL_SELECTORS", "DELETED_NAMES", "REJECTED_NAMES")
_FROM_OPTABLE = (
    "TABLE", "Access", "Axis", "BindingShape", "Executor", "IorKind", "IorOperand",
    "LegalizeRule", "OpRow", "OperandKind", "TileFamily", "TileOperand", "row", "rows",
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name == "OPS":
        value: Any = _index().ops
    elif name in _FROM_CATALOG:
        value = getattr(importlib.import_module(f"{__name__}.catalog"), name)
    elif name in _FROM_OPTABLE:
        value = getattr(importlib.import_module(f"{__name__}.optable"), name)
    elif name in ("catalog", "optable"):
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def op(mnemonic: str) -> OpDef:
    """The catalog row of a tile operation; KeyError if there is none."""
    return _index().ops[mnemonic.upper()]


def op_by_selector(family: Family, selector: int) -> OpDef | None:
    """The operation a TEPL selector (Mode<<5|Function) or TLSU/CUBE function selects."""
    return _index().by_selector.get((family, selector))


def op_by_bstart(word_mnemonic: str) -> OpDef | None:
    """The TLSU/CUBE operation of a named BSTART word such as ``BSTART.TLOAD`` (or an
    encoding variant such as ``BSTART.TSTORE.SPART``)."""
    return _index().by_bstart.get(word_mnemonic)


def bstart_mnemonic(family: Family, selector: int) -> str | None:
    """The named BSTART word of a TLSU/CUBE selector: the operation's own word, or the
    encoding variant whose Function it is (``TLSU 14`` -> ``BSTART.TSTORE.SPART``)."""
    return _index().bstart_of.get((family, selector))


def selector_of_bstart(word_mnemonic: str) -> int | None:
    """The TLSU/CUBE Function a named BSTART word (or encoding variant) selects."""
    o = op_by_bstart(word_mnemonic)
    if o is None:
        return None
    from . import catalog

    variant = catalog.FORM_VARIANTS.get(word_mnemonic)
    return o.selector if variant is None else variant[1]


@cache
def command_forms(mnemonic: str) -> tuple[CommandForm, ...]:
    """Every form of a header/boundary command mnemonic, in catalog order."""
    from . import catalog

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


def scalar_form(mnemonic: str) -> CommandForm:
    """The form of a scalar instruction ptoc uses (ADDI, LUI, C.MOVI, ...)."""
    return _index().scalar[mnemonic.upper()]


def scalar_load(size: int, signed: bool) -> str:
    """The AGU load of ``size`` bytes at a register plus an immediate offset (no address
    update), sign-extending when ``signed`` (a 64-bit load extends nothing): LBI .. LDI."""
    from . import catalog

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
    return tuple(_index().scalar)


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
