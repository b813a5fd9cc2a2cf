"""Fuzz target: input files (``.npy`` / ``.npz``).

Files are drawn as valid NPY/NPZ of random accepted arrays (every numeric kind, 0-d to
3-d, both byte orders, C and Fortran order, format versions 1-3, stored and deflated
zips), then mutated: truncated, bit-flipped, spliced, their header rewritten (shape,
descr), or replaced by random bytes behind a magic. The loader must return the arrays or
raise one ``ArrayFileError`` line naming the file; a file that was not mutated must load
back with the same values bit for bit; and ``ptoc run --gm`` must turn any of them into
exit status 0 or 2 with one line, never a traceback.
"""

from __future__ import annotations

import io
import itertools
import tempfile
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.runtime.arrays import ArrayFileError, array_dtype_rule, little_endian, load
from ptoc.runtime.cli import run_main

from .budget import fuzz

#: a warning printed from library internals is a defect too
pytestmark = pytest.mark.filterwarnings("error")

_DIR = Path(tempfile.mkdtemp(prefix="ptoc-fuzz-inputs-"))
_DTYPES = [
    "<f4", ">f4", "<f8", "<f2", "|b1", "|i1", "<i2", ">i4", "<i8", "|u1", "<u2", "<u4",
    ">u8", ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, "|V3",
]  # fmt: skip
_DESCRS = [
    b"'<f4'", b"'|O'", b"'<c8'", b"'<M8[D]'", b"'<U3'", b"[('a', '<f4')]", b"('<f4', (2,))",
    b"'<q9'", b"1", b"None", b"'|V0'", b"{'x': 1}", b"(" * 200 + b")" * 200,
]  # fmt: skip
_BAD_NAMES = ["x", "d/", "x.npy.gz", "../x.npy"]


@st.composite
def arrays(draw: st.DrawFn) -> np.ndarray:
    dt = np.dtype(draw(st.sampled_from(_DTYPES)))
    shape = tuple(draw(st.lists(st.integers(0, 5), max_size=3)))
    n = int(np.prod(shape)) * dt.itemsize
    a = np.frombuffer(draw(st.binary(min_size=n, max_size=n)), dtype=dt).reshape(shape)
    return a.T if draw(st.booleans()) else a  # a transposed array is saved Fortran-order


def _npy(a: np.ndarray, version: tuple[int, int] | None) -> bytes:
    b = io.BytesIO()
    np.lib.format.write_array(b, a, version=version, allow_pickle=False)
    return b.getvalue()


Case = tuple[bytes, dict[str, np.ndarray] | None]


@st.composite
def files(draw: st.DrawFn) -> Case:
    """``(data, expected)``: ``expected`` is what a valid file holds (None if mutated)."""
    version = draw(st.sampled_from([None, (1, 0), (2, 0), (3, 0)]))
    if draw(st.booleans()):
        a = draw(arrays())
        data, expected = _npy(a, version), {"": a}
    else:
        names = draw(st.lists(st.sampled_from(["x", "y", "d/z"]), min_size=1, max_size=3,
                              unique=True))  # fmt: skip
        expected = {n: draw(arrays()) for n in names}
        b = io.BytesIO()
        method = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
        with zipfile.ZipFile(b, "w", method) as z:
            for n, a in expected.items():
                z.writestr(f"{n}.npy", _npy(a, version))
            if draw(st.integers(0, 5)) == 0:
                z.writestr(draw(st.sampled_from(_BAD_NAMES)), b"\x93NUMPY")
                expected = {}  # the loader must refuse the member
        data = b.getvalue()
    buf = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["cut", "flip", "splice", "shape", "descr", "magic"]))
        i = draw(st.integers(0, max(len(buf) - 1, 0)))
        if op == "cut":
            del buf[i:]
        elif op == "flip" and buf:
            buf[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "splice":
            buf[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "shape":
            n = str(draw(st.sampled_from([0, 1, 7, 10**6, 10**15, -1]))).encode()
            buf = bytearray(bytes(buf).replace(b"'shape': (", b"'shape': (" + n + b", ", 1))
        elif op == "descr":
            d = draw(st.sampled_from(_DESCRS))
            buf = bytearray(bytes(buf).replace(b"'descr': ", b"'descr': " + d + b", 'q': ", 1))
        else:
            magic = draw(st.sampled_from([b"\x93NUMPY", b"PK\x03\x04", b"PK\x05\x06"]))
            buf = bytearray(magic + draw(st.binary(max_size=40)))
    if bytes(buf) != data or not expected:
        return bytes(buf), None
    return data, expected


_SLOTS = itertools.cycle(range(32))


def _path(data: bytes) -> str:
    p = _DIR / f"f{next(_SLOTS)}.bin"
    p.write_bytes(data)
    return str(p)


@fuzz(200)
@given(files())
def test_input_files(case: Case) -> None:
    data, expected = case
    path = _path(data)
    try:
        f = load(path)
    except ArrayFileError as e:
        msg = str(e)
        assert msg.startswith(path) and "\n" not in msg and len(msg) < 400, msg
        assert expected is None, msg  # a valid file is never refused
        return
    for a in f.arrays.values():
        assert array_dtype_rule(a.dtype) is None and a.flags.c_contiguous
        assert a.dtype.byteorder in "=|<" and a.flags.writeable
    if expected is not None:
        assert set(f.arrays) == set(expected)
        for k, want in expected.items():
            got, ref = f.arrays[k], little_endian(want)
            assert got.shape == ref.shape and got.dtype.itemsize == ref.dtype.itemsize
            # an ml_dtypes array is stored as raw bytes (V2 for bfloat16)
            assert got.dtype.kind == "V" if ref.dtype.kind == "V" else got.dtype == ref.dtype
            assert got.tobytes() == ref.tobytes()


_PROGRAM = _DIR / "p.s"
_PROGRAM.write_text("BSTART.STD FALL\nc.movi 1, ->a0\nBSTOP\n")


@fuzz(40)
@given(files())
def test_input_files_through_ptoc_run(case: Case) -> None:
    path = _path(case[0])
    out, err = io.StringIO(), io.StringIO()
    argv = [str(_PROGRAM), "--machine", "gm_size=64K", "--gm", f"0x100={path}"]
    code = run_main(argv, out, err)
    assert code in (0, 2), err.getvalue()
    if code == 2:
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue()
    else:
        assert case[1] is None or len(case[1]) == 1
