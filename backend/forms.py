"""Text forms of commands, derived from the catalog: one bidirectional mapping per form.

Every catalog :class:`~ptoc.backend.isa.CommandForm` gets one or more :class:`Syntax`
values: its ``asm`` template read token by token, each token becoming a :class:`Slot`
whose :class:`Kind` maps the values of one or more fields to one operand and back (a
Sail-style ``mapping`` clause: ``B.DIM RegSrc, uimm, ->LB2`` is a register, an integer
and a fixed word). The same syntax prints (fields -> text) and parses (text -> fields),
so the assembler and the disassembler cannot disagree.

Field limits (width, signedness, the ``one-of`` / ``not-equal`` constraints) are not
restated here: the parser only reads values, and
:func:`ptoc.backend.encoding.field_violation` judges them from the FieldDefs, for text
and for words alike, with one wording per rule (``B.DIM uimm17=200000 does not fit 17
bits``).

Where ptoc's text deliberately differs from the catalog template (docs/formats.md), the
difference is one row of :data:`SPELLINGS`, written in the same template notation plus
ptoc's own tokens (:data:`_TOKENS`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from .encoding import is_modelled
from .isa import DTYPE_NONE, CommandForm, DataType, Engine, Family, catalog, op_by_selector
from .isa import op as op_def
from .isa.fields import (
    GPR_BY_NAME,
    GPR_NAMES,
    MASK_TO_PEMODE,
    PEMODE_TO_MASK,
    SIZE_BY_NAME,
    SIZE_NAMES,
    Hand,
    mask_text,
)
from .isa.scalar_fp import FSU_FORMS, type_suffixes
from .literals import LiteralError, is_decimal, parse_int, show
from .program import DATR_BY_NAME, DatrField, TileRef


class FormError(Exception):
    """A malformed command or operand; the caller adds the file and the line."""


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _prefix_re(prefix: str) -> re.Pattern[str]:
    """``prefix`` with optional blanks between its characters, then the rest."""
    return re.compile(r"\s*" + r"\s*".join(map(re.escape, prefix)) + r"\s*(.*)", re.S)


_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*", re.ASCII)


def _int(text: str, what: str) -> int:
    try:
        return parse_int(text)
    except LiteralError as e:
        raise FormError(f"{what} {e}") from None


# --------------------------------------------------------------------------- kinds


class Kind:
    """How the values of ``fields`` are spelled as one operand (both directions)."""

    fields: tuple[str, ...] = ()
    #: what the operand is called in messages (operands of one noun form one group)
    noun: str = "operand"
    #: a named operand (``mask=``, ``last``, ``S7``): adjacent named operands may come
    #: in any order (docs/formats.md)
    free: bool = False

    def accepts(self, token: str) -> bool:
        """Whether ``token`` looks like this operand (it may still be malformed)."""
        raise NotImplementedError

    def show(self, values: tuple[int, ...]) -> str | None:
        """The spelling of ``values``; None when this kind cannot spell them."""
        raise NotImplementedError

    def read(self, token: str) -> tuple[int, ...]:
        """The field values ``token`` spells; FormError names what is wrong."""
        raise NotImplementedError


@dataclass(frozen=True)
class Gpr(Kind):
    """A GPR by name (``zero``, ``a0``) or by selector (``r24``)."""

    field: str
    noun: str = "register"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.field,)

    def accepts(self, token: str) -> bool:
        return _IDENT.fullmatch(token.strip()) is not None

    def show(self, values: tuple[int, ...]) -> str:
        (sel,) = values
        return GPR_NAMES[sel] if 0 <= sel < len(GPR_NAMES) else f"r{sel}"

    def read(self, token: str) -> tuple[int, ...]:
        t = token.strip()
        if t in GPR_BY_NAME:
            return (GPR_BY_NAME[t],)
        m = re.fullmatch(r"r([0-9]{1,2})", t, re.ASCII)
        if m:
            return (int(m.group(1)),)
        raise FormError(
            f"unknown GPR {show(t)} (expected zero, sp, a0..a7, ra, s0..s8, x0..x3)"
        )


@dataclass(frozen=True)
class Int(Kind):
    """An integer literal (:mod:`ptoc.backend.literals`); ``wrap`` > 0: printed in hex,
    and a negative literal stands for its ``wrap``-bit two's complement (``lui -1``)."""

    field: str
    label: str
    noun: str = "immediate"
    wrap: int = 0

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.field,)

    def accepts(self, token: str) -> bool:
        return re.match(r"\s*[+-]?[0-9]", token) is not None

    def show(self, values: tuple[int, ...]) -> str:
        (v,) = values
        if self.wrap and 0 <= v < 1 << self.wrap:
            return f"0x{v:x}"
        return str(v)

    def read(self, token: str) -> tuple[int, ...]:
        v = _int(token, f"{self.label} {self.field}")
        if self.wrap and v < 0:
            v &= (1 << self.wrap) - 1
        return (v,)


class LabelUse(FormError):
    """A label operand (``BSTART.STD COND, loop``): the assembler resolves ``name`` to the
    offset once every label is known (:func:`ptoc.backend.asm.parse`)."""

    def __init__(self, name: str, field: str) -> None:
        super().__init__(f"label {name!r}")
        self.name = name
        self.field = field


@dataclass(frozen=True)
class Label(Int):
    """A branch target: an offset in halfwords or a label name."""

    def accepts(self, token: str) -> bool:
        return super().accepts(token) or _is_label(token.strip())

    def read(self, token: str) -> tuple[int, ...]:
        t = token.strip()
        if _is_label(t) and not super().accepts(t):
            raise LabelUse(t, self.field)
        return super().read(token)


#: the transfer-kind words of the BSTART templates, which name no label
TRANSFER_WORDS = frozenset({"FALL", "DIRECT", "COND", "RET", "IND"})


def _is_label(token: str) -> bool:
    return LABEL.fullmatch(token) is not None and token not in TRANSFER_WORDS


#: a label name (``loop``, ``.L3``, ``tail_2``)
LABEL = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*", re.ASCII)


@dataclass(frozen=True)
class Literal(Kind):
    """A fixed word of the template (``FALL``, ``->LB0``, ``->ra``)."""

    text: str

    @property
    def noun(self) -> str:  # type: ignore[override]
        return self.text

    def accepts(self, token: str) -> bool:
        return _squash(token) == self.text

    def show(self, values: tuple[int, ...]) -> str:
        return self.text

    def read(self, token: str) -> tuple[int, ...]:
        if not self.accepts(token):
            raise FormError(f"expected {self.text} here, not {show(token)}")
        return ()


@dataclass(frozen=True)
class Flag(Kind):
    """A word present exactly when its one-bit field is set (``last`` for L)."""

    free = True

    field: str
    word: str
    aliases: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.field,)

    @property
    def noun(self) -> str:  # type: ignore[override]
        return f"`{self.word}`"

    def accepts(self, token: str) -> bool:
        return token.strip() in (self.word, *self.aliases)

    def show(self, values: tuple[int, ...]) -> str | None:
        return self.word if values == (1,) else None

    def read(self, token: str) -> tuple[int, ...]:
        return (1,)


@dataclass(frozen=True)
class Prefixed(Kind):
    """``prefix`` then another kind's operand (``->a0``, ``LB2=64``)."""

    prefix: str
    inner: Kind
    noun: str = "destination"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.inner.fields

    def accepts(self, token: str) -> bool:
        return _squash(token).startswith(self.prefix)

    def show(self, values: tuple[int, ...]) -> str | None:
        inner = self.inner.show(values)
        return None if inner is None else self.prefix + inner

    def read(self, token: str) -> tuple[int, ...]:
        m = _prefix_re(self.prefix).fullmatch(token)
        if m is None:
            raise FormError(f"expected {self.prefix}..., not {show(token)}")
        return self.inner.read(m.group(1))


@dataclass(frozen=True)
class DType(Kind):
    """A DataType by name (any case), ``DTYPE_NONE`` (code 31) or a raw code."""

    field: str = "DataType"
    noun: str = "DataType"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.field,)

    def accepts(self, token: str) -> bool:
        return re.fullmatch(r"[^\s=<>#{}]+", token.strip()) is not None

    def show(self, values: tuple[int, ...]) -> str:
        (code,) = values
        if code == DTYPE_NONE:
            return "DTYPE_NONE"
        try:
            return DataType(code).name
        except ValueError:
            return str(code)

    def read(self, token: str) -> tuple[int, ...]:
        t = token.strip()
        if t == "DTYPE_NONE":
            return (DTYPE_NONE,)
        if is_decimal(t):
            return (_int(t, "DataType code"),)
        if t in DataType.__members__:
            return (int(DataType[t]),)
        for dt in DataType:
            if dt.name.upper() == t.upper():
                return (int(dt),)
        raise FormError(f"unknown DataType {show(t)}")


@dataclass(frozen=True)
class Named(Kind):
    """A field with named codes (B.DATR Layout, PadValue, CMode, RMode) or its number."""

    spec: DatrField
    label: str

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.spec.name,)

    @property
    def noun(self) -> str:  # type: ignore[override]
        return self.spec.name

    def accepts(self, token: str) -> bool:
        return re.fullmatch(r"[A-Za-z0-9+-]+", token.strip(), re.ASCII) is not None

    def names(self, token: str) -> bool:
        """Whether ``token`` is one of the printed spellings (a bare keyed operand)."""
        return token.strip() in self.spec.names.values()

    def show(self, values: tuple[int, ...]) -> str:
        return self.spec.spell(values[0])

    def read(self, token: str) -> tuple[int, ...]:
        t = token.strip()
        code = self.spec.code(t)
        if code is not None:
            return (code,)
        if re.match(r"[+-]?[0-9]", t):
            return (_int(t, f"{self.label} {self.spec.name}"),)
        names = ", ".join(self.spec.names.values())
        raise FormError(f"unknown {self.label} {self.spec.name} {show(t)} (expected {names})")


@dataclass(frozen=True)
class Tile(Kind):
    """A relative Local tile ``T#1``..``N#16`` (selector hand*16 + k-1)."""

    field: str
    noun: str = "tile source"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.field,)

    def accepts(self, token: str) -> bool:
        return "#" in token

    def show(self, values: tuple[int, ...]) -> str:
        return str(TileRef.from_code(values[0]))

    def read(self, token: str) -> tuple[int, ...]:
        m = re.fullmatch(r"([TUMN])#([0-9]{1,3})", token.strip(), re.ASCII)
        if not m:
            raise FormError(f"malformed tile operand {show(token)} (expected T#1..N#16)")
        k = int(m.group(2))
        if not 1 <= k <= 16:
            raise FormError(f"tile position {token.strip()} is outside #1..#16")
        return (TileRef(Hand[m.group(1)], k).code,)


@dataclass(frozen=True)
class Mask(Kind):
    """``mask=bbbb`` (PE0 first) for the PEMode that selects it."""

    free = True

    field: str = "PEMode"
    noun: str = "mask"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.field,)

    def accepts(self, token: str) -> bool:
        return token.strip().startswith("mask")

    def show(self, values: tuple[int, ...]) -> str | None:
        (mode,) = values
        return f"mask={mask_text(PEMODE_TO_MASK[mode])}" if 0 <= mode < 8 else None

    def read(self, token: str) -> tuple[int, ...]:
        m = re.fullmatch(r"mask\s*=\s*([01]{4})", token.strip(), re.ASCII)
        if not m:
            raise FormError(f"malformed mask {show(token)} (expected mask=bbbb, PE0 first)")
        mask = int(m.group(1), 2)
        if mask not in MASK_TO_PEMODE:
            legal = ", ".join(mask_text(x) for x in MASK_TO_PEMODE)
            raise FormError(f"mask={m.group(1)} has no PEMode encoding (legal masks: {legal})")
        return (MASK_TO_PEMODE[mask],)


def _size_name(code: int) -> str:
    return SIZE_NAMES.get(code, str(code))


def _size_code(text: str) -> int:
    t = text.strip().replace("KiB", "KB")
    code = _int(t, "SizeCode") if is_decimal(t) else SIZE_BY_NAME.get(t)
    if code is None:
        raise FormError(f"unknown tile size {show(text)} (128B..64KB or a SizeCode)")
    return code


@dataclass(frozen=True)
class Dest(Kind):
    """``->T<2KB>``: a destination hand and its per-PE SizeCode."""

    fields: tuple[str, ...] = ("DstTile", "SizeCode")
    noun: str = "destination"

    def accepts(self, token: str) -> bool:
        return _squash(token).startswith("->")

    def show(self, values: tuple[int, ...]) -> str | None:
        hand, size = values
        return f"->{Hand(hand).name}<{_size_name(size)}>" if 0 <= hand < 4 else None

    def read(self, token: str) -> tuple[int, ...]:
        m = re.fullmatch(r"\s*->\s*([TUMN])\s*<([^>]*)>\s*", token)
        if not m:
            raise FormError(f"malformed destination {show(token)} (expected ->T<2KB>)")
        return (int(Hand[m.group(1)]), _size_code(m.group(2)))


@dataclass(frozen=True)
class Shared(Kind):
    """``S7`` (a source) or, with ``dest``, ``->S7<128B>`` (a destination and its size)."""

    free = True

    dest: bool = False
    noun: str = "Shared tile"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("SharedTID", "SizeCode") if self.dest else ("SharedTID",)

    def accepts(self, token: str) -> bool:
        return _squash(token).startswith("->S" if self.dest else "S")

    def show(self, values: tuple[int, ...]) -> str:
        if self.dest:
            return f"->S{values[0]}<{_size_name(values[1])}>"
        return f"S{values[0]}"

    def read(self, token: str) -> tuple[int, ...]:
        if self.dest:
            m = re.fullmatch(r"\s*->\s*S([0-9]{1,3})\s*<([^>]*)>\s*", token, re.ASCII)
            if m:
                return (int(m.group(1)), _size_code(m.group(2)))
            expected = "->S0<128B>..->S255<256KB>"
        else:
            m = re.fullmatch(r"\s*S([0-9]{1,3})\s*", token, re.ASCII)
            if m:
                return (int(m.group(1)),)
            expected = "S0..S255"
        raise FormError(f"malformed Shared tile {show(token)} (expected {expected})")


@dataclass(frozen=True)
class LoopBound(Kind):
    """``->LB1``: the loop bound a field selects."""

    field: str = "LoopNest"
    noun: str = "loop bound"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.field,)

    def accepts(self, token: str) -> bool:
        return _squash(token).startswith("->")

    def show(self, values: tuple[int, ...]) -> str:
        return f"->LB{values[0]}"

    def read(self, token: str) -> tuple[int, ...]:
        m = re.fullmatch(r"\s*->\s*LB([0-9])\s*", token, re.ASCII)
        if not m:
            raise FormError(f"malformed loop bound {show(token)} (expected ->LB0..->LB2)")
        return (int(m.group(1)),)


#: SrcRType codes 00 .sw, 01 .uw, 10 .neg, 11 no modifier; an omitted suffix encodes 11
#: (ADD.asl/SUB.asl contract defaults)
#: the spelling of each SrcRType code, per modifier family (``asl/scalar/model/dispatch/
#: decode.asl``: the binary, comparison, select and address decodings differ); a code
#: without a name of its own is spelled ``.t<code>`` (it changes nothing, but it is a
#: distinct encoding, so the text keeps it)
SRCR_TYPES: dict[str, tuple[str, ...]] = {
    "binary": (".sw", ".uw", ".neg", ""),  # DecodeScalarBinaryRightModifier
    "logical": (".sw", ".uw", ".not", ""),  # the same codes; NegateOrNot is NOT
    "compare": ("", ".sw", ".uw", ".t3"),  # ApplyRestrictedCompareModifier keeps code 3
    "compare-logical": ("", ".sw", ".uw", ".not"),  # DecodeScalarComparisonRightModifier
    "address": ("", ".sw", ".uw", ".neg"),  # DecodeScalarAddressRightModifier
    "select": ("", ".t1", ".t2", ".neg"),  # DecodeScalarSelectRightModifier
}


def _modifier_family(f: CommandForm) -> str:
    """Which SrcRType decoding form ``f`` uses (the ASL decodes it per family)."""
    m = f.mnemonic
    if m in catalog.SCALAR_AGU:
        return "address"
    if m == "CSEL":
        return "select"
    if m.startswith(("CMP.", "SETC.")):
        return "compare-logical" if m.endswith(("AND", "OR")) else "compare"
    return "logical" if ".not" in f.asm else "binary"


@dataclass(frozen=True)
class ShiftedGpr(Kind):
    """``a1.uw<<3``: SrcR, its SrcRType modifier (spelled per ``family``) and its shift
    amount (the ``shamt`` field, or the form's fixed ``scale``: ``sw ..., [a0, a1<<2]``)."""

    family: str = "binary"
    shift: bool = True
    scale: int = 0
    noun: str = "register"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("SrcR", "SrcRType", "shamt") if self.shift else ("SrcR", "SrcRType")

    def accepts(self, token: str) -> bool:
        return re.match(r"\s*[A-Za-z]", token) is not None

    def show(self, values: tuple[int, ...]) -> str:
        reg, kind = values[0], values[1]
        amount = values[2] if self.shift else self.scale
        names = SRCR_TYPES[self.family]
        suffix = names[kind] if 0 <= kind < len(names) else f".t{kind}"
        return Gpr("SrcR").show((reg,)) + suffix + (f"<<{amount}" if amount else "")

    def read(self, token: str) -> tuple[int, ...]:
        m = re.fullmatch(r"([a-z0-9]+)(\.[a-z0-9]+)?(?:<<([0-9]{1,3}))?", token.strip())
        if not m:
            raise FormError(f"malformed register operand {show(token)}")
        (reg,) = Gpr("SrcR").read(m.group(1))
        names = SRCR_TYPES[self.family]
        suffix = m.group(2) or ""
        if suffix in names:
            kind = names.index(suffix)
        elif re.fullmatch(r"\.t[0-3]", suffix):
            kind = int(suffix[2])
        else:
            spell = ", ".join(n for n in names if n and not n.startswith(".t"))
            raise FormError(f"unknown register modifier {show(suffix)} (expected {spell})")
        amount = int(m.group(3) or 0)
        if self.shift:
            return (reg, kind, amount)
        if amount != self.scale and m.group(3) is not None:
            raise FormError(
                f"this form scales the register offset by <<{self.scale}, not <<{amount}"
            )
        return (reg, kind)


@dataclass(frozen=True)
class Memory(Kind):
    """``[a0, 8]`` / ``[a0, a1.uw<<3]`` / ``[16]``: an address operand in brackets, its
    parts spelled by the kinds inside."""

    parts: tuple[Kind, ...]
    noun: str = "address"

    @property
    def fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(f for k in self.parts for f in k.fields)

    def accepts(self, token: str) -> bool:
        return token.strip().startswith("[")

    def show(self, values: tuple[int, ...]) -> str | None:
        out, i = [], 0
        for k in self.parts:
            n = len(k.fields)
            text = k.show(values[i : i + n])
            if text is None:
                return None
            out.append(text)
            i += n
        return "[" + ", ".join(out) + "]"

    def read(self, token: str) -> tuple[int, ...]:
        t = token.strip()
        if not (t.startswith("[") and t.endswith("]")):
            raise FormError(f"malformed address {show(token)} (expected [base, offset])")
        items = _split(t[1:-1])
        if len(items) != len(self.parts):
            raise FormError(f"address {show(token)} needs {len(self.parts)} part(s)")
        values: list[int] = []
        for k, item in zip(self.parts, items, strict=True):
            values.extend(k.read(item))
        return tuple(values)


@dataclass(frozen=True)
class TeplOp(Kind):
    """A TEPL operation by mnemonic for its Mode and Function; with ``engine``, only the
    operations that engine executes (``BSTART.VEC TADD``; the engine alias rule)."""

    engine: Engine | None = None
    fields: tuple[str, ...] = ("Mode", "Function")
    noun: str = "operation"

    def accepts(self, token: str) -> bool:
        return _IDENT.fullmatch(token.strip()) is not None

    def show(self, values: tuple[int, ...]) -> str | None:
        mode, function = values
        o = op_by_selector(Family.TEPL, mode << 5 | function)
        if o is None or (self.engine is not None and o.engine is not self.engine):
            return None
        return o.mnemonic

    def read(self, token: str) -> tuple[int, ...]:
        try:
            o = op_def(token.strip())
        except KeyError:
            raise FormError(f"unknown tile operation {show(token)}") from None
        if o.family is not Family.TEPL:
            if self.engine is None:  # its function code would select another operation
                raise FormError(
                    f"{o.mnemonic} is a {o.engine} operation, not a TEPL one; write "
                    f"{o.bstart} DataType"
                )
            raise FormError(f"{o.mnemonic} is not a TEPL operation; write {o.bstart} DataType")
        if self.engine is not None and o.engine is not self.engine:
            raise FormError(
                f"{o.mnemonic} executes on {o.engine}: write {o.bstart} {o.mnemonic} "
                f"(engine alias rule)"
            )
        return (o.selector >> 5, o.selector & 31)


# --------------------------------------------------------------------------- syntax


@dataclass(frozen=True)
class Slot:
    """One operand of a syntax. ``optional``: "" (required), ``"zero"`` (omitted exactly
    when its fields are zero: a flag) or ``"trailing"`` (omitted when zero and nothing
    after it is printed: positional operands such as B.IOR's sources)."""

    kind: Kind
    optional: str = ""


@dataclass(frozen=True)
class Syntax:
    """One way to write a form: its word and operands (``style`` ``"list"``), operands in
    braces (``"braced"``) or ``Name=value`` operands in any order (``"keyed"``).
    ``prints`` False: accepted but never printed (an alternative spelling)."""

    form: CommandForm
    word: str
    slots: tuple[Slot, ...]
    template: str
    style: str = "list"
    prints: bool = True
    #: fields the word itself fixes (``fadd.fs`` is SrcType 1)
    fixed: tuple[tuple[str, int], ...] = ()

    @cached_property
    def fields(self) -> frozenset[str]:
        """The form fields its word and operands spell (the others must be zero)."""
        return frozenset(
            [f for s in self.slots for f in s.kind.fields] + [f for f, _ in self.fixed]
        )

    # ----------------------------------------------------------- printing

    def show(self, values: dict[str, int]) -> str | None:
        """The text of ``values`` in this syntax; None when it cannot spell them (a
        nonzero field it has no operand for, or a kind that declines)."""
        if any(
            values.get(fd.name, 0) != fd.omitted
            for fd in self.form.fields
            if fd.name not in self.fields
        ) or any(values.get(f, 0) != v for f, v in self.fixed):
            return None
        if self.style == "keyed":
            return f"{self.word} " + ", ".join(
                f"{fd.name}={values.get(fd.name, 0)}" for fd in self.form.fields
            )
        parts: list[str | None] = []
        for slot in self.slots:
            vals = tuple(values.get(f, 0) for f in slot.kind.fields)
            if slot.optional and not any(vals):
                parts.append(None)
                continue
            text = slot.kind.show(vals)
            if text is None:
                return None
            parts.append(text)
        for i, slot in enumerate(self.slots):
            # a positional operand stays when one after it is printed (``B.IOR zero, a1``)
            later = any(p is not None for p in parts[i + 1 :]) or (i == 0 and not any(parts))
            if parts[i] is None and slot.optional == "trailing" and later:
                parts[i] = slot.kind.show(tuple(0 for _ in slot.kind.fields))
        shown = [p for p in parts if p is not None]
        if self.style == "braced":
            return f"{self.word} {{{', '.join(shown)}}}"
        return f"{self.word} {', '.join(shown)}" if shown else self.word


# --------------------------------------------------------------------------- templates


def _shifted(m: re.Match[str], f: CommandForm) -> ShiftedGpr:
    family = _modifier_family(f)
    if m[1] == "<<<shamt>":
        return ShiftedGpr(family)
    scale = int(m[1][2:]) if m[1] else 0
    return ShiftedGpr(family, shift=False, scale=scale)


def _memory(m: re.Match[str], f: CommandForm, word: str) -> Memory:
    if m[1] is None:  # PC-relative: [symbol] is the signed displacement
        return Memory((Int(_immediate(f), word, noun="displacement"),))
    return Memory(tuple(_slot(t, f, word).kind for t in _split_template(m[1])))


def _field_kind(name: str, f: CommandForm, word: str) -> Kind:
    """The kind of a template token that names a field of ``f``."""
    if re.fullmatch(r"RegSrc[0-2]?|RegDst|SrcL|SrcR|SrcD1?|SrcP|SrcA", name):
        return Gpr(name)
    if name.startswith("SrcTile"):
        return Tile(name)
    if name == "DataType":
        return DType()
    return Int(name, word, noun=name)


def _immediate(f: CommandForm) -> str:
    (name,) = [fd.name for fd in f.fields if "imm" in fd.name]
    return name


#: template tokens that are not plain field names: (regex, slot builder). The catalog's
#: own (``mask=PE_MASK``, ``<last>``, ``->{t, u, Rd}``) and ptoc's (``<VEC op>``,
#: ``LB2=uimm``, ``[x]`` for an operand that may be left off at the end).
_TOKENS: tuple[tuple[str, Callable[[re.Match[str], CommandForm, str], Slot]], ...] = (
    (r"\[(.+,.+)\]|\[(symbol|<symbol>)\]", lambda m, f, w: Slot(_memory(m, f, w))),
    (r"\[(.+)\]", lambda m, f, w: Slot(_slot(m[1], f, w).kind, "trailing")),
    (r"mask=<?PE_MASK>?", lambda m, f, w: Slot(Mask())),
    (r"<last>", lambda m, f, w: Slot(Flag("L", "last", ("<last>",)), "zero")),
    (r"->DstTile<SizeCode>", lambda m, f, w: Slot(Dest())),
    (r"S<SharedTID>", lambda m, f, w: Slot(Shared())),
    (r"->S<SharedTID><SizeCode>", lambda m, f, w: Slot(Shared(dest=True))),
    (r"->\{LB0, LB1, LB2\}", lambda m, f, w: Slot(LoopBound())),
    (r"->\{t, u, Rd\}", lambda m, f, w: Slot(Prefixed("->", Gpr("RegDst")))),
    (r"SrcR<[^>]*>(<<<shamt>|<<[0-9])?", lambda m, f, w: Slot(_shifted(m, f))),
    (r"<(VEC|SFU)? ?op>", lambda m, f, w: Slot(TeplOp(Engine(m[1]) if m[1] else None))),
    (r"<label>", lambda m, f, w: Slot(Label("simm17", w, noun="branch offset"))),
    (
        r"<hex imm>",
        lambda m, f, w: Slot(Int(_immediate(f), w, wrap=f.field(_immediate(f)).width)),
    ),
    (r"(LB[0-2])=uimm", lambda m, f, w: Slot(Prefixed(f"{m[1]}=", Int("uimm17", w)))),
    (r"->([A-Z][A-Za-z0-9]*)", lambda m, f, w: Slot(Prefixed("->", _field_kind(m[1], f, w)))),
    (r"[us]?imm", lambda m, f, w: Slot(Int(_immediate(f), w))),
)


def _slot(token: str, f: CommandForm, word: str) -> Slot:
    names = {fd.name for fd in f.fields}
    # the catalog writes some register fields in lower case (``c.setc.eq srcL, srcR``)
    token = next((n for n in names if n.lower() == token.lower()), token)
    if token in names:
        return Slot(_field_kind(token, f, word))
    for pattern, build in _TOKENS:
        m = re.fullmatch(pattern, token)
        if m and not (pattern.startswith("->(") and m[1] not in names):
            return build(m, f, word)
    return Slot(Literal(token))  # a fixed word: FALL, ->LB0, ->ra, LB2


def _split_template(text: str) -> list[str]:
    """Top-level comma-separated tokens of a template (commas inside ``{}`` or ``[]``
    stay: ``->{t, u, Rd}``)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{[":
            depth += 1
        elif ch in "}]" and depth:
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    return [*out, last] if last or out else []


def _split(args: str) -> list[str]:
    """The comma-separated operands of a command's text (a bracketed address such as
    ``[a0, 8]`` is one operand)."""
    if not args.strip():
        return []
    if "[" not in args:
        return [a.strip() for a in args.split(",")]
    out, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        if ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(args[start:i].strip())
            start = i + 1
    return [*out, args[start:].strip()]


def _syntax(f: CommandForm, template: str, prints: bool = True) -> Syntax:
    word, _, rest = template.partition(" ")
    rest = rest.strip()
    if rest == "keyed":
        slots = tuple(Slot(_datr_kind(fd.name, word)) for fd in f.fields)
        return Syntax(f, word, slots, template, "keyed", prints)
    if rest.startswith("{") and rest.endswith("}"):
        byname = {fd.name.lower(): fd.name for fd in f.fields}
        names = [byname[t.replace("_", "")] for t in _split_template(rest[1:-1])]
        slots = tuple(Slot(_datr_kind(n, word)) for n in names)
        return Syntax(f, word, slots, template, "braced", prints)
    # a modifier list without braces (``SrcR<.sw, .uw, .not>``) is one token
    rest = re.sub(r"<(\.[a-z]+(?:,\s*\.[a-z]+)*)>", r"<{\1}>", rest)
    slots = tuple(_slot(t, f, word) for t in _split_template(rest))
    return Syntax(f, word, slots, template, "list", prints)


def _datr_kind(name: str, word: str) -> Kind:
    spec = DATR_BY_NAME.get(name) if word == "B.DATR" else None
    if name == "DataType":
        return DType()
    if spec is not None and spec.names:
        return Named(spec, word)
    return Int(name, word, noun=name)


@dataclass(frozen=True)
class Spelling:
    """How ptoc's text differs from one catalog template: syntaxes printed in its place
    (the first that can spell the values wins) and syntaxes only accepted."""

    replace: tuple[str, ...] = ()
    accept: tuple[str, ...] = ()
    #: keep printing the catalog template after ``replace`` (for values they cannot spell)
    keep: bool = False


_KEYED = Spelling(replace=("{word} keyed",))
_FALL = Spelling(replace=("{word} FALL, [<label>]",))  # the reserved FIXUP payload

#: every deliberate difference between ptoc's text (docs/formats.md) and the catalog
#: templates, keyed by the catalog template
SPELLINGS: dict[str, Spelling] = {
    # canonical TEPL spelling names the operation and its engine; unassigned selectors
    # keep the catalog's Mode, Function form
    "BSTART.TEPL Mode, Function, DataType": Spelling(
        replace=("BSTART.VEC <VEC op>, DataType", "BSTART.SFU <SFU op>, DataType"),
        accept=("BSTART.TEPL <op>, DataType",),
        keep=True,
    ),
    "BSTART.STD FALL": _FALL,
    "BSTART.FP FALL": _FALL,
    "BSTART.SYS FALL": _FALL,
    **{
        f"B.DIM RegSrc, uimm, ->LB{n}": Spelling(
            accept=(f"B.DIM LB{n}=uimm", f"B.DIM LB{n}, uimm"), keep=True
        )
        for n in range(3)
    },
    "B.DATR {layout, datatype, padvalue_or_byteid, cmode, rmode, sat, canonicalize}": Spelling(
        accept=("B.DATR keyed",), keep=True
    ),
    # missing sources and the destination are zero
    "B.IOR [<gpr>[, <gpr>[, <gpr>]]][, -><gpr>]": Spelling(
        replace=("B.IOR [RegSrc0], [RegSrc1], [RegSrc2], [->RegDst]",)
    ),
    # alternatives separated by " | " in one template
    "B.IOS S<SharedTID>, mask=<PE_MASK> | B.IOS mask=<PE_MASK>, ->S<SharedTID><SizeCode>": (
        Spelling(
            replace=(
                "B.IOS S<SharedTID>, mask=<PE_MASK>",
                "B.IOS mask=<PE_MASK>, ->S<SharedTID><SizeCode>",
            )
        )
    ),
    "lui simm, ->{t, u, Rd}": Spelling(replace=("lui <hex imm>, ->{t, u, Rd}",)),
    # the catalog's bit-field operands M, N are the fields imml (width - 1) and imms/immr
    # (the offset), written as numbers in field order
    **{
        f"{m} {src},  M, N, ->{{t, u, Rd}}": Spelling(
            replace=(f"{m} SrcL, imml, {off}, ->{{t, u, Rd}}",)
        )
        for m, src, off in (
            ("bcnt", "srcL", "imms"),
            ("clz", "SrcL", "imms"),
            ("ctz", "SrcL", "imms"),
            ("rev", "SrcL", "immr"),
        )
    },
    **{
        f"{m} SrcL, M, N, ->{{t, u, Rd}}": Spelling(
            replace=(f"{m} SrcL, imml, imms, ->{{t, u, Rd}}",)
        )
        for m in ("bic", "bis", "bxs", "bxu")
    },
    # SETC immediates carry a shift (the immediate is shifted left by shamt), written
    # after the immediate when it is nonzero
    **{
        f"setc.{c} SrcL, {imm}": Spelling(replace=(f"setc.{c} SrcL, {imm}, [shamt]",))
        for c, imm in (
            ("eqi", "simm"),
            ("nei", "simm"),
            ("lti", "simm"),
            ("gei", "simm"),
            ("ltui", "uimm"),
            ("geui", "uimm"),
            ("andi", "simm"),
            ("ori", "simm"),
        )
    },
    # SETRET writes ra (R10), spelled as every other GPR
    "setret uimm, ->Ra": Spelling(replace=("setret uimm, ->ra",)),
}


#: B.FPATR prints its catalog template (nine numbers, the fixed Func/Opc fields left out)
#: and also accepts Name=value operands
_POSITIONAL_OR_KEYED = Spelling(accept=("{word} keyed",))


def _spelling(f: CommandForm) -> Spelling | None:
    if f.mnemonic == "B.FPATR":
        return _POSITIONAL_OR_KEYED
    if f.mnemonic in ("B.CATR", "B.HINT"):  # prose templates: Name=value
        return _KEYED
    return SPELLINGS.get(f.asm)


def _typed_syntaxes(f: CommandForm) -> tuple[Syntax, ...]:
    """An FSU form's syntaxes: one word per carrier suffix (``fadd.{T}`` is
    ``fadd.fd`` and ``fadd.fs``; ``fcvt.{srcT2dstT}`` ``fcvt.fs2fd`` ...), the word
    fixing SrcType (and DstType), then ``fadd SrcType=2, ...`` for any values."""
    word, _, rest = f.asm.partition(" ")
    stem = word.split(".")[0]
    out = []
    for suffix, fixed in type_suffixes(f.mnemonic).items():
        base = _syntax(f, f"{stem}.{suffix} {rest}")
        out.append(dataclasses.replace(base, fixed=tuple(fixed.items())))
    # every field by name, for values no suffix spells (a reserved SrcType or DstType)
    out.append(_syntax(f, f"{stem} keyed"))
    return tuple(out)


def syntaxes_of(f: CommandForm) -> tuple[Syntax, ...]:
    """The syntaxes of form ``f``, the printed ones first in printing preference."""
    return _SYNTAXES[f.form_id]


def _build() -> tuple[dict[str, tuple[Syntax, ...]], dict[str, tuple[Syntax, ...]]]:
    by_form: dict[str, tuple[Syntax, ...]] = {}
    by_word: dict[str, list[Syntax]] = {}
    for f in (*catalog.COMMAND_FORMS, *catalog.SCALAR_FORMS):
        if not is_modelled(f):
            continue
        if f.mnemonic in FSU_FORMS:
            syns = _typed_syntaxes(f)
            by_form[f.form_id] = syns
            for s in syns:
                by_word.setdefault(s.word.upper(), []).append(s)
            continue
        sp = _spelling(f)
        word = f.asm.split()[0]
        printed = [t.replace("{word}", word) for t in sp.replace] if sp else []
        if sp is None or sp.keep or not sp.replace:
            printed.append(f.asm)
        accepted = [t.replace("{word}", word) for t in sp.accept] if sp else []
        syns = tuple(
            [_syntax(f, t) for t in printed] + [_syntax(f, t, prints=False) for t in accepted]
        )
        by_form[f.form_id] = syns
        for s in syns:
            by_word.setdefault(s.word.upper(), []).append(s)
    return by_form, {w: tuple(s) for w, s in by_word.items()}


_SYNTAXES, _BY_WORD = _build()


def print_fields(f: CommandForm, values: dict[str, int]) -> str:
    """The canonical text of form ``f`` with field ``values``."""
    for s in syntaxes_of(f):
        if s.prints:
            text = s.show(values)
            if text is not None:
                return text
    raise FormError(f"{f.mnemonic}: no syntax spells {values}")  # pragma: no cover


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class _Miss:
    """Why one syntax did not match: at operand ``index``; ``strong`` when an operand of
    the right shape was malformed (that message wins over a shape mismatch)."""

    index: int
    message: str
    strong: bool = False


def parse_fields(word: str, args: str) -> tuple[CommandForm, dict[str, int]]:
    """The form and field values of one command's text (its word and operand text)."""
    syns = _BY_WORD.get(word.upper())
    if syns is None:
        raise FormError(f"unknown command {show(word)}")
    tokens = _split(args)
    misses: list[_Miss] = []
    for s in syns:
        result = _match(s, args, tokens, syns)
        if isinstance(result, dict):
            return s.form, {**result, **dict(s.fixed)}
        misses.append(result)
    lead = _lead_miss(syns, tokens)
    if lead is not None:
        raise FormError(lead)
    best = max(misses, key=lambda m: (m.strong, m.index))
    raise FormError(best.message)


def _lead_miss(syns: Sequence[Syntax], tokens: list[str]) -> str | None:
    """``BSTART.SYS RET``: every syntax of the word starts with a fixed word, and the
    text's first operand is none of them."""
    leads = []
    for s in syns:
        if not s.slots or not isinstance(s.slots[0].kind, Literal):
            return None
        leads.append(s.slots[0].kind.text)
    if tokens and any(_squash(tokens[0]) == x for x in leads):
        return None
    word = syns[0].word
    have = ", ".join(dict.fromkeys(leads))
    if not tokens:
        return f"{word} takes {have}"
    first = tokens[0].strip()
    name = first if _IDENT.fullmatch(first) else show(first)
    return f"{word} has no {name} form (the catalog has {have})"


def _match(
    s: Syntax, args: str, tokens: list[str], syns: Sequence[Syntax]
) -> dict[str, int] | _Miss:
    if s.style == "braced":
        return _match_braced(s, args)
    if s.style == "keyed":
        return _match_keyed(s, tokens)
    values: dict[str, int] = {}
    i = k = 0
    used: list[Slot] = []
    slots = s.slots
    while k < len(slots):
        run = [k]  # adjacent named operands match in any order
        while slots[run[-1]].kind.free and run[-1] + 1 < len(slots):
            if not slots[run[-1] + 1].kind.free:
                break
            run.append(run[-1] + 1)
        pending = list(run)
        while i < len(tokens) and pending:
            hit = next((j for j in pending if slots[j].kind.accepts(tokens[i])), None)
            if hit is None:
                break
            try:
                values.update(
                    zip(slots[hit].kind.fields, slots[hit].kind.read(tokens[i]), strict=True)
                )
            except LabelUse:
                raise
            except FormError as e:
                return _Miss(i, str(e), strong=True)
            used.append(slots[hit])
            pending.remove(hit)
            i += 1
        for j in pending:
            if not slots[j].optional:
                return _Miss(i, _explain(s, j, tokens, i, used, syns))
        k = run[-1] + 1
    if i < len(tokens):
        if not s.slots:
            return _Miss(i, f"{s.word} takes no operands")
        return _Miss(i, _explain(s, len(s.slots), tokens, i, used, syns))
    return values


def _explain(
    s: Syntax, k: int, tokens: list[str], i: int, used: list[Slot], syns: Sequence[Syntax]
) -> str:
    """Why ``tokens[i]`` (or its absence) does not fit slot ``k`` of ``s``."""
    order = max((x.template for x in syns if x.prints), key=len)
    if i >= len(tokens):
        slot = s.slots[k]
        return f"{s.word} needs {_a(slot.kind.noun)} ({s.template})"
    tok = tokens[i]
    value_kinds = (Int, Named, DType, Gpr, Literal)
    positional = not any(x.optional for x in s.slots)
    if positional and k < len(s.slots) and isinstance(s.slots[k].kind, value_kinds):
        kind = s.slots[k].kind
        if isinstance(kind, Literal):
            return f"{s.word} takes {kind.text} here, not {show(tok)} ({s.template})"
        try:  # a positional value operand: its own reading says what is wrong
            kind.read(tok)
        except FormError as e:
            return str(e)
    earlier = [x for x in s.slots[:k] if x.kind.accepts(tok)]
    later = [x for x in s.slots[k:] if x.kind.accepts(tok)]
    groups = [x.kind.noun for x in earlier] or [
        x.kind.noun for y in syns for x in y.slots if x.kind.accepts(tok)
    ]
    if groups and not later:
        noun = groups[0]
        most = max(sum(x.kind.noun == noun for x in y.slots) for y in syns)
        kinds = [x.kind for y in syns for x in y.slots if x.kind.noun == noun]
        given = sum(any(kd.accepts(t) for kd in kinds) for t in tokens)
        if earlier and given <= most and used:
            return f"{show(tok)} after the {used[-1].kind.noun} (order: {order})"
        if given > most:
            count = "one" if most == 1 else f"at most {most}"
            return f"{s.word} takes {count} {_plural(noun, most)}"
    if later and k < len(s.slots):
        return f"{s.word} needs {_a(s.slots[k].kind.noun)} ({s.template})"
    if k < len(s.slots):
        try:  # a token of no known shape: the slot's own reading says what is wrong
            s.slots[k].kind.read(tok)
        except FormError as e:
            return str(e)
    if not any(x.kind.accepts(tok) for y in syns for x in y.slots):
        return f"malformed {s.word} operand {show(tok)} (expected {order})"
    return f"{s.word}: unexpected {show(tok)} (expected {s.template})"


def _a(noun: str) -> str:
    return noun if not noun[:1].isalpha() else f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _plural(noun: str, n: int) -> str:
    return noun if n == 1 else noun + "s"


def _match_braced(s: Syntax, args: str) -> dict[str, int] | _Miss:
    t = args.strip()
    if not t.startswith("{"):
        return _Miss(0, f"expected {s.template}")
    if not t.endswith("}"):
        return _Miss(0, f"unterminated {s.word} {{...}}", strong=True)
    parts = _split(t[1:-1])
    if len(parts) != len(s.slots):
        names = ", ".join(x.kind.fields[0] for x in s.slots)
        return _Miss(0, f"{s.word} {{...}} lists {names}", strong=True)
    values: dict[str, int] = {}
    for i, (slot, part) in enumerate(zip(s.slots, parts, strict=True)):
        try:
            values.update(zip(slot.kind.fields, slot.kind.read(part), strict=True))
        except FormError as e:
            return _Miss(i, str(e), strong=True)
    return values


def _match_keyed(s: Syntax, tokens: list[str]) -> dict[str, int] | _Miss:
    by_key: dict[str, Slot] = {}
    for each in s.slots:
        field_name = each.kind.fields[0]
        by_key[field_name] = each
        spec = DATR_BY_NAME.get(field_name) if s.word == "B.DATR" else None
        for key in spec.keys if spec else ():
            by_key[key] = each
    values: dict[str, int] = {}
    for i, item in enumerate(tokens):
        if "=" in item:
            key, text = (x.strip() for x in item.split("=", 1))
            keyed = by_key.get(key)
            if keyed is None:
                names = ", ".join(x.kind.fields[0] for x in s.slots)
                return _Miss(i, f"{s.word} has no field {show(key)} (fields: {names})", True)
            slot = keyed
        else:
            bare = _bare_slot(s, item)
            if bare is None:
                return _Miss(i, f"{s.word} operands are written name=value", strong=True)
            slot, text = bare, item
        name = slot.kind.fields[0]
        if name in values:
            return _Miss(i, f"{s.word} names {name} twice", strong=True)
        try:
            (values[name],) = slot.kind.read(text)
        except FormError as e:
            return _Miss(i, str(e), strong=True)
    return values


def _bare_slot(s: Syntax, item: str) -> Slot | None:
    """The field a bare keyed operand sets: the named field whose spelling it is, else
    the DataType (``B.DATR S8, RNE, Sat=1``)."""
    for slot in s.slots:
        if isinstance(slot.kind, Named) and slot.kind.names(item):
            return slot
    for slot in s.slots:
        if isinstance(slot.kind, DType):
            return slot
    return None
