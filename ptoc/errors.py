"""The exceptions of ``ptoc``: every one derives from :class:`ptoc.Error`.

Kernel-source errors (:class:`KernelError`, :class:`CompileError`) render like a
compiler diagnostic -- ``FILE:LINE:COL: error: RULE``, the source line with a caret
under the offending expression, and a hint saying what to write instead.
:class:`CompileError` is the compiler passes' own error (``ptoc.passes.diagnostics``),
which ``ptoc.compile`` places at the kernel line of the op it names; it is imported on
first use (it is an xDSL pass failure, and ``import ptoc`` does not load xDSL).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ptoc.backend.errors import AsmError, DecodeError, Error, LocatedError

if TYPE_CHECKING:
    from ptoc.passes.diagnostics import CompileError

__all__ = [
    "AsmError",
    "CompileError",
    "DecodeError",
    "Deviation",
    "Error",
    "InputError",
    "Interrupted",
    "KernelError",
    "LocatedError",
    "Mismatch",
    "OutputError",
    "ReferenceFault",
    "ToleranceError",
    "VerifyError",
]


def __getattr__(name: str) -> Any:
    if name == "CompileError":
        from ptoc.passes.diagnostics import CompileError

        return CompileError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class KernelError(LocatedError):
    """A kernel breaks a rule of the DSL or of the ISA; names the rule and the user's line."""


class ReferenceFault(KernelError):
    """The inputs break a data-dependent rule of an operation (an integer zero divisor,
    an unsorted merge list, an index out of range) while the reference evaluates it; the
    machine would raise Fault_TileLegality at the same operation."""

    kind = "fault"


class Interrupted(KeyboardInterrupt):
    """A KeyboardInterrupt that names where it happened (the command line exits 130)."""


class OutputError(Error):
    """A file or folder ptoc was asked to write cannot be written."""


class InputError(Error):
    """Arrays given to ``run``/``reference``/``verify`` do not fit the kernel's tensors."""


@dataclass(frozen=True)
class Mismatch:
    """One differing output element: its index and both values with their raw bits."""

    output: str
    index: tuple[int, ...]
    machine: Any
    reference: Any
    machine_bits: int
    reference_bits: int
    width: int  # bits per element

    def text(self) -> str:
        digits = max(self.width // 4, 1)
        idx = ", ".join(str(i) for i in self.index)
        return (
            f"{self.output}[{idx}]: machine {_value(self.machine)} "
            f"(0x{self.machine_bits:0{digits}x}), reference {_value(self.reference)} "
            f"(0x{self.reference_bits:0{digits}x})"
        )


def _value(v: Any) -> str:
    try:
        if isinstance(v, (bool, int)) or (
            getattr(v, "dtype", None) is not None and v.dtype.kind in "iub"
        ):
            return str(int(v))
        return repr(float(v))
    except (TypeError, ValueError):
        return repr(v)


class VerifyError(Error):
    """The machine's outputs differ from the reference semantics.

    ``mismatches`` lists the first differing elements (output, index, both values and
    bit patterns); ``counts`` maps each differing output to (differing, total) elements;
    ``outputs`` maps each differing output to (machine's array, compared array, mask of
    the differing elements) when the comparison raised it (``ptoc verify --report``).
    """

    outputs: dict[str, tuple[Any, Any, Any]]

    def __init__(
        self,
        kernel: str,
        mismatches: Sequence[Mismatch],
        counts: dict[str, tuple[int, int]],
        context: str = "",
    ) -> None:
        self.kernel = kernel
        self.mismatches = tuple(mismatches)
        self.counts = dict(counts)
        self.context = context
        self.outputs = {}
        super().__init__(self.render())

    def render(self) -> str:
        where = f" ({self.context})" if self.context else ""
        summary = ", ".join(
            f"{n} of {t} elements of '{o}'" for o, (n, t) in self.counts.items()
        )
        lines = [
            f"verify {self.kernel}{where}: the machine differs from the reference in {summary}"
        ]
        lines += [f"  {m.text()}" for m in self.mismatches]
        return "\n".join(lines)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kernel, self.mismatches, self.counts, self.context))


@dataclass(frozen=True)
class Deviation:
    """One output element outside the tolerance of the author's expected function."""

    output: str
    index: tuple[int, ...]
    got: Any
    expected: Any
    abs_err: float
    rel_err: float

    def text(self) -> str:
        idx = ", ".join(str(i) for i in self.index)
        return (
            f"{self.output}[{idx}]: got {_value(self.got)}, expected {_value(self.expected)}"
            f" (abs err {self.abs_err:.3g}, rel err {self.rel_err:.3g})"
        )


class ToleranceError(VerifyError):
    """The machine's outputs (bit-exact with the reference semantics) are not within
    ``rtol``/``atol`` of the author's ``expected`` function: the kernel computes
    something other than what was meant.

    ``deviations`` lists the worst elements (largest excess over the tolerance first);
    ``counts`` maps each deviating output to (deviating, total) elements;
    ``tolerances`` maps each output to its (rtol, atol).
    """

    def __init__(
        self,
        kernel: str,
        deviations: Sequence[Deviation],
        counts: dict[str, tuple[int, int]],
        tolerances: dict[str, tuple[float, float]],
        context: str = "",
        expected: str = "expected",
    ) -> None:
        self.deviations = tuple(deviations)
        self.tolerances = dict(tolerances)
        self.expected = expected
        super().__init__(kernel, (), counts, context)

    def render(self) -> str:
        where = f" ({self.context})" if self.context else ""
        parts = []
        for o, (n, t) in self.counts.items():
            r, a = self.tolerances.get(o, (0.0, 0.0))
            parts.append(f"{n} of {t} elements of '{o}' (rtol={r:g}, atol={a:g})")
        lines = [
            f"verify {self.kernel}{where}: the outputs are bit-exact with the reference "
            f"but differ from {self.expected} beyond the tolerance in {', '.join(parts)}; "
            "worst elements:"
        ]
        lines += [f"  {d.text()}" for d in self.deviations]
        return "\n".join(lines)

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            type(self),
            (self.kernel, self.deviations, self.counts, self.tolerances, self.context,
             self.expected),
        )  # fmt: skip
