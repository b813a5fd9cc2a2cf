"""Run-time values of the ASL interpreter.

ASL ``integer`` and ``boolean`` are Python ``int`` and ``bool``; ``bits(N)`` is
:class:`Bits`; enumeration members are :class:`Enum` (compared by name, so the model
bindings need not declare every enumeration); records are :class:`Record` or a binding's
own class implementing the small record protocol (``asl_get``/``asl_set``/``asl_copy``);
tuples are Python tuples; arrays are :class:`Array`.

ASL values have value semantics: binding a value to a variable stores a copy
(:func:`copy_value`), so mutating a variable's record in place never changes another
variable or the model state it was read from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class AslRuntimeError(Exception):
    """A dynamic error of the test program itself (type mismatch, bad slice, ...)."""


@dataclass(frozen=True, slots=True)
class Bits:
    """An ASL bit vector: ``width`` bits, ``value`` in 0 .. 2**width - 1."""

    width: int
    value: int

    def __post_init__(self) -> None:
        if self.width < 0:
            raise AslRuntimeError(f"bits({self.width}) has a negative width")
        if not 0 <= self.value < (1 << self.width):
            object.__setattr__(self, "value", self.value & ((1 << self.width) - 1))

    @classmethod
    def of(cls, text: str) -> Bits:
        """A bit-vector literal such as ``'0101'``."""
        return cls(len(text), int(text, 2) if text else 0)

    def slice(self, hi: int, lo: int) -> Bits:
        if not 0 <= lo <= hi < self.width:
            raise AslRuntimeError(f"slice [{hi}:{lo}] of a bits({self.width}) value")
        return Bits(hi - lo + 1, (self.value >> lo) & ((1 << (hi - lo + 1)) - 1))

    def with_slice(self, hi: int, lo: int, part: Bits | int) -> Bits:
        width = hi - lo + 1
        if not 0 <= lo <= hi < self.width:
            raise AslRuntimeError(f"slice [{hi}:{lo}] of a bits({self.width}) value")
        v = part.value if isinstance(part, Bits) else int(part)
        if isinstance(part, Bits) and part.width != width:
            raise AslRuntimeError(f"assigning bits({part.width}) to a {width}-bit slice")
        mask = ((1 << width) - 1) << lo
        return Bits(self.width, (self.value & ~mask) | ((v << lo) & mask))

    def signed(self) -> int:
        if self.width and self.value >> (self.width - 1):
            return self.value - (1 << self.width)
        return self.value

    def __str__(self) -> str:
        if self.width <= 8:
            return "'" + format(self.value, f"0{self.width}b") + "'" if self.width else "''"
        return f"0x{self.value:0{(self.width + 3) // 4}x}"


@dataclass(frozen=True, slots=True)
class ElementBits(Bits):
    """A 64-bit payload word read from a tile element of ``element_width`` bits.

    The ASL model keeps a whole word per element and leaves the bits above the element
    width as an implementation artefact (some handlers sign-extend, others zero-extend);
    the machine holds only the element. So a word compares equal to a zero- or
    sign-extension of the same element bits.
    """

    element_width: int = 64

    def same_element(self, other: Bits) -> bool:
        w = self.element_width
        if w >= 64 or other.width != 64:
            return self.value == other.value
        low = (1 << w) - 1
        if self.value & low != other.value & low:
            return False
        high = other.value >> w
        negative = (other.value >> (w - 1)) & 1
        return high == 0 or (negative == 1 and high == (1 << (64 - w)) - 1)


@dataclass(frozen=True, slots=True)
class Enum:
    """An enumeration member such as ``TileDataType_FP32`` (kept by name)."""

    name: str

    @property
    def type(self) -> str:
        return self.name.split("_", 1)[0]

    @property
    def member(self) -> str:
        return self.name.split("_", 1)[1] if "_" in self.name else self.name

    def __str__(self) -> str:
        return self.name


class Opaque:
    """A value with no ptoc counterpart (an ASL-internal dispatch record): comparing it
    raises :class:`OpaqueComparison`, which the interpreter reports as a skipped
    assertion."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __str__(self) -> str:
        return f"<ASL-internal: {self.reason}>"

    # an opaque record stays opaque through field and element access
    def asl_get(self, name: str) -> Opaque:
        return self

    def asl_set(self, name: str, value: object) -> None:
        pass

    def asl_index(self, i: int) -> Opaque:
        return self

    def asl_setindex(self, i: int, value: object) -> None:
        pass

    def asl_copy(self) -> Opaque:
        return self


class OpaqueComparison(Exception):
    """An assertion compared an :class:`Opaque` value."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Record:
    """A plain ASL record value (``T { f = e, ... }`` or one a binding builds)."""

    __slots__ = ("fields", "type")

    def __init__(self, type_: str, fields: dict[str, Any]) -> None:
        self.type = type_
        self.fields = fields

    def asl_get(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            raise AslRuntimeError(f"record {self.type} has no field {name}") from None

    def asl_set(self, name: str, value: Any) -> None:
        self.fields[name] = value

    def asl_copy(self) -> Record:
        return Record(self.type, {k: copy_value(v) for k, v in self.fields.items()})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and self.fields == other.fields

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={fmt(v)}" for k, v in self.fields.items())
        return f"{self.type} {{{inner}}}"


class Array:
    """An ASL array ``array [[N]] of T`` (elements start as ``default``)."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def asl_index(self, i: int) -> Any:
        if not 0 <= i < len(self.items):
            raise AslRuntimeError(f"array index {i} outside 0..{len(self.items) - 1}")
        return self.items[i]

    def asl_setindex(self, i: int, value: Any) -> None:
        if not 0 <= i < len(self.items):
            raise AslRuntimeError(f"array index {i} outside 0..{len(self.items) - 1}")
        self.items[i] = value

    def asl_copy(self) -> Array:
        return Array([copy_value(v) for v in self.items])


def copy_value(v: Any) -> Any:
    """The value a new binding of ``v`` holds (records and arrays are copied)."""
    copy = getattr(v, "asl_copy", None)
    if copy is not None:
        return copy()
    if isinstance(v, tuple):
        return tuple(copy_value(x) for x in v)
    return v


def fmt(v: Any) -> str:
    """A short human-readable rendering of a value (for failure messages)."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, tuple):
        return "(" + ", ".join(fmt(x) for x in v) + ")"
    return str(v)


def values_equal(a: Any, b: Any) -> bool:
    """ASL ``==``: integers with integers, bits with bits of the same width (an integer
    compared with bits is compared by value, a lenience the tests never rely on for
    meaning), enumerations by member name, booleans, tuples elementwise. A binding's
    view of a bits field (``asl_value``) compares as its value."""
    if isinstance(a, Opaque) or isinstance(b, Opaque):
        raise OpaqueComparison((a if isinstance(a, Opaque) else b).reason)
    a = a.asl_value() if hasattr(a, "asl_value") else a
    b = b.asl_value() if hasattr(b, "asl_value") else b
    if isinstance(a, ElementBits) and isinstance(b, Bits):
        return a.same_element(b)
    if isinstance(b, ElementBits) and isinstance(a, Bits):
        return b.same_element(a)
    if isinstance(a, Bits) and isinstance(b, Bits):
        if a.width != b.width:
            raise AslRuntimeError(f"comparing bits({a.width}) with bits({b.width})")
        return a.value == b.value
    if isinstance(a, Bits) and isinstance(b, int) and not isinstance(b, bool):
        return a.value == b
    if isinstance(b, Bits) and isinstance(a, int) and not isinstance(a, bool):
        return b.value == a
    if isinstance(a, bool) or isinstance(b, bool):
        if not (isinstance(a, bool) and isinstance(b, bool)):
            raise AslRuntimeError(f"comparing {fmt(a)} with {fmt(b)}")
        return a == b
    if isinstance(a, Enum) or isinstance(b, Enum):
        if not (isinstance(a, Enum) and isinstance(b, Enum)):
            raise AslRuntimeError(f"comparing {fmt(a)} with {fmt(b)}")
        return a.name == b.name
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)
