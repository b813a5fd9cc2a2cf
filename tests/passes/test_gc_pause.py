"""The collector's policy during a compile (``passes.gc_pause``): young collections keep
running, no full collection starts, and the collector is left as it was found."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from benchmarks.bench_compiler import softmax_blocks
from ptoc.passes import gc_pause
from ptoc.passes.pipeline import compile_module


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of every collection that starts while the test runs."""
    seen: list[int] = []

    def on(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(on)
    try:
        yield seen
    finally:
        gc.callbacks.remove(on)


@pytest.fixture
def collector_state() -> Iterator[None]:
    """Restore the collector's state whatever the test did to it."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        (gc.enable if enabled else gc.disable)()


@pytest.mark.skipif(not gc_pause._GENERATIONAL, reason="CPython's generational collector")
def test_a_compile_runs_young_collections_and_no_full_one(
    collections: list[int], collector_state: None
) -> None:
    module = softmax_blocks(700)
    gc.enable()
    # every generation's threshold low: without the pause the compile would run full
    # collections over and over
    gc.set_threshold(100, 2, 2)
    gc.collect()
    collections.clear()
    compile_module(module, verify_input=False)
    assert 0 in collections, "young collections ran meanwhile"
    assert 2 not in collections, f"a full collection ran during the compile: {collections}"
    assert gc.get_threshold() == (100, 2, 2)
    assert gc.isenabled()


def test_a_compile_leaves_a_switched_off_collector_off(
    collections: list[int], collector_state: None
) -> None:
    gc.disable()
    compile_module(softmax_blocks(70), verify_input=False)
    assert not gc.isenabled()
    assert collections == []


def test_the_thresholds_come_back_when_the_compile_fails(collector_state: None) -> None:
    gc.enable()
    gc.set_threshold(500, 7, 9)
    with pytest.raises(ZeroDivisionError), gc_pause.full_collections_paused():
        if gc_pause._GENERATIONAL:
            assert gc.get_threshold()[:2] == (500, 7)
            assert gc.get_threshold()[2] > 1 << 20
        else:
            assert not gc.isenabled()
        raise ZeroDivisionError
    assert gc.get_threshold() == (500, 7, 9)
    assert gc.isenabled()


def test_overlapping_compiles_restore_the_collector_once_the_last_leaves(
    collector_state: None,
) -> None:
    """Two threads whose pauses overlap, the first leaving first: the collector stays
    paused until the second leaves, then is as the first found it."""
    import threading

    gc.enable()
    gc.set_threshold(600, 9, 11)
    entered, release, left = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with gc_pause.full_collections_paused():
            entered.set()
            release.wait(10)
        left.set()

    t = threading.Thread(target=first)
    t.start()
    assert entered.wait(10)
    paused = gc.get_threshold(), gc.isenabled()
    with gc_pause.full_collections_paused():
        release.set()
        assert left.wait(10)
        assert (gc.get_threshold(), gc.isenabled()) == paused  # still paused
    t.join(10)
    assert gc.get_threshold() == (600, 9, 11)
    assert gc.isenabled()
    assert paused != ((600, 9, 11), True)
