"""Errors a user can cause. Each message names the rule and the place.

``Error`` is the root of every ptoc exception (re-exported as ``ptoc.Error``).
"""

from __future__ import annotations


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
