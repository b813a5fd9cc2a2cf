"""Drawing many elements at once: a list of ``n`` integers from two byte strings (a kind
byte and 64 raw bits per element) rather than one strategy per element.

Hypothesis spends most of a small property test's time in per-element draws (``st.lists``
of ``st.one_of``); two ``st.binary`` draws keep the same mix of special, moderate and
uniform encodings at a fraction of the cost. Zero bytes shrink to kind 0 and raw 0, so a
failing example shrinks towards each picker's first choice."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

RAW_BYTES = 8


def elements(n: int, pick: Callable[[int, int], int]) -> st.SearchStrategy[list[int]]:
    """``n`` integers ``pick(kind, raw)``, ``kind`` in 0..255 and ``raw`` 64 random bits
    per element."""

    def build(args: tuple[bytes, bytes]) -> list[int]:
        kinds, raw = args
        return [
            pick(kinds[i], int.from_bytes(raw[i * RAW_BYTES : (i + 1) * RAW_BYTES], "little"))
            for i in range(n)
        ]

    return st.tuples(
        st.binary(min_size=n, max_size=n),
        st.binary(min_size=n * RAW_BYTES, max_size=n * RAW_BYTES),
    ).map(build)
