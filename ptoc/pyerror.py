"""Python exceptions raised by kernel code, as one located diagnostic.

A kernel body is ordinary Python that runs once while it is traced, so a misspelt name
(``NameError``), a function ``ptoc.lang`` does not have (``pt.exp2``), a wrong keyword
(``pt.load(x, row=...)``) or a ``1 / 0`` raise plain Python exceptions. They become a
:class:`KernelError` at the innermost line of the author's own code, naming the
exception's type and message, with a suggestion where a close spelling exists.
"""

from __future__ import annotations

import builtins
import difflib
import inspect
import re
from types import ModuleType, TracebackType
from typing import Any

from .errors import KernelError
from .source import SourceLoc, is_library_frame


def exception_text(e: BaseException) -> str:
    """``Type: message`` of any exception, even one whose ``__str__`` raises."""
    name = type(e).__name__
    try:
        text = str(e)
    except Exception as inner:  # a user exception with a broken __str__
        return f"{name} (its message cannot be shown: __str__ raised {type(inner).__name__})"
    return f"{name}: {text}" if text else name


def raised_at(e: BaseException) -> str:
    """``file:line: `` of where user code raised ``e`` (empty when no user frame is in
    its traceback): the prefix of a one-line error about a user callback."""
    loc, _ = traceback_location(e.__traceback__)
    return f"{loc}: " if loc else ""


def traceback_location(tb: TracebackType | None) -> tuple[SourceLoc | None, bool]:
    """The innermost traceback entry outside ptoc, and whether the exception was raised
    inside ptoc itself (below that entry)."""
    found: SourceLoc | None = None
    inside = False
    while tb is not None:
        if is_library_frame(tb.tb_frame):
            inside = found is not None
        else:
            found, inside = _tb_location(tb), False
        tb = tb.tb_next
    return found, inside


def _tb_location(tb: TracebackType) -> SourceLoc:
    code = tb.tb_frame.f_code
    line = tb.tb_lineno
    try:
        pos = list(code.co_positions())[tb.tb_lasti // 2]
        start, end, col, end_col = pos
        if start is not None:
            return SourceLoc(code.co_filename, start, col or 0, end or start, end_col or 0)
    except (IndexError, ValueError):  # no position table (-X no_debug_ranges)
        pass
    return SourceLoc(code.co_filename, line)


def kernel_body_error(e: BaseException, fn: Any, kernel: str) -> KernelError:
    """The KernelError for exception ``e`` raised while tracing ``fn`` (kernel ``kernel``)."""
    loc, inside = traceback_location(e.__traceback__)
    hint = suggestion(e, fn)
    if inside and hint is None:
        hint = (
            "raised inside ptoc while it ran this call; if the arguments are right, this "
            "is a ptoc bug: please report it with the kernel"
        )
    err = KernelError(f"{exception_text(e)} (while tracing the kernel {kernel})", loc, hint)
    err.original = e  # for debugging from Python
    return err


# ---------------------------------------------------------------- suggestions

_KWARG = re.compile(r"^(?P<fn>\w+)\(\) got an unexpected keyword argument '(?P<kw>\w+)'")
_CALL = re.compile(r"^(?P<fn>\w+)\(\) (missing|takes|got)")


def suggestion(e: BaseException, fn: Any) -> str | None:
    """A hint for the common slips: a close name, keyword or attribute; else None."""
    try:
        name = getattr(e, "name", None)
        if isinstance(e, NameError) and isinstance(name, str):
            return _name_hint(name, fn)
        if isinstance(e, AttributeError) and isinstance(name, str):
            return _attribute_hint(name, getattr(e, "obj", None))
        if isinstance(e, TypeError):
            return _call_hint(str(e))
        if isinstance(e, SystemExit):
            return "a kernel body runs once, while ptoc traces it; it cannot exit the program"
    except Exception:  # a hint is a courtesy: never let it hide the error itself
        return None
    return None


def _lang() -> ModuleType:
    import ptoc.lang

    return ptoc.lang


def _public(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    return list(names) if names else [n for n in vars(module) if not n.startswith("_")]


def _close(word: str, options: list[str]) -> str | None:
    hits = difflib.get_close_matches(word, options, n=1, cutoff=0.7)
    return hits[0] if hits else None


def _name_hint(name: str, fn: Any) -> str | None:
    lang = _lang()
    if name in _public(lang):
        return f"did you mean pt.{name}? (import ptoc.lang as pt)"
    scope: list[str] = list(vars(builtins))
    code = getattr(fn, "__code__", None)
    if code is not None:
        scope += list(code.co_varnames) + list(code.co_freevars)
    scope += list(getattr(fn, "__globals__", {}))
    hit = _close(name, scope)
    if hit is not None:
        return f"did you mean {hit}?"
    hit = _close(name, _public(lang))
    return f"did you mean pt.{hit}?" if hit is not None else None


def _attribute_hint(name: str, obj: Any) -> str | None:
    import ptoc

    lang = _lang()
    if obj is lang:
        hit = _close(name, _public(lang))
        listed = "docs/reference.md lists every ptoc.lang function"
        return f"did you mean pt.{hit}? ({listed})" if hit else listed
    if obj is ptoc:
        hit = _close(name, list(ptoc.__all__))
        if hit is None and name in _public(lang):
            return f"{name} is in ptoc.lang: pt.{name} (import ptoc.lang as pt)"
        return f"did you mean ptoc.{hit}?" if hit else None
    from .tile import Tile

    if isinstance(obj, Tile):
        if name in _public(lang):
            return f"{name} is a function of ptoc.lang: pt.{name}(t)"
        hit = _close(name, [n for n in dir(Tile) if not n.startswith("_")])
        return f"did you mean t.{hit}?" if hit else None
    return None


def _call_hint(message: str) -> str | None:
    m = _KWARG.match(message) or _CALL.match(message)
    if m is None:
        return None
    lang = _lang()
    name = m["fn"]
    target = getattr(lang, name, None) if name in _public(lang) else None
    if target is None:
        return None
    shown = f"pt.{name}{plain_signature(target)}"
    kw = m.groupdict().get("kw")
    if kw:
        hit = _close(kw, list(inspect.signature(target).parameters))
        if hit is not None:
            return f"did you mean {hit}=? The signature is {shown}"
    return f"the signature is {shown}"


def plain_signature(fn: Any) -> str:
    """``(t, rows=None, cols=None, *, step=1)``: a signature without annotations."""
    sig = inspect.signature(fn)
    plain = sig.replace(
        parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
        return_annotation=sig.empty,
    )
    return str(plain)
