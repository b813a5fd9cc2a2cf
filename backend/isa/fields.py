"""Architectural field codes: GPR names, hands, SizeCodes, PE masks and B.DATR enums.

These are the value tables of REFERENCE.md sections 3 and 4 (from ``B.IOR.asl``,
``B.IOT.asl``, ``B.DATR.asl`` and ``control-state.asl``).
"""

from __future__ import annotations

import enum

#: GPR selector -> name (B.IOR/B.DIM field domain 0..23; 24..31 are reserved there).
GPR_NAMES: tuple[str, ...] = (
    "zero", "sp", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "ra",
    "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "x0", "x1", "x2", "x3",
)  # fmt: skip
GPR_COUNT = len(GPR_NAMES)
GPR_BY_NAME: dict[str, int] = {n: i for i, n in enumerate(GPR_NAMES)}
#: The grid ABI (DECISIONS D13): a launch of N cores sets, on every PE of core i, the
#: core index i in CORE_INDEX_GPR and the core count N in CORE_COUNT_GPR before the
#: program starts. The compiler never allocates them, so they hold their values for the
#: whole run unless the program itself writes them.
CORE_INDEX_GPR = "x2"
CORE_COUNT_GPR = "x3"
GRID_GPRS = (CORE_INDEX_GPR, CORE_COUNT_GPR)
#: GPR values are PTO_XLEN = 64 bits wide
XLEN = 64
XMASK = (1 << XLEN) - 1


class Hand(enum.IntEnum):
    """A Local tile hand (B.IOT DstTile code)."""

    T = 0
    U = 1
    M = 2
    N = 3


#: entries per hand addressable by a 6-bit source selector (hand*16 + k-1)
HAND_DEPTH_ENCODABLE = 16


def size_bytes(code: int) -> int:
    """Per-PE bytes of a B.IOT SizeCode 1..10 (and B.IOS 1..12): 2**(code+6)."""
    return 1 << (code + 6)


SIZE_NAMES: dict[int, str] = {
    c: (f"{size_bytes(c)}B" if size_bytes(c) < 1024 else f"{size_bytes(c) // 1024}KB")
    for c in range(1, 13)
}
SIZE_BY_NAME: dict[str, int] = {v: k for k, v in SIZE_NAMES.items()}
LOCAL_SIZE_CODES = range(1, 11)

#: B.IOT PEMode -> 4-bit PE_MASK (PE0 in the most significant bit)
PEMODE_TO_MASK: tuple[int, ...] = (
    0b0000,
    0b1000,
    0b0100,
    0b0010,
    0b0001,
    0b1100,
    0b1110,
    0b1111,
)
MASK_TO_PEMODE: dict[int, int] = {m: i for i, m in enumerate(PEMODE_TO_MASK)}
PE_COUNT = 4
#: ``PTO_MODEL_TILE_ELEMENTS``: the most elements one tile (or one TPREFETCH footprint
#: per PE) holds
MODEL_TILE_ELEMENTS = 32768


def mask_pes(mask: int) -> tuple[int, ...]:
    """The PE indices selected by a 4-bit PE_MASK (PE0 is bit 3)."""
    return tuple(pe for pe in range(PE_COUNT) if mask >> (PE_COUNT - 1 - pe) & 1)


def first_pes_mask(n: int) -> int:
    """The PE_MASK selecting PE0..PE(n-1)."""
    return sum(1 << (PE_COUNT - 1 - pe) for pe in range(n))


def mask_text(mask: int) -> str:
    return format(mask, "04b")


#: B.DATR.Layout codes (REFERENCE 4.2); others are reserved
LAYOUT_NAMES: dict[int, str] = {
    0: "NORM", 1: "ND2DN", 3: "ND2ZN", 4: "ND2NZ", 6: "DN2ND", 8: "DN2ZN", 9: "DN2NZ",
    17: "ZN2ND", 18: "ZN2DN", 20: "ZN2NZ", 21: "ND2M32", 22: "ND2M16", 23: "ND2N8",
    24: "M322ND", 25: "M162ND", 26: "N82ND", 27: "NZ2ND", 28: "NZ2DN", 30: "NZ2ZN",
}  # fmt: skip
LAYOUT_BY_NAME: dict[str, int] = {v: k for k, v in LAYOUT_NAMES.items()}

#: B.DATR.PadValueOrByteId as a PadValue
PAD_NAMES: tuple[str, ...] = ("Zero", "Max", "Min", "Null")
PAD_BY_NAME: dict[str, int] = {n: i for i, n in enumerate(PAD_NAMES)}
PAD_ZERO, PAD_MAX, PAD_MIN, PAD_NULL = range(4)

CMODE_NAMES: tuple[str, ...] = ("EQ", "NE", "LT", "GT", "LE", "GE")
CMODE_BY_NAME: dict[str, int] = {n: i for i, n in enumerate(CMODE_NAMES)} | {"None": 0}

RMODE_NAMES: tuple[str, ...] = ("Default", "RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB")
RMODE_BY_NAME: dict[str, int] = {n: i for i, n in enumerate(RMODE_NAMES)}

#: numeric status bits (CORE_STATE[36:32])
STATUS_BITS: tuple[str, ...] = ("NV", "DZ", "OF", "UF", "NX")
NV, DZ, OF, UF, NX = (1 << i for i in range(5))


def status_text(bits: int) -> str:
    names = [n for i, n in enumerate(STATUS_BITS) if bits >> i & 1]
    return "|".join(names) if names else "-"
