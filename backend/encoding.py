"""Binary form: commands <-> little-endian instruction parcels.

Every command is encoded from, and decoded through, the catalog form that owns it
(``ptoc.backend.isa.catalog``): one field description drives both directions. Header
commands are 32-bit words, ``C.B.DIMI``, ``C.BSTOP`` and ``c.movi`` are 16-bit parcels.

Parcel length (ptoc's fetch rule, consistent with every catalog form): a low halfword
whose low nibble is ``0b1110`` starts a 48-bit instruction, low seven bits ``0x0f`` or
``0x7f`` a 64-bit one, bit 0 set a 32-bit one, anything else a 16-bit one.

A word decodes through the most specific form whose fixed bits it matches (the ASL's
``catalog_decode_order``), so a word that a more specific form owns (C.SETRET inside the
c.movi space) is that form. Field values a form's constraints reserve decode faithfully
and :func:`field_violation` names them (the executor raises Fault_IllegalInstruction, the
printer writes such a command as a raw ``.word``). A word whose bits outside its form's
fixed bits and fields are set is refused: it would decode to the same command as the word
with those bits clear, and the round trip words -> text -> words would lose them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache, partial

from .errors import DecodeError, EncodeError
from .isa import (
    CommandForm,
    Family,
    FieldDef,
    bstart_mnemonic,
    catalog,
    form,
    op,
    op_by_bstart,
    scalar_form,
    selector_of_bstart,
)
from .isa.fields import MASK_TO_PEMODE, PEMODE_TO_MASK, Hand, mask_text
from .program import (
    DATR_FIELDS,
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

_IOT_FORM_KEYS = {
    (2, True): "SrcTile0, SrcTile1, mask=PE_MASK, <last>, ->",
    (2, False): "SrcTile0, SrcTile1, mask=PE_MASK, <last>",
    (1, True): "SrcTile0, mask=PE_MASK, <last>, ->",
    (1, False): "B.IOT SrcTile0, mask=PE_MASK, <last>",
    (0, True): "B.IOT mask=PE_MASK",
}


@cache
def iot_form(n_srcs: int, has_dst: bool) -> CommandForm:
    key = _IOT_FORM_KEYS.get((n_srcs, has_dst))
    if key is None:
        if n_srcs > 2:
            raise EncodeError(f"B.IOT binds at most two sources, not {n_srcs}")
        raise EncodeError("B.IOT needs at least one source or a destination")
    forms = [f for f in catalog.COMMAND_FORMS if f.mnemonic == "B.IOT" and key in f.asm]
    forms = [f for f in forms if ("->" in f.asm) == has_dst]
    assert len(forms) == 1, key
    return forms[0]


def _pemode(mask: int) -> int:
    try:
        return MASK_TO_PEMODE[mask]
    except KeyError:
        legal = ", ".join(mask_text(m) for m in PEMODE_TO_MASK)
        raise EncodeError(
            f"mask={mask_text(mask)} has no PEMode encoding (legal: {legal})"
        ) from None


#: Command attribute <-> catalog field of the header commands, per form mnemonic: the one
#: mapping that encoding and decoding (and through them the assembler) read. A ``mask``
#: attribute keeps the PE mask a PEMode field selects.
HEADER_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "B.DATR": tuple((m.attr, m.name) for m in DATR_FIELDS),
    "B.IOR": (("src0", "RegSrc0"), ("src1", "RegSrc1"), ("src2", "RegSrc2"), ("dst", "RegDst")),
    "B.IOS": (("tid", "SharedTID"), ("size", "SizeCode"), ("mask", "PEMode")),
    "B.DIM": (("reg", "RegSrc"), ("imm", "uimm17")),
    "C.B.DIMI": (("lb", "LoopNest"), ("imm", "imm8")),
}
_HEADER_MNEMONIC: dict[type, str] = {Datr: "B.DATR", Ior: "B.IOR", Ios: "B.IOS"}
_HEADER_CLASS: dict[str, type[Command]] = {m: cls for cls, m in _HEADER_MNEMONIC.items()}


def _header_values(mnemonic: str, c: Command) -> dict[str, int]:
    out = {}
    for attr, name in HEADER_FIELDS[mnemonic]:
        value = getattr(c, attr)
        out[name] = _pemode(value) if attr == "mask" else value
    return out


def _header_command(
    cls: type[Command], mnemonic: str, v: dict[str, int], **extra: object
) -> Command:
    kwargs: dict[str, object] = dict(extra)
    for attr, name in HEADER_FIELDS[mnemonic]:
        kwargs[attr] = PEMODE_TO_MASK[v[name]] if attr == "mask" else v[name]
    return cls(**kwargs)


def _check_fields(f: CommandForm, values: dict[str, int], label: str = "") -> None:
    names = {fd.name for fd in f.fields}
    extra = sorted(set(values) - names)
    if extra:
        raise EncodeError(f"{f.mnemonic} has no field {extra[0]!r}")
    for fd in f.fields:
        v = values.get(fd.name, 0)
        if not fd.fits(v):
            raise EncodeError(f"{label or f.mnemonic} {fd.name}={_short(v)} {_width_rule(fd)}")


def _width_rule(fd: FieldDef) -> str:
    """``does not fit 17 bits``; a signed field names its range."""
    bits = f"{fd.width} bit{'s' if fd.width != 1 else ''}"
    if fd.signed:
        half = 1 << (fd.width - 1)
        return f"does not fit {bits} (signed: {-half}..{half - 1})"
    return f"does not fit {bits}"


def _short(v: int) -> str:
    """An integer for a message; a huge one is not printed in full (Python refuses to
    format integers of more than 4300 decimal digits)."""
    if -(10**15) < v < 10**15:
        return str(v)
    return f"{hex(v)[:18]}... ({abs(v).bit_length()} bits)"


def _form(mnemonic: str, asm_contains: str = "") -> CommandForm:
    try:
        return form(mnemonic, asm_contains)
    except KeyError:
        what = f"{mnemonic} {asm_contains}".strip()
        raise EncodeError(f"{what} has no encoding in the catalog") from None


def command_form_values(c: Command) -> tuple[CommandForm, dict[str, int]]:
    """The catalog form of a command and its field values."""
    if isinstance(c, TileStart):
        if c.family is Family.TEPL:
            return form("BSTART.TEPL"), {
                "DataType": c.dtype,
                "Mode": c.selector >> 5,
                "Function": c.selector & 31,
            }
        word = bstart_mnemonic(c.family, c.selector)
        if word is None:
            raise EncodeError(f"no {c.family} operation has function {c.selector}")
        return _form(word), {"DataType": c.dtype}
    if isinstance(c, Iot):
        if c.dst is None and c.size:
            raise EncodeError(f"a source-only B.IOT has no SizeCode field (got {c.size})")
        f = iot_form(len(c.srcs), c.dst is not None)
        v = {"L": int(c.last), "PEMode": _pemode(c.mask)}
        if c.srcs:
            v["SrcTile0"] = c.srcs[0].code
        if len(c.srcs) > 1:
            v["SrcTile1"] = c.srcs[1].code
        if c.dst is not None:
            v["DstTile"] = int(c.dst)
            v["SizeCode"] = c.size
        return f, v
    if isinstance(c, Dim):
        if c.compressed:
            if c.reg:
                raise EncodeError(f"C.B.DIMI has no register field (got {c.reg})")
            return _form("C.B.DIMI"), _header_values("C.B.DIMI", c)
        return _form("B.DIM", f"->LB{c.lb}"), _header_values("B.DIM", c)
    if isinstance(c, Stop):
        return _form("C.BSTOP" if c.compressed else "BSTOP"), {}
    if isinstance(c, (Datr, Ior, Ios)):
        mnemonic = _HEADER_MNEMONIC[type(c)]
        return _form(mnemonic), _header_values(mnemonic, c)
    if isinstance(c, ScalarStart):
        sf = scalar_start_form(c.block, c.kind)
        if sf is None:
            raise EncodeError(f"BSTART.{c.block} {c.kind} has no encoding in the catalog")
        if not sf.fields and c.offset:
            raise EncodeError(f"BSTART.{c.block} {c.kind} has no offset field")
        return sf, ({"simm17": c.offset} if sf.fields else {})
    if isinstance(c, Scalar):
        try:
            f = scalar_form(c.mnemonic)
        except KeyError:
            raise EncodeError(f"{c.mnemonic} is not a scalar form of the catalog") from None
        return f, dict(c.fields)
    if isinstance(c, Generic):
        g = generic_form(c.form_id)
        if g is None:
            raise EncodeError(f"{c.form_id} is not a command form of the catalog")
        return g, dict(c.fields)
    raise EncodeError(f"cannot encode {type(c).__name__}")


def command_name(c: Command) -> str:
    """The word a command is written with (``B.DIM``, ``C.B.DIMI``, ``addi``, ``B.HINT``):
    its catalog form's, or its class name when it has no form."""
    try:
        return command_form_values(c)[0].asm.split()[0]
    except EncodeError:
        if isinstance(c, Dim):
            return "C.B.DIMI" if c.compressed else "B.DIM"
        if isinstance(c, Scalar):
            return c.mnemonic.lower()
        if isinstance(c, Generic):
            return c.form_id
        return _HEADER_MNEMONIC.get(type(c), type(c).__name__)


def scalar_start_form(block: str, kind: str) -> CommandForm | None:
    """The catalog form of ``BSTART.<block> <kind>`` (None when the catalog has none,
    e.g. ``BSTART.SYS RET``)."""
    for f in command_forms_or_none(f"BSTART.{block}"):
        if f.asm.split()[1].rstrip(",") == kind:
            return f
    return None


def command_forms_or_none(mnemonic: str) -> tuple[CommandForm, ...]:
    return tuple(f for f in catalog.COMMAND_FORMS if f.mnemonic == mnemonic)


def generic_form(form_id: str) -> CommandForm | None:
    """A B.CATR / B.HINT / B.FPATR form by id."""
    return _GENERIC_FORMS.get(form_id)


_GENERIC_FORMS = {f.form_id: f for f in catalog.COMMAND_FORMS}


@lru_cache(maxsize=1 << 14)
def field_violation(c: Command) -> str | None:
    """The first catalog rule the fields of ``c`` break, or None.

    The rules are the catalog's own (``CommandFormOperandsLegal``): every field fits its
    width and meets its form's ``one-of`` / ``not-equal`` constraint (a reserved DataType
    code, SizeCode 11, GPR selector 24 in a header command, C.B.DIMI LoopNest 3, an
    offset on BSTART.STD FALL, c.movi writing ra, ...), and a TEPL BSTART names an
    assigned selector. A command with no encoding at all breaks the first rule it meets.
    The assembler refuses such commands in text, the printer writes them as raw words,
    the validator refuses them in emitted programs and the executor raises
    Fault_IllegalInstruction on them.
    """
    try:
        f, values = command_form_values(c)
        _check_fields(f, values, _label(c, f))
    except EncodeError as e:
        return str(e)
    for fd in f.fields:
        v = values.get(fd.name, 0)
        if fd.legal(v):
            continue
        if fd.allowed is not None:
            why = f"legal: {_ranges(fd.allowed)}"
        else:
            why = f"{fd.name} {fd.excluded} is excluded"
        owner = _owner(f, f.encode(values))
        if owner:
            why += f"; that word is {owner}"
        return f"{_label(c, f)} {fd.name}={v} is a reserved encoding ({why})"
    if isinstance(c, TileStart) and c.op is None:
        if c.family is Family.TEPL:
            return (
                f"BSTART.TEPL Mode {c.selector >> 5} Function {c.selector & 31} "
                f"(selector 0x{c.selector:03X}) is not an assigned operation"
            )
        return f"no {c.family} operation has function {c.selector}"
    return None


def _label(c: Command, f: CommandForm) -> str:
    if isinstance(c, TileStart) and c.op is not None:
        return bstart_mnemonic(c.family, c.selector) or c.op.bstart
    if isinstance(c, ScalarStart):
        return f"BSTART.{c.block} {c.kind}"
    if isinstance(c, Scalar):
        return c.mnemonic.lower()
    return f.mnemonic


def _ranges(values: frozenset[int]) -> str:
    """``{1, 2, 3, 5}`` -> ``1..3, 5``."""
    out: list[str] = []
    run: list[int] = []
    for v in sorted(values):
        if run and v != run[-1] + 1:
            out.append(f"{run[0]}..{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)))
            run = []
        run.append(v)
    if run:
        out.append(f"{run[0]}..{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)))
    return ", ".join(out)


def _owner(f: CommandForm, word: int) -> str:
    """The more specific catalog form that owns ``word``, if any (C.SETRET for c.movi
    words with RegDst 10)."""
    for g, _ in _DECODERS.get(f.length_bits, ()):
        if g is not f and g.matches(word) and g.mask.bit_count() > f.mask.bit_count():
            return g.asm.split()[0].upper() if g in catalog.SCALAR_FORMS else g.mnemonic
    return ""


@lru_cache(maxsize=1 << 16)
def encode_command(c: Command) -> tuple[int, int]:
    """``(value, length_bits)`` of one command."""
    f, values = command_form_values(c)
    _check_fields(f, values)
    return f.encode(values), f.length_bits


def encode(program: Program) -> bytes:
    """The program as little-endian parcels."""
    out = bytearray()
    for c in program.commands:
        value, bits = encode_command(c)
        out += value.to_bytes(bits // 8, "little")
    return bytes(out)


def encode_words(program: Program) -> list[tuple[int, int]]:
    return [encode_command(c) for c in program.commands]


# --------------------------------------------------------------------------- decode


def parcel_length(low_half: int) -> int:
    """Bits of the instruction whose first halfword is ``low_half`` (see the module doc)."""
    if low_half & 0xF == 0xE:
        return 48
    if low_half & 0x7F in (0x0F, 0x7F):
        return 64
    return 32 if low_half & 1 else 16


def _decoders() -> dict[int, list[tuple[CommandForm, Callable[[dict[str, int]], Command]]]]:
    table: dict[int, list[tuple[CommandForm, Callable[[dict[str, int]], Command]]]] = {}

    def add(f: CommandForm, make: Callable[[dict[str, int]], Command]) -> None:
        table.setdefault(f.length_bits, []).append((f, make))

    for f in catalog.COMMAND_FORMS:
        m = f.mnemonic
        if m == "BSTART.TEPL":
            add(
                f,
                lambda v: TileStart(Family.TEPL, v["Mode"] << 5 | v["Function"], v["DataType"]),
            )
        elif m.startswith("BSTART.") and m.split(".")[1] in ("STD", "FP", "SYS"):
            kind = f.asm.split()[1].rstrip(",")
            block = m.split(".")[1]
            add(f, partial(_make_scalar_start, block, kind))
        elif m.startswith("BSTART."):
            o = op_by_bstart(m)
            selector = selector_of_bstart(m)
            if o is not None and selector is not None:
                add(f, partial(_make_named_start, o.family, selector))
        elif m == "B.IOT":
            add(f, _make_iot)
        elif m == "B.DIM":
            add(f, partial(_header_command, Dim, m, lb=int(f.asm[-1])))
        elif m == "C.B.DIMI":
            add(f, partial(_header_command, Dim, m, reg=0, compressed=True))
        elif m == "BSTOP":
            add(f, lambda v: Stop(False))
        elif m == "C.BSTOP":
            add(f, lambda v: Stop(True))
        elif m in HEADER_FIELDS:
            add(f, partial(_header_command, _HEADER_CLASS[m], m))
        else:
            add(f, partial(_make_generic, f.form_id))
    for f in catalog.SCALAR_FORMS:
        add(f, partial(_make_scalar, f.mnemonic))
    for forms in table.values():
        # most specific first (the ASL's catalog_decode_order): the source-only B.IOT
        # forms fix bits the others leave open, C.SETRET fixes c.movi's RegDst
        forms.sort(key=lambda fm: (-fm[0].mask.bit_count(), fm[0].form_id))
    return table


@cache
def unassigned_bits(f: CommandForm) -> int:
    """Bits of ``f`` that are neither fixed nor part of a field (the DstTile bits 7-8 of
    the source-only B.IOT forms)."""
    used = f.mask
    for fd in f.fields:
        for p in fd.pieces:
            used |= ((1 << p.width) - 1) << p.instruction_lsb
    return ((1 << f.length_bits) - 1) & ~used


def _make_scalar_start(block: str, kind: str, v: dict[str, int]) -> Command:
    return ScalarStart(block, kind, v.get("simm17", 0))


def _make_named_start(family: Family, selector: int, v: dict[str, int]) -> Command:
    return TileStart(family, selector, v["DataType"])


def _make_generic(form_id: str, v: dict[str, int]) -> Command:
    return Generic(form_id, tuple(v.items()))


def _make_scalar(mnemonic: str, v: dict[str, int]) -> Command:
    return Scalar(mnemonic, tuple(v.items()))


def _make_iot(v: dict[str, int]) -> Iot:
    srcs = []
    if "SrcTile0" in v:
        srcs.append(TileRef.from_code(v["SrcTile0"]))
    if "SrcTile1" in v:
        srcs.append(TileRef.from_code(v["SrcTile1"]))
    dst = Hand(v["DstTile"]) if "DstTile" in v else None
    return Iot(
        tuple(srcs), PEMODE_TO_MASK[v["PEMode"]], bool(v["L"]), dst, v.get("SizeCode", 0)
    )


_DECODERS = _decoders()
_MAKERS = {f.form_id: make for forms in _DECODERS.values() for f, make in forms}


def is_modelled(f: CommandForm) -> bool:
    """Whether ptoc has a command for form ``f`` (a named BSTART word of an operation ptoc
    does not model, such as ``BSTART.GMOV``, has none)."""
    return f.form_id in _MAKERS


def command_of(f: CommandForm, values: dict[str, int]) -> Command:
    """The command that form ``f`` with field ``values`` denotes (an omitted field is its
    only legal value when the catalog fixes it, as B.FPATR's Func and opcode fields, else
    0): the decoder's own constructor, so text and words build commands the same way."""
    return _MAKERS[f.form_id]({fd.name: values.get(fd.name, fd.omitted) for fd in f.fields})


class Undecodable(Exception):
    """A word no form decodes (the reason is the message)."""


@lru_cache(maxsize=1 << 16)
def decode_word(value: int, bits: int) -> Command:
    """The command a ``bits``-bit parcel encodes; raises :class:`Undecodable`."""
    for f, make in _DECODERS.get(bits, ()):
        if f.matches(value):
            spare = value & unassigned_bits(f)
            if spare:
                raise Undecodable(
                    f"bits 0x{spare:x} are set, but the {f.mnemonic} form "
                    f"'{f.asm}' assigns them no meaning (they must be zero)"
                )
            return make(f.decode(value))
    raise Undecodable("matches no PTO command or scalar form ptoc knows")


def decode_command(value: int, bits: int) -> Command | None:
    """The command a parcel encodes, or None when no form decodes it."""
    try:
        return decode_word(value, bits)
    except Undecodable:
        return None


def decode(data: bytes) -> Program:
    """Decode little-endian parcels; DecodeError names the byte offset and the value."""
    if len(data) % 2:
        raise DecodeError(len(data) - 1, data[-1], 8, "the binary ends in half a parcel")
    cmds: list[Command] = []
    offsets: list[int] = []
    pos, n = 0, len(data)
    while pos < n:
        low = data[pos] | data[pos + 1] << 8
        bits = parcel_length(low)
        size = bits // 8
        if pos + size > n:
            raise DecodeError(pos, low, 16, f"a {bits}-bit instruction runs past the end")
        value = int.from_bytes(data[pos : pos + size], "little")
        try:
            c = decode_word(value, bits)
        except Undecodable as e:
            raise DecodeError(pos, value, bits, str(e)) from None
        cmds.append(c)
        offsets.append(pos)
        pos += size
    return Program(tuple(cmds), offsets=tuple(offsets))


def tile_start(mnemonic: str, dtype: int) -> TileStart:
    """The BSTART of an operation by mnemonic (convenience for builders and tests)."""
    o = op(mnemonic)
    return TileStart(o.family, o.selector, dtype)
