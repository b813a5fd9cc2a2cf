"""Global memory storage: a dense byte array for small memories, lazily allocated pages
for large ones (DECISIONS D13: an address space far larger than the bytes touched costs
only the touched pages).

A memory of at most :data:`DENSE_LIMIT` bytes is one ``numpy.uint8`` array, exactly as
before (no indirection on the executor's hot paths). A larger one is a
:class:`SparseMemory`: the same indexing interface (flat integer index arrays of any
shape, basic slices), backed by :data:`PAGE`-byte pages created on the first write; a
page never written reads as zeros. Bounds and alignment are the executor's business
(``ProbeDataAccess`` in :mod:`ptoc.runtime.memory` and :mod:`ptoc.runtime.agu`): this
module only stores bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: the largest memory kept as one dense array (the default 64 MiB GM among them)
DENSE_LIMIT = 256 << 20
#: bytes per page of a sparse memory
PAGE_BITS = 16
PAGE = 1 << PAGE_BITS
_MASK = PAGE - 1


class SparseMemory:
    """A byte-addressed memory of ``size`` bytes that holds only the pages written.

    ``mem[index]`` gathers the bytes at a flat integer index array (any shape, the result
    has that shape); ``mem[index] = values`` scatters them (``values`` broadcast to the
    index shape; where an index repeats, the last value wins, as numpy's does);
    ``mem[a:b]`` and ``mem[a:b] = data`` read and write a contiguous range. A window that
    lies in one page (the common case: a tile row, a scalar access) takes one page
    lookup and one numpy indexing operation.
    """

    __slots__ = ("pages", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.pages: dict[int, np.ndarray] = {}

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.uint8)

    def __len__(self) -> int:
        return self.size

    @property
    def resident_bytes(self) -> int:
        """Bytes held by allocated pages."""
        return len(self.pages) * PAGE

    def _page(self, number: int) -> np.ndarray:
        page = self.pages.get(number)
        if page is None:
            page = self.pages[number] = np.zeros(PAGE, np.uint8)
        return page

    # ------------------------------------------------------------------ ranges

    def _range(self, key: slice) -> tuple[int, int]:
        start, stop, step = key.indices(self.size)
        if step != 1:
            raise IndexError("a global-memory slice has step 1")
        return start, max(start, stop)

    def _read_range(self, start: int, stop: int) -> np.ndarray:
        out = np.zeros(stop - start, np.uint8)
        a = start
        while a < stop:
            number, off = a >> PAGE_BITS, a & _MASK
            n = min(PAGE - off, stop - a)
            page = self.pages.get(number)
            if page is not None:
                out[a - start : a - start + n] = page[off : off + n]
            a += n
        return out

    def _write_range(self, start: int, stop: int, data: np.ndarray) -> None:
        data = np.broadcast_to(np.asarray(data, np.uint8), (stop - start,))
        a = start
        while a < stop:
            number, off = a >> PAGE_BITS, a & _MASK
            n = min(PAGE - off, stop - a)
            chunk = data[a - start : a - start + n]
            page = self.pages.get(number)
            if page is not None or chunk.any():  # writing zeros to an absent page: nothing
                self._page(number)[off : off + n] = chunk
            a += n

    # ------------------------------------------------------------------ indexing

    def __getitem__(self, key: Any) -> np.ndarray:
        if isinstance(key, slice):
            return self._read_range(*self._range(key))
        idx = np.asarray(key, np.intp)
        if idx.size == 0:
            return np.zeros(idx.shape, np.uint8)
        lo = int(idx.min()) >> PAGE_BITS
        if lo == int(idx.max()) >> PAGE_BITS:  # one page
            page = self.pages.get(lo)
            if page is None:
                return np.zeros(idx.shape, np.uint8)
            return page[idx - (lo << PAGE_BITS)]
        numbers = idx >> PAGE_BITS
        out = np.zeros(idx.shape, np.uint8)
        for number in np.unique(numbers):
            page = self.pages.get(int(number))
            if page is not None:
                sel = numbers == number
                out[sel] = page[idx[sel] & _MASK]
        return out

    def __setitem__(self, key: Any, values: Any) -> None:
        if isinstance(key, slice):
            self._write_range(*self._range(key), values)
            return
        idx = np.asarray(key, np.intp)
        if idx.size == 0:
            return
        vals = np.broadcast_to(np.asarray(values, np.uint8), idx.shape)
        lo = int(idx.min()) >> PAGE_BITS
        if lo == int(idx.max()) >> PAGE_BITS:  # one page
            self._page(lo)[idx - (lo << PAGE_BITS)] = vals
            return
        numbers = idx >> PAGE_BITS
        for number in np.unique(numbers):
            sel = numbers == number
            self._page(int(number))[idx[sel] & _MASK] = vals[sel]

    # ------------------------------------------------------------------ strided windows

    def window(
        self, base: int, stride: int, shape: tuple[int, int], dtype: np.dtype, create: bool
    ) -> np.ndarray | None:
        """The (rows, cols) elements of ``dtype`` at ``base``, rows ``stride`` bytes apart,
        as a strided view of their page when they all lie in one page (None otherwise;
        the caller then indexes byte by byte). An absent page gives None unless
        ``create`` (a write) allocates it."""
        rows, cols = shape
        end = base + (rows - 1) * stride + cols * dtype.itemsize
        number = base >> PAGE_BITS
        if (end - 1) >> PAGE_BITS != number:
            return None
        page = self._page(number) if create else self.pages.get(number)
        if page is None:
            return None
        off = base & _MASK
        return np.ndarray(shape, dtype, page, off, (stride, dtype.itemsize))

    # ------------------------------------------------------------------ whole memory

    def copy(self) -> SparseMemory:
        """A deep copy (the pages are copied, so later writes do not alias)."""
        other = SparseMemory(self.size)
        other.pages = {n: p.copy() for n, p in self.pages.items()}
        return other

    def equals(self, other: SparseMemory) -> bool:
        """Bit-for-bit equality (an absent page equals a page of zeros)."""
        if self.size != other.size:
            return False
        for n in self.pages.keys() | other.pages.keys():
            a, b = self.pages.get(n), other.pages.get(n)
            if a is None:
                a, b = b, a
            assert a is not None
            if b is None:
                if a.any():
                    return False
            elif not np.array_equal(a, b):
                return False
        return True

    def differing(self, other: SparseMemory) -> tuple[int, int]:
        """(count of differing bytes, the lowest differing address); (0, -1) if equal."""
        count, first = 0, -1
        for n in sorted(self.pages.keys() | other.pages.keys()):
            a = self.pages.get(n)
            b = other.pages.get(n)
            a = np.zeros(PAGE, np.uint8) if a is None else a
            b = np.zeros(PAGE, np.uint8) if b is None else b
            idx = np.flatnonzero(a != b)
            if len(idx):
                count += len(idx)
                if first < 0:
                    first = (n << PAGE_BITS) + int(idx[0])
        return count, first

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The whole memory as a dense array (tests and small memories only)."""
        out = self._read_range(0, self.size)
        return out if dtype is None else out.astype(dtype)


#: what a machine's global memory is
Memory = np.ndarray | SparseMemory


def new_memory(size: int, sparse: bool | None = None) -> Memory:
    """A zeroed global memory of ``size`` bytes: dense up to :data:`DENSE_LIMIT` unless
    ``sparse`` says otherwise."""
    if sparse is None:
        sparse = size > DENSE_LIMIT
    return SparseMemory(size) if sparse else np.zeros(size, np.uint8)


def memory_equal(a: Memory, b: Memory) -> bool:
    """Bit-for-bit equality of two memories of the same kind."""
    if isinstance(a, SparseMemory) and isinstance(b, SparseMemory):
        return a.equals(b)
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def memory_differences(a: Memory, b: Memory) -> tuple[int, int]:
    """(count of differing bytes, the lowest differing address)."""
    if isinstance(a, SparseMemory) and isinstance(b, SparseMemory):
        return a.differing(b)
    idx = np.flatnonzero(np.asarray(a) != np.asarray(b))
    return len(idx), int(idx[0]) if len(idx) else -1


@dataclass(frozen=True)
class MemoryImage:
    """The non-zero pages of a global memory, to rebuild it in another process: what a
    grid launch on a cluster ships instead of the memory (a 64 MiB memory that holds a
    few tensors is a few pages). ``pages`` maps a page number to its :data:`PAGE` bytes
    (the last page of a memory whose size is not a multiple of PAGE is shorter)."""

    size: int
    sparse: bool
    pages: dict[int, np.ndarray]

    @classmethod
    def of(cls, gm: Memory) -> MemoryImage:
        if isinstance(gm, SparseMemory):
            pages = {n: p.copy() for n, p in gm.pages.items() if p.any()}
            return cls(gm.size, True, pages)
        whole = len(gm) >> PAGE_BITS << PAGE_BITS
        nonzero = np.flatnonzero(gm[:whole].reshape(-1, PAGE).any(axis=1)).tolist()
        pages = {n: gm[n << PAGE_BITS : (n + 1) << PAGE_BITS].copy() for n in nonzero}
        if whole < len(gm) and gm[whole:].any():
            pages[whole >> PAGE_BITS] = gm[whole:].copy()
        return cls(len(gm), False, pages)

    @property
    def nbytes(self) -> int:
        """The bytes of the pages the image holds."""
        return sum(len(p) for p in self.pages.values())

    def memory(self) -> Memory:
        """A fresh memory of the same size and kind holding the image's bytes."""
        gm = new_memory(self.size, self.sparse)
        for n, page in self.pages.items():
            gm[n << PAGE_BITS : (n << PAGE_BITS) + len(page)] = page
        return gm
