"""FP32/FP64 add, sub, mul, div, max and min in one compiled pass (``arith.c``), and its
certificate.

The numpy route of these operations (:mod:`.fastpath`) computes the native result and
then settles what numpy cannot say: which PEs' results are inexact (a probe, and on exact
data a full second pass), and the NaN, infinity and overflow cases (several dense passes
over masks). The machine's IEEE arithmetic says all of it while it computes: ``arith.c``
runs each PE's elements and reads that PE's exception flags, and canonicalises NaN
results in the same loop; TMAX/TMIN's NaN and signed-zero rules are applied to the
encodings there too. It is used only after :func:`certify_arith` found it equal to
the exact engine (``core.binary(..., exact=True)``) on probes of every hazard, bit for bit
and per-PE status included; elsewhere the numpy route serves the same bits.

:class:`ArithPlan` is the call for one geometry: the executor builds one per bundle shape
and calls it with the addresses of the operands and the result.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from ..datatypes import DataType
from . import compiled
from . import fastpath as _fp
from .floatfmt import CANONICAL_NAN, DZ, NV, NX, OF, UF

#: the operations and element types the kernel runs, with their codes in ``arith.c``
OPS = {"add": 0, "sub": 1, "mul": 2, "div": 3, "max": 4, "min": 5}
TYPES: dict[DataType, tuple[int, np.dtype[Any]]] = {
    DataType.FP32: (0, np.dtype(np.float32)),
    DataType.FP64: (1, np.dtype(np.float64)),
}

#: the compiled entry point: (geometry block, x, y, z) addresses -> packed status
ArithKernel = Callable[[int, int, int, int], int]
_Kernel = ArithKernel


def arith_applies(op: str, dt: DataType) -> bool:
    """Whether the kernel runs ``op`` at ``dt`` (where it is compiled and certified)."""
    return op in OPS and dt in TYPES


def fold_applies(op: str, dt: DataType) -> bool:
    """Whether the kernel folds ``op`` (sum, prod, max, min) at ``dt``."""
    return op in FOLD_OPS and dt in TYPES


def arith_enabled() -> bool:
    """Whether a plan made earlier may run now: not inside :func:`.fastpath.exact_only`
    (the exact engine asked for) or :func:`.compiled.suspended` (the numpy route)."""
    return _fp._enabled and not compiled._suspended


def compiled_arith() -> _Kernel | None:
    """The compiled kernel ``ptoc_arith``, or None where the numpy route serves (no C
    compiler, ``PTOC_COMPILED=0``, inside :func:`.compiled.suspended`, or a failed
    certificate). Built and certified once per process."""
    lib = compiled.load("arith", certify_arith)
    if lib is None:
        return None
    fn = _declared.get(id(lib))
    if fn is None:
        fn = _declared[id(lib)] = _declare(lib)
    return fn


#: id of a loaded library -> its declared entry point (declaring costs a microsecond)
_declared: dict[int, _Kernel] = {}

#: the left folds ``ptoc_fold`` runs (semantics/reduce.py), with their codes
FOLD_OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3}
#: below this many elements the numpy route's fixed costs are lower than a call's
FOLD_ROUTE_MIN = 64
#: (op, DataType, shape, byte strides of x) -> the plan of that geometry
_fold_plans: dict[tuple[object, ...], FoldPlan] = {}


def compiled_fold() -> Callable[[int, int, int], int] | None:
    """``ptoc_fold`` of the certified library, or None (see :func:`compiled_arith`)."""
    if compiled_arith() is None:
        return None
    lib = compiled.load("arith", certify_arith)
    assert lib is not None
    return lib.ptoc_fold


def fold_arrays(op: str, dt: DataType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The left fold of (P, N, K) over K (``reduce``'s definition: a sum from +0, a
    product from 1, max/min from element 0), as (acc (P, N), status (P,)), by the
    compiled kernel; None where the numpy route serves (see :func:`arith_arrays`)."""
    if x.size < FOLD_ROUTE_MIN or op not in FOLD_OPS or dt not in TYPES:
        return None
    kernel = compiled_fold()
    if kernel is None:
        return None
    key = (op, dt, x.shape, x.strides)
    plan = _fold_plans.get(key)
    size = x.itemsize
    p, n, k = x.shape
    if plan is None:
        if any(s % size for s in x.strides):
            return None
        plan = FoldPlan(kernel, op, dt, (p, n, k), element_strides(x), (n, 1))
        if len(_fold_plans) > 256:
            _fold_plans.clear()
        _fold_plans[key] = plan
    ax = address(x)
    if ax % size:
        return None
    z = np.empty((p, n), x.dtype)
    return z, plan(ax, writable_address(z))


def _declare(lib: ctypes.CDLL) -> _Kernel:
    fold = lib.ptoc_fold
    fold.restype = ctypes.c_int64
    fold.argtypes = [ctypes.c_void_p] * 3
    for name in ("ptoc_arith_block", "ptoc_fold_block"):
        # no argtypes: an argument block (a ctypes array) is passed as its address
        getattr(lib, name).restype = ctypes.c_int64
    fn = lib.ptoc_arith
    fn.restype = ctypes.c_int64
    fn.argtypes = [ctypes.c_void_p] * 4
    return fn


#: a ctypes array of 5 int64: (geometry, x, y or z, z, status address) -- see ``arith.c``
ArgBlock = Any
#: the one-argument entries: an :data:`ArgBlock` -> the packed answer
BlockEntry = Callable[[ArgBlock], int]
_ARGS = ctypes.c_int64 * 5


def block_entries() -> tuple[BlockEntry, BlockEntry] | None:
    """(``ptoc_arith_block``, ``ptoc_fold_block``) of the certified library, or None
    (see :func:`compiled_arith`). Each takes every argument in one :data:`ArgBlock`
    (one conversion instead of four: a small tile's call costs a third) and can OR each
    PE's status byte into the machine's status array itself."""
    if compiled_arith() is None:
        return None
    lib = compiled.load("arith", certify_arith)
    assert lib is not None
    return lib.ptoc_arith_block, lib.ptoc_fold_block


def arg_block(plan: ArithPlan | FoldPlan) -> ArgBlock:
    """A new argument block for ``plan`` (its geometry set; operands, result and status
    address to fill before each call). A block is one caller's: threads need their own."""
    return _ARGS(plan.geometry, 0, 0, 0, 0)


def address(a: np.ndarray) -> int:
    """The address of ``a``'s first element."""
    return int(a.ctypes.data)


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def writable_address(a: np.ndarray) -> int:
    """The address of a writable array's first element (cheaper than :func:`address`)."""
    buffer: Any = a  # numpy arrays export the buffer protocol
    return _addressof(_from_buffer(buffer))


def element_strides(a: np.ndarray) -> tuple[int, ...]:
    """``a``'s strides in elements (numpy's are in bytes)."""
    size = a.itemsize
    return tuple(s // size for s in a.strides)


class ArithPlan:
    """``op`` at ``dt`` over (P, R, C) operands of the given element strides (PE, row,
    column; 0 broadcasts) into a result whose columns are contiguous.

    ``plan(x, y, z)`` takes the three addresses, writes the result and returns (the
    status of every PE, a read-only uint8 (P,) array; whether some result is a NaN or an
    infinity). The kernel returns both packed in one integer, so a plan holds no
    per-call state and threads may share it.
    """

    __slots__ = ("_call", "_d", "_dp", "_pes")

    @property
    def geometry(self) -> int:
        """The address of the plan's geometry block (``d`` of ``arith.c``)."""
        return self._dp

    def __init__(
        self,
        kernel: ArithKernel,
        op: str,
        dt: DataType,
        shape: tuple[int, int, int],
        x_strides: tuple[int, ...],
        y_strides: tuple[int, ...],
        z_strides: tuple[int, ...],
    ) -> None:
        if not 1 <= shape[0] <= _MAX_PES:
            raise ValueError(f"the compiled kernel serves 1..{_MAX_PES} PEs, not {shape[0]}")
        code, _ = TYPES[dt]
        self._d = np.array(
            [OPS[op], code, *shape, *x_strides, *y_strides, *z_strides[:2],
             CANONICAL_NAN[dt], NV, DZ, OF, UF, NX],
            np.int64,
        )  # fmt: skip
        self._dp = address(self._d)
        self._pes = shape[0]
        self._call = kernel

    def __call__(self, x: int, y: int, z: int) -> tuple[np.ndarray, bool]:
        packed = self._call(self._dp, x, y, z)
        key = (packed & _STATUS_BITS, self._pes)
        status = _STATUSES.get(key)
        if status is None:
            status = _status_array(*key)
        return status, packed >= _BAD


class FoldPlan:
    """The left fold ``op`` at ``dt`` of (P, N, K) operands of the given element strides
    (PE, n, k) into results of element strides (PE, n): ``plan(x, z)`` takes the two
    addresses and returns the status of every PE (read-only uint8 (P,)); see
    :func:`fold_arrays` for the fold's definition."""

    __slots__ = ("_call", "_d", "_dp", "_pes")

    @property
    def geometry(self) -> int:
        """The address of the plan's geometry block (``d`` of ``arith.c``)."""
        return self._dp

    def __init__(
        self,
        kernel: Callable[[int, int, int], int],
        op: str,
        dt: DataType,
        shape: tuple[int, int, int],
        x_strides: tuple[int, ...],
        z_strides: tuple[int, ...],
    ) -> None:
        if not 1 <= shape[0] <= _MAX_PES:
            raise ValueError(f"the compiled kernel serves 1..{_MAX_PES} PEs, not {shape[0]}")
        code, _ = TYPES[dt]
        self._d = np.array([FOLD_OPS[op], code, *shape, *x_strides, *z_strides[:2],
                            CANONICAL_NAN[dt], NV, DZ, OF, UF, NX], np.int64)  # fmt: skip
        self._dp = address(self._d)
        self._pes = shape[0]
        self._call = kernel

    def __call__(self, x: int, z: int) -> np.ndarray:
        key = (self._call(self._dp, x, z), self._pes)
        status = _STATUSES.get(key)
        return _status_array(*key) if status is None else status


#: statuses fit in the low 8 * 7 bits of the kernel's result; bit 62 says "not finite"
_MAX_PES = 7
_STATUS_BITS = (1 << (8 * _MAX_PES)) - 1
_BAD = 1 << 62
#: (packed statuses, PEs) -> the read-only uint8 (P,) array: few combinations occur
_STATUSES: dict[tuple[int, int], np.ndarray] = {}


def _status_array(packed: int, pes: int) -> np.ndarray:
    a = np.frombuffer(packed.to_bytes(8, "little")[:pes], np.uint8).copy()
    a.setflags(write=False)
    if len(_STATUSES) < 4096:
        _STATUSES[packed, pes] = a
    return a


#: below this many elements the numpy route's fixed costs are lower than a call's
ARRAY_ROUTE_MIN = 512


def arith_arrays(
    op: str, dt: DataType, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """``x op y`` (result, status (P,)) of two (P, R, C) carrier arrays of one shape
    (either may be a broadcast or strided view) by the compiled kernel, for
    :func:`.fastpath.binary`; None where the numpy route serves instead: no certified
    kernel, another type or op, a small operation, or an operand whose addressing the
    kernel cannot take (strides that are not whole elements, a misaligned start)."""
    if x.size < ARRAY_ROUTE_MIN or op not in OPS or dt not in TYPES:
        return None
    kernel = compiled_arith()
    if kernel is None:
        return None
    key = (op, dt, x.shape, x.strides, y.strides)
    plan = _plans.get(key)
    size = x.itemsize
    if plan is None:
        if any(s % size for s in (*x.strides, *y.strides)):
            return None
        p, r, c = x.shape
        z_strides = (r * c, c, 1)
        plan = ArithPlan(kernel, op, dt, (p, r, c), element_strides(x), element_strides(y),
                         z_strides)  # fmt: skip
        if len(_plans) > 256:
            _plans.clear()
        _plans[key] = plan
    ax, ay = address(x), address(y)
    if ax % size or ay % size:
        return None
    z = np.empty(x.shape, x.dtype)
    status, _ = plan(ax, ay, writable_address(z))
    return z, status


#: (op, DataType, shape, byte strides of x and y) -> the plan of that geometry
_plans: dict[tuple[object, ...], ArithPlan] = {}


def arith(
    kernel: _Kernel, op: str, dt: DataType, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """``x op y`` of two (P, R, C) carrier arrays of one shape (either may be a
    broadcast view): (result, status (P,), whether some result is not finite)."""
    z = np.empty(x.shape, x.dtype)
    p, r, c = x.shape
    plan = ArithPlan(kernel, op, dt, (p, r, c), element_strides(x), element_strides(y),
                     element_strides(z))  # fmt: skip
    status, bad = plan(address(x), address(y), address(z))
    return z, status, bad


# ---------------------------------------------------------------- the certificate


def _probe_values(dt: DataType, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` operands of every class: random bit patterns (every binade, subnormals,
    NaN payloads of both kinds), and the edges: signed zeros, infinities, the extreme
    finite and subnormal values, ones and small integers (exact results), values near
    the overflow and underflow thresholds."""
    _, carrier = TYPES[dt]
    ub = np.dtype(f"u{carrier.itemsize}")
    bits = carrier.itemsize * 8
    fin = np.finfo(carrier)
    edges = np.array(
        [0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.0, 3.0, 0.5, 1.5, fin.max, -fin.max,
         fin.tiny, -fin.tiny, fin.smallest_subnormal, -fin.smallest_subnormal,
         fin.tiny * 0.75, fin.max * 0.5, float(fin.eps), 1.0 + float(fin.eps),
         np.sqrt(fin.tiny), np.sqrt(fin.max), 1.0 / np.sqrt(fin.tiny)],
        carrier,
    )  # fmt: skip
    exp_mask = ((1 << (bits - 1)) - 1) ^ ((1 << fin.nmant) - 1)
    quiet = 1 << (fin.nmant - 1)
    nans = np.array([exp_mask | quiet, exp_mask | 1, exp_mask | quiet | 5, exp_mask | 0x2A,
                     (1 << (bits - 1)) | exp_mask | 3], ub).view(carrier)  # fmt: skip
    random = np.frombuffer(rng.bytes(n * carrier.itemsize), ub)
    # scaled ordinary values: products and quotients near both thresholds, ties of sums
    scaled = rng.uniform(1, 2, n).astype(carrier) * np.exp2(
        rng.integers(fin.minexp - fin.nmant, fin.maxexp, n)
    ).astype(carrier)
    pool = np.concatenate([edges, nans, random.view(carrier), scaled])
    return pool[rng.integers(0, len(pool), n)]


def _probes(dt: DataType) -> list[tuple[np.ndarray, np.ndarray]]:
    """(x, y) pairs of (P, R, C) operands, padded storage around each (a read past a row
    would meet signalling NaNs, whose NV would show), dense, strided and broadcast."""
    rng = np.random.default_rng(23)
    _, carrier = TYPES[dt]
    out = []
    for p, r, c in ((4, 5, 37), (3, 2, 64), (1, 1, 1), (4, 1, 8), (2, 3, 129), (4, 4, 96)):
        n = p * r * c
        xs = _probe_values(dt, rng, n).reshape(p, r, c)
        ys = _probe_values(dt, rng, n).reshape(p, r, c)
        # PE 0 of the first probe: ordinary exact data (no flag at all on that PE)
        if p > 1:
            xs[0] = rng.integers(-64, 64, (r, c)).astype(carrier)
            ys[0] = rng.integers(1, 64, (r, c)).astype(carrier)
        pad_x, pad_y = _padded(xs), _padded(ys)
        out.append((pad_x, pad_y))
        if len(out) > 1:
            continue  # the other layouts once: they differ only in the addressing
        out.append((xs.copy(), ys.copy()))  # dense: each PE's rows run as one
        out.append((_padded(np.repeat(xs, 2, axis=2))[:, :, ::2], pad_y))  # column stride 2
        out.append((np.broadcast_to(_padded(xs[:, :, :1]), xs.shape), pad_y))
        out.append((pad_x, np.broadcast_to(_padded(ys[:, :, :1]), ys.shape)))
    return out


def _padded(a: np.ndarray) -> np.ndarray:
    """``a`` as a view of storage with three more columns of signalling NaNs."""
    p, r, c = a.shape
    ub = np.dtype(f"u{a.itemsize}")
    nmant = np.finfo(a.dtype).nmant
    snan = ((1 << (a.itemsize * 8 - 1)) - 1) ^ ((1 << nmant) - 1) | 1  # quiet bit clear
    store = np.full((p, r, c + 3), snan, ub).view(a.dtype)
    store[:, :, :c] = a
    return store[:, :, :c]


def certify_arith(lib: ctypes.CDLL) -> str | None:
    """None when ``ptoc_arith`` equals the exact engine on every probe (result bits, the
    not-finite answer and the status of every PE), else the first disagreement."""
    from .core import binary, to_bits  # core imports the fast paths, which import this

    kernel = _declare(lib)
    for dt in TYPES:
        for x, y in _probes(dt):
            yb = np.broadcast_to(y, x.shape)
            for op in OPS:
                want, want_st = binary(op, dt, x, yb, exact=True)
                got, st, bad = arith(kernel, op, dt, x, yb)
                if not np.array_equal(to_bits(got), to_bits(want)):
                    return f"{dt.name} {op} {x.shape}: result bits differ"
                if not np.array_equal(st, np.asarray(want_st, np.uint8)):
                    return f"{dt.name} {op} {x.shape}: status {st} != {want_st}"
                if bad != (not bool(np.isfinite(want).all())):
                    return f"{dt.name} {op} {x.shape}: the not-finite answer is wrong"
    return _certify_fold(lib) or _certify_blocks(lib, kernel)


def _certify_blocks(lib: ctypes.CDLL, kernel: _Kernel) -> str | None:
    """None when the one-argument entries give what the four-argument ones give: the
    same packed answer and result bits, each PE's status ORed into a status array that
    already holds bits (and nothing written without a status address)."""
    from .core import to_bits

    fold = lib.ptoc_fold
    for dt in TYPES:
        x, y = _probes(dt)[0]
        p, r, c = x.shape
        for op in ("add", "max"):
            plan = ArithPlan(kernel, op, dt, (p, r, c), element_strides(x),
                             element_strides(y), (r * c, c, 1))  # fmt: skip
            want, got = np.empty((p, r, c), x.dtype), np.empty((p, r, c), x.dtype)
            packed = kernel(plan.geometry, address(x), address(y), address(want))
            args = arg_block(plan)
            args[1], args[2], args[3] = address(x), address(y), address(got)
            if lib.ptoc_arith_block(args) != packed or not np.array_equal(
                to_bits(got), to_bits(want)
            ):
                return f"{dt.name} {op}: the block entry differs"
            if _settled(lib.ptoc_arith_block, args, packed, p):
                return f"{dt.name} {op}: the block entry's status differs"
        folded = FoldPlan(fold, "sum", dt, (p, r, c), element_strides(x), (r, 1))
        want, got = np.empty((p, r), x.dtype), np.empty((p, r), x.dtype)
        packed = fold(folded.geometry, address(x), address(want))
        args = arg_block(folded)
        args[1], args[2] = address(x), address(got)
        if lib.ptoc_fold_block(args) != packed or not np.array_equal(
            to_bits(got), to_bits(want)
        ):
            return f"{dt.name} fold: the block entry differs"
        if _settled(lib.ptoc_fold_block, args, packed, p):
            return f"{dt.name} fold: the block entry's status differs"
    return None


def _settled(entry: BlockEntry, args: ArgBlock, packed: int, pes: int) -> bool:
    """Whether ``entry`` fails to OR the packed statuses into a status array holding
    other bits (with a guard byte past the PEs that must stay as it was)."""
    before = np.arange(1, pes + 2, dtype=np.uint8) * np.uint8(0x21)
    status = before.copy()
    args[4] = address(status)
    entry(args)
    args[4] = 0
    want = before.copy()
    want[:pes] |= np.frombuffer(packed.to_bytes(8, "little")[:pes], np.uint8)
    return not np.array_equal(status, want)


def _certify_fold(lib: ctypes.CDLL) -> str | None:
    """None when ``ptoc_fold`` equals the exact engine's step loop on the probes, folded
    along rows and along columns (result bits and the status of every PE)."""
    from . import fastpath
    from .core import to_bits
    from .reduce import _fold_loop

    kernel = lib.ptoc_fold
    rng = np.random.default_rng(29)
    for dt in TYPES:
        for p, n, k in ((4, 3, 40), (2, 5, 1), (3, 2, 130)):
            x = _probe_values(dt, rng, p * n * k).reshape(p, n, k)
            x[0] = rng.integers(-64, 64, (n, k))  # exact sums on PE 0
            for view in (x, np.swapaxes(_padded(np.swapaxes(x, 1, 2)), 1, 2)):
                for op in FOLD_OPS:
                    with fastpath.exact_only():
                        want, want_status = _fold_loop(op, dt, view)
                    got = _fold_with(kernel, op, dt, view)
                    if not np.array_equal(to_bits(got[0]), to_bits(want)):
                        return f"{dt.name} fold {op} {view.strides}: result bits differ"
                    if got[1].tolist() != np.asarray(want_status, np.uint8).tolist():
                        return f"{dt.name} fold {op}: status {got[1]} != {want_status}"
    return None


def _fold_with(kernel: Callable[..., int], op: str, dt: DataType, x: np.ndarray) -> tuple:
    p, n, k = x.shape
    z = np.empty((p, n), x.dtype)
    plan = FoldPlan(kernel, op, dt, (p, n, k), element_strides(x), (n, 1))
    return z, plan(address(x), address(z))
