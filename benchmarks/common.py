"""Shared benchmark helpers: timing and one result table.

Benchmarks print ratios measured side by side in one run; nothing here is asserted.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One benchmark line: what was measured against which baseline."""

    name: str
    value: float  # seconds of the measured work
    baseline: float  # seconds of the baseline work
    baseline_name: str
    goal: float | None = None  # the ratio the issue aims for (at most)
    note: str = ""
    #: the stable name of the row in ``run_all.py --json`` (default: derived from
    #: ``name`` without its counts, so ``--quick`` and full runs share the keys)
    key: str = ""

    @property
    def row_key(self) -> str:
        return self.key or slug(self.name)

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("inf")


def slug(name: str) -> str:
    """A stable key for a row name: lower case, counts such as ``x1000`` or ``435 ops``
    dropped, other runs of non-alphanumerics turned into ``_``."""
    text = re.sub(r"\bx[\d,]+\b|\b[\d,]+ ops\b", " ", name.lower())
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def as_json(rows: list[Row]) -> list[dict[str, object]]:
    """The table as plain data, one object per row keyed by :attr:`Row.row_key`; rows
    that share a key (one measurement against several baselines) add their baseline's
    slug to it."""
    keys = [r.row_key for r in rows]
    shared = {k for k in keys if keys.count(k) > 1}
    out: list[dict[str, object]] = []
    for r, k in zip(rows, keys, strict=True):
        key = f"{k}__{slug(r.baseline_name)}" if k in shared else k
        out.append({
            "key": key,
            "name": r.name,
            "seconds": r.value,
            "baseline_seconds": r.baseline,
            "baseline": r.baseline_name,
            "ratio": r.ratio,
            "goal": r.goal,
            "meets_goal": None if r.goal is None else r.ratio <= r.goal,
            "note": r.note,
        })  # fmt: skip
    return out


def best_of(
    fn: Callable[[], object], repeat: int = 3, clock: Callable[[], float] = time.perf_counter
) -> float:
    """The fastest of ``repeat`` runs of ``fn`` in seconds (least disturbed by noise).

    ``clock`` is wall time by default; ``time.process_time`` counts only this process's
    CPU time, which keeps single-threaded numpy work comparable on a shared machine.
    """
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def per_call(
    fn: Callable[[], object],
    calls: int = 20,
    repeat: int = 3,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Seconds per call of ``fn``: the best of ``repeat`` runs of ``calls`` calls. A call
    of tens or hundreds of microseconds timed alone mostly measures cold caches and the
    machine's noise, on both sides of a ratio."""

    def run() -> None:
        for _ in range(calls):
            fn()

    return best_of(run, repeat, clock) / calls


def render(rows: list[Row]) -> str:
    head = (
        f"{'benchmark':<44} {'time':>10} {'baseline':>10} {'ratio':>8} {'goal':>6}  vs / note"
    )
    out = [head, "-" * len(head)]
    for r in rows:
        goal = f"<={r.goal:g}x" if r.goal else ""
        ok = "" if r.goal is None else (" ok" if r.ratio <= r.goal else " OVER")
        out.append(
            f"{r.name:<44} {r.value * 1e3:>8.1f}ms {r.baseline * 1e3:>8.1f}ms "
            f"{r.ratio:>7.1f}x {goal:>6}{ok}  {r.baseline_name}"
            + (f"; {r.note}" if r.note else "")
        )
    return "\n".join(out)


def best_each(
    fns: Sequence[Callable[[], object]],
    repeat: int = 3,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """:func:`best_of` of each of ``fns``, their runs alternated (A B A B ...): a change in
    the host's load during the measurement then weighs on every side of a row's ratio
    alike, where separate best-of runs would put it all on one side."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, f in enumerate(fns):
            t0 = clock()
            f()
            best[k] = min(best[k], clock() - t0)
    return best


def best_pair(
    fn: Callable[[], object],
    baseline: Callable[[], object],
    repeat: int = 3,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """:func:`best_each` of ``fn`` and its ``baseline``."""
    t, t_base = best_each((fn, baseline), repeat, clock)
    return t, t_base


def per_call_pair(
    fn: Callable[[], object],
    baseline: Callable[[], object],
    calls: int = 20,
    repeat: int = 3,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """:func:`per_call` of ``fn`` and of its ``baseline``, their runs of ``calls`` calls
    alternated (:func:`best_pair`)."""

    def runs(f: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(calls):
                f()

        return run

    t, t_base = best_pair(runs(fn), runs(baseline), repeat, clock)
    return t / calls, t_base / calls
