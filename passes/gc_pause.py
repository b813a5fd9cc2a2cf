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
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the threshold of the oldest generation while paused: never reached
_NEVER = 1 << 30

#: CPython 3.14's incremental collector reads the thresholds differently: there the
#: collector is switched off, as before
_GENERATIONAL = sys.version_info < (3, 14)

#: compiles may overlap (threads): the first to enter pauses, the last to leave restores
_lock = threading.Lock()
_entered = 0
#: what the first to enter found: the collector on, and its thresholds
_found: tuple[bool, tuple[int, ...]] = (True, ())


def _enter() -> None:
    global _entered, _found
    with _lock:
        _entered += 1
        if _entered > 1:
            return
        _found = (gc.isenabled(), gc.get_threshold())
        if not _found[0]:
            return
        if _GENERATIONAL:
            t0, t1 = _found[1][:2]
            gc.set_threshold(t0, t1, _NEVER)
        else:
            gc.disable()


def _leave() -> None:
    global _entered
    with _lock:
        _entered -= 1
        if _entered or not _found[0]:
            return
        if _GENERATIONAL:
            gc.set_threshold(*_found[1])
        else:
            gc.enable()


@contextmanager
def full_collections_paused() -> Iterator[None]:
    """Hold back full collections for the duration (young ones keep running); the
    collector's thresholds, or its being off, are restored afterwards (when several
    threads overlap: by the last to leave, as the first found them)."""
    _enter()
    try:
        yield
    finally:
        _leave()
