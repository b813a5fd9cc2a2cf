"""The cyclic garbage collector's policy while ptoc builds many small long-lived objects
(a compile, a report).

CPython's default thresholds run a full collection whenever the objects promoted to the
oldest generation reach a quarter of it: a compile that keeps hundreds of thousands of
IR objects alive triggers full collections ever more often as it proceeds (superlinear
time). Switching the collector off instead leaves all those objects in the youngest
generation, so the first collection after the compile traverses every one of them at
once, long after they left the caches (a tenth of a 10,000-op compile), and a later
one traverses them again. So only full collections are held back: young collections
keep running every few hundred allocations, over objects still in the caches, and move
the survivors on as usual, which also keeps the collector's own bookkeeping true (the
full collection the compile deferred comes when CPython's rule asks for it).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: the threshold of the oldest generation while paused: never reached
_NEVER = 1 << 30

#: CPython 3.14's incremental collector reads the thresholds differently: there the
#: collector is switched off, as before
_GENERATIONAL = sys.version_info < (3, 14)


@contextmanager
def full_collections_paused() -> Iterator[None]:
    """Hold back full collections for the duration (young ones keep running); the
    collector's thresholds, or its being off, are restored afterwards."""
    if not gc.isenabled():
        yield
        return
    if not _GENERATIONAL:
        gc.disable()
        try:
            yield
        finally:
            gc.enable()
        return
    old = gc.get_threshold()
    gc.set_threshold(old[0], old[1], _NEVER)
    try:
        yield
    finally:
        gc.set_threshold(*old)
