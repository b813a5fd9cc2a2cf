"""The campaign driver on hand-made futures: resubmission of lost chunks, the first
failing seed, and runs that do not add up."""

from __future__ import annotations

import concurrent.futures as cf

import pytest

from ptoc.campaign import RESUBMITS, CampaignError, CampaignReport, ChunkResult, drive


class Lost(Exception):
    """Stands for a worker that died holding the chunk."""


def done(value: object = None, error: BaseException | None = None) -> cf.Future:
    f: cf.Future = cf.Future()
    if error is not None:
        f.set_exception(error)
    else:
        f.set_result(value)
    return f


def first(fs: set[cf.Future]) -> set[cf.Future]:
    return {min(fs, key=id)}


def run(spans, outcome, progress=None):  # type: ignore[no-untyped-def]
    """``outcome(a, b, attempt)`` -> a ChunkResult or an exception for each submission."""
    attempts: dict[tuple[int, int], int] = {}

    def submit(a: int, b: int) -> cf.Future:
        k = attempts[(a, b)] = attempts.get((a, b), 0) + 1
        r = outcome(a, b, k)
        return done(error=r) if isinstance(r, BaseException) else done(r)

    report = CampaignReport()
    drive(spans, submit, first, lambda e: isinstance(e, Lost), progress, report)
    return report, attempts


SPANS = [(0, 10), (10, 20), (20, 30)]


def test_a_lost_chunk_is_resubmitted_and_reported() -> None:
    def outcome(a: int, b: int, k: int) -> object:
        return Lost() if (a, k) == (10, 1) else ChunkResult(a, b, b - a, None)

    seen: list[int] = []
    report, attempts = run(SPANS, outcome, seen.append)
    assert report.runs == 30 and report.retried == [(10, 20)] and attempts[(10, 20)] == 2
    assert seen[-1] == 30 and report.first_failure is None


def test_a_chunk_lost_too_often_is_an_error_not_a_pass() -> None:
    def outcome(a: int, b: int, k: int) -> object:
        return Lost() if a == 20 else ChunkResult(a, b, b - a, None)

    with pytest.raises(Lost):
        run(SPANS, outcome)
    assert RESUBMITS == 3


def test_runs_that_do_not_add_up_are_an_error() -> None:
    def outcome(a: int, b: int, k: int) -> object:
        return ChunkResult(a, b, (b - a) - (a == 10), None)  # one run missing

    with pytest.raises(CampaignError, match="accounted for 29 of 30 runs"):
        run(SPANS, outcome)


def test_the_lowest_failing_seed_wins() -> None:
    def outcome(a: int, b: int, k: int) -> object:
        failed = {0: None, 10: 17, 20: 23}[a]
        return ChunkResult(a, b, (failed - a) if failed else b - a, failed)

    report, _ = run(SPANS, outcome)
    assert report.first_failure == 17


def test_a_batch_whose_first_failure_drops_a_later_chunk_of_the_same_batch() -> None:
    """Every chunk completes at once; the failing chunk is handled first and drops the
    later chunks, which are still in the completed batch being walked."""

    def outcome(a: int, b: int, k: int) -> object:
        return ChunkResult(a, b, 3, a + 3) if a == 0 else ChunkResult(a, b, b - a, None)

    def all_at_once(fs: set[cf.Future]) -> list[cf.Future]:
        return sorted(fs, key=lambda f: f.result().start)  # the failing chunk first

    report = CampaignReport()
    futures: dict[tuple[int, int], cf.Future] = {}

    def submit(a: int, b: int) -> cf.Future:
        futures[(a, b)] = done(outcome(a, b, 1))
        return futures[(a, b)]

    drive(SPANS, submit, all_at_once, lambda e: False, None, report)  # type: ignore[arg-type]
    assert report.first_failure == 3
