"""Load kernels from a Python file named on the command line: ``FILE.py::KERNEL``."""

from __future__ import annotations

import difflib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from .errors import Error, Interrupted
from .kernel import Kernel
from .pyerror import exception_text


class LoadError(Error):
    """A kernel file that cannot be read or imported, or a kernel name it lacks."""


def import_file(path: str | Path) -> ModuleType:
    """Execute a kernel file as a module (its folder is importable while it runs)."""
    p = Path(path)
    if p.suffix != ".py":
        raise LoadError(f"{path}: a kernel file is a Python file (FILE.py::KERNEL)")
    if not p.is_file():
        raise LoadError(f"{path}: no such file")
    name = f"ptoc_kernels_{abs(hash(str(p.resolve())))}_{p.stem}"
    spec = importlib.util.spec_from_file_location(name, p)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(p.parent.resolve()))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Error:  # KernelError and friends already name the place
        raise
    except KeyboardInterrupt as e:
        where = _where(p, e)
        raise Interrupted(f"{where}: interrupted while importing the kernel file") from None
    except SystemExit as e:  # sys.exit() at the top level of a kernel file
        raise LoadError(
            f"{_where(p, e)}: the kernel file called sys.exit({e.code!r}) while it was "
            "imported; a kernel file only defines kernels (put script code under "
            "if __name__ == '__main__':)"
        ) from None
    except BaseException as e:
        raise LoadError(_user_error(p, e)) from None
    finally:
        sys.path.remove(str(p.parent.resolve()))
    return module


def _where(path: Path, e: BaseException) -> str:
    """``FILE:LINE`` of the innermost frame of the user's file in ``e``'s traceback."""
    line = 0
    for frame in traceback.extract_tb(e.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno or 0
    return f"{path}:{line}" if line else str(path)


def _user_error(path: Path, e: BaseException) -> str:
    """``FILE:LINE: Type: message`` at the innermost frame of the user's file."""
    if isinstance(e, SyntaxError) and e.filename:
        return f"{e.filename}:{e.lineno}: SyntaxError: {e.msg}"
    return f"{_where(path, e)}: importing the kernel file failed: {exception_text(e)}"


def kernels_in(module: ModuleType) -> dict[str, Kernel]:
    """The kernels a module defines, by name, in definition order."""
    return {k: v for k, v in vars(module).items() if isinstance(v, Kernel)}


def load_kernel(spec: str) -> Kernel:
    """The kernel named by ``FILE.py::KERNEL`` (or ``FILE.py`` when it has exactly one)."""
    path, sep, name = spec.partition("::")
    found = kernels_in(import_file(path))
    if not found:
        raise LoadError(f"{path}: defines no @ptoc.kernel function")
    if not sep:
        if len(found) > 1:
            raise LoadError(
                f"{path} defines {len(found)} kernels; name one: "
                + ", ".join(f"{path}::{k}" for k in found)
            )
        return next(iter(found.values()))
    if name not in found:
        close = difflib.get_close_matches(name, list(found), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise LoadError(
            f"{path} has no kernel '{name}'{hint}; its kernels are {', '.join(found)}"
        )
    return found[name]
