"""Recycled result storage for the compiled runners (``ops/native.py``).

A runner that publishes a tile per bundle would otherwise allocate a payload each time,
take its address through ctypes, copy the padding template into it and mark it
read-only: for a small tile that is most of the bundle's cost, and a large payload's
fresh pages fault on first write. A :class:`PayloadPool` keeps a few read-only blocks
of one shape with their addresses and hands out a new read-only view of a block no
one references any more. A block's memory is written only through its address by the
runner that takes it, before the view is published; a published payload therefore
never changes: its block stays referenced (by the view's base) as long as any view of
it, or anything derived from one, is alive.
"""

from __future__ import annotations

import sys

import numpy as np

from ptoc.backend.isa.semantics.arith_kernels import writable_address

#: bytes of pooled blocks per pool (small tiles: up to MAX_BLOCKS blocks)
POOL_BYTES = 1 << 20
MAX_BLOCKS = 32
#: blocks of this size and more are taken first-free (the fewest stay in the caches), the
#: smaller ones in turn (a free one is found at once)
FIRST_FIT_BYTES = 1 << 16
#: bytes of pooled blocks across every pool of the process; past it pools stop growing
TOTAL_BYTES = 64 << 20
_total = 0

_refcount = sys.getrefcount


class PayloadPool:
    """Read-only (P, R, C) payloads of one shape and dtype whose storage starts as
    ``template`` (the padding and poison around the results; None: undefined bytes
    that the runner overwrites entirely)."""

    __slots__ = (
        "_addresses", "_aliases", "_blocks", "_dtype", "_free", "_next", "_shape",
        "_template", "large",
    )  # fmt: skip

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: np.dtype,
        template: np.ndarray | None,
        writable: bool = False,
    ) -> None:
        """``writable``: keep a writable view of each block for :meth:`take_writable`
        (numpy writes instead of a compiled kernel's)."""
        nbytes = int(np.prod(shape)) * dtype.itemsize
        count = max(1, min(MAX_BLOCKS, POOL_BYTES // max(nbytes, 1)))
        self._blocks: list[np.ndarray | None] = [None] * count
        self._addresses = [0] * count
        self._aliases: list[np.ndarray | None] | None = [None] * count if writable else None
        #: a free block's references: the list, the caller's local, getrefcount's
        #: argument, and its writable view's base when it has one
        self._free = 4 if writable else 3
        self._next = 0
        #: whether the blocks are large enough to be taken first-free, and to take a
        #: released tile's storage at once (:meth:`reclaim`): fewer stay in the caches
        self.large = nbytes >= FIRST_FIT_BYTES
        self._shape, self._dtype, self._template = shape, dtype, template

    def take(self) -> tuple[np.ndarray, int]:
        """A read-only payload whose storage no published tile shares, and its address
        (to be written through before the payload is published)."""
        if not self.large:  # the next block in turn, when it is free (:meth:`_take`)
            i = self._next
            blocks = self._blocks
            block = blocks[i]
            if block is not None and _refcount(block) == self._free:
                self._next = (i + 1) % len(blocks)
                return block.view(), self._addresses[i]
        _, block, address = self._take()
        return block.view(), address

    def take_writable(self) -> tuple[np.ndarray, np.ndarray, int]:
        """:meth:`take` for a pool made ``writable``: the read-only payload, a writable
        view of its storage (to write before the payload is published, and never
        after) and the storage's address."""
        aliases = self._aliases
        assert aliases is not None
        if not self.large:  # the next block in turn, when it is free (as :meth:`take`)
            i = self._next
            blocks = self._blocks
            block = blocks[i]
            if block is not None and _refcount(block) == self._free:
                self._next = (i + 1) % len(blocks)
                return block.view(), aliases[i], self._addresses[i]  # type: ignore[return-value]
        i, block, address = self._take()
        alias = aliases[i] if i >= 0 else None
        if alias is None:  # a block the pool does not keep: a new one, still writable
            alias = block.view()
            block.setflags(write=False)
        return block.view(), alias, address

    def _take(self) -> tuple[int, np.ndarray, int]:
        """(index, block, address): a free kept block, or a new one (index -1 when the
        pool does not keep it)."""
        blocks = self._blocks
        free = self._free
        if self.large:  # large blocks: the first free one, so few stay in cache
            for i in range(len(blocks)):  # (enumerate's tuple would hold a reference)
                block = blocks[i]
                if block is not None and _refcount(block) == free:
                    return i, block, self._addresses[i]
            i = self._next
            self._next = (i + 1) % len(blocks)
        else:  # small ones: the next in turn, free unless many tiles are kept
            i = self._next
            self._next = (i + 1) % len(blocks)
            block = blocks[i]
            if block is not None and _refcount(block) == free:
                return i, block, self._addresses[i]
        block, address = self._new()
        if block.nbytes <= TOTAL_BYTES - _total or self._blocks[i] is not None:
            self._keep(i, block, address)
            return i, block, address
        return -1, block, address

    def reclaim(self, payload: np.ndarray) -> tuple[np.ndarray, int] | None:
        """A new payload on the storage of ``payload`` -- one this pool handed out, whose
        tile the caller is about to release and which nothing else references (checked
        by the caller) -- and its address; None when anything else still holds that
        payload or its storage."""
        if _refcount(payload) != 3:  # the tile's field, this argument, getrefcount's
            return None
        block = payload.base
        if not isinstance(block, np.ndarray):
            return None
        blocks = self._blocks
        for i in range(len(blocks)):
            # the pool's list, the payload's base, this local and getrefcount's argument
            # (and a writable view's base)
            if blocks[i] is block and _refcount(block) == self._free + 1:
                return block.view(), self._addresses[i]
        return None

    def _new(self) -> tuple[np.ndarray, int]:
        t = self._template
        block = np.empty(self._shape, self._dtype) if t is None else t.copy()
        address = writable_address(block.view(np.uint8))  # (ml_dtypes export no buffer)
        if self._aliases is None:  # (a writable pool's block stays writable until kept)
            block.setflags(write=False)  # its views are read-only: only the runner writes
        return block, address

    def _keep_alias(self, i: int, block: np.ndarray) -> None:
        """A writable pool keeps a writable view of the block made before the block
        turns read-only (numpy leaves an existing view writable; every later view of
        the block is read-only, as published payloads must be)."""
        if self._aliases is not None:
            self._aliases[i] = block.view()
            block.setflags(write=False)

    def __del__(self) -> None:
        # a pool that goes (its runner's plan left the caches) gives its budget back
        global _total
        _total -= sum(b.nbytes for b in self._blocks if b is not None)

    def _keep(self, i: int, block: np.ndarray, address: int) -> None:
        global _total
        old = self._blocks[i]
        _total += block.nbytes - (0 if old is None else old.nbytes)
        self._blocks[i], self._addresses[i] = block, address
        self._keep_alias(i, block)
