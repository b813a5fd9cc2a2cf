"""Integer literals, as every ptoc text surface spells them (assembly, ``--machine``,
``--gpr``, ``--gm`` and ``--read`` addresses).

ASCII only: an optional sign, then ``0x`` hex, ``0b`` binary, ``0o`` octal or decimal
without leading zeros, at most :data:`MAX_LITERAL_DIGITS` digits. Python's ``int`` also
takes Unicode digits (``int("٣") == 3``), underscores and 4300-digit decimals (and then
fails while formatting its own message); none of that is a PTO literal.
"""

from __future__ import annotations

import re

#: the longest literal accepted (a 64-bit value needs at most 22 octal digits)
MAX_LITERAL_DIGITS = 40
_INT_RE = re.compile(
    r"([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0|[1-9][0-9]*)", re.ASCII
)


class LiteralError(ValueError):
    """Not an integer literal; the message says why (the caller adds what and where)."""


def show(text: str, limit: int = 32) -> str:
    """User text for a message, quoted and shortened (a fuzzed line can be megabytes)."""
    t = text.strip()
    return repr(t) if len(t) <= limit else repr(t[: limit - 3] + "...")


def parse_int(text: str) -> int:
    """The value of an integer literal; :class:`LiteralError` if ``text`` is not one."""
    t = text.strip()
    m = _INT_RE.fullmatch(t)
    if not m:
        raise LiteralError(f"{show(t)} is not an integer")
    if len(m.group(2)) > MAX_LITERAL_DIGITS:
        raise LiteralError(f"{show(t)} has more than {MAX_LITERAL_DIGITS} digits")
    v = int(m.group(2), 0)
    return -v if m.group(1) == "-" else v


def is_decimal(text: str) -> bool:
    """ASCII decimal digits only (``str.isdigit`` also accepts ``²`` and ``٣``)."""
    return re.fullmatch(r"[0-9]+", text, re.ASCII) is not None
