"""Array files (``.npy`` and ``.npz``) read as machine or kernel inputs, validated.

One loader serves ``ptoc run FILE.s --gm ADDR=FILE`` and ``ptoc verify/run KERNEL
--inputs FILE``. It reads the NPY format itself instead of calling ``numpy.load``, so
that every property of a file is checked before any memory is allocated for it:

* the file is a regular file that starts with the NPY magic (``.npy``) or is a zip
  archive of ``NAME.npy`` members (``.npz``), whatever its name;
* the header is at most :data:`MAX_HEADER_BYTES` long and is a literal dict with
  ``descr``, ``fortran_order`` and ``shape`` (parsed by ``ast.literal_eval``, which
  evaluates no code);
* the element type is one the machine can hold (:func:`array_dtype_rule`): object
  arrays (pickles, never loaded), complex, datetime, strings and structured records
  are refused by name;
* the data the header declares is exactly what the file (or zip member) holds: a
  truncated file, trailing bytes and a header that declares more than
  ``max_bytes`` are refused before reading.

Every refusal is one :class:`ArrayFileError` line naming the file, the member and the
rule. Arrays come back C-contiguous, little-endian and writable.
"""

from __future__ import annotations

import ast
import math
import os
import stat
import sys
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from typing import IO

import numpy as np

from ptoc.backend.errors import Error

#: NPY magic string (format versions 1.0, 2.0 and 3.0 follow it)
NPY_MAGIC = b"\x93NUMPY"
#: longest header accepted; numpy's own reader stops at 10000 bytes too
MAX_HEADER_BYTES = 10000
#: default cap on the bytes one file may declare (callers pass a tighter one, e.g. GM)
DEFAULT_MAX_BYTES = 1 << 30
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


class ArrayFileError(Error):
    """An unreadable, malformed or unsupported ``.npy`` / ``.npz`` file."""


def array_dtype_rule(dt: np.dtype) -> str | None:
    """Why the machine cannot hold elements of ``dt``, or None when it can.

    Accepted: bool, integers, floats, the ml_dtypes formats and plain unstructured bytes
    (``V<n>``, which is how NPY stores an ml_dtypes array such as bfloat16).
    """
    if dt.hasobject:
        return f"{dt} is an object array (Python objects, whose bytes are pointers)"
    if dt.names is not None or dt.subdtype is not None:
        return f"{dt} is a structured or sub-array type, not one element type"
    kind = dt.kind
    if kind in "biufV":
        return None
    what = {
        "c": "a complex type (the machine has no complex elements)",
        "M": "a datetime type",
        "m": "a timedelta type",
        "U": "a string type",
        "S": "a bytes-string type",
    }.get(kind, "not a numeric type")
    return f"{dt} is {what}"


def little_endian(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous array whose bytes are little-endian (values unchanged)."""
    dt = a.dtype
    if dt.byteorder == ">" or (dt.byteorder == "=" and sys.byteorder == "big"):
        a = a.astype(dt.newbyteorder("<"))
    # not np.ascontiguousarray: that turns a 0-d array into a 1-d one
    return a if a.flags.c_contiguous else np.array(a, order="C")


@dataclass(frozen=True)
class ArrayFile:
    """What one file held: ``arrays`` by name (an ``.npz`` member name without
    ``.npy``; the single array of an ``.npy`` under ``""``) and which format it was."""

    path: str
    arrays: dict[str, np.ndarray]
    npz: bool

    def names(self) -> str:
        return ", ".join(sorted(self.arrays)) or "(none)"


def load(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> ArrayFile:
    """Read an ``.npy`` or ``.npz`` file (recognised by its content); ArrayFileError."""
    size = _regular_size(path)
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if not head:
                raise ArrayFileError(f"{path}: the file is empty (expected .npy or .npz)")
            if head.startswith(NPY_MAGIC):
                f.seek(0)
                return ArrayFile(path, {"": _read_npy(f, size, path, max_bytes)}, False)
    except OSError as e:
        raise ArrayFileError(f"{path}: cannot read: {e.strerror or e}") from None
    if head[:4] in _ZIP_MAGICS:
        return ArrayFile(path, _read_npz(path, max_bytes), True)
    raise ArrayFileError(
        f"{path}: not a .npy or .npz file (it starts with {head[:8]!r}, not the NPY magic "
        "or a zip header)"
    )


def load_one(
    path: str, key: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> np.ndarray:
    """The one array of an ``.npy``, or of an ``.npz`` (member ``key`` when it holds
    several); ArrayFileError otherwise."""
    f = load(path, max_bytes)
    if key is not None:
        if not f.npz:
            raise ArrayFileError(f"{path}: an .npy file has no member {key!r}")
        if key not in f.arrays:
            raise ArrayFileError(f"{path} has no array {key!r} (it holds {f.names()})")
        return f.arrays[key]
    if len(f.arrays) != 1:
        raise ArrayFileError(
            f"{path} holds {len(f.arrays)} arrays ({f.names()}); name one as {path}:NAME"
        )
    return next(iter(f.arrays.values()))


def _regular_size(path: str) -> int:
    try:
        st = os.stat(path)
    except OSError as e:
        raise ArrayFileError(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:  # an embedded NUL byte in the name
        raise ArrayFileError(f"{path!r}: cannot read: {e}") from None
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ArrayFileError(f"{path}: cannot read: it is {what}")
    return st.st_size


def _read_exact(f: IO[bytes], n: int, where: str, what: str) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise ArrayFileError(f"{where}: truncated in the {what} ({len(data)} of {n} bytes)")
    return data


def _read_npy(f: IO[bytes], size: int, where: str, max_bytes: int) -> np.ndarray:
    """One NPY stream of ``size`` bytes, validated before its data is read."""
    magic = _read_exact(f, 8, where, "NPY magic")
    if not magic.startswith(NPY_MAGIC):
        raise ArrayFileError(f"{where}: not an NPY array (no \\x93NUMPY magic)")
    major, minor = magic[6], magic[7]
    if (major, minor) not in ((1, 0), (2, 0), (3, 0)):
        raise ArrayFileError(f"{where}: unknown NPY format version {major}.{minor}")
    width = 2 if major == 1 else 4
    hlen = int.from_bytes(_read_exact(f, width, where, "header length"), "little")
    if hlen > MAX_HEADER_BYTES:
        raise ArrayFileError(
            f"{where}: the header declares {hlen} bytes (at most {MAX_HEADER_BYTES})"
        )
    raw = _read_exact(f, hlen, where, "header")
    shape, fortran, dt = _header(raw, major, where)
    rule = array_dtype_rule(dt)
    if rule is not None:
        raise ArrayFileError(f"{where}: {rule}")
    nbytes = math.prod(shape) * dt.itemsize
    if nbytes > max_bytes:
        raise ArrayFileError(
            f"{where}: shape {shape} of {dt} declares {nbytes} bytes (at most {max_bytes})"
        )
    left = size - (8 + width + hlen)
    if nbytes != left:
        how = "truncated" if nbytes > left else "has trailing bytes"
        raise ArrayFileError(
            f"{where}: {how}: shape {shape} of {dt} declares {nbytes} bytes of data, the "
            f"file holds {max(left, 0)}"
        )
    data = _read_exact(f, nbytes, where, "data")
    a = np.frombuffer(data, dt).reshape(shape, order="F" if fortran else "C")
    return little_endian(a).copy()


def _header(raw: bytes, major: int, where: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    try:
        text = raw.decode("utf-8" if major >= 3 else "latin1")
        with warnings.catch_warnings():
            # an invalid escape such as '\q' is a warning today and an error tomorrow:
            # refuse it rather than print a warning from the parser
            warnings.simplefilter("error")
            d = ast.literal_eval(text)
    except (
        ValueError, SyntaxError, MemoryError, RecursionError, UnicodeDecodeError, Warning
    ):  # fmt: skip
        raise ArrayFileError(f"{where}: the NPY header is not a literal dict") from None
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        raise ArrayFileError(
            f"{where}: the NPY header must hold exactly descr, fortran_order and shape"
        )
    shape, fortran = d["shape"], d["fortran_order"]
    if not isinstance(shape, tuple) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise ArrayFileError(
            f"{where}: the NPY shape {str(shape)[:40]} is not a tuple of sizes"
        )
    if len(shape) > 32:
        raise ArrayFileError(f"{where}: the NPY shape has {len(shape)} dimensions (max 32)")
    if not isinstance(fortran, bool):
        raise ArrayFileError(f"{where}: the NPY fortran_order is not True or False")
    try:
        dt = np.lib.format.descr_to_dtype(d["descr"])
    except (TypeError, ValueError, KeyError, IndexError, RecursionError):
        raise ArrayFileError(
            f"{where}: the NPY descr {str(d['descr'])[:40]!r} is not a dtype"
        ) from None
    return shape, fortran, dt


def _read_npz(path: str, max_bytes: int) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    total = 0
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if not infos:
                raise ArrayFileError(f"{path}: the .npz holds no arrays")
            for info in infos:
                name = info.filename
                where = f"{path}:{name}"
                if not name.endswith(".npy") or info.is_dir():
                    raise ArrayFileError(f"{where}: an .npz member must be NAME.npy")
                key = name[: -len(".npy")]
                if key in out:
                    raise ArrayFileError(f"{path}: the .npz holds {name} twice")
                if info.file_size > max_bytes - total + MAX_HEADER_BYTES + 16:
                    raise ArrayFileError(
                        f"{where}: the member declares {info.file_size} bytes (at most "
                        f"{max_bytes} in all)"
                    )
                with z.open(info) as f:
                    a = _read_npy(f, info.file_size, where, max_bytes - total)
                    if f.read(1):  # also makes zipfile check the member's CRC
                        raise ArrayFileError(f"{where}: more data than the zip entry declares")
                total += a.nbytes
                out[key] = a
    except ArrayFileError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as e:
        raise ArrayFileError(f"{path}: not a readable .npz (zip) file: {_why(e)}") from None
    except NotImplementedError as e:
        raise ArrayFileError(f"{path}: unsupported zip feature: {_why(e)}") from None
    except RuntimeError as e:  # an encrypted member
        raise ArrayFileError(f"{path}: {_why(e)}") from None
    except OSError as e:
        raise ArrayFileError(f"{path}: cannot read: {e.strerror or _why(e)}") from None
    return out


def _why(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text[:120]


__all__ = [
    "DEFAULT_MAX_BYTES",
    "ArrayFile",
    "ArrayFileError",
    "array_dtype_rule",
    "little_endian",
    "load",
    "load_one",
]
