"""Errors a user can cause. Each message names the rule and the place.

``Error`` is the root of every ptoc exception (re-exported as ``ptoc.Error``).
"""

from __future__ import annotations

from typing import Any, Protocol


class Error(Exception):
    """Root of every error ptoc reports to a user."""


class AsmError(Error):
    """Bad assembly text: ``FILE:LINE: message``."""

    def __init__(self, message: str, line: int = 0, file: str = "<asm>", text: str = ""):
        self.message = message
        self.line = line
        self.file = file
        self.text = text
        super().__init__(self.render())

    def render(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else self.message


class DecodeError(Error):
    """A binary parcel that no form matches: names the byte offset and the value."""

    def __init__(self, offset: int, value: int, bits: int, message: str, file: str = ""):
        self.offset = offset
        self.value = value
        self.bits = bits
        self.message = message
        self.file = file
        where = f"{file}:" if file else ""
        digits = max(bits // 4, 2)
        super().__init__(f"{where}offset 0x{offset:x}: word 0x{value:0{digits}x}: {message}")


class EncodeError(Error):
    """A command whose field values cannot be encoded."""


class SourceSpan(Protocol):
    """Where in a source file something is: ``str()`` gives ``FILE:LINE:COL`` and
    :meth:`excerpt` the source line with a caret under the span (``ptoc.source.SourceLoc``
    is the one the front end makes)."""

    file: str
    line: int
    col: int  # 0-based

    def excerpt(self) -> str: ...


class LocatedError(Error):
    """An error at a place in a kernel's source, rendered like a compiler diagnostic:
    ``FILE:LINE:COL: error: MESSAGE``, the source line with a caret, then ``hint: ...``.

    ``loc`` may be None when the place is unknown (the message is then shown alone)."""

    kind = "error"

    def __init__(
        self, message: str, loc: SourceSpan | None = None, hint: str | None = None
    ) -> None:
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self.render())

    @property
    def file(self) -> str | None:
        return self.loc.file if self.loc else None

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc else None

    @property
    def col(self) -> int | None:
        """1-based column of the offending expression."""
        return self.loc.col + 1 if self.loc else None

    def render(self) -> str:
        head = f"{self.loc}: {self.kind}: {self.message}" if self.loc else self.message
        parts = [head]
        excerpt = self.loc.excerpt() if self.loc else ""
        if excerpt:
            parts.append(excerpt)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (multiprocessing, pytest-xdist)
        return (type(self), (self.message, self.loc, self.hint))
