"""Binary form: commands <-> little-endian instruction parcels.

Every command is encoded from, and decoded through, the catalog form that owns it
(``ptoc.backend.isa.catalog``): one field description drives both directions. Header
commands are 32-bit words, ``C.B.DIMI``, ``C.BSTOP`` and ``c.movi`` are 16-bit parcels.

Parcel length (ptoc's fetch rule, consistent with every catalog form): a low halfword
whose low nibble is ``0b1110`` starts a 48-bit instruction, low seven bits ``0x0f`` or
``0x7f`` a 64-bit one, bit 0 set a 32-bit one, anything else a 16-bit one.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial

from .errors import DecodeError, EncodeError
from .isa import CommandForm, Family, catalog, form, op, op_by_bstart, scalar_form
from .isa.fields import MASK_TO_PEMODE, PEMODE_TO_MASK, Hand, mask_text
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


def _check_fields(f: CommandForm, values: dict[str, int]) -> None:
    for fd in f.fields:
        v = values.get(fd.name, 0)
        if not fd.fits(v):
            raise EncodeError(f"{f.mnemonic} field {fd.name}={v} does not fit {fd.width} bits")


def command_form_values(c: Command) -> tuple[CommandForm, dict[str, int]]:
    """The catalog form of a command and its field values."""
    if isinstance(c, TileStart):
        if c.family is Family.TEPL:
            return form("BSTART.TEPL"), {
                "DataType": c.dtype,
                "Mode": c.selector >> 5,
                "Function": c.selector & 31,
            }
        o = c.op
        if o is None:
            raise EncodeError(f"no {c.family} operation has function {c.selector}")
        return form(o.bstart), {"DataType": c.dtype}
    if isinstance(c, Iot):
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
            return form("C.B.DIMI"), {"LoopNest": c.lb, "imm8": c.imm}
        return form("B.DIM", f"->LB{c.lb}"), {"RegSrc": c.reg, "uimm17": c.imm}
    if isinstance(c, Stop):
        return form("C.BSTOP" if c.compressed else "BSTOP"), {}
    if isinstance(c, Datr):
        return form("B.DATR"), {
            "Layout": c.layout,
            "DataType": c.dtype,
            "PadValueOrByteId": c.pad,
            "CMode": c.cmode,
            "RMode": c.rmode,
            "Sat": c.sat,
            "Canonicalize": c.canonicalize,
        }
    if isinstance(c, Ior):
        return form("B.IOR"), {
            "RegSrc0": c.src0,
            "RegSrc1": c.src1,
            "RegSrc2": c.src2,
            "RegDst": c.dst,
        }
    if isinstance(c, Ios):
        return form("B.IOS"), {
            "SharedTID": c.tid,
            "SizeCode": c.size,
            "PEMode": _pemode(c.mask),
        }
    if isinstance(c, ScalarStart):
        f = form(f"BSTART.{c.block}", c.kind)
        return f, ({"simm17": c.offset} if f.fields else {})
    if isinstance(c, Scalar):
        return scalar_form(c.mnemonic), dict(c.fields)
    if isinstance(c, Generic):
        f = next(x for x in catalog.COMMAND_FORMS if x.form_id == c.form_id)
        return f, dict(c.fields)
    raise EncodeError(f"cannot encode {c!r}")


@cache
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
            if o is not None:
                add(f, partial(_make_named_start, o.family, o.selector))
        elif m == "B.IOT":
            add(f, _make_iot)
        elif m == "B.DIM":
            lb = int(f.asm[-1])
            add(f, partial(_make_dim, lb))
        elif m == "C.B.DIMI":
            add(f, lambda v: Dim(v["LoopNest"], 0, v["imm8"], compressed=True))
        elif m == "BSTOP":
            add(f, lambda v: Stop(False))
        elif m == "C.BSTOP":
            add(f, lambda v: Stop(True))
        elif m == "B.DATR":
            add(
                f,
                lambda v: Datr(
                    v["Layout"],
                    v["DataType"],
                    v["PadValueOrByteId"],
                    v["CMode"],
                    v["RMode"],
                    v["Sat"],
                    v["Canonicalize"],
                ),
            )
        elif m == "B.IOR":
            add(f, lambda v: Ior(v["RegSrc0"], v["RegSrc1"], v["RegSrc2"], v["RegDst"]))
        elif m == "B.IOS":
            add(f, lambda v: Ios(v["SharedTID"], PEMODE_TO_MASK[v["PEMode"]], v["SizeCode"]))
        else:
            add(f, partial(_make_generic, f.form_id))
    for f in catalog.SCALAR_FORMS:
        add(f, partial(_make_scalar, f.mnemonic))
    for forms in table.values():
        # most specific first: the source-only B.IOT forms fix bits the others leave open
        forms.sort(key=lambda fm: -bin(fm[0].mask).count("1"))
    return table


def _make_scalar_start(block: str, kind: str, v: dict[str, int]) -> Command:
    return ScalarStart(block, kind, v.get("simm17", 0))


def _make_named_start(family: Family, selector: int, v: dict[str, int]) -> Command:
    return TileStart(family, selector, v["DataType"])


def _make_dim(lb: int, v: dict[str, int]) -> Command:
    return Dim(lb, v["RegSrc"], v["uimm17"])


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


@cache
def decode_command(value: int, bits: int) -> Command | None:
    """The command a parcel encodes, or None when it matches no form ptoc knows."""
    for f, make in _DECODERS.get(bits, ()):
        if f.matches(value):
            return make(f.decode(value))
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
        c = decode_command(value, bits)
        if c is None:
            raise DecodeError(
                pos, value, bits, "matches no PTO command or scalar form ptoc knows"
            )
        cmds.append(c)
        offsets.append(pos)
        pos += size
    return Program(tuple(cmds), offsets=tuple(offsets))


def tile_start(mnemonic: str, dtype: int) -> TileStart:
    """The BSTART of an operation by mnemonic (convenience for builders and tests)."""
    o = op(mnemonic)
    return TileStart(o.family, o.selector, dtype)
