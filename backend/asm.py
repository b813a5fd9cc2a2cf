"""Assembly text: Program <-> canonical text (DECISIONS D7).

The printer emits one command per line in the seeds' spelling; the parser accepts that
form, the seeds' ``;``-joined one-line form and the alternative spellings D7 lists.
Comments start with ``#`` or ``//``. The text of every command comes from its catalog
form: :mod:`ptoc.backend.forms` derives one bidirectional mapping per form from the
form's template, and :mod:`ptoc.backend.encoding` maps commands to fields, so text and
words cannot disagree.

Canonical text holds only legal encodings: the parser refuses every value the catalog
reserves (:func:`ptoc.backend.encoding.field_violation`, which also names every field
that does not fit). A decoded command that breaks such a rule (a reserved DataType code,
SizeCode 11, an offset on ``BSTART.STD FALL``) prints as the raw parcel it came from,
``.word 0x...`` (32 bits) or ``.half 0x...`` (16 bits), which the parser decodes back;
so words -> text -> words is lossless for every word that decodes. Integer literals
follow :mod:`ptoc.backend.literals`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .encoding import (
    Undecodable,
    command_form_values,
    command_of,
    decode_word,
    encode_command,
    field_violation,
    parcel_length,
)
from .errors import AsmError, EncodeError
from .forms import LABEL, TRANSFER_WORDS, DType, FormError, LabelUse, print_fields
from .forms import parse_fields as _parse_fields
from .isa.fields import GPR_NAMES, SIZE_NAMES, mask_text
from .literals import LiteralError, parse_int, show
from .program import (
    Command,
    Dim,
    Generic,
    Ios,
    Iot,
    Program,
    Scalar,
    ScalarStart,
    TileStart,
)

#: a malformed command; :func:`parse` adds the file and the line
_Bad = FormError


# --------------------------------------------------------------------------- printing


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


@lru_cache(maxsize=1 << 14)
def _template(c: Command) -> str:
    """The spelling of a command through its catalog form (legal or not)."""
    try:
        form, values = command_form_values(c)
    except EncodeError:
        return _unencodable(c)
    return print_fields(form, values)


def _unencodable(c: Command) -> str:
    """A command no catalog form has (built by hand, never decoded): spelled close to the
    form it misses, so that the parser refuses it with that form's rule."""
    if isinstance(c, TileStart):
        return f"BSTART.{c.family} {c.selector}, {_dt(c.dtype)}"
    if isinstance(c, Iot):
        parts = [str(s) for s in c.srcs] + [f"mask={mask_text(c.mask)}"]
        parts += ["last"] if c.last else []
        if c.dst is not None:
            parts.append(f"->{c.dst.name}<{SIZE_NAMES.get(c.size, str(c.size))}>")
        elif c.size:
            parts.append(f"SizeCode={c.size}")
        return "B.IOT " + ", ".join(parts)
    if isinstance(c, Dim):
        reg = f"{_gpr(c.reg)}, " if c.reg or not c.compressed else ""
        return f"{'C.B.DIMI' if c.compressed else 'B.DIM'} {reg}{c.imm}, ->LB{c.lb}"
    if isinstance(c, Ios):
        if c.size:
            size = SIZE_NAMES.get(c.size, str(c.size))
            return f"B.IOS mask={mask_text(c.mask)}, ->S{c.tid}<{size}>"
        return f"B.IOS S{c.tid}, mask={mask_text(c.mask)}"
    if isinstance(c, ScalarStart):
        # a branch kind always names its offset; any other kind only a nonzero one
        offset = c.kind in ("COND", "DIRECT") or c.offset
        return f"BSTART.{c.block} {c.kind}" + (f", {c.offset}" if offset else "")
    if isinstance(c, Scalar):
        return f"{c.mnemonic.lower()} " + ", ".join(f"{k}={x}" for k, x in c.fields)
    if isinstance(c, Generic):
        return f"{c.form_id} " + ", ".join(f"{k}={v}" for k, v in c.fields)
    return f"<{type(c).__name__}>"


def _dt(code: int) -> str:
    return DType().show((code,))


def _gpr(sel: int) -> str:
    return GPR_NAMES[sel] if 0 <= sel < len(GPR_NAMES) else f"r{sel}"


def format_program(program: Program) -> str:
    """Canonical text: one command per line (raw words carry a ``//`` reading). A
    DIRECT or COND branch whose target is a command of the program (or its end) names a
    generated label ``L0``, ``L1``, ... (in address order), defined on a line of its own
    before that command."""
    addrs, size = program.addresses()
    index = {a: i for i, a in enumerate(addrs)}
    index.setdefault(size, len(addrs))
    targets: dict[int, int] = {}  # command index -> target command index
    for i, c in enumerate(program.commands):
        if _branch(c) and raw_word(c) is None:
            dest = addrs[i] + 2 * c.offset  # type: ignore[attr-defined]
            if dest in index:
                targets[i] = index[dest]
    names = {t: f"L{k}" for k, t in enumerate(sorted(set(targets.values())))}
    out = []
    for i, c in enumerate(program.commands):
        if i in names:
            out.append(f"{names[i]}:\n")
        text = format_command(c, note=True)
        if i in targets:
            text = text.rsplit(",", 1)[0] + f", {names[targets[i]]}"
        out.append(text + "\n")
    if len(program.commands) in names:
        out.append(f"{names[len(program.commands)]}:\n")
    return "".join(out)


def _branch(c: Command) -> bool:
    """A block start whose operand is a branch target (``BSTART.STD COND, <label>``)."""
    return isinstance(c, ScalarStart) and c.kind in ("DIRECT", "COND")


# --------------------------------------------------------------------------- parsing


def _int(text: str, what: str) -> int:
    try:
        return parse_int(text)
    except LiteralError as e:
        raise _Bad(f"{what} {e}") from None


def _split(args: str) -> list[str]:
    return [a.strip() for a in args.split(",")] if args.strip() else []


def _parse_raw(word: str, args: str) -> Command:
    """``.word 0x...`` / ``.half 0x...``: the command one raw parcel decodes to."""
    bits = 32 if word == ".word" else 16
    a = _split(args)
    if len(a) != 1:
        raise _Bad(f"{word} takes one parcel value")
    v = _int(a[0], f"{word} value")
    if not 0 <= v < 1 << bits:
        raise _Bad(f"{word} value {show(a[0])} does not fit {bits} bits")
    length = parcel_length(v & 0xFFFF)
    if length != bits:
        spell = {16: ".half", 32: ".word"}.get(length, f"a {length}-bit instruction")
        raise _Bad(f"{word} 0x{v:x} starts a {length}-bit instruction ({spell})")
    try:
        return decode_word(v, bits)
    except Undecodable as e:
        raise _Bad(f"{word} 0x{v:0{bits // 4}x} {e}") from None


_CACHE: dict[str, Command] = {}


def parse_command(text: str) -> Command:
    """One command from its text (no comments, no ``;``); raises ``_Bad`` on error."""
    cached = _CACHE.get(text)
    if cached is not None:
        return cached
    word, _, args = text.strip().partition(" ")
    if word in (".word", ".half"):
        c = _parse_raw(word, args)  # explicitly raw: any decodable parcel, legal or not
    else:
        form, values = _parse_fields(word, args)
        c = command_of(form, values)
        # every catalog constraint: widths, one-of / not-equal, assigned selectors
        rule = field_violation(c)
        if rule is not None:
            raise _Bad(rule)
    if len(_CACHE) < 1 << 16:
        _CACHE[text] = c
    return c


_COMMENT = re.compile(r"#(?![0-9])|//")
_LABEL_DEF = re.compile(r"\s*(" + LABEL.pattern + r")\s*:(.*)", re.S)


def _label_command(seg: str) -> tuple[Command, str, str]:
    """A command whose branch operand is a label: the command with offset 0, the label
    and the field it fills."""
    try:
        return parse_command(seg), "", ""
    except LabelUse as use:
        head, _, _ = seg.rpartition(use.name)
        return parse_command(head + "0"), use.name, use.field


def parse(text: str, file: str = "<asm>") -> Program:
    """Parse assembly text; AsmError names ``FILE:LINE`` and the rule.

    ``name:`` defines a label at the next command (or the end of the program); a branch
    operand may name it (``BSTART.STD COND, loop``), and the assembler replaces it with
    the halfword offset from the branch's own BSTART to the labelled command."""
    cmds: list[Command] = []
    lines: list[int] = []
    labels: dict[str, int] = {}
    uses: list[tuple[int, str, str, int, str]] = []  # command, label, field, line, text
    # lines end at "\n" only (str.splitlines would also split at \x0c, \x1c, \u2028, ...
    # and shift every later line number away from what an editor shows)
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw
        if "#" in line or "/" in line:
            line = _COMMENT.split(line, maxsplit=1)[0]
        segments = line.split(";") if ";" in line else (line,)
        for seg in segments:
            m = _LABEL_DEF.fullmatch(seg)
            while m:
                if m[1] in TRANSFER_WORDS:
                    raise AsmError(
                        f"{m[1]} is a transfer kind, not a label name", lineno, file, raw[:200]
                    )
                if m[1] in labels:
                    raise AsmError(f"label {m[1]!r} is defined twice", lineno, file, raw[:200])
                labels[m[1]] = len(cmds)
                seg = m[2]
                m = _LABEL_DEF.fullmatch(seg)
            seg = seg.strip()
            if not seg:
                continue
            try:
                c, label, fld = _label_command(seg)
            except _Bad as e:
                raise AsmError(str(e), lineno, file, raw[:200]) from None
            if label:
                uses.append((len(cmds), label, fld, lineno, raw[:200]))
            cmds.append(c)
            lines.append(lineno)
    if uses:
        cmds = _resolve(cmds, labels, uses, file)
    return Program(tuple(cmds), lines=tuple(lines))


def _resolve(
    cmds: list[Command],
    labels: dict[str, int],
    uses: list[tuple[int, str, str, int, str]],
    file: str,
) -> list[Command]:
    """Replace every label operand with its halfword offset (``P + (simm17 << 1)``)."""
    addrs, size = Program(tuple(cmds)).addresses()
    out = list(cmds)
    for i, label, fld, lineno, raw in uses:
        if label not in labels:
            raise AsmError(f"undefined label {label!r}", lineno, file, raw)
        k = labels[label]
        dest = addrs[k] if k < len(addrs) else size
        form, values = command_form_values(cmds[i])
        values[fld] = (dest - addrs[i]) // 2
        c = command_of(form, values)
        rule = field_violation(c)
        if rule is not None:
            raise AsmError(
                f"label {label!r} is {dest - addrs[i]} bytes away: {rule}", lineno, file, raw
            )
        out[i] = c
    return out
