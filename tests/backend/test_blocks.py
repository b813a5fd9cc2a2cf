"""Block segmentation (``Program.blocks``): a BSTART opens a block, BSTOP/C.BSTOP or the
next BSTART closes it, and commands outside any block form blocks of their own -- over
random command sequences, against a plain reading of that rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.program import Block, Command, Program, ScalarStart, Stop, TileStart

from .strategies import iots, scalars, tile_starts

_COMMANDS = st.one_of(
    tile_starts(),
    st.builds(ScalarStart, st.sampled_from(["STD", "FP"]), st.sampled_from(["FALL", "COND"])),
    st.builds(Stop, st.booleans()),
    iots(),
    scalars(),
)


def _segments(commands: list[Command]) -> list[Block]:
    """The rule, read literally: one block per BSTART up to the next BSTART or BSTOP
    (included); a run of other commands outside a block up to a BSTOP or BSTART."""
    out: list[Block] = []
    i, n = 0, len(commands)
    while i < n:
        c = commands[i]
        start = c if isinstance(c, (TileStart, ScalarStart)) else None
        j = i + 1 if start is not None else i
        while j < n and not isinstance(commands[j], (TileStart, ScalarStart, Stop)):
            j += 1
        stop = commands[j] if j < n and isinstance(commands[j], Stop) else None
        body = tuple(commands[i + 1 if start is not None else i : j])
        out.append(Block(start, body, stop, i))
        i = j + 1 if stop is not None else j
    return out


@given(st.lists(_COMMANDS, max_size=40))
def test_blocks_follow_the_segmentation_rule(commands: list[Command]) -> None:
    p = Program(tuple(commands))
    got = p.blocks()
    assert got == _segments(commands)
    assert list(p.iter_blocks()) == got
    # the blocks cover the program in order, each command once
    flat = [x for b in got for x in ((b.start,) if b.start else ()) + b.commands + (
        (b.stop,) if b.stop else ())]  # fmt: skip
    assert flat == commands
    assert all(hash(b) == hash(Block(b.start, b.commands, b.stop, b.index)) for b in got)
