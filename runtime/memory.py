"""Global memory: placing/reading arrays and the strided TLOAD/TSTORE footprint.

Element (row, col) of a transfer lives at ``base + row * row_stride_bytes + col *
element_bytes`` (``TileMemoryStridedByteAddress``); a packed 4-bit column adds
``floor(col / 2)`` and selects the low (even column) or high (odd column) nibble. All
arithmetic wraps at 64 bits. Every access is probed before the first effect
(``ProbeDataAccess``): an address not aligned to the element size raises
``Fault_DataAlignment``; an access reaching past the modelled memory ``Fault_DataPage``.
The first faulting element in (PE, row, col) order names the fault.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptoc.backend.errors import Error
from ptoc.backend.isa import DataType, info

from .faults import DataAlignmentFault, DataPageFault
from .gm import PAGE_BITS, Memory, SparseMemory
from .gm_pool import Written


class GMError(Error):
    """A host-side global-memory access (``load_gm``/``read_gm``) outside the memory."""


def check_range(gm_size: int, addr: int, nbytes: int, what: str) -> None:
    if addr < 0 or nbytes < 0 or addr + nbytes > gm_size:
        raise GMError(
            f"{what} [0x{addr:x}, 0x{addr + nbytes:x}) is outside the "
            f"0x{gm_size:x}-byte global memory (machine parameter gm_size)"
        )


def element_bytes(dt: DataType) -> int:
    """``TileMemoryElementBytes``: 4-bit elements use byte-sized containing accesses."""
    bits = info(dt).bits
    return 1 if bits == 4 else bits // 8


def dense_stride(cols: int, dt: DataType) -> int:
    """``TileDenseRowStrideBytes``: ceil(Col * bits / 8)."""
    return (cols * info(dt).bits + 7) // 8


class Footprint:
    """Byte addresses of a strided transfer: ``addr`` (P, R, C) uint64 element addresses
    (for 4-bit types the containing byte), ``nbytes`` per element, ``high`` the odd-column
    nibble mask (None for whole-byte types).

    ``dense``: for a whole-byte transfer proven aligned and inside the memory in closed
    form, each PE's (first byte address, row stride in bytes); ``addr`` is then built
    only when something asks for it (a grid launch's access log), and :func:`gather`
    and :func:`scatter_plan` use strided views of the memory instead.
    """

    __slots__ = ("_addr", "cols", "dense", "high", "nbytes", "rows")

    def __init__(
        self,
        addr: np.ndarray | None,
        nbytes: int,
        high: np.ndarray | None,
        dense: tuple[tuple[int, int], ...] | None = None,
        rows: int = 0,
        cols: int = 0,
    ) -> None:
        self._addr = addr
        self.nbytes = nbytes
        self.high = high
        self.dense = dense
        if addr is not None:
            rows, cols = addr.shape[1], addr.shape[2]
        self.rows, self.cols = rows, cols

    @property
    def addr(self) -> np.ndarray:
        a = self._addr
        if a is None:
            assert self.dense is not None
            u = np.uint64
            base = np.array([b for b, _ in self.dense], u).reshape(-1, 1, 1)
            stride = np.array([s for _, s in self.dense], u).reshape(-1, 1, 1)
            r = np.arange(self.rows, dtype=u).reshape(1, -1, 1)
            c = np.arange(self.cols, dtype=u).reshape(1, 1, -1) * u(self.nbytes)
            a = self._addr = base + r * stride + c  # proven without wrap-around
        return a

    @property
    def addr_bytes(self) -> int:
        """The size of the (possibly not yet built) address array, for caches."""
        return (
            8 * len(self.dense or ()) * self.rows * self.cols
            if self._addr is None
            else (self._addr.nbytes)
        )


def dense_rows(
    base: np.ndarray, stride: np.ndarray, rows: int, cols: int, eb: int, gm_size: int
) -> tuple[tuple[int, int], ...] | None:
    """Each PE's (base, stride) when every element address of a whole-byte strided
    transfer is aligned and inside the memory, decided in closed form: base and stride
    multiples of ``eb`` (2**64 is one, so wrapped addresses stay aligned) and the last
    element ``base + (rows-1) * stride + (cols-1) * eb`` computed without wrapping is at
    most ``gm_size - eb`` (addresses grow from the base, so none wraps or lies beyond).
    None otherwise: the element-wise probe then finds the first fault in order."""
    bs = np.asarray(base, np.uint64).reshape(-1).tolist()
    ss = np.asarray(stride, np.uint64).reshape(-1).tolist()
    if len(ss) == 1 and len(bs) > 1:
        ss = ss * len(bs)
    if len(bs) == 1 and len(ss) > 1:
        bs = bs * len(ss)
    return proven_rows(bs, ss, rows, cols, eb, gm_size)


def proven_rows(
    bases: list[int], strides: list[int], rows: int, cols: int, eb: int, gm_size: int
) -> tuple[tuple[int, int], ...] | None:
    """:func:`dense_rows` of each PE's base and stride as Python integers."""
    if rows < 1 or cols < 1 or gm_size < eb:
        return None
    span = (cols - 1) * eb
    limit = gm_size - eb
    out = []
    for b, s in zip(bases, strides, strict=True):
        if b % eb or (rows > 1 and s % eb):
            return None
        if b + (rows - 1) * s + span > limit:
            return None
        out.append((b, s if rows > 1 else 0))
    return tuple(out)


def footprint(
    dt: DataType,
    base: np.ndarray,
    stride: np.ndarray,
    rows: int,
    cols: int,
    gm_size: int,
    op: str,
    write: bool,
    pes: tuple[int, ...],
    stride_elements: bool = False,
    select: np.ndarray | None = None,
) -> Footprint:
    """Addresses of every valid element on every participating PE, fully probed.

    ``stride`` is a row stride in bytes (``TileMemoryStridedByteAddress``: TLOAD,
    TSTORE) or, with ``stride_elements``, in elements (``TileMemoryStridedIndex`` then
    ``TileMemoryIndexedAddress``: TPREFETCH), where a packed 4-bit element's byte and
    nibble follow its linear index ``row * stride + col``. ``select`` (P, R, C) limits
    the probe to the elements a PE accesses (a Shared TLOAD: its own quarter).
    """
    u = np.uint64
    four = info(dt).bits == 4
    eb = element_bytes(dt)
    if not four and not stride_elements and select is None:
        dense = dense_rows(base, stride, rows, cols, eb, gm_size)
        if dense is not None:
            return Footprint(None, eb, None, dense, rows, cols)
    r = np.arange(rows, dtype=u).reshape(1, rows, 1)
    c = np.arange(cols, dtype=u).reshape(1, 1, cols)
    b = np.asarray(base, u).reshape(-1, 1, 1)
    s = np.asarray(stride, u).reshape(-1, 1, 1)
    with np.errstate(over="ignore"):  # uint64 arithmetic wraps modulo 2**64
        if stride_elements:
            index = r * s + c
            addr = b + ((index >> u(1)) if four else index * u(eb))
            odd = index & u(1)
        else:
            addr = b + r * s + ((c >> u(1)) if four else c * u(eb))
            odd = c & u(1)
    misaligned = (addr % u(eb)) != 0 if eb > 1 else None
    # addr + eb > size, written without overflowing near 2**64
    oob = addr > u(gm_size - eb) if gm_size >= eb else np.ones(addr.shape, bool)
    bad = oob if misaligned is None else (oob | misaligned)
    if select is not None:
        bad = bad & select
    if bad.any():
        first = int(np.argmax(bad.reshape(-1)))
        p, rr, cc = np.unravel_index(first, bad.shape)
        a = int(addr[p, rr, cc])
        where = f"PE{pes[p]} row {rr} col {cc}"
        verb = "writes" if write else "reads"
        if misaligned is not None and misaligned[p, rr, cc]:
            raise DataAlignmentFault(
                f"{op} {verb} {dt.name} element at GM address 0x{a:x} ({where}), which "
                f"is not aligned to {eb} bytes",
                op,
            )
        raise DataPageFault(
            f"{op} {verb} {eb} byte(s) at GM address 0x{a:x} ({where}), beyond the "
            f"0x{gm_size:x}-byte global memory (machine parameter gm_size)",
            op,
        )
    high = np.broadcast_to(odd.astype(bool), addr.shape) if four else None
    return Footprint(addr, eb, high)


def gather_view(gm: Memory, fp: Footprint, dt: DataType) -> np.ndarray:
    """:func:`gather`, or for one PE's closed-form probed rows of a dense memory a
    writable strided view of the memory itself, shape (1, R, C): for a caller that
    copies it at once (a tile's publication copies every writable view), which saves
    the copy :func:`gather` makes."""
    dense = fp.dense
    if dense is not None and len(dense) == 1 and isinstance(gm, np.ndarray):
        carrier = info(dt).carrier
        b, s = dense[0]
        if gm.flags.c_contiguous:
            return np.ndarray((1, fp.rows, fp.cols), carrier, gm, b, (0, s, fp.nbytes))
    return gather(gm, fp, dt)


def gather(gm: Memory, fp: Footprint, dt: DataType) -> np.ndarray:
    """The carrier values at a probed footprint, shape (P, R, C)."""
    carrier = info(dt).carrier
    dense = fp.dense
    if dense is not None and isinstance(gm, np.ndarray) and gm.flags.c_contiguous:
        # closed-form probed: one strided view of the memory per PE, copied out
        eb = fp.nbytes
        out = np.empty((len(dense), fp.rows, fp.cols), carrier)
        for k, (b, s) in enumerate(dense):
            out[k] = np.ndarray((fp.rows, fp.cols), carrier, gm, b, (s, eb))
        return out
    if dense is not None and isinstance(gm, SparseMemory) and carrier.itemsize == fp.nbytes:
        # the same views of a sparse memory, for each PE whose rows lie in one page
        # (an absent page reads as zeros)
        out = np.empty((len(dense), fp.rows, fp.cols), carrier)
        shape = (fp.rows, fp.cols)
        for k, (b, s) in enumerate(dense):
            last = b + (fp.rows - 1) * s + fp.cols * fp.nbytes - 1
            if last >> PAGE_BITS != b >> PAGE_BITS:
                out[k] = _gather_bytes(gm, _rows_addr(b, s, shape, fp.nbytes), carrier)
                continue
            v = gm.window(b, s, shape, carrier, create=False)
            out[k] = 0 if v is None else v  # an absent page reads as zeros
        return out
    if fp.high is not None:
        byte = gm[fp.addr.astype(np.intp)]
        nib = np.where(fp.high, byte >> np.uint8(4), byte & np.uint8(0xF)).astype(np.uint8)
        return nib.view(carrier)
    eb = fp.nbytes
    if eb > 1 and isinstance(gm, np.ndarray) and gm.flags.c_contiguous:
        # every address is aligned (probed): one gather of whole elements from a
        # carrier view of the dense memory instead of eb gathers of bytes
        whole = gm[: gm.size - gm.size % eb].view(carrier)
        return whole[(fp.addr // np.uint64(eb)).astype(np.intp)]
    return _gather_bytes(gm, fp.addr, carrier)


def _rows_addr(base: int, stride: int, shape: tuple[int, int], eb: int) -> np.ndarray:
    """The element addresses of one PE's strided rows, (R, C)."""
    rows, cols = shape
    r = np.arange(rows, dtype=np.uint64).reshape(-1, 1) * np.uint64(stride)
    return np.uint64(base) + r + np.arange(cols, dtype=np.uint64).reshape(1, -1) * np.uint64(eb)


def _gather_bytes(gm: Memory, addr: np.ndarray, carrier: np.dtype) -> np.ndarray:
    """Whole elements of ``carrier`` at aligned in-range element addresses ``addr``."""
    eb = carrier.itemsize
    idx = addr.astype(np.intp)[..., None] + np.arange(eb, dtype=np.intp)
    raw = gm[idx]  # (..., nbytes), little-endian element bytes
    return np.ascontiguousarray(raw).view(carrier).reshape(addr.shape)


@dataclass(frozen=True)
class GMWrite:
    """A pending store: ``index`` flat byte indices and their new ``values`` (applied in
    order, so a later element wins where addresses overlap)."""

    index: np.ndarray
    values: np.ndarray

    def apply(self, gm: Memory) -> None:
        gm[self.index] = self.values

    def record(self, written: Written) -> None:
        """Note the bytes :meth:`apply` writes."""
        written.index(self.index)


class DenseWrite:
    """A pending store of one PE's (R, C) carrier ``values`` at rows ``stride`` bytes
    apart from byte address ``base``, rows not overlapping (a closed-form probed
    footprint): applied as one strided assignment. ``index`` gives the flat byte
    indices, in the order :class:`GMWrite` would hold them."""

    __slots__ = ("_index", "base", "nbytes", "stride", "values")

    def __init__(self, base: int, stride: int, values: np.ndarray, nbytes: int) -> None:
        self.base, self.stride, self.values, self.nbytes = base, stride, values, nbytes
        self._index: np.ndarray | None = None

    @property
    def index(self) -> np.ndarray:
        i = self._index
        if i is None:
            rows, cols = self.values.shape
            r = np.arange(rows, dtype=np.intp).reshape(-1, 1, 1) * self.stride
            c = np.arange(cols * self.nbytes, dtype=np.intp).reshape(1, cols, self.nbytes)
            i = self._index = (self.base + r + c).reshape(-1)
        return i

    def apply(self, gm: Memory) -> None:
        v = self.values
        if isinstance(gm, np.ndarray) and gm.flags.c_contiguous:
            np.ndarray(v.shape, v.dtype, gm, self.base, (self.stride, self.nbytes))[...] = v
            return
        if isinstance(gm, SparseMemory) and v.dtype.itemsize == self.nbytes:
            # rows in one page: one strided assignment (zeros into an absent page, which
            # reads as zeros already, allocate nothing, as the byte path)
            present = (self.base >> PAGE_BITS) in gm.pages
            w = gm.window(
                self.base, self.stride, v.shape, v.dtype, create=present or bool(v.any())
            )
            if w is not None:
                w[...] = v
                return
            rows, cols = v.shape
            end = self.base + (rows - 1) * self.stride + cols * self.nbytes
            if not present and (end - 1) >> PAGE_BITS == self.base >> PAGE_BITS:
                return  # all zeros into one absent page
        gm[self.index] = np.ascontiguousarray(v).view(np.uint8).reshape(-1)

    def record(self, written: Written) -> None:
        """Note the bytes :meth:`apply` writes."""
        rows, cols = self.values.shape
        written.rows(self.base, self.stride, rows, cols * self.nbytes)


def _last_writer(index: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Deduplicate flat byte writes keeping the last value written to each address."""
    rev_index, rev_values = index[::-1], values[::-1]
    uniq, first = np.unique(rev_index, return_index=True)
    return uniq, rev_values[first]


def scatter_plan(
    gm: Memory, fp: Footprint, values: np.ndarray, stride: np.ndarray
) -> list[GMWrite | DenseWrite]:
    """The byte writes that store carrier ``values`` (P, R, C) at a probed footprint.

    Elements are stored in (PE, row, col) order, so where addresses overlap (a small or
    zero row stride, or two PEs sharing memory) the later element wins -- the order the
    ASL's element loop gives within a PE; across PEs the architecture leaves the order
    open. A 4-bit store preserves the sibling nibble.
    """
    dense = fp.dense
    if dense is not None and values.dtype.itemsize == fp.nbytes:
        row_bytes = fp.cols * fp.nbytes
        if all(s >= row_bytes or fp.rows == 1 for _, s in dense):
            # rows cannot overlap within a PE; PEs apply in order (the later one wins)
            return [DenseWrite(b, s, values[k], fp.nbytes) for k, (b, s) in enumerate(dense)]
    p, rows, cols = fp.addr.shape
    if fp.high is None:
        raw = np.ascontiguousarray(values).view(np.uint8).reshape(p, -1)
        idx = fp.addr.astype(np.intp)[..., None] + np.arange(fp.nbytes, dtype=np.intp)
        idx = idx.reshape(p, -1)
        row_bytes = cols * fp.nbytes
        writes: list[GMWrite | DenseWrite] = []
        for pe in range(p):
            s = int(np.asarray(stride, np.uint64).reshape(-1)[pe])
            i, v = idx[pe], raw[pe]
            if rows > 1 and (s < row_bytes or s >= 1 << 63):
                i, v = _last_writer(i, v)  # rows may overlap
            writes.append(GMWrite(i, v))
        return writes
    nib = (np.ascontiguousarray(values).view(np.uint8) & np.uint8(0xF)).reshape(-1)
    addr = fp.addr.astype(np.intp).reshape(-1)
    high = np.asarray(fp.high).reshape(-1)
    touched = np.unique(addr)
    result = gm[touched].copy()
    for want_high in (False, True):
        sel = high == want_high
        if not sel.any():
            continue
        a, v = _last_writer(addr[sel], nib[sel])
        pos = np.searchsorted(touched, a)
        if want_high:
            result[pos] = (result[pos] & np.uint8(0x0F)) | (v << np.uint8(4))
        else:
            result[pos] = (result[pos] & np.uint8(0xF0)) | v
    return [GMWrite(touched, result.astype(np.uint8))]
