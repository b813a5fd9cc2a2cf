"""Reuse of dense global memories between machines (speed only: every machine still
starts from an all-zero memory).

A fresh dense memory is a ``calloc``: the operating system maps each page on its first
write and zeroes it then, which costs microseconds per 4 KiB page (on virtual machines
several). A short run that places and writes a few tensors paid more for those page
faults than for its bundles. So a machine records which :data:`CHUNK`-byte chunks of its
own dense memory it has written (:class:`Written`), and when the machine goes, the
memory is zeroed again chunk by chunk (its pages stay mapped) and kept in
:data:`POOL` for the next machine of the same size.

Only a memory the machine allocated itself is recorded and given back, never one passed
to ``Machine(gm=...)`` (a grid's shared memory); a snapshot's copy is no machine's. A
memory something else still refers to (a view of it kept by the host) is never given
back. Every write to a recorded memory must record itself (``Machine.load_gm``, the
commit's writes, scalar stores and the fused stores do); the test suite checks it.
"""

from __future__ import annotations

import sys

import numpy as np

#: the granularity of the written-chunk record
CHUNK_BITS = 16
CHUNK = 1 << CHUNK_BITS
#: a memory whose record grows past this many chunks (16 MiB) is not kept: zeroing it
#: would cost about what the page faults of a fresh one cost
MAX_CHUNKS = 256
#: memories kept per size
KEEP = 2
#: chunks the kept memories may hold in RAM altogether (64 MiB): a chunk once written
#: stays resident when it is zeroed again
HELD_CHUNKS = 1024


class Written:
    """The chunks of a dense memory written since it was all zero; ``chunks`` None once
    there are too many to be worth zeroing (the memory is then not reused)."""

    __slots__ = ("chunks", "resident")

    def __init__(self, resident: frozenset[int] = frozenset()) -> None:
        self.chunks: set[int] | None = set()
        #: the chunks earlier machines wrote (zero again, but in RAM)
        self.resident = resident

    def span(self, lo: int, hi: int) -> None:
        """Bytes ``[lo, hi)`` were written."""
        chunks = self.chunks
        if chunks is None or hi <= lo:
            return
        first, last = lo >> CHUNK_BITS, (hi - 1) >> CHUNK_BITS
        if first == last:
            chunks.add(first)
        elif last - first > MAX_CHUNKS:
            self.chunks = None
        else:
            chunks.update(range(first, last + 1))
            self._limit()

    def untouched(self, lo: int, hi: int) -> bool:
        """Whether bytes ``[lo, hi)`` are known to be still zero (no chunk of them
        recorded, and the record complete)."""
        chunks = self.chunks
        if chunks is None:
            return False
        if hi <= lo or not chunks:
            return True
        first, last = lo >> CHUNK_BITS, (hi - 1) >> CHUNK_BITS
        if last - first < len(chunks):
            return all(c not in chunks for c in range(first, last + 1))
        return all(not first <= c <= last for c in chunks)

    def rows(self, base: int, stride: int, rows: int, width: int) -> None:
        """``rows`` runs of ``width`` bytes, ``stride`` bytes apart from ``base``."""
        if rows <= 1 or stride < CHUNK:
            self.span(base, base + (rows - 1) * stride + width)
            return
        if self.chunks is None:
            return
        for r in range(rows):
            self.span(base + r * stride, base + r * stride + width)

    def index(self, index: np.ndarray) -> None:
        """The bytes at the flat byte indices ``index``."""
        if self.chunks is None or index.size == 0:
            return
        lo, hi = int(index.min()), int(index.max())
        if (hi - lo) >> CHUNK_BITS <= 4:
            self.span(lo, hi + 1)
            return
        found = np.unique(np.asarray(index, np.int64) >> CHUNK_BITS).tolist()
        if len(found) > MAX_CHUNKS:
            self.chunks = None
            return
        self.chunks.update(found)
        self._limit()

    def _limit(self) -> None:
        if self.chunks is not None and len(self.chunks) > MAX_CHUNKS:
            self.chunks = None


class DensePool:
    """Dense memories of machines that are gone, all zero again, by size."""

    def __init__(self) -> None:
        self._free: dict[int, list[tuple[np.ndarray, frozenset[int]]]] = {}
        #: chunks the kept memories hold in RAM
        self._held = 0

    def take(self, size: int) -> tuple[np.ndarray, frozenset[int]]:
        """An all-zero dense memory of ``size`` bytes (a kept one when there is one) and
        the chunks of it earlier machines wrote."""
        free = self._free.get(size)
        if free:
            try:
                gm, resident = free.pop()
            except IndexError:  # another thread took the last one
                pass
            else:
                self._held -= len(resident)
                return gm, resident
        return np.zeros(size, np.uint8), frozenset()

    def give(self, gm: np.ndarray, written: Written, holders: int) -> None:
        """Keep ``gm`` for the next machine when nothing but its owner (``holders``
        references, the caller's included) refers to it, its written chunks are known
        (they are zeroed here) and the chunks it holds in RAM fit the budget."""
        chunks = written.chunks
        if chunks is None or sys.getrefcount(gm) > holders + 1:
            return
        free = self._free.setdefault(len(gm), [])
        resident = written.resident | chunks
        if len(free) >= KEEP or self._held + len(resident) > HELD_CHUNKS:
            return
        self.clean(gm, written)
        self._held += len(resident)
        free.append((gm, resident))

    def clean(self, gm: np.ndarray, written: Written) -> None:
        """Zero the chunks of ``gm`` that ``written`` recorded (``gm`` is all zero again)
        and start a new record, the zeroed chunks now resident: what a memory goes
        through before its next machine (:meth:`give`, ``MachineState.reset``)."""
        chunks = written.chunks
        assert chunks is not None  # (a record given up is not worth zeroing)
        for c in chunks:
            gm[c << CHUNK_BITS : (c + 1) << CHUNK_BITS] = 0
        written.chunks, written.resident = set(), written.resident | chunks

    def clear(self) -> None:
        """Drop every kept memory."""
        self._free.clear()
        self._held = 0


#: the process's pool
POOL = DensePool()
