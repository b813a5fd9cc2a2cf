"""Assembly text: Program <-> canonical text (DECISIONS D7).

The printer emits one command per line in the seeds' spelling; the parser accepts that
form, the seeds' ``;``-joined one-line form and the alternative spellings D7 lists.
Comments start with ``#`` or ``//``. Every command kind has one template
(:func:`format_command`) and one parser (:func:`parse_command`).

Canonical text holds only legal encodings: the parser refuses every value the catalog
reserves (:func:`ptoc.backend.encoding.field_violation`). A decoded command that breaks
such a rule (a reserved DataType code, SizeCode 11, an offset on ``BSTART.STD FALL``)
prints as the raw parcel it came from, ``.word 0x...`` (32 bits) or ``.half 0x...``
(16 bits), which the parser decodes back; so words -> text -> words is lossless for
every word that decodes. Integer literals follow :mod:`ptoc.backend.literals`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .encoding import (
    Undecodable,
    decode_word,
    encode_command,
    field_violation,
    parcel_length,
    scalar_start_form,
)
from .errors import AsmError, EncodeError
from .isa import (
    DTYPE_NONE,
    RESERVED_DTYPE_CODES,
    DataType,
    Engine,
    Family,
    OpDef,
    catalog,
    op_by_bstart,
    scalar_form,
)
from .isa import op as op_def
from .isa.fields import (
    CMODE_BY_NAME,
    CMODE_NAMES,
    GPR_BY_NAME,
    GPR_NAMES,
    LAYOUT_BY_NAME,
    LAYOUT_NAMES,
    LOCAL_SIZE_CODES,
    MASK_TO_PEMODE,
    PAD_BY_NAME,
    PAD_NAMES,
    RMODE_BY_NAME,
    RMODE_NAMES,
    SIZE_BY_NAME,
    SIZE_NAMES,
    Hand,
    mask_text,
)
from .literals import LiteralError, is_decimal, parse_int, show
from .program import (
    Command,
    Datr,
    Dim,
    Generic,
    Ior,
    Ios,
    Iot,
    Program,
    Scalar,
    ScalarStart,
    Stop,
    TileRef,
    TileStart,
)


class _Bad(Exception):
    """A malformed command; the caller adds file and line."""


# --------------------------------------------------------------------------- printing


def _dt(code: int) -> str:
    if code == DTYPE_NONE:
        return "DTYPE_NONE"
    try:
        return DataType(code).name
    except ValueError:
        return str(code)


def _gpr(sel: int) -> str:
    return GPR_NAMES[sel] if 0 <= sel < len(GPR_NAMES) else f"r{sel}"


def _size(code: int) -> str:
    return SIZE_NAMES.get(code, str(code))


def _name(names: tuple[str, ...], code: int) -> str:
    return names[code] if 0 <= code < len(names) else str(code)


def raw_word(c: Command) -> str | None:
    """``.word 0x...`` / ``.half 0x...`` for a command that breaks a catalog rule but
    encodes (a decoded reserved value); None for a legal or unencodable command."""
    if field_violation(c) is None:
        return None
    try:
        value, bits = encode_command(c)
    except EncodeError:
        return None
    return f".word 0x{value:08x}" if bits == 32 else f".half 0x{value:04x}"


def format_command(c: Command, note: bool = False) -> str:
    """The canonical text of one command.

    A command that breaks a catalog rule prints as its raw parcel (``.word 0x...``);
    ``note=True`` then appends a ``//`` comment with its reading and the rule. Commands
    that cannot be encoded at all print in their template, which the parser refuses.
    """
    raw = raw_word(c)
    if raw is not None:
        if not note:
            return raw
        return f"{raw}  // {_template(c)}: {field_violation(c)}"
    return _template(c)


def _template(c: Command) -> str:
    """The spelling of a command from its kind's template (legal or not)."""
    if isinstance(c, TileStart):
        o = c.op
        if o is None:
            if c.family is Family.TEPL:
                return f"BSTART.TEPL {c.selector >> 5}, {c.selector & 31}, {_dt(c.dtype)}"
            return f"BSTART.{c.family} {c.selector}, {_dt(c.dtype)}"
        if o.family is Family.TEPL:
            return f"{o.bstart} {o.mnemonic}, {_dt(c.dtype)}"
        return f"{o.bstart} {_dt(c.dtype)}"
    if isinstance(c, Iot):
        parts = [str(s) for s in c.srcs]
        parts.append(f"mask={mask_text(c.mask)}")
        if c.last:
            parts.append("last")
        if c.dst is not None:
            parts.append(f"->{c.dst.name}<{_size(c.size)}>")
        elif c.size:  # no encoding: printed so that the parser refuses it
            parts.append(f"SizeCode={c.size}")
        return "B.IOT " + ", ".join(parts)
    if isinstance(c, Dim):
        if c.compressed:
            reg = f"{_gpr(c.reg)}, " if c.reg else ""  # no encoding: the parser refuses it
            return f"C.B.DIMI {reg}{c.imm}, ->LB{c.lb}"
        return f"B.DIM {_gpr(c.reg)}, {c.imm}, ->LB{c.lb}"
    if isinstance(c, Stop):
        return "C.BSTOP" if c.compressed else "BSTOP"
    if isinstance(c, Datr):
        layout = LAYOUT_NAMES.get(c.layout, str(c.layout))
        return (
            f"B.DATR {{{layout}, {_dt(c.dtype)}, {_name(PAD_NAMES, c.pad)}, "
            f"{_name(CMODE_NAMES, c.cmode)}, {_name(RMODE_NAMES, c.rmode)}, {c.sat}, "
            f"{c.canonicalize}}}"
        )
    if isinstance(c, Ior):
        srcs = [c.src0, c.src1, c.src2]
        if c.dst:
            return "B.IOR " + ", ".join(_gpr(s) for s in srcs) + f", ->{_gpr(c.dst)}"
        while len(srcs) > 1 and srcs[-1] == 0:
            srcs.pop()
        return "B.IOR " + ", ".join(_gpr(s) for s in srcs)
    if isinstance(c, Ios):
        if c.size:
            return f"B.IOS mask={mask_text(c.mask)}, ->S{c.tid}<{_size(c.size)}>"
        return f"B.IOS S{c.tid}, mask={mask_text(c.mask)}"
    if isinstance(c, ScalarStart):
        text = f"BSTART.{c.block} {c.kind}"
        # a branch kind always names its offset; any other kind only a nonzero one (which
        # has no legal encoding, so it is never silently dropped)
        show = c.kind in ("COND", "DIRECT") or c.offset
        return text + (f", {c.offset}" if show else "")
    if isinstance(c, Scalar):
        return _format_scalar(c)
    if isinstance(c, Generic):
        forms = [x for x in catalog.COMMAND_FORMS if x.form_id == c.form_id]
        name = forms[0].mnemonic if forms else c.form_id
        return f"{name} " + ", ".join(f"{k}={v}" for k, v in c.fields)
    return f"<{type(c).__name__}>"


def format_program(program: Program) -> str:
    """Canonical text: one command per line (raw words carry a ``//`` reading)."""
    return "".join(format_command(c, note=True) + "\n" for c in program.commands)


# --------------------------------------------------------------------------- scalar


def _scalar_operands(mnemonic: str) -> list[str]:
    """Operand field names of a scalar form in asm order, destination last."""
    f = scalar_form(mnemonic)
    names = [fd.name for fd in f.fields]
    return _operand_order(names)


def _operand_order(names: list[str]) -> list[str]:
    order: list[str] = [n for n in ("SrcL", "SrcR") if n in names]
    order += [n for n in names if n not in ("SrcL", "SrcR", "RegDst", "SrcRType", "shamt")]
    if "shamt" in names and "SrcR" not in names:
        order.append("shamt")
    return order


#: SrcRType codes 00 .sw, 01 .uw, 10 .neg, 11 no modifier; an omitted suffix encodes 11
#: (ADD.asl/SUB.asl contract defaults)
_SRCR_TYPES = (".sw", ".uw", ".neg", "")


def _fixed_destination(mnemonic: str) -> str | None:
    """The register a form without a RegDst field writes (``c.setret ..., ->ra``)."""
    f = scalar_form(mnemonic)
    if any(fd.name == "RegDst" for fd in f.fields):
        return None
    m = re.search(r"->\s*([a-z0-9]+)\s*$", f.asm)
    return m.group(1) if m else None


def _format_scalar(c: Scalar) -> str:
    v = dict(c.fields)
    try:
        names = _scalar_operands(c.mnemonic)
        fixed = _fixed_destination(c.mnemonic)
    except KeyError:  # not a catalog form: printed so that the parser refuses it
        return f"{c.mnemonic.lower()} " + ", ".join(f"{k}={x}" for k, x in c.fields)
    parts = []
    for name in names:
        value = v.get(name, 0)
        if name in ("SrcL",):
            parts.append(_gpr(value))
        elif name == "SrcR":
            text = _gpr(value) + _name(_SRCR_TYPES, v.get("SrcRType", 0))
            if v.get("shamt", 0):
                text += f"<<{v['shamt']}"
            parts.append(text)
        elif name == "imm20":
            parts.append(f"0x{value & 0xFFFFF:x}" if 0 <= value < 1 << 20 else str(value))
        else:
            parts.append(str(value))
    parts.append(f"->{fixed or _gpr(v.get('RegDst', 0))}")
    return f"{c.mnemonic.lower()} " + ", ".join(parts)


# --------------------------------------------------------------------------- parsing


def _int(text: str, what: str) -> int:
    try:
        return parse_int(text)
    except LiteralError as e:
        raise _Bad(f"{what} {e}") from None


_show = show
_digits = is_decimal


def _reg(text: str) -> int:
    t = text.strip()
    if t in GPR_BY_NAME:
        return GPR_BY_NAME[t]
    m = re.fullmatch(r"r([0-9]{1,2})", t, re.ASCII)
    if m:
        value = int(m.group(1))
        if value > 31:
            raise _Bad(f"GPR selector {value} does not fit 5 bits")
        return value
    raise _Bad(f"unknown GPR {_show(t)} (expected zero, sp, a0..a7, ra, s0..s8, x0..x3)")


def _reg_header(text: str) -> int:
    sel = _reg(text)
    if sel >= len(GPR_NAMES):
        raise _Bad(f"GPR selector {sel} is reserved in header commands (legal: 0..23)")
    return sel


def _dtype(text: str, allow_none: bool = False) -> int:
    t = text.strip()
    if t == "DTYPE_NONE":
        if allow_none:
            return DTYPE_NONE
        raise _Bad("DTYPE_NONE is only a B.DATR / BSTART.TMOV sentinel")
    if _digits(t):
        return _raw_dtype(_int(t, "DataType code"))
    if t in DataType.__members__:
        return int(DataType[t])
    for dt in DataType:
        if dt.name.upper() == t.upper():
            return int(dt)
    raise _Bad(f"unknown DataType {_show(t)}")


def _raw_dtype(code: int) -> int:
    if code in RESERVED_DTYPE_CODES or code > 31:
        raise _Bad(f"DataType code {code} is reserved")
    return code


_TILE_RE = re.compile(r"([TUMN])#([0-9]{1,3})", re.ASCII)


def _tile(text: str) -> TileRef:
    m = _TILE_RE.fullmatch(text.strip())
    if not m:
        raise _Bad(f"malformed tile operand {_show(text)} (expected T#1..N#16)")
    k = int(m.group(2))
    if not 1 <= k <= 16:
        raise _Bad(f"tile position {text.strip()} is outside #1..#16")
    return TileRef(Hand[m.group(1)], k)


def _mask(text: str) -> int:
    m = re.fullmatch(r"mask\s*=\s*([01]{4})", text.strip(), re.ASCII)
    if not m:
        raise _Bad(f"malformed mask {_show(text)} (expected mask=bbbb, PE0 first)")
    mask = int(m.group(1), 2)
    if mask not in MASK_TO_PEMODE:
        legal = ", ".join(mask_text(x) for x in MASK_TO_PEMODE)
        raise _Bad(f"mask={m.group(1)} has no PEMode encoding (legal masks: {legal})")
    return mask


def _size_code(text: str, limit: range) -> int:
    t = text.strip().replace("KiB", "KB")
    code = _int(t, "SizeCode") if _digits(t) else SIZE_BY_NAME.get(t)
    if code is None:
        raise _Bad(f"unknown tile size {_show(text)} (128B..64KB or a SizeCode)")
    if code not in limit:
        what = f"size {t} (SizeCode {code})" if not _digits(t) else f"SizeCode {code}"
        raise _Bad(
            f"{what} is reserved here (legal SizeCodes: {limit.start}..{limit.stop - 1})"
        )
    return code


def _split(args: str) -> list[str]:
    return [a.strip() for a in args.split(",")] if args.strip() else []


def _op(name: str) -> OpDef:
    try:
        return op_def(name.strip())
    except KeyError:
        raise _Bad(f"unknown tile operation {_show(name)}") from None


_SCALAR_KINDS = ("FALL", "COND", "DIRECT", "RET", "IND")


def _parse_bstart(word: str, args: str) -> Command:
    kind = word.split(".", 1)[1] if "." in word else ""
    a = _split(args)
    if kind in ("VEC", "SFU"):
        if len(a) != 2:
            raise _Bad(f"{word} takes an operation and a DataType")
        o = _op(a[0])
        if o.family is not Family.TEPL:
            raise _Bad(f"{o.mnemonic} is not a TEPL operation; write {o.bstart} DataType")
        if o.engine is not Engine(kind):
            raise _Bad(
                f"{o.mnemonic} executes on {o.engine}: write {o.bstart} {o.mnemonic} "
                f"(engine alias rule)"
            )
        return TileStart(Family.TEPL, o.selector, _dtype(a[1]))
    if kind == "TEPL":
        if len(a) == 2:
            o = _op(a[0])
            if o.family is not Family.TEPL:
                # its function code would select a different TEPL operation
                raise _Bad(
                    f"{o.mnemonic} is a {o.engine} operation, not a TEPL one; write "
                    f"{o.bstart} {a[1]}"
                )
            return TileStart(Family.TEPL, o.selector, _dtype(a[1]), "TEPL")
        if len(a) != 3:
            raise _Bad("BSTART.TEPL takes Mode, Function, DataType (or an operation, DataType)")
        mode, fn = _int(a[0], "Mode"), _int(a[1], "Function")
        if not (0 <= mode < 4 and 0 <= fn < 32):
            raise _Bad(f"Mode {mode} / Function {fn} out of range (2 and 5 bits)")
        return TileStart(Family.TEPL, mode << 5 | fn, _dtype(a[2]), "TEPL")
    if kind in ("STD", "FP", "SYS"):
        if not a or a[0] not in _SCALAR_KINDS:
            raise _Bad(f"{word} takes FALL, COND, DIRECT, RET or IND")
        f = scalar_start_form(kind, a[0])
        if f is None:
            have = sorted(k for k in _SCALAR_KINDS if scalar_start_form(kind, k) is not None)
            raise _Bad(f"{word} has no {a[0]} form (the catalog has {', '.join(have)})")
        if not f.fields and len(a) > 1:
            raise _Bad(f"{word} {a[0]} takes no offset")
        if a[0] in ("COND", "DIRECT") and len(a) != 2:
            raise _Bad(f"{word} {a[0]} takes one branch offset")
        if len(a) > 2:
            raise _Bad(f"{word} {a[0]} takes at most one offset")
        offset = _int(a[1], "branch offset") if len(a) > 1 else 0
        return ScalarStart(kind, a[0], offset)
    named = op_by_bstart(word)
    if named is None:
        raise _Bad(f"unknown block start {_show(word)}")
    if len(a) != 1:
        raise _Bad(f"{word} takes one DataType")
    return TileStart(
        named.family, named.selector, _dtype(a[0], allow_none=named.mnemonic == "TMOV")
    )


def _parse_iot(args: str) -> Command:
    srcs: list[TileRef] = []
    mask: int | None = None
    last = False
    dst: Hand | None = None
    size = 0
    for part in _split(args):
        if part.startswith("mask"):
            if mask is not None:
                raise _Bad("B.IOT takes one mask=bbbb")
            if dst is not None:
                raise _Bad("mask after the destination (order: sources, mask, last, ->dst)")
            mask = _mask(part)
        elif part in ("last", "<last>"):
            if last:
                raise _Bad("B.IOT takes `last` once")
            if dst is not None:
                raise _Bad("`last` after the destination (order: sources, mask, last, ->dst)")
            last = True
        elif part.startswith("->"):
            if dst is not None:
                raise _Bad("B.IOT binds at most one destination")
            m = re.fullmatch(r"->\s*([TUMN])\s*<([^>]*)>", part)
            if not m:
                raise _Bad(f"malformed destination {_show(part)} (expected ->T<2KB>)")
            dst, size = Hand[m.group(1)], _size_code(m.group(2), LOCAL_SIZE_CODES)
        else:
            if mask is not None or last or dst is not None:
                raise _Bad(f"tile source {_show(part)} after the mask")
            srcs.append(_tile(part))
    if mask is None:
        raise _Bad("B.IOT needs mask=bbbb")
    if len(srcs) > 2:
        raise _Bad("B.IOT binds at most two sources")
    if not srcs and dst is None:
        raise _Bad("B.IOT needs a source or a destination")
    return Iot(tuple(srcs), mask, last, dst, size)


def _parse_dim(args: str) -> Command:
    a = _split(args)
    m = re.fullmatch(r"LB([012])\s*=\s*(\S+)", a[0], re.ASCII) if len(a) == 1 else None
    if m:
        return Dim(int(m.group(1)), 0, _dim_imm(m.group(2)))
    if len(a) == 2 and re.fullmatch(r"LB[012]", a[0]):
        return Dim(int(a[0][2]), 0, _dim_imm(a[1]))
    if len(a) != 3 or not re.fullmatch(r"->\s*LB[012]", a[2]):
        raise _Bad("expected B.DIM reg, imm, ->LBn or B.DIM LBn=imm")
    return Dim(int(a[2][-1]), _reg_header(a[0]), _dim_imm(a[1]))


def _dim_imm(text: str) -> int:
    v = _int(text, "B.DIM immediate")
    if not 0 <= v < 1 << 17:
        raise _Bad(f"B.DIM immediate {v} does not fit 17 unsigned bits")
    return v


def _parse_dimi(args: str) -> Command:
    a = _split(args)
    if len(a) != 2 or not re.fullmatch(r"->\s*LB[0-3]", a[1]):
        raise _Bad("expected C.B.DIMI imm8, ->LBn")
    lb = int(a[1][-1])
    if lb == 3:
        raise _Bad("C.B.DIMI LoopNest 3 is reserved")
    v = _int(a[0], "C.B.DIMI immediate")
    if not 0 <= v < 256:
        raise _Bad(f"C.B.DIMI immediate {v} does not fit 8 unsigned bits")
    return Dim(lb, 0, v, compressed=True)


def _parse_ior(args: str) -> Command:
    a = _split(args)
    dst = 0
    if a and a[-1].startswith("->"):
        dst = _reg_header(a.pop()[2:])
    if len(a) > 3:
        raise _Bad("B.IOR takes at most three sources")
    srcs = [_reg_header(x) for x in a] + [0] * (3 - len(a))
    return Ior(srcs[0], srcs[1], srcs[2], dst)


def _parse_ios(args: str) -> Command:
    mask: int | None = None
    tile: tuple[int, int] | None = None  # (SharedTID, SizeCode)
    for x in _split(args):
        if x.startswith("mask"):
            if mask is not None:
                raise _Bad("B.IOS takes one mask=bbbb")
            mask = _mask(x)
            continue
        m = re.fullmatch(r"->\s*S([0-9]{1,3})\s*<([^>]*)>", x, re.ASCII)
        n = re.fullmatch(r"S([0-9]{1,3})", x, re.ASCII)
        if not m and not n:
            raise _Bad(
                f"malformed B.IOS operand {_show(x)} (expected Sx, mask=bbbb or ->Sx<size>)"
            )
        if tile is not None:
            raise _Bad("B.IOS binds one Shared tile")
        if m:
            tile = (_sid(m.group(1)), _size_code(m.group(2), range(1, 13)))
        elif n:
            tile = (_sid(n.group(1)), 0)
    if mask is None:
        raise _Bad("B.IOS needs mask=bbbb")
    if tile is None:
        raise _Bad("B.IOS needs Sx or ->Sx<size>")
    return Ios(tile[0], mask, tile[1])


def _sid(text: str) -> int:
    v = int(text)
    if v > 255:
        raise _Bad(f"Shared tile S{v} does not exist (S0..S255)")
    return v


_DATR_KEYS = ("Layout", "DataType", "PadValue", "CMode", "RMode", "Sat", "Canonicalize")


def _parse_datr(args: str) -> Command:
    t = args.strip()
    values = dict.fromkeys(_DATR_KEYS, 0)
    if t.startswith("{"):
        if not t.endswith("}"):
            raise _Bad("unterminated B.DATR {...}")
        a = _split(t[1:-1])
        if len(a) != 7:
            raise _Bad("B.DATR {...} lists Layout, DataType, PadValue, CMode, RMode, Sat, "
                       "Canonicalize")  # fmt: skip
        for key, text in zip(_DATR_KEYS, a, strict=True):
            values[key] = _datr_value(key, text)
    else:
        seen: set[str] = set()
        for item in _split(t):
            if "=" in item:
                key, text = (x.strip() for x in item.split("=", 1))
                key = {"PadValueOrByteId": "PadValue", "ByteId": "PadValue"}.get(key, key)
                if key not in values:
                    raise _Bad(f"unknown B.DATR field {_show(key)}")
            else:
                key, text = _datr_key_of(item), item
            if key in seen:
                raise _Bad(f"B.DATR names {key} twice")
            seen.add(key)
            values[key] = _datr_value(key, text)
    return Datr(
        values["Layout"], values["DataType"], values["PadValue"], values["CMode"],
        values["RMode"], values["Sat"], values["Canonicalize"],
    )  # fmt: skip


def _datr_key_of(item: str) -> str:
    if item in LAYOUT_BY_NAME:
        return "Layout"
    if item in PAD_BY_NAME:
        return "PadValue"
    if item in CMODE_BY_NAME and item != "None":
        return "CMode"
    if item in RMODE_BY_NAME:
        return "RMode"
    return "DataType"


def _datr_value(key: str, text: str) -> int:
    t = text.strip()
    table: dict[str, dict[str, int]] = {
        "Layout": LAYOUT_BY_NAME,
        "PadValue": PAD_BY_NAME,
        "CMode": CMODE_BY_NAME,
        "RMode": RMODE_BY_NAME,
    }
    if key == "DataType":
        return DTYPE_NONE if t == "DTYPE_NONE" else _dtype(t)
    if key in table and t in table[key]:
        return table[key][t]
    v = _int(t, f"B.DATR {key}")
    limits = {"Layout": 32, "PadValue": 4, "CMode": 8, "RMode": 8, "Sat": 2, "Canonicalize": 2}
    if not 0 <= v < limits[key]:
        raise _Bad(f"B.DATR {key} {v} out of range")
    if key == "Layout" and v not in LAYOUT_NAMES:
        raise _Bad(f"B.DATR Layout code {v} is reserved")
    if key == "CMode" and v > 5:
        raise _Bad(f"B.DATR CMode {v} is reserved")
    return v


def _parse_generic(mnemonic: str, args: str) -> Command:
    forms = [f for f in catalog.COMMAND_FORMS if f.mnemonic == mnemonic]
    values: dict[str, int] = {}
    for item in _split(args):
        if "=" not in item:
            raise _Bad(f"{mnemonic} operands are written name=value")
        key, text = (x.strip() for x in item.split("=", 1))
        if key in values:
            raise _Bad(f"{mnemonic} names {_show(key)} twice")
        values[key] = _int(text, key)
    for f in forms:
        names = {fd.name for fd in f.fields}
        if set(values) <= names:
            for fd in f.fields:
                value = values.get(fd.name, 0)
                if not fd.fits(value) or not fd.legal(value):
                    raise _Bad(f"{mnemonic} {fd.name}={value} is not legal")
            return Generic(
                f.form_id, tuple((fd.name, values.get(fd.name, 0)) for fd in f.fields)
            )
    raise _Bad(f"{mnemonic} has no field set {_show(str(sorted(values)), 60)}")


_SRCR_RE = re.compile(r"([a-z0-9]+)(\.sw|\.uw|\.neg)?(?:<<([0-9]{1,3}))?", re.ASCII)


def _parse_scalar(mnemonic: str, args: str) -> Command:
    f = scalar_form(mnemonic)
    a = _split(args)
    if not a or not a[-1].startswith("->"):
        raise _Bad(f"{mnemonic.lower()} needs a destination ->reg")
    dest = a.pop()[2:].strip()
    fixed = _fixed_destination(mnemonic)
    values: dict[str, int] = {}
    if fixed is not None:
        if dest != fixed:
            raise _Bad(f"{mnemonic.lower()} always writes {fixed}: write ->{fixed}")
    else:
        values["RegDst"] = _reg(dest)
    names = _scalar_operands(mnemonic)
    if len(a) != len(names):
        raise _Bad(f"{mnemonic.lower()} takes {len(names)} source operand(s)")
    for name, text in zip(names, a, strict=True):
        if name == "SrcL":
            values[name] = _reg(text)
        elif name == "SrcR":
            m = _SRCR_RE.fullmatch(text)
            if not m:
                raise _Bad(f"malformed register operand {_show(text)}")
            values["SrcR"] = _reg(m.group(1))
            values["SrcRType"] = _SRCR_TYPES.index(m.group(2) or "")
            values["shamt"] = int(m.group(3) or 0)
        else:
            fd = f.field(name)
            v = _int(text, name)
            if not fd.signed and fd.name == "imm20" and v < 0:
                v &= 0xFFFFF
            if not fd.fits(v):
                raise _Bad(f"{mnemonic.lower()} immediate {v} does not fit {name}")
            values[name] = v
    for fd in f.fields:
        if not fd.legal(values.get(fd.name, 0)) or not fd.fits(values.get(fd.name, 0)):
            raise _Bad(f"{mnemonic.lower()} {fd.name}={values.get(fd.name, 0)} is not legal")
    return Scalar(f.mnemonic, tuple((fd.name, values.get(fd.name, 0)) for fd in f.fields))


def _parse_raw(word: str, args: str) -> Command:
    """``.word 0x...`` / ``.half 0x...``: the command one raw parcel decodes to."""
    bits = 32 if word == ".word" else 16
    a = _split(args)
    if len(a) != 1:
        raise _Bad(f"{word} takes one parcel value")
    v = _int(a[0], f"{word} value")
    if not 0 <= v < 1 << bits:
        raise _Bad(f"{word} value {_show(a[0])} does not fit {bits} bits")
    length = parcel_length(v & 0xFFFF)
    if length != bits:
        spell = {16: ".half", 32: ".word"}.get(length, f"a {length}-bit instruction")
        raise _Bad(f"{word} 0x{v:x} starts a {length}-bit instruction ({spell})")
    try:
        return decode_word(v, bits)
    except Undecodable as e:
        raise _Bad(f"{word} 0x{v:0{bits // 4}x} {e}") from None


_SIMPLE: dict[str, Callable[[str], Command]] = {
    "B.IOT": _parse_iot,
    "B.DIM": _parse_dim,
    "C.B.DIMI": _parse_dimi,
    "B.IOR": _parse_ior,
    "B.IOS": _parse_ios,
    "B.DATR": _parse_datr,
}
_SCALARS = {f.mnemonic.lower() for f in catalog.SCALAR_FORMS}
_GENERICS = {"B.CATR", "B.HINT", "B.FPATR"}
_CACHE: dict[str, Command] = {}


def parse_command(text: str) -> Command:
    """One command from its text (no comments, no ``;``); raises ``_Bad`` on error."""
    cached = _CACHE.get(text)
    if cached is not None:
        return cached
    word, _, args = text.strip().partition(" ")
    upper = word.upper()
    if word in (".word", ".half"):
        c = _parse_raw(word, args)  # explicitly raw: any decodable parcel, legal or not
    else:
        if upper in _SIMPLE:
            c = _SIMPLE[upper](args)
        elif upper == "BSTOP" or upper == "C.BSTOP":
            if args.strip():
                raise _Bad(f"{upper} takes no operands")
            c = Stop(upper == "C.BSTOP")
        elif upper.startswith("BSTART"):
            c = _parse_bstart(upper, args)
        elif word.lower() in _SCALARS:
            c = _parse_scalar(word.upper(), args)
        elif upper in _GENERICS:
            c = _parse_generic(upper, args)
        else:
            raise _Bad(f"unknown command {_show(word)}")
        # every catalog constraint, including those no spelling-specific check names
        rule = field_violation(c)
        if rule is not None:
            raise _Bad(rule)
    if len(_CACHE) < 1 << 16:
        _CACHE[text] = c
    return c


_COMMENT = re.compile(r"#(?![0-9])|//")


def parse(text: str, file: str = "<asm>") -> Program:
    """Parse assembly text; AsmError names ``FILE:LINE`` and the rule."""
    cmds: list[Command] = []
    lines: list[int] = []
    # lines end at "\n" only (str.splitlines would also split at \x0c, \x1c, \u2028, ...
    # and shift every later line number away from what an editor shows)
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw
        if "#" in line or "/" in line:
            line = _COMMENT.split(line, maxsplit=1)[0]
        segments = line.split(";") if ";" in line else (line,)
        for seg in segments:
            seg = seg.strip()
            if not seg:
                continue
            try:
                cmds.append(parse_command(seg))
            except _Bad as e:
                raise AsmError(str(e), lineno, file, raw[:200]) from None
            lines.append(lineno)
    return Program(tuple(cmds), lines=tuple(lines))
