"""Shared pytest configuration: hypothesis profiles, and a check on every machine of
the suite that its global memory's written-chunk record is complete.

``ci`` (the default) is bounded and deterministic so the default test run stays fast;
``thorough`` is for local runs: ``HYPOTHESIS_PROFILE=thorough python -m pytest``.

``examples(n)`` (``from conftest import examples``) bounds one expensive property to ``n``
examples under ``ci`` and scales it with the profile elsewhere, so the property still runs
with varied inputs in the default run and exhaustively under ``thorough``.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Set

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import ptoc.runtime.state as _state
from ptoc.runtime.gm_pool import CHUNK, CHUNK_BITS, DensePool, Written

#: max_examples of the ci profile, the unit ``examples`` scales by
CI_EXAMPLES = 60

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def examples(ci: int) -> settings:
    """Settings running ``ci`` examples under the ``ci`` profile and proportionally more
    under a profile with more (``thorough``: ``ci * 2000 / 60``)."""
    scale = max(1.0, settings.default.max_examples / CI_EXAMPLES)
    return settings(max_examples=max(1, round(ci * scale)))


#: the largest memory whose bytes are scanned when its machine goes (a scan of a
#: small memory costs microseconds; the default 64 MiB one is left to the tests of
#: ``tests/runtime/test_gm_pool.py``)
SCANNED_GM = 1 << 20
_unrecorded: list[str] = []


class _CheckedPool(DensePool):
    """The process's pool, checking for each small memory a machine gives back, or a
    kept machine's memory when it is reset, that every chunk holding a nonzero byte was
    recorded: a write that bypasses the record would leave stale bytes in the next
    machine's memory. (A failure inside ``__del__`` cannot raise: it is noted, and the
    test that made the machine fails.)"""

    def give(self, gm: np.ndarray, written: Written, holders: int) -> None:
        _check_recorded(gm, written)
        super().give(gm, written, holders + 1)  # this override's frame holds it too

    def clean(self, gm: np.ndarray, written: Written) -> None:
        _check_recorded(gm, written)
        super().clean(gm, written)


#: whether the cyclic GC is collecting: a machine it finalizes gives its memory back from
#: inside whatever code the collection interrupted (numpy's own C code among it), where
#: the scan's ufuncs must not run; its bytes are copied and scanned at the next check
_collecting = [False]
_deferred: list[tuple[bytes, frozenset[int]]] = []


def _gc_phase(phase: str, info: dict) -> None:
    _collecting[0] = phase == "start"


gc.callbacks.append(_gc_phase)


def _check_recorded(gm: np.ndarray, written: Written) -> None:
    chunks = written.chunks
    if chunks is None or len(gm) > SCANNED_GM:
        return
    if _collecting[0]:
        _deferred.append((gm.tobytes(), frozenset(chunks)))
        return
    while _deferred:
        raw, known = _deferred.pop()
        _scan(np.frombuffer(raw, np.uint8), known)
    _scan(gm, chunks)


def _scan(gm: np.ndarray, chunks: Set[int]) -> None:
    whole = len(gm) // CHUNK * CHUNK
    found = set(np.flatnonzero(gm[:whole].reshape(-1, CHUNK).any(axis=1)).tolist())
    if whole < len(gm) and gm[whole:].any():
        found.add(whole >> CHUNK_BITS)
    if found - chunks:
        _unrecorded.append(f"chunks {sorted(found - chunks)[:4]} of {len(gm)} bytes")


_state.POOL = _CheckedPool()


@pytest.fixture(autouse=True)
def _every_gm_write_is_recorded() -> Iterator[None]:
    yield
    while _deferred:
        raw, known = _deferred.pop()
        _scan(np.frombuffer(raw, np.uint8), known)
    if _unrecorded:
        found = list(_unrecorded)
        _unrecorded.clear()
        pytest.fail(
            f"{len(found)} machine(s) wrote global memory they did not record, e.g. {found[:3]}"
        )
