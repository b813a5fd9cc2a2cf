"""Optional compiled kernels for exact numerics that numpy's ufuncs cannot run fast.

ptoc is pure Python, and every result it computes has a numpy path. A few exact
computations are bound by numpy's structure rather than by the arithmetic: the D11 fold
(:mod:`.matmul`) needs K separately rounded additions per element, so in numpy it costs
two memory passes over M * N * K products (about 20x a BLAS matmul), and its fused FP32
steps take about twenty float64 operations each (about 300x). For those, a small C source
next to this module (``<name>.c``) is built on first use with the system C compiler and
loaded with :mod:`ctypes`.

* The compiler is ``$CC``, else Python's configured ``CC``, else ``cc``; the flags keep
  IEEE semantics (``-O3 -ffp-contract=off``, never ``-ffast-math``). Where the compiler
  supports ``target_clones`` the kernels carry clones for newer x86 levels (AVX2, FMA,
  AVX-512), chosen by the loader for the machine at hand.
* Libraries are cached in ``$PTOC_CACHE_DIR``, else ``$XDG_CACHE_HOME/ptoc``, else
  ``~/.cache/ptoc``, under a name that hashes the source, compiler, flags and platform,
  and are written atomically, so concurrent processes share one build (an unwritable
  cache builds into a temporary directory for the process).
* ``PTOC_COMPILED=0`` turns every kernel off.

A kernel is a fast path, never a second definition: its caller certifies it on load
against the numpy path (bit for bit, status included) and falls back to numpy when the
build or the certificate fails. :func:`status` says which.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

_SOURCE_DIR = Path(__file__).resolve().parent
_FLAGS = ["-O3", "-std=c99", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math"]
_CLONES = ["-DPTOC_CLONES"]
_BUILD_TIMEOUT = 120.0  # seconds; a compiler that hangs must not hang the executor

_libraries: dict[str, ctypes.CDLL | None] = {}
_suspended = 0
_reasons: dict[str, str] = {}


def enabled() -> bool:
    """Whether compiled kernels may be used (``PTOC_COMPILED`` is not ``0``)."""
    return os.environ.get("PTOC_COMPILED", "1").strip().lower() not in (
        "0",
        "false",
        "no",
        "off",
    )


def cache_dir() -> Path:
    """The directory of built kernels (see the module docstring)."""
    if os.environ.get("PTOC_CACHE_DIR"):
        return Path(os.environ["PTOC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ptoc"


def _compiler() -> list[str]:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(str(cc))


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Within the block every kernel is off and the numpy paths serve (benchmarks, tests)."""
    global _suspended
    _suspended += 1
    try:
        yield
    finally:
        _suspended -= 1


def load(
    name: str, certify: Callable[[ctypes.CDLL], str | None] | None = None
) -> ctypes.CDLL | None:
    """The compiled library of ``<name>.c``, or None when it cannot be used.

    ``certify`` checks a loaded library and returns None when it agrees with the numpy
    path, else the disagreement (the library is then not used). The outcome is cached
    for the process; :func:`status` gives its reason.
    """
    if _suspended:
        return None
    if name in _libraries:
        return _libraries[name]
    lib: ctypes.CDLL | None = None
    if not enabled():
        _reasons[name] = "disabled by PTOC_COMPILED=0"
    else:
        try:
            lib = ctypes.CDLL(str(_build(name)))
            problem = certify(lib) if certify is not None else None
            if problem is not None:
                lib = None
                _reasons[name] = f"self-test failed: {problem}"
            else:
                _reasons[name] = "compiled"
        except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
            lib = None
            _reasons[name] = f"not built: {exc}"
    _libraries[name] = lib
    return lib


def status(name: str) -> str:
    """How kernel ``name`` is served: ``compiled``, or why the numpy path serves it."""
    return _reasons.get(name, "not loaded yet")


def reset(name: str | None = None) -> None:
    """Forget the loaded kernel(s), so the next :func:`load` decides again (for tests)."""
    for key in [name] if name is not None else [*_libraries, *_extensions]:
        _libraries.pop(key, None)
        _extensions.pop(key, None)
        _reasons.pop(key, None)


#: extension modules (:func:`extension`) by source name, None when unusable
_extensions: dict[str, ModuleType | None] = {}


def extension(name: str) -> ModuleType | None:
    """The CPython extension module built from ``<name>.c`` with this interpreter's
    headers (its module name ``_ptoc_<name>``), or None when it cannot be built or
    loaded -- no headers, no compiler, ``PTOC_COMPILED=0`` -- and the caller keeps its
    ctypes route. An extension only marshals calls into certified kernels; it computes
    nothing a certificate would check."""
    if name in _extensions:
        return _extensions[name]
    module: ModuleType | None = None
    include = sysconfig.get_paths().get("include") or ""
    if not enabled():
        _reasons[name] = "disabled by PTOC_COMPILED=0"
    elif not (Path(include) / "Python.h").exists():
        _reasons[name] = f"not built: no Python.h in {include or 'the interpreter'}"
    else:
        try:
            link = ["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else []
            path = _build(name, ["-std=c11", f"-I{include}", *link])
            loader = importlib.machinery.ExtensionFileLoader(f"_ptoc_{name}", str(path))
            spec = importlib.util.spec_from_loader(loader.name, loader)
            assert spec is not None
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            _reasons[name] = "compiled"
        except (OSError, ImportError, subprocess.SubprocessError, RuntimeError) as exc:
            module = None
            _reasons[name] = f"not built: {exc}"
    _extensions[name] = module
    return module


def _build(name: str, flags: Sequence[str] = ()) -> Path:
    # the kernel and the headers it may include (ieee_env.h): a change to either rebuilds
    source = (_SOURCE_DIR / f"{name}.c").read_bytes() + b"".join(
        h.read_bytes() for h in sorted(_SOURCE_DIR.glob("*.h"))
    )
    cc = _compiler()
    key = hashlib.sha256()
    for part in (source, repr(cc).encode(), repr(_FLAGS).encode(), repr(list(flags)).encode()):
        key.update(part)
    key.update(f"{sys.platform}-{platform.machine()}-{sys.implementation.cache_tag}".encode())
    filename = f"{name}-{key.hexdigest()[:16]}{_suffix()}"
    directory = cache_dir()
    if (directory / filename).exists():
        return directory / filename
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass  # writable
    except OSError:  # an unwritable cache: build for this process only
        directory = Path(tempfile.mkdtemp(prefix="ptoc-kernels-"))
    target = directory / filename
    errors = []
    # target_clones needs the compiler's and the loader's support; without it the kernel
    # is built for the compiler's default target
    for extra in (_CLONES, []):
        fd, tmp = tempfile.mkstemp(prefix=f".{name}-", suffix=_suffix(), dir=directory)
        os.close(fd)
        try:
            done = subprocess.run(
                [
                    *cc,
                    *_FLAGS,
                    *flags,
                    *extra,
                    "-o",
                    tmp,
                    str(_SOURCE_DIR / f"{name}.c"),
                    "-lm",
                ],
                capture_output=True,
                text=True,
                timeout=_BUILD_TIMEOUT,
            )
            if done.returncode == 0:
                os.replace(tmp, target)  # atomic: a concurrent build replaces an equal file
                return target
            errors.append(done.stderr.strip().splitlines()[-1:] or [f"rc {done.returncode}"])
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    raise RuntimeError(f"{' '.join(cc)} failed: {errors[-1][0]}")


def _suffix() -> str:
    return (
        ".dll" if sys.platform == "win32" else ".dylib" if sys.platform == "darwin" else ".so"
    )
