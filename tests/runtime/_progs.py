"""Helpers for the verification suites: assembly builders, a GM/TLOAD rig, and an
independent numeric oracle.

Nothing here imports ``ptoc.backend.isa.semantics`` or ``ptoc.runtime`` internals: the
executor is driven only through :class:`ptoc.runtime.Machine` with assembly text, and the
oracle is written from the format parameters of REFERENCE.md 4.1 and the profile rules of
DECISIONS.md D5 using ``fractions.Fraction`` (exact), Python integers (explicit wrap),
numpy FP64 (for the FP64-then-round transcendental profile) and ml_dtypes/numpy only to
cross-check the oracle itself (``test_differential.py::test_oracle_*``).

Reduced oracles (documented where used): HiF8 and HiF4X2 have no public layout in this
repository, so conversions to them are checked against the executor's own decoded value
set (nearest candidate, round-trip, anchors), not against an independent decoder.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

from ptoc.backend.asm import parse
from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import SIZE_NAMES
from ptoc.backend.program import Program
from ptoc.runtime import Machine, MachineConfig, MachineFault

D = DataType
NV, DZ, OF, UF, NX = 1, 2, 4, 8, 16
RNE, RTZ, RTM, RTP, RNA, RTO, RHB = 1, 2, 3, 4, 5, 6, 7
RMODE_NAMES = {1: "RNE", 2: "RTZ", 3: "RTM", 4: "RTP", 5: "RNA", 6: "RTO", 7: "RHB"}

# --------------------------------------------------------------------------- text


@functools.lru_cache(maxsize=4096)
def program(text: str) -> Program:
    """Parse (cached: hypothesis examples reuse one program with different GM data)."""
    return parse(text)


def sfu_or_vec(op: str) -> str:
    from ptoc.backend.isa import op as op_def

    return op_def(op).bstart


def block(op: str, dt: DataType | str | int, *lines: str) -> str:
    """``BSTART.<engine> OP, DT`` + lines + ``BSTOP`` (engine from the catalog)."""
    from ptoc.backend.isa import op as op_def

    o = op_def(op)
    name = dt if isinstance(dt, str) else DataType(dt).name
    head = f"{o.bstart} {o.mnemonic}, {name}" if o.mode is not None else f"{o.bstart} {name}"
    return "\n".join([head, *[ln for ln in lines if ln], "BSTOP"]) + "\n"


def dim_lines(vc: int | None = None, vr: int | None = None, col: int | None = None) -> str:
    out = []
    for lb, v in ((0, vc), (1, vr), (2, col)):
        if v is not None:
            out.append(f"B.DIM zero, {v}, ->LB{lb}")
    return "\n".join(out)


def iot(
    *srcs: str,
    dst: str | None = None,
    size: int | str | None = None,
    mask: str = "1111",
    last: bool = True,
) -> str:
    parts = [*srcs, f"mask={mask}"]
    if last:
        parts.append("last")
    if dst is not None:
        parts.append(f"->{dst}<{size_name(size) if isinstance(size, int) else size}>")
    return "B.IOT " + ", ".join(parts)


def size_name(code: int) -> str:
    return SIZE_NAMES[code]


def size_code(nbytes: int) -> int:
    """SizeCode of a power-of-two byte count 128..65536."""
    code = nbytes.bit_length() - 7
    assert 1 << (code + 6) == nbytes and 1 <= code <= 10, nbytes
    return code


def p2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def bits_of(dt: DataType) -> int:
    return info(dt).bits


def tile_bytes(dt: DataType, rows: int, col: int) -> int:
    return rows * col * bits_of(dt) // 8


def rows_for(dts: Iterable[DataType], col: int, min_rows: int = 1) -> int:
    """The smallest power-of-two Rows >= min_rows whose tile is >= 128 B for each type."""
    rows = p2(min_rows)
    while any(tile_bytes(d, rows, col) < 128 for d in dts):
        rows *= 2
    return rows


def smallest_size(dt: DataType | None, rows: int, col: int) -> int:
    """The smallest SizeCode whose derived Rows (capacity/(Col*bits)) hold ``rows``."""
    bits = 1 if dt is None else bits_of(dt)
    for code in range(1, 11):
        cap = (1 << (code + 6)) * 8
        if cap % (col * bits) == 0 and cap // (col * bits) >= rows:
            return code
    raise ValueError("no size")


def const_lines(reg: str, value: int) -> list[str]:
    """Scalar instructions setting ``reg`` to a value in 0 .. 2**31-1."""
    hi, lo = value >> 12, value & 0xFFF
    if hi:
        return [f"lui {hi}, ->{reg}", f"addi {reg}, {lo}, ->{reg}"]
    return [f"addi zero, {lo}, ->{reg}"]


def std(*lines: str) -> str:
    return "BSTART.STD FALL\n" + "\n".join(lines) + "\nBSTOP\n"


# --------------------------------------------------------------------------- raw bits


def container(dt: DataType) -> np.dtype:
    return np.dtype(
        {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[info(dt).carrier.itemsize]
    )


def raw(a: np.ndarray) -> np.ndarray:
    """Unsigned raw bits of a carrier array (bool stays bool)."""
    a = np.ascontiguousarray(a)
    if a.dtype == bool:
        return a
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def width_mask(dt: DataType) -> int:
    return (1 << bits_of(dt)) - 1


# --------------------------------------------------------------------------- the rig

GM_SIZE = 1 << 20
PE_SPAN = 0x30000  # bytes of GM reserved per PE for its private operand copies


class Rig:
    """A small machine plus helpers that place per-PE operands in GM and TLOAD them.

    Register convention: ``s8`` holds each PE's GM window offset (host-set, the kernel
    ABI of D7); ``a2``/``a3`` are the TLOAD base/stride scratch registers.
    """

    def __init__(self, **cfg: int) -> None:
        cfg.setdefault("gm_size", GM_SIZE)
        self.m = Machine(MachineConfig(**cfg))
        self.pes = self.m.config.pes
        for pe in range(self.pes):
            self.m.set_gpr("s8", pe * PE_SPAN, pe=pe)
        self.cursor = 0x100

    # ---- operands

    def load(
        self,
        values: np.ndarray,
        dt: DataType,
        *,
        col: int | None = None,
        rows: int | None = None,
        hand: str = "T",
        size: int | None = None,
        mask: str = "1111",
        datr: str = "",
    ) -> str:
        """TLOAD text for raw ``values`` ((R, C) same on every PE, or (P, R, C)).

        ``col`` defaults to the next power of two >= C; ``rows`` (physical Rows) to the
        smallest that gives a >= 128-byte tile; ``size`` (SizeCode) follows from both.
        """
        v = np.asarray(values)
        if v.ndim == 2:
            v = np.broadcast_to(v, (self.pes, *v.shape))
        _, r, c = v.shape
        col = col or p2(c)
        rows = rows or rows_for([dt], col, r)
        if size is None:
            size = (
                size_code(tile_bytes(dt, rows, col))
                if tile_bytes(dt, rows, col) >= 128
                else smallest_size(dt, r, col)
            )
        four = bits_of(dt) == 4
        stride = (c + 1) // 2 if four else c * info(dt).carrier.itemsize
        addr = self.cursor
        span = stride * r
        for pe in range(self.pes):
            data = self._bytes(v[pe], dt)
            self.m.load_gm(addr + pe * PE_SPAN, data)
        self.cursor += (span + 63) // 64 * 64 + 64
        assert self.cursor < PE_SPAN, "rig GM window exhausted"
        text = std(*const_lines("a2", addr), "add a2, s8, ->a2", *const_lines("a3", stride))
        lines = [
            datr,
            dim_lines(c, r, col if col != c else None),
            "B.IOR a2, a3",
            iot(dst=hand, size=size, mask=mask),
        ]
        return text + block("TLOAD", dt, *lines)

    @staticmethod
    def _bytes(v: np.ndarray, dt: DataType) -> bytes:
        if bits_of(dt) == 4:
            nib = np.asarray(v, np.uint64).astype(np.uint8) & 0xF
            r, c = nib.shape
            if c % 2:
                nib = np.concatenate([nib, np.zeros((r, 1), np.uint8)], axis=1)
            packed = nib[:, 0::2] | (nib[:, 1::2] << 4)
            return packed.astype(np.uint8).tobytes()
        return np.ascontiguousarray(np.asarray(v, np.uint64).astype(container(dt))).tobytes()

    # ---- running

    def run(self, text: str):  # type: ignore[no-untyped-def]
        return self.m.run(program(text))

    def fault(self, text: str, cls: type[MachineFault] | tuple = MachineFault) -> MachineFault:
        """Run ``text`` expecting a fault of exactly ``cls``; the machine must be unchanged."""
        before = self.m.snapshot()
        with pytest.raises(MachineFault) as info_:
            self.run(text)
        f = info_.value
        if isinstance(cls, tuple):
            assert type(f) in cls, f
        elif cls is not MachineFault:
            assert type(f) is cls, f"expected {cls.__name__}, got {type(f).__name__}: {f}"
        after = self.m.snapshot()
        assert after == before, after.differences(before)
        return f

    def noop(self, text: str) -> None:
        """Run ``text`` expecting a strict no-op (no fault, machine unchanged)."""
        before = self.m.snapshot()
        self.run(text)
        after = self.m.snapshot()
        assert after == before, after.differences(before)

    # ---- reading

    def bits(self, name: str = "U#1") -> np.ndarray:
        """Raw bits of the valid region, (P, VR, VC) (4-bit types: the nibble)."""
        v = self.m.tile(name)
        if v.dtype is None:
            return v.values.copy()
        r = raw(v.values)
        if bits_of(v.dtype) == 4:
            r = r & np.uint8(0xF)
        return r

    def status(self) -> list[int]:
        return [int(s) for s in self.m.status]


# --------------------------------------------------------------------------- floats


@dataclass(frozen=True)
class Fmt:
    """An IEEE-like binary format: ``ebits`` exponent bits, ``mbits`` stored fraction
    bits, ``lowpad`` always-zero container bits under the fraction (TF32/HF32), the sign
    bit position, Inf presence and the NaN style: ``ieee`` (all-ones exponent), ``allones``
    (only S.1111.111, E4M3) or ``none``."""

    ebits: int
    mbits: int
    bias: int
    inf: bool
    nan: str
    sign_bit: int
    lowpad: int = 0

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def max_biased(self) -> int:
        return (1 << self.ebits) - (2 if self.nan == "ieee" else 1)

    @property
    def max_frac(self) -> int:
        return (1 << self.mbits) - (2 if self.nan == "allones" else 1)

    @property
    def max_mag(self) -> Fraction:
        return Fraction((1 << self.mbits) + self.max_frac, 1 << self.mbits) * Fraction(2) ** (
            self.max_biased - self.bias
        )

    @property
    def qnan(self) -> int:
        if self.nan == "ieee":
            top = (1 << self.ebits) - 1
            return (top << (self.mbits + self.lowpad)) | (1 << (self.mbits + self.lowpad - 1))
        if self.nan == "allones":
            return (1 << (self.ebits + self.mbits)) - 1
        raise ValueError("no NaN")

    def max_bits(self, neg: bool = False) -> int:
        mag = (self.max_biased << (self.mbits + self.lowpad)) | (self.max_frac << self.lowpad)
        return mag | (int(neg) << self.sign_bit)

    def inf_bits(self, neg: bool) -> int:
        top = (1 << self.ebits) - 1
        return (top << (self.mbits + self.lowpad)) | (int(neg) << self.sign_bit)


#: REFERENCE.md 4.1 formats (E3M2/E2M3 live in the low six bits of a byte; E2M1X2 and
#: E1M2X2 lanes are nibbles).
FMTS: dict[DataType, Fmt] = {
    D.FP64: Fmt(11, 52, 1023, True, "ieee", 63),
    D.FP32: Fmt(8, 23, 127, True, "ieee", 31),
    D.TF32: Fmt(8, 10, 127, True, "ieee", 31, lowpad=13),
    D.HF32: Fmt(8, 11, 127, True, "ieee", 31, lowpad=12),
    D.FP16: Fmt(5, 10, 15, True, "ieee", 15),
    D.BF16: Fmt(8, 7, 127, True, "ieee", 15),
    D.E4M3: Fmt(4, 3, 7, False, "allones", 7),
    D.E5M2: Fmt(5, 2, 15, True, "ieee", 7),
    D.E3M2: Fmt(3, 2, 3, False, "none", 5),
    D.E2M3: Fmt(2, 3, 1, False, "none", 5),
    D.E2M1X2: Fmt(2, 1, 1, False, "none", 3),
    D.E1M2X2: Fmt(1, 2, 1, False, "none", 3),
}

#: formats without an independent oracle here (see the module docstring)
REDUCED = frozenset({D.HiF8, D.HiF4X2})


@dataclass(frozen=True)
class V:
    """A decoded floating value: ``kind`` 'n' number (``mag`` >= 0), 'i' infinity,
    'q' quiet NaN, 's' signalling NaN; ``neg`` the sign."""

    kind: str
    neg: bool = False
    mag: Fraction = Fraction(0)

    @property
    def nan(self) -> bool:
        return self.kind in "qs"

    @property
    def zero(self) -> bool:
        return self.kind == "n" and self.mag == 0

    @property
    def value(self) -> Fraction:
        assert self.kind == "n"
        return -self.mag if self.neg else self.mag

    def key(self) -> float:
        """A float64 ordering key (numbers and infinities only)."""
        if self.kind == "i":
            return -math.inf if self.neg else math.inf
        return float(self.value)


def is_float(dt: DataType) -> bool:
    return info(dt).is_float


def decode(dt: DataType, b: int) -> V:
    """Exact value of raw float bits ``b`` of ``dt``."""
    dt = D(dt)
    if dt == D.E8M0:
        b &= 0xFF
        return V("q") if b == 0xFF else V("n", False, Fraction(2) ** (b - 127))
    f = FMTS[dt]
    neg = bool((b >> f.sign_bit) & 1)
    exp = (b >> (f.mbits + f.lowpad)) & ((1 << f.ebits) - 1)
    frac = (b >> f.lowpad) & ((1 << f.mbits) - 1)
    top = (1 << f.ebits) - 1
    if f.nan == "ieee" and exp == top:
        if frac == 0:
            return V("i", neg)
        quiet = (frac >> (f.mbits - 1)) & 1
        return V("q" if quiet else "s", neg)
    if f.nan == "allones" and exp == top and frac == (1 << f.mbits) - 1:
        return V("q", neg)
    if exp == 0:
        mag = Fraction(frac) * Fraction(2) ** (f.emin - f.mbits)
    else:
        mag = Fraction((1 << f.mbits) + frac) * Fraction(2) ** (exp - f.bias - f.mbits)
    return V("n", neg, mag)


def ilog2(a: Fraction) -> int:
    """floor(log2(a)) for a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def _round_int(n: int, r: Fraction, sticky: bool, neg: bool, rmode: int) -> tuple[int, bool]:
    """Round the magnitude n + r (0 <= r < 1; ``sticky``: slightly more) to an integer."""
    inexact = r != 0 or sticky
    half = Fraction(1, 2)
    above = r > half or (r == half and sticky)
    tie = r == half and not sticky
    if rmode in (RTZ, RTO):
        up = False
    elif rmode == RTP:
        up = inexact and not neg
    elif rmode == RTM:
        up = inexact and neg
    elif rmode == RNA:
        up = above or tie
    elif rmode == RHB:
        up = above or (tie and not neg)
    else:
        up = above or (tie and n % 2 == 1)
    n += int(up)
    if rmode == RTO and inexact:
        n |= 1
    return n, inexact


def encode(
    dt: DataType,
    neg: bool,
    mag: Fraction,
    rmode: int = RNE,
    sat: bool = False,
    sticky: bool = False,
) -> tuple[int, int]:
    """Round the exact value (-1)**neg * mag (``sticky``: a hair larger in magnitude) to
    ``dt``: (raw bits, flags). Tininess is detected after rounding (D5 profile)."""
    dt = D(dt)
    if dt == D.E8M0:
        return encode_e8m0(neg, mag, rmode, sat)
    f = FMTS[dt]
    sign = int(neg) << f.sign_bit
    if mag == 0 and not sticky:
        return sign, 0
    e = ilog2(mag) if mag > 0 else f.emin - f.mbits - 4
    q = max(e, f.emin) - f.mbits
    scaled = mag / Fraction(2) ** q
    n = scaled.numerator // scaled.denominator
    n, inexact = _round_int(n, scaled - n, sticky, neg, rmode)
    if n >> (f.mbits + 1):
        n >>= 1
        q += 1
    flags = NX if inexact else 0
    # tininess after rounding: round to mbits+1 significant bits with unbounded range
    if e < f.emin - 1:
        tiny = True
    elif e == f.emin - 1:
        s2 = mag / Fraction(2) ** (e - f.mbits)
        n2 = s2.numerator // s2.denominator
        n2, _ = _round_int(n2, s2 - n2, sticky, neg, rmode)
        tiny = n2 < 1 << (f.mbits + 1)
    else:
        tiny = False
    if tiny and inexact:
        flags |= UF
    if Fraction(n) * Fraction(2) ** q > f.max_mag:
        to_max = (
            sat or rmode in (RTZ, RTO) or (rmode == RTP and neg) or (rmode == RTM and not neg)
        )
        if to_max:
            return f.max_bits(neg), OF | NX
        if f.inf:
            return f.inf_bits(neg), OF | NX
        if f.nan == "allones":
            return f.qnan, OF | NX
        return f.max_bits(neg), OF | NX
    if n >> f.mbits:
        biased, frac = q + f.mbits + f.bias, n - (1 << f.mbits)
    else:
        biased, frac = 0, n
    return sign | (biased << (f.mbits + f.lowpad)) | (frac << f.lowpad), flags


def encode_e8m0(neg: bool, mag: Fraction, rmode: int, sat: bool) -> tuple[int, int]:
    """E8M0 (REFERENCE 4.1: unsigned power of two, 0xFF NaN): exponent rounding, the
    nearest modes compare with the geometric midpoint 2**(f + 1/2) (reduced rule of the
    profile, ASL ReferenceFloatToE8M0); zero or negative sources are invalid."""
    if neg or mag == 0:
        return 0xFF, NV
    f = ilog2(mag)
    exact = mag == Fraction(2) ** f
    if exact or rmode == RTM:
        r = f
    elif rmode == RTP:
        r = f + 1
    elif rmode == RTZ:
        r = f + 1 if f < 0 else f
    elif rmode == RTO:
        r = f if f % 2 else f + 1
    else:
        r = f + 1 if mag * mag >= Fraction(2) ** (2 * f + 1) else f
    if f < -127:
        return (0x00 if sat else 0xFF), UF | NX
    if f > 127 or (f == 127 and not exact):
        return (0xFE if sat else 0xFF), OF | NX
    return min(max(r + 127, 0), 254), (0 if exact else NX)


def canonical_nan(dt: DataType) -> int:
    dt = D(dt)
    if dt == D.E8M0:
        return 0xFF
    return FMTS[dt].qnan


def has_nan(dt: DataType) -> bool:
    return dt == D.E8M0 or FMTS[D(dt)].nan != "none"


def special(dt: DataType, v: V) -> tuple[int, int]:
    """Encode an infinity/NaN result of an arithmetic operation (canonical NaN)."""
    if v.nan:
        return canonical_nan(dt), 0
    f = FMTS[D(dt)]
    if f.inf:
        return f.inf_bits(v.neg), 0
    if f.nan == "allones":
        return f.qnan, 0
    return f.max_bits(v.neg), 0


def fnum(
    dt: DataType, x: Fraction, *, zero_neg: bool = False, rmode: int = RNE, sat: bool = False
) -> tuple[int, int]:
    """Encode an exact rational result (``zero_neg``: the sign of an exact zero)."""
    if x == 0:
        return encode(dt, zero_neg, Fraction(0))
    return encode(dt, x < 0, abs(x), rmode, sat)


def _nan_in(dt: DataType, *vs: V) -> tuple[int, int] | None:
    if any(v.nan for v in vs):
        return canonical_nan(dt), NV if any(v.kind == "s" for v in vs) else 0
    return None


def f_add(dt: DataType, a: int, b: int, *, sub: bool = False) -> tuple[int, int]:
    x, y = decode(dt, a), decode(dt, b)
    if sub and y.kind != "q" and y.kind != "s":
        y = V(y.kind, not y.neg, y.mag)
    r = _nan_in(dt, x, y)
    if r:
        return r
    if x.kind == "i" and y.kind == "i":
        if x.neg != y.neg:
            return canonical_nan(dt), NV
        return special(dt, x)
    if x.kind == "i" or y.kind == "i":
        return special(dt, x if x.kind == "i" else y)
    s = x.value + y.value
    return fnum(dt, s, zero_neg=(x.zero and y.zero and x.neg and y.neg))


def f_mul(dt: DataType, a: int, b: int) -> tuple[int, int]:
    x, y = decode(dt, a), decode(dt, b)
    r = _nan_in(dt, x, y)
    if r:
        return r
    neg = x.neg != y.neg
    if x.kind == "i" or y.kind == "i":
        if x.zero or y.zero:
            return canonical_nan(dt), NV
        return special(dt, V("i", neg))
    p = x.value * y.value
    return fnum(dt, p, zero_neg=neg)


def f_div(dt: DataType, a: int, b: int) -> tuple[int, int]:
    x, y = decode(dt, a), decode(dt, b)
    r = _nan_in(dt, x, y)
    if r:
        return r
    neg = x.neg != y.neg
    if (x.zero and y.zero) or (x.kind == "i" and y.kind == "i"):
        return canonical_nan(dt), NV
    if x.kind == "i":
        return special(dt, V("i", neg))
    if y.kind == "i":
        return encode(dt, neg, Fraction(0))
    if y.zero:
        return special(dt, V("i", neg))[0], DZ
    return fnum(dt, x.value / y.value, zero_neg=neg)


def f_rem(dt: DataType, a: int, b: int) -> tuple[int, int]:
    """Floor modulo x - y*floor(x/y) (the sign of the divisor), the profile's TREM."""
    x, y = decode(dt, a), decode(dt, b)
    r = _nan_in(dt, x, y)
    if r:
        return r
    if x.kind == "i" or y.zero:
        return canonical_nan(dt), NV
    if y.kind == "i":
        keep_x = x.zero or x.neg == y.neg
        return (a, 0) if keep_x else (b, 0)
    q = math.floor(x.value / y.value)
    rem = x.value - y.value * q
    return fnum(dt, rem, zero_neg=y.neg)


def f_minmax(dt: DataType, a: int, b: int, op: str) -> tuple[int, int]:
    """TMAX/TMIN (D5): one NaN selects the number, two the canonical NaN, sNaN sets NV,
    max(+0,-0)=+0, min(+0,-0)=-0, otherwise the larger/smaller (ties keep the left)."""
    x, y = decode(dt, a), decode(dt, b)
    flags = NV if (x.kind == "s" or y.kind == "s") else 0
    if x.nan and y.nan:
        return canonical_nan(dt), flags
    if x.nan:
        return b, flags
    if y.nan:
        return a, flags
    if x.zero and y.zero:
        if op == "max":
            return (a if x.neg and y.neg else (a if not x.neg else b)), flags
        return (a if x.neg else b), flags
    kx, ky = x.key(), y.key()
    if kx == ky:
        return a, flags
    if op == "max":
        return (a if kx > ky else b), flags
    return (a if kx < ky else b), flags


def f_fma(dt: DataType, a: int, b: int, c: int) -> tuple[int, int]:
    x, y, z = decode(dt, a), decode(dt, b), decode(dt, c)
    if any(v.kind == "s" for v in (x, y, z)):
        return canonical_nan(dt), NV
    if (x.zero and y.kind == "i") or (x.kind == "i" and y.zero):
        return canonical_nan(dt), NV
    # TileFixedFusedMultiplyAddValue (fused-multiply-add.asl): the product counts as
    # infinite whenever a factor is infinite, even if the other factor is a quiet NaN, and
    # its sign is the XOR of the factors' signs (NaN signs included).
    pinf = x.kind == "i" or y.kind == "i"
    pneg = x.neg != y.neg
    if pinf and z.kind == "i" and pneg != z.neg:
        return canonical_nan(dt), NV
    if x.nan or y.nan or z.nan:
        return canonical_nan(dt), 0
    if pinf:
        return special(dt, V("i", pneg))
    if z.kind == "i":
        return special(dt, z)
    p = x.value * y.value
    s = p + z.value
    return fnum(dt, s, zero_neg=(p == 0 and z.zero and pneg and z.neg))


def _f64_result(dt: DataType, y: float, exact: bool = False) -> tuple[int, int]:
    """Round one FP64 evaluation ``y`` once (D5); flags as for a value just beyond y
    (inexact), unless ``exact``."""
    if math.isinf(y):
        return special(dt, V("i", y < 0))[0], OF | NX
    if y == 0:
        return encode(dt, False, Fraction(0))[0], UF | NX
    fy = Fraction(y)
    bits_, _ = encode(dt, fy < 0, abs(fy))
    if exact:
        return bits_, 0
    _, flags = encode(dt, fy < 0, abs(fy), sticky=True)
    return bits_, flags | NX


def _isqrt_frac(mag: Fraction) -> tuple[Fraction, bool]:
    """(sqrt(mag) truncated to 2**-k, remainder nonzero) with k large enough."""
    k = 200 + max(0, -ilog2(mag))
    n = mag.numerator * (1 << (2 * k))
    s = math.isqrt(n // mag.denominator)
    exact = s * s * mag.denominator == n
    return Fraction(s, 1 << k), not exact


def _cdiv(a: int, b: int) -> int:
    return -((-a) // b)


def _exp_fixed(a: Fraction, p: int) -> tuple[int, int]:
    """Integers L <= 2**p * exp(a) <= H for a >= 0: the Taylor series of exp(a / 2**s)
    (a / 2**s <= 2**-8, so the tail after a term is below twice that term) in fixed point
    with directed rounding, then squared s times."""
    s = max(0, ilog2(a) + 9) if a > 0 else 0
    one = 1 << p
    r = a / 2**s
    rl, rh = math.floor(r * one), math.ceil(r * one)
    lo = hi = tl = th = one
    n = 1
    while th > 1:
        tl = (tl * rl >> p) // n
        th = _cdiv(_cdiv(th * rh, one), n)
        lo, hi, n = lo + tl, hi + th, n + 1
    hi += 2 * th + 2
    for _ in range(s):
        lo, hi = lo * lo >> p, _cdiv(hi * hi, one)
    return lo, hi


def _atanh_fixed(z: Fraction, p: int) -> tuple[int, int]:
    """Integers bounding 2**p * atanh(z) for 0 <= z <= 1/3 (series sum z**(2j+1)/(2j+1),
    whose tail after a term is below 9/8 of it)."""
    one = 1 << p
    zl, zh = math.floor(z * one), math.ceil(z * one)
    z2l, z2h = zl * zl >> p, _cdiv(zh * zh, one)
    lo = hi = 0
    pl, ph, j = zl, zh, 0
    while ph > 1:
        lo, hi = lo + pl // (2 * j + 1), hi + _cdiv(ph, 2 * j + 1)
        pl, ph, j = pl * z2l >> p, _cdiv(ph * z2h, one), j + 1
    return lo, hi + 2 * ph + 2


def _f64_exp_log(op: str, mag: Fraction, neg: bool) -> tuple[int, int]:
    """Correctly rounded FP64 exp or log of a nonzero finite value (D9: the FP64 result
    is the exact value rounded once), from rigorous rational bounds: both ends of an
    enclosing interval are rounded; the true value is irrational, so where they agree
    that is its rounding."""
    x = -mag if neg else mag
    if op == "exp" and x > 710:  # e**710 > 2**1024
        return FMTS[D.FP64].inf_bits(False), OF | NX
    if op == "exp" and x < -746:  # e**-746 < 2**-1076: below half the smallest subnormal
        return 0, UF | NX
    p = 160
    while True:
        one = 1 << p
        if op == "exp":
            lo_i, hi_i = _exp_fixed(abs(x), p)
            lo, hi = (Fraction(lo_i, one), Fraction(hi_i, one))
            if x < 0:
                lo, hi = Fraction(one, hi_i), Fraction(one, lo_i)
        else:
            k = ilog2(x)
            m = x / Fraction(2) ** k
            al, ah = _atanh_fixed((m - 1) / (m + 1), p)
            ll, lh = _atanh_fixed(Fraction(1, 3), p)  # ln 2 = 2 atanh(1/3)
            if k < 0:
                ll, lh = lh, ll
            lo, hi = Fraction(2 * (k * ll + al), one), Fraction(2 * (k * lh + ah), one)
        if lo > 0 or hi < 0:
            neg_r = hi < 0
            a_ = encode(D.FP64, neg_r, abs(lo), sticky=True)
            b_ = encode(D.FP64, neg_r, abs(hi), sticky=True)
            if a_ == b_:
                return a_
        p *= 2


def f_unary(dt: DataType, a: int, op: str) -> tuple[int, int]:
    """TABS/TNEG (sign bit only), TRELU, and the SFU ops of the D5 profile."""
    f = FMTS.get(D(dt))
    x = decode(dt, a)
    if op == "abs":
        return a & ~(1 << f.sign_bit), 0
    if op == "neg":
        return a ^ (1 << f.sign_bit), 0
    if op == "relu":
        if x.nan:
            return canonical_nan(dt), NV if x.kind == "s" else 0
        if x.neg or x.zero:
            return 0, 0
        return a, 0
    if x.nan:
        return canonical_nan(dt), NV if x.kind == "s" else 0
    if op == "exp":
        if x.kind == "i":
            return (a, 0) if not x.neg else (0, 0)
        if x.zero:
            return encode(dt, False, Fraction(1))[0], 0
        if dt == D.FP64:
            return _f64_exp_log("exp", x.mag, x.neg)
        with np.errstate(over="ignore", under="ignore"):
            y = float(np.exp(np.float64(float(x.value))))
        return _f64_result(dt, y)
    if op == "log":
        if x.kind == "i":
            return (a, 0) if not x.neg else (canonical_nan(dt), NV)
        if x.zero:
            return special(dt, V("i", True))[0], DZ
        if x.neg:
            return canonical_nan(dt), NV
        if x.mag == 1:
            return 0, 0
        if dt == D.FP64:
            return _f64_exp_log("log", x.mag, False)
        return _f64_result(dt, float(np.log(np.float64(float(x.value)))))
    if op == "recip":
        if x.zero:
            return special(dt, V("i", x.neg))[0], DZ
        if x.kind == "i":
            return encode(dt, x.neg, Fraction(0))[0], 0
        return encode(dt, x.neg, 1 / x.mag)
    if op == "sqrt":
        if x.zero:
            return a, 0
        if x.neg:
            return canonical_nan(dt), NV
        if x.kind == "i":
            return a, 0
        s, inexact = _isqrt_frac(x.mag)
        return encode(dt, False, s, sticky=inexact)
    if op == "rsqrt":
        if x.zero:
            return special(dt, V("i", x.neg))[0], DZ
        if x.neg:
            return canonical_nan(dt), NV
        if x.kind == "i":
            return 0, 0
        if dt == D.FP64:  # the exact 1/sqrt rounded once (D9)
            r, inexact = _isqrt_frac(1 / x.mag)
            return encode(dt, False, r, sticky=inexact)
        y = float(np.float64(1.0) / np.sqrt(np.float64(float(x.value))))
        e = ilog2(x.mag)
        exact = x.mag == Fraction(2) ** e and e % 2 == 0
        return _f64_result(dt, y, exact=exact)
    raise ValueError(op)


def f_compare(dt: DataType, a: int, b: int, cmode: int) -> tuple[bool, int]:
    x, y = decode(dt, a), decode(dt, b)
    flags = NV if (x.kind == "s" or y.kind == "s") else 0
    if x.nan or y.nan:
        return cmode == 1, flags
    kx, ky = x.key(), y.key()
    rel = [kx == ky, kx != ky, kx < ky, kx > ky, kx <= ky, kx >= ky][cmode]
    return rel, flags


# --------------------------------------------------------------------------- integers


def int_range(dt: DataType) -> tuple[int, int]:
    w = bits_of(dt)
    if info(dt).is_signed:
        return -(1 << (w - 1)), (1 << (w - 1)) - 1
    return 0, (1 << w) - 1


def to_int(dt: DataType, b: int) -> int:
    """Signed/unsigned value of raw integer bits."""
    w = bits_of(dt)
    b &= (1 << w) - 1
    if info(dt).is_signed and b >> (w - 1):
        return b - (1 << w)
    return b


def wrap(dt: DataType, v: int) -> int:
    """Raw bits of an integer value modulo the element width."""
    return v & width_mask(dt)


def i_binary(dt: DataType, a: int, b: int, op: str) -> int:
    """Typed integer op on raw bits -> raw bits. Division by zero is the caller's."""
    w = bits_of(dt)
    x, y = to_int(dt, a), to_int(dt, b)
    if op == "add":
        return wrap(dt, x + y)
    if op == "sub":
        return wrap(dt, x - y)
    if op == "mul":
        return wrap(dt, x * y)
    if op == "div":
        q = abs(x) // abs(y)
        return wrap(dt, q if (x < 0) == (y < 0) else -q)
    if op == "rem":
        if not info(dt).is_signed:
            return wrap(dt, x % y)
        return wrap(dt, x - y * math.floor(Fraction(x, y)))
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "xor":
        return a ^ b
    if op in ("shl", "shr"):
        cnt = (b & width_mask(dt)) & (w - 1)
        if op == "shl":
            return wrap(dt, (a & width_mask(dt)) << cnt)
        return wrap(dt, x >> cnt)
    if op == "max":
        return a if x >= y else b
    if op == "min":
        return a if x <= y else b
    raise ValueError(op)


def binary(dt: DataType, a: int, b: int, op: str) -> tuple[int, int]:
    """One typed element of TADD..TMIN: (raw result, flags)."""
    if not is_float(dt):
        return i_binary(dt, a, b, op), 0
    if op in ("add", "sub"):
        return f_add(dt, a, b, sub=op == "sub")
    if op == "mul":
        return f_mul(dt, a, b)
    if op == "div":
        return f_div(dt, a, b)
    if op == "rem":
        return f_rem(dt, a, b)
    if op in ("max", "min"):
        return f_minmax(dt, a, b, op)
    raise ValueError(op)


def fma(dt: DataType, a: int, b: int, c: int) -> tuple[int, int]:
    """One TFMA element: integers wrap ``a*b + c`` modulo the width, floats are fused."""
    if is_float(dt):
        return f_fma(dt, a, b, c)
    return wrap(dt, to_int(dt, a) * to_int(dt, b) + to_int(dt, c)), 0


def unary(dt: DataType, a: int, op: str) -> tuple[int, int]:
    if is_float(dt):
        return f_unary(dt, a, op)
    x = to_int(dt, a)
    if op == "not":
        return wrap(dt, ~x), 0
    if op == "neg":
        return wrap(dt, -x), 0
    if op == "abs":
        return wrap(dt, abs(x)), 0
    if op == "relu":
        return wrap(dt, max(x, 0)), 0
    raise ValueError(op)


def compare(dt: DataType, a: int, b: int, cmode: int) -> tuple[bool, int]:
    if is_float(dt):
        return f_compare(dt, a, b, cmode)
    x, y = to_int(dt, a), to_int(dt, b)
    return [x == y, x != y, x < y, x > y, x <= y, x >= y][cmode], 0


def elementwise(fn, *arrays: np.ndarray, out: np.dtype | None = None):  # type: ignore[no-untyped-def]
    """Apply ``fn(*raw ints) -> (raw, flags)`` elementwise over (P, R, C) raw arrays:
    returns (raw results, status per PE)."""
    shape = np.shape(arrays[0])
    res = np.zeros(shape, dtype=out or np.uint64)
    st = [0] * shape[0]
    for idx in np.ndindex(*shape):
        r, fl = fn(*(int(a[idx]) for a in arrays))
        res[idx] = r
        st[idx[0]] |= fl
    return res, st


# --------------------------------------------------------------------------- values


def special_bits(dt: DataType) -> list[int]:
    """Interesting raw encodings: zeros, extremes, subnormals, NaNs, one, wrap-arounds."""
    dt = D(dt)
    w = bits_of(dt)
    if not is_float(dt):
        lo, hi = int_range(dt)
        vals = {0, 1, 2, 3, -1, -2, lo, lo + 1, hi, hi - 1, 7, 8, w - 1, w, w + 1}
        return sorted({wrap(dt, v) for v in vals})
    if dt == D.E8M0:
        return [0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]
    if dt in REDUCED:
        return [*list(range(1 << w))[:: max(1, (1 << w) // 32)], 0, 1, (1 << w) - 1]
    f = FMTS[dt]
    one = encode(dt, False, Fraction(1))[0]
    sb = 1 << f.sign_bit
    out = [
        0,
        sb,
        one,
        one | sb,
        1 << f.lowpad,
        f.max_bits(),
        f.max_bits(True),
        ((1 << f.mbits) - 1) << f.lowpad,
        1 << (f.mbits + f.lowpad),
        encode(dt, False, Fraction(1, 2))[0],
        encode(dt, False, Fraction(3))[0],
    ]
    if f.inf:
        out += [f.inf_bits(False), f.inf_bits(True)]
    if f.nan == "ieee":
        out += [f.qnan, f.qnan | sb, f.inf_bits(False) | (1 << f.lowpad)]  # + an sNaN
        out += [f.qnan | (1 << f.lowpad)]  # a NaN with a payload
    elif f.nan == "allones":
        out += [f.qnan, f.qnan | sb]
    return sorted({x & width_mask(dt) for x in out})


def valid_encoding(dt: DataType, b: int) -> int:
    """Force raw bits into a valid encoding (TF32/HF32 low bits, 6-bit floats)."""
    dt = D(dt)
    b &= width_mask(dt)
    if dt in FMTS and FMTS[dt].lowpad:
        b &= ~((1 << FMTS[dt].lowpad) - 1)
    if dt in (D.E3M2, D.E2M3):
        b &= 0x3F
    return b


def bits_strategy(dt: DataType):  # type: ignore[no-untyped-def]
    """Hypothesis strategy of valid raw encodings of ``dt`` (biased to special values)."""
    from hypothesis import strategies as st

    w = bits_of(dt)
    return st.one_of(
        st.sampled_from(special_bits(dt)),
        st.integers(0, (1 << w) - 1),
    ).map(lambda b: valid_encoding(dt, b))


#: an element's kind byte below this picks a special encoding, below ``_SMALL`` a value
#: with only its low bits set (subnormals, small integers), otherwise uniform raw bits
_SPECIAL, _SMALL = 96, 128


def _element_bits(dt: DataType, specials: list[int], kind: int, raw: int) -> int:
    w = bits_of(dt)
    if kind < _SPECIAL:
        return valid_encoding(dt, specials[kind % len(specials)])
    if kind < _SMALL:
        return valid_encoding(dt, raw & ((1 << (1 + kind % w)) - 1))
    return valid_encoding(dt, raw)


def _elements(dt: DataType, n: int):  # type: ignore[no-untyped-def]
    """Strategy of ``n`` valid raw encodings of ``dt`` as a list, drawn as two byte
    strings (a kind byte and the raw bits of each element) rather than element by
    element: the same mix as ``bits_strategy`` (specials, small magnitudes, every binade
    through uniform bits) at a fraction of the drawing cost; shrinks towards the first
    special encoding (zero)."""
    from hypothesis import strategies as st

    specials = special_bits(dt)
    width = max(1, -(-bits_of(dt) // 8))

    def build(args):  # type: ignore[no-untyped-def]
        kinds, raw = args
        return [
            _element_bits(
                dt,
                specials,
                kinds[i],
                int.from_bytes(raw[i * width : (i + 1) * width], "little"),
            )
            for i in range(n)
        ]

    return st.tuples(
        st.binary(min_size=n, max_size=n), st.binary(min_size=n * width, max_size=n * width)
    ).map(build)


def array_strategy(dt: DataType, shape: tuple[int, ...]):  # type: ignore[no-untyped-def]
    """Strategy of arrays of valid raw encodings of ``dt`` (``_elements``), as uint64."""
    n = int(np.prod(shape))
    return _elements(dt, n).map(lambda xs: np.array(xs, np.uint64).reshape(shape))


def partner_strategy(dt: DataType, a: np.ndarray):  # type: ignore[no-untyped-def]
    """A second operand related to ``a`` element by element: independent, equal, the
    sign-flipped value, or ``a`` with its low bits perturbed (near-cancellation, ties)."""
    from hypothesis import strategies as st

    n = a.size
    sign = (1 << FMTS[D(dt)].sign_bit) if D(dt) in FMTS else 1 << (bits_of(dt) - 1)
    low = (1 << FMTS[D(dt)].lowpad) if D(dt) in FMTS else 1

    def build(args):  # type: ignore[no-untyped-def]
        choice, other = args
        out = []
        for c, o, x in zip(choice, other, a.reshape(-1).tolist(), strict=True):
            x, k, z = int(x), c & 3, 1 + (c >> 2) % 7
            if k == 0:
                out.append(o)
            elif k == 1:
                out.append(x)
            elif k == 2:
                out.append(x ^ sign)
            else:
                out.append(valid_encoding(dt, x ^ (z * low)))
        return np.array(out, np.uint64).reshape(a.shape)

    # one byte per element: its kind (low two bits) and its perturbation (the rest)
    return st.tuples(st.binary(min_size=n, max_size=n), _elements(dt, n)).map(build)


def cross(dt: DataType, pes: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of special encodings of ``dt``, as two (pes, R, C) raw arrays."""
    sp = special_bits(dt)
    pairs = [(x, y) for x in sp for y in sp]
    c = 8
    r = -(-len(pairs) // (pes * c))
    pairs += [(sp[0], sp[0])] * (pes * r * c - len(pairs))
    a = np.array([p[0] for p in pairs], np.uint64).reshape(pes, r, c)
    b = np.array([p[1] for p in pairs], np.uint64).reshape(pes, r, c)
    return a, b


def pack(tuples: list[tuple[int, ...]], pes: int = 4, c: int = 8) -> list[np.ndarray]:
    """Operand tuples packed into (pes, R, c) raw arrays (padded with the first tuple)."""
    r = max(1, -(-len(tuples) // (pes * c)))
    tuples = tuples + [tuples[0]] * (pes * r * c - len(tuples))
    return [np.array([t[k] for t in tuples], np.uint64).reshape(pes, r, c)
            for k in range(len(tuples[0]))]  # fmt: skip


def by_flags(tuples: list[tuple[int, ...]], oracle) -> dict[int, list[tuple[int, ...]]]:  # type: ignore[no-untyped-def]
    """Group operand tuples by the oracle's flags, so that per-PE sticky status (an OR
    over elements) can still reveal a spurious or missing flag of a single element."""
    out: dict[int, list[tuple[int, ...]]] = {}
    for t in tuples:
        out.setdefault(oracle(*t)[1], []).append(t)
    return out


def ncopies(a: np.ndarray, pes: int = 4) -> np.ndarray:
    return np.broadcast_to(a, (pes, *np.shape(a)[-2:])).copy()


def same(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """Assert raw-bit equality with a readable first mismatch."""
    g = np.asarray(got).astype(np.uint64) if np.asarray(got).dtype != bool else np.asarray(got)
    w = (
        np.asarray(want).astype(np.uint64)
        if np.asarray(want).dtype != bool
        else np.asarray(want)
    )
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    if not np.array_equal(g, w):
        idx = tuple(int(i) for i in np.argwhere(g != w)[0])
        raise AssertionError(
            f"{what}: first mismatch at {idx}: got 0x{int(g[idx]):x}, want 0x{int(w[idx]):x}"
        )


def types(op: str) -> list[DataType]:
    """The legal BSTART DataTypes of ``op`` from the catalog (never spelled by hand)."""
    from ptoc.backend.isa import op as op_def

    return sorted(op_def(op).dtypes)


def ops_where(pred) -> list[str]:  # type: ignore[no-untyped-def]
    from ptoc.backend.isa import OPS

    return [m for m, o in OPS.items() if pred(o)]
