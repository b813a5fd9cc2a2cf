"""Source locations of kernel code: which user line an operation came from, and the
caret excerpt every diagnostic shows.

The location of a traced operation is the innermost Python frame that is *not* inside
the ptoc package (the ``ptoc``, ``dialects``, ``passes``, ``backend`` and ``runtime``
folders), so a helper function the kernel author wrote is reported at its own line,
while ``ptoc.lang`` and the dialect builders never are.
"""

from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import FrameType


@dataclass(frozen=True)
class SourceLoc:
    """A span of Python source: 1-based ``line``, 0-based ``col`` .. ``end_col``."""

    file: str
    line: int
    col: int = 0
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"

    def excerpt(self) -> str:
        """The source line and a caret under the span (empty when the file is unreadable)."""
        text = linecache.getline(self.file, self.line).rstrip("\n")
        if not text.strip():
            return ""
        indent = len(text) - len(text.lstrip())
        shown = text.strip()
        start = max(self.col - indent, 0)
        end = self.end_col - indent if self.end_line == self.line else len(shown)
        end = min(max(end, start + 1), len(shown)) if start < len(shown) else start + 1
        return f"    {shown}\n    {' ' * start}{'^' * (end - start)}"


@cache
def _package_roots() -> tuple[str, ...]:
    """The folders whose frames belong to ptoc itself (editable and wheel installs)."""
    here = Path(__file__).resolve().parent
    roots = [here] + [
        here.parent / name for name in ("dialects", "passes", "backend", "runtime")
    ]
    return tuple(str(r) + "/" for r in roots)


def is_library_frame(frame: FrameType) -> bool:
    name = frame.f_code.co_filename
    return name.startswith(_package_roots()) or name.startswith("<frozen ")


def frame_location(frame: FrameType) -> SourceLoc:
    """The span of the instruction ``frame`` is executing (Python 3.11 positions)."""
    code = frame.f_code
    line, end_line, col, end_col = frame.f_lineno, frame.f_lineno, 0, 0
    try:
        pos = list(code.co_positions())[frame.f_lasti // 2]
        if pos[0] is not None:
            line, end_line, col, end_col = (p if p is not None else 0 for p in pos)
    except (IndexError, ValueError):  # no position table (e.g. -X no_debug_ranges)
        pass
    return SourceLoc(code.co_filename, line, col, end_line, end_col)


def user_location(depth: int = 1) -> SourceLoc | None:
    """The location of the innermost frame outside ptoc, starting ``depth`` frames up."""
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None and is_library_frame(frame):
        frame = frame.f_back
    return None if frame is None else frame_location(frame)


def def_location(fn: object) -> SourceLoc | None:
    """The ``def`` line of a function (where decoration-time errors point)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    line = code.co_firstlineno
    # point at the ``def`` keyword, not at a decorator above it
    for k in range(line, line + 50):
        text = linecache.getline(code.co_filename, k)
        if not text:
            break
        stripped = text.lstrip()
        if stripped.startswith(("def ", "async def ")):
            col = len(text) - len(stripped)
            return SourceLoc(code.co_filename, k, col, k, len(text.rstrip()))
    return SourceLoc(code.co_filename, line)


def param_location(fn: object, name: str) -> SourceLoc | None:
    """The span of parameter ``name`` (with its annotation) in ``fn``'s ``def``."""
    import ast
    import inspect
    import textwrap

    try:
        lines, first = inspect.getsourcelines(fn)  # type: ignore[arg-type]
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, SyntaxError, TypeError):
        return None
    indent = len(lines[0]) - len(lines[0].lstrip())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if a.arg == name:
                    line = first + a.lineno - 1
                    end = first + (a.end_lineno or a.lineno) - 1
                    return SourceLoc(
                        fn.__code__.co_filename,  # type: ignore[attr-defined]
                        line,
                        a.col_offset + indent,
                        end,
                        (a.end_col_offset or 0) + indent,
                    )
            return None
    return None
