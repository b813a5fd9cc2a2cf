"""The array-file loader (``ptoc.runtime.arrays``): what it accepts, and one line for
every file it refuses (never a numpy or zipfile traceback, never an unpickled object)."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptoc.runtime import Machine
from ptoc.runtime.arrays import ArrayFileError, array_dtype_rule, load, load_one
from ptoc.runtime.memory import GMError


def _npy(a: np.ndarray, **kw) -> bytes:
    b = io.BytesIO()
    np.save(b, a, **kw)
    return b.getvalue()


def _write(tmp: Path, name: str, data: bytes) -> str:
    p = tmp / name
    p.write_bytes(data)
    return str(p)


def _header(descr: str, shape: str, fortran: str = "False", version: int = 1) -> bytes:
    text = f"{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}"
    body = text.encode() + b" " * (63 - len(text) % 64) + b"\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body
    return b"\x93NUMPY" + bytes([version, 0]) + len(body).to_bytes(4, "little") + body


# ---------------------------------------------------------------- accepted


@pytest.mark.parametrize(
    "a",
    [
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.arange(12, dtype=np.int8).reshape(4, 3),
        np.array([True, False]),
        np.zeros((0, 5), np.uint16),
        np.array(7.5),  # a 0-d array
        np.arange(6, dtype=np.float64).reshape(2, 3).T,  # saved in Fortran order
    ],
    ids=["f32", "s8", "bool", "empty", "0d", "fortran"],
)
def test_npy_round_trips(tmp_path: Path, a: np.ndarray) -> None:
    got = load_one(_write(tmp_path, "a.npy", _npy(a)))
    assert got.dtype == a.dtype and got.shape == a.shape
    assert np.array_equal(got, a) and got.flags.c_contiguous and got.flags.writeable


def test_big_endian_values_are_kept_and_stored_little_endian(tmp_path: Path) -> None:
    a = np.array([1.5, -2.0, 3.25], dtype=">f4")
    got = load_one(_write(tmp_path, "be.npy", _npy(a)))
    assert got.dtype == np.dtype("<f4") and np.array_equal(got, a)


def test_ml_dtypes_arrays_load_as_raw_bytes(tmp_path: Path) -> None:
    a = np.array([1.0, -0.5, 3.0], dtype=ml_dtypes.bfloat16)
    got = load_one(_write(tmp_path, "bf.npy", _npy(a)))
    assert got.dtype == np.dtype("V2")
    assert np.array_equal(got.view(ml_dtypes.bfloat16), a)


def test_format_versions_2_and_3(tmp_path: Path) -> None:
    data = np.arange(4, dtype="<i4").tobytes()
    for v in (2, 3):
        p = _write(tmp_path, f"v{v}.npy", _header("'<i4'", "(4,)", version=v) + data)
        assert np.array_equal(load_one(p), np.arange(4))


def test_npz_members_by_name(tmp_path: Path) -> None:
    p = tmp_path / "two.npz"
    np.savez(p, a=np.ones(3, np.float32), b=np.arange(4, dtype=np.int16))
    f = load(str(p))
    assert f.npz and sorted(f.arrays) == ["a", "b"]
    assert np.array_equal(load_one(str(p), "b"), np.arange(4))
    with pytest.raises(ArrayFileError, match=r"holds 2 arrays \(a, b\); name one"):
        load_one(str(p))
    with pytest.raises(ArrayFileError, match="has no array 'c'"):
        load_one(str(p), "c")
    q = tmp_path / "c.npz"
    np.savez_compressed(q, x=np.arange(100, dtype=np.uint8))
    assert np.array_equal(load_one(str(q)), np.arange(100))


def test_content_not_name_decides_the_format(tmp_path: Path) -> None:
    p = _write(tmp_path, "really_npy.npz", _npy(np.arange(3)))
    assert not load(p).npz


# ---------------------------------------------------------------- refused

GOOD = _npy(np.arange(64, dtype=np.float32).reshape(8, 8))


def _zip(members: dict[str, bytes]) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return b.getvalue()


BAD_FILES = [
    ("empty", b"", "the file is empty"),
    ("text", b"hello world\n", "not a .npy or .npz file"),
    ("truncated data", GOOD[:200], "truncated: shape (8, 8) of float32 declares 256 bytes"),
    ("truncated header", GOOD[:40], "truncated in the header"),
    ("magic only", GOOD[:6], "truncated in the NPY magic"),
    ("trailing bytes", GOOD + b"\0" * 8, "has trailing bytes"),
    ("huge declared", _header("'<f4'", "(1000000000000,)"), "declares 4000000000000 bytes"),
    ("huge header", b"\x93NUMPY\x02\x00" + (1 << 30).to_bytes(4, "little"), "header declares"),
    ("bad version", b"\x93NUMPY\x07\x00" + GOOD[8:], "unknown NPY format version 7.0"),
    ("header not a dict", _header("'<f4'", "(4,)").replace(b"{", b"["), "not a literal dict"),
    ("header code", b"\x93NUMPY\x01\x00\x20\x00__import__('os').system('x')   \n", "literal"),
    ("header escape", _header("'<f\\q'", "(4,)"), "not a literal dict"),
    ("negative shape", _header("'<f4'", "(-1,)"), "not a tuple of sizes"),
    ("bool shape", _header("'<f4'", "(True,)"), "not a tuple of sizes"),
    ("bad descr", _header("'<q9'", "(4,)") + b"\0" * 36, "is not a dtype"),
    ("object", _npy(np.array([1, "a"], dtype=object), allow_pickle=True), "object array"),
    ("complex", _npy(np.ones(2, complex)), "complex type"),
    ("datetime", _npy(np.array(["2020-01-01"], "datetime64[D]")), "datetime type"),
    ("timedelta", _npy(np.array([3], "timedelta64[s]")), "timedelta type"),
    ("string", _npy(np.array(["ab", "c"])), "string type"),
    ("structured", _npy(np.zeros(2, [("a", "<f4"), ("b", "<i4")])), "structured"),
    ("subarray", _header("('<f4', (2,))", "(3,)") + b"\0" * 24, "structured or sub-array"),
    ("zip garbage", b"PK\x03\x04" + b"\0" * 40, "not a readable .npz"),
    ("zip no members", _zip({}), "holds no arrays"),
    ("zip non-npy member", _zip({"a.txt": b"hi"}), "must be NAME.npy"),
    ("zip bad member", _zip({"a.npy": b"junk"}), "truncated"),
    ("zip truncated member", _zip({"a.npy": GOOD[:100]}), "truncated"),
    ("zip object member", _zip({"a.npy": _npy(np.array([None]), allow_pickle=True)}), "object"),
    ("zip truncated archive", _zip({"a.npy": GOOD})[:150], "not a readable .npz"),
]


@pytest.mark.parametrize(
    ("data", "message"), [b[1:] for b in BAD_FILES], ids=[b[0] for b in BAD_FILES]
)
@pytest.mark.filterwarnings("error")  # nothing but the one line reaches the user
def test_bad_file_is_one_line(tmp_path: Path, data: bytes, message: str) -> None:
    p = _write(tmp_path, "bad.npz", data)
    with pytest.raises(ArrayFileError) as info:
        load(p)
    text = str(info.value)
    assert message in text and "\n" not in text and text.startswith(p)


def test_zip_crc_mismatch_is_refused(tmp_path: Path) -> None:
    data = bytearray(_zip({"a.npy": GOOD}))
    k = data.index(GOOD[-16:])  # a stored (uncompressed) member: flip one data byte
    data[k] ^= 0xFF
    with pytest.raises(ArrayFileError, match=r"not a readable \.npz"):
        load(_write(tmp_path, "crc.npz", bytes(data)))


def test_paths_that_are_not_files(tmp_path: Path) -> None:
    with pytest.raises(ArrayFileError, match="No such file"):
        load(str(tmp_path / "missing.npy"))
    with pytest.raises(ArrayFileError, match="it is a directory"):
        load(str(tmp_path))
    with pytest.raises(ArrayFileError, match="cannot read"):
        load("bad\0name.npy")


class _Boom:
    """Unpickling it creates the file ``target`` (a stand-in for arbitrary code)."""

    target = ""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.touch, (Path(_Boom.target),))


def _payload(target: Path) -> bytes:
    _Boom.target = str(target)
    return pickle.dumps(np.array([_Boom()], dtype=object))


def test_a_pickle_is_never_loaded(tmp_path: Path) -> None:
    pickle.loads(_payload(tmp_path / "proof"))  # the payload is live
    assert (tmp_path / "proof").exists()
    data = _header("'|O'", "(1,)") + _payload(tmp_path / "pwned")
    npz = _zip({"x.npy": data})
    for p in (_write(tmp_path, "p.npy", data), _write(tmp_path, "p.npz", npz)):
        with pytest.raises(ArrayFileError, match="object array"):
            load(p)
    assert not (tmp_path / "pwned").exists()


def test_declared_size_above_the_cap_is_refused_before_reading(tmp_path: Path) -> None:
    p = _write(tmp_path, "a.npy", _npy(np.zeros(1024, np.uint8)))
    assert load_one(p, max_bytes=1024).size == 1024
    with pytest.raises(ArrayFileError, match=r"declares 1024 bytes \(at most 1000\)"):
        load_one(p, max_bytes=1000)


# ---------------------------------------------------------------- Machine.load_gm


@pytest.mark.parametrize(
    "a",
    [
        np.array([1, "a"], dtype=object),
        np.ones(2, complex),
        np.array(["2020-01-01"], "datetime64[D]"),
        np.zeros(2, [("a", "<f4")]),
        np.array(["xy"]),
    ],
    ids=["object", "complex", "datetime", "structured", "string"],
)
def test_load_gm_refuses_non_numeric_arrays(a: np.ndarray) -> None:
    m = Machine("gm_size=4096")
    before = m.snapshot()
    with pytest.raises(GMError, match="load_gm: "):
        m.load_gm(0x100, a)
    assert m.snapshot() == before
    assert array_dtype_rule(a.dtype) is not None


def test_load_gm_stores_big_endian_arrays_little_endian() -> None:
    m = Machine("gm_size=4096")
    m.load_gm(0x40, np.array([1.5, -3.0], dtype=">f4"))
    assert np.array_equal(m.read_gm(0x40, np.float32, 2), [1.5, -3.0])
    m.load_gm(0x80, np.array([1.0], dtype=ml_dtypes.bfloat16))
    assert m.read_gm(0x80, np.uint16, 1)[0] == 0x3F80


def test_load_gm_and_read_gm_argument_types() -> None:
    m = Machine("gm_size=4096")
    with pytest.raises(GMError, match="numpy array or bytes"):
        m.load_gm(0, [1, 2, 3])  # type: ignore[arg-type]
    with pytest.raises(GMError, match="address must be an integer"):
        m.load_gm(1.0, b"\0")  # type: ignore[arg-type]
    with pytest.raises(GMError, match="object array"):
        m.read_gm(0, object, 2)
    with pytest.raises(GMError, match="negative dimension"):
        m.read_gm(0, np.uint8, (-1,))
    with pytest.raises(GMError, match="outside"):
        m.read_gm(4090, np.uint32, 4)
