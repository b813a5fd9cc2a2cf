"""What each tile bundle of an emitted program means (:class:`Intent`), and the compact
table the emitter keeps them in (:class:`IntentTable`).

A compiled kernel keeps one intent per bundle for as long as it lives (the validator
replays them, reports and diagnostics name bundles by their kind). As objects -- the
intent, two id tuples, its key in a dictionary -- they were about 270 bytes per bundle,
an eighth of what a compiled kernel holds; the table keeps the same facts in flat arrays,
about 70 bytes, and builds an :class:`Intent` when one is asked for.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..allocate.gprs import Scalar


@dataclass(frozen=True, slots=True)
class Intent:
    """What one tile bundle means, in value ids (see :mod:`ptoc.passes.validate`).

    ``kind`` is ``op`` (a kernel bundle) or the role of an inserted one (``refresh``,
    ``spill``, ``reload``, ``filler``); ``srcs``/``dsts`` the value ids its bound sources
    must hold and its destinations will hold (-1: a value nobody reads); ``scalars`` the
    expected content of each B.IOR slot; ``restores``: the value a reload brings back.
    """

    index: int
    kind: str
    op: str
    srcs: tuple[int, ...]
    dsts: tuple[int, ...]
    scalars: tuple[Scalar, ...]
    restores: int = -1
    gm_bytes: int = 0


#: the slot setters of :class:`Intent`'s fields, in order
_SET_INTENT = tuple(getattr(Intent, name).__set__ for name in Intent.__slots__)


class IntentTable(Mapping[int, Intent]):
    """The intents of a program's tile bundles by the command index of their BSTART: a
    read-only mapping, filled by :meth:`add` in increasing index order.

    Each field is one flat array (the value ids of all bundles in one, with each
    bundle's bounds; the kind and mnemonic as one index into a short list of the distinct
    pairs; a spill's or reload's restored value and bytes in a dictionary of their own),
    so a bundle costs its numbers rather than six Python objects."""

    __slots__ = (
        "_codes",
        "_ends",
        "_ids",
        "_ops",
        "_pairs",
        "_restores",
        "_scalars",
        "_starts",
    )

    def __init__(self) -> None:
        self._starts = array("q")
        #: the distinct ``(kind, mnemonic)`` pairs, each at its code
        self._pairs: list[tuple[str, str]] = []
        self._codes: dict[tuple[str, str], int] = {}
        #: per bundle: its ``(kind, mnemonic)`` pair's code
        self._ops = array("H")
        #: every bundle's source ids, then its destination ids
        self._ids = array("q")
        #: 0, then per bundle: where its sources end and where its destinations end in
        #: ``_ids`` (bundle ``k``'s ids are ``_ids[_ends[2k] : _ends[2k + 2]]``)
        self._ends = array("q", [0])
        self._scalars: list[tuple[Scalar, ...]] = []
        #: ``(restores, gm_bytes)`` by position, of the bundles that have them (a spill
        #: or a reload; every other bundle's are ``(-1, 0)``)
        self._restores: dict[int, tuple[int, int]] = {}

    def add(
        self,
        index: int,
        kind: str,
        op: str,
        srcs: tuple[int, ...] | list[int],
        dsts: tuple[int, ...] | list[int],
        scalars: tuple[Scalar, ...],
        restores: int = -1,
        gm_bytes: int = 0,
    ) -> None:
        """Record the intent of the bundle at command ``index`` (after every one so far)."""
        starts = self._starts
        if starts and index <= starts[-1]:
            raise ValueError(f"intent at command {index} after one at {starts[-1]}")
        code = self._codes.get((kind, op))
        if code is None:
            code = self._codes[(kind, op)] = len(self._pairs)
            self._pairs.append((kind, op))
        if restores != -1 or gm_bytes:
            self._restores[len(starts)] = (restores, gm_bytes)
        starts.append(index)
        self._ops.append(code)
        ids, ends = self._ids, self._ends
        ids.extend(srcs)
        ends.append(len(ids))
        ids.extend(dsts)
        ends.append(len(ids))
        self._scalars.append(scalars)

    def _at(self, index: int) -> int:
        """The position of the bundle at command ``index``; -1 when there is none."""
        starts = self._starts
        k = bisect_left(starts, index)
        return k if k < len(starts) and starts[k] == index else -1

    def _intent(self, k: int) -> Intent:
        ends, ids = self._ends, self._ids
        a, b, c = ends[2 * k], ends[2 * k + 1], ends[2 * k + 2]
        kind, op = self._pairs[self._ops[k]]
        restores, gm_bytes = self._restores.get(k, _NO_RESTORE)
        # ``Intent(...)`` without the frozen dataclass's ``__init__``, which sets every
        # field through ``object.__setattr__`` (twice the time)
        it = object.__new__(Intent)
        s0, s1, s2, s3, s4, s5, s6, s7 = _SET_INTENT
        s0(it, self._starts[k])
        s1(it, kind)
        s2(it, op)
        s3(it, tuple(ids[a:b]))
        s4(it, tuple(ids[b:c]))
        s5(it, self._scalars[k])
        s6(it, restores)
        s7(it, gm_bytes)
        return it

    def read(self, index: int, hint: int = 0) -> Row | None:
        """``(position, kind, op, srcs, dsts, scalars)`` of the bundle at command
        ``index``, the position ``hint`` tried first (the validator reads the bundles in
        program order but for loop bodies); None when there is none. What the validator
        reads of every bundle, without building its :class:`Intent`."""
        starts = self._starts
        if hint < len(starts) and starts[hint] == index:
            k = hint
        else:
            k = self._at(index)
            if k < 0:
                return None
        ends, ids = self._ends, self._ids
        b = ends[2 * k + 1]
        kind, op = self._pairs[self._ops[k]]
        return (
            k,
            kind,
            op,
            tuple(ids[ends[2 * k] : b]),
            tuple(ids[b : ends[2 * k + 2]]),
            self._scalars[k],
        )

    def restore(self, k: int) -> tuple[int, int]:
        """``(restores, gm_bytes)`` of the bundle at position ``k``: what the validator
        reads of a spill or a reload besides its :meth:`read`."""
        return self._restores.get(k, _NO_RESTORE)

    def __getitem__(self, index: int) -> Intent:
        k = self._at(index)
        if k < 0:
            raise KeyError(index)
        return self._intent(k)

    def get(self, index: int, default: Intent | None = None) -> Intent | None:  # type: ignore[override]
        k = self._at(index)
        return default if k < 0 else self._intent(k)

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and self._at(index) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self._starts)

    def __len__(self) -> int:
        return len(self._starts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return len(self) == len(other) and all(other.get(i) == it for i, it in self.items())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IntentTable({len(self)} bundles)"


#: what :meth:`IntentTable.read` returns: ``(position, kind, op, srcs, dsts, scalars)``
Row = tuple[int, str, str, tuple[int, ...], tuple[int, ...], tuple["Scalar", ...]]

#: the ``(restores, gm_bytes)`` of a bundle that is neither a spill nor a reload
_NO_RESTORE = (-1, 0)
