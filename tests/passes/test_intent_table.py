"""The emitter's compact intent table against the mapping of :class:`Intent` objects it
replaces: the same keys in the same order, the same intents, and the validator's rows."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.passes.allocate.gprs import Scalar
from ptoc.passes.emit import Intent, IntentTable
from ptoc.passes.pipeline import compile_module
from ptoc.testing import KernelSpec, random_kernel

KINDS = ("op", "refresh", "spill", "reload", "filler")
ids = st.lists(st.integers(-1, 2**40), max_size=4).map(tuple)
scalars = st.lists(st.builds(Scalar, st.integers(0, 2**64 - 1)), max_size=3).map(tuple)
intents = st.tuples(
    st.integers(1, 50),  # the gap to the previous bundle's command index
    st.sampled_from(KINDS),
    st.sampled_from(("TADD", "TLOAD", "TMOV", "TSTORE", "TMRGSORT")),
    ids,
    ids,
    scalars,
    st.integers(-1, 2**31),
    st.integers(0, 2**20),
)


def _both(rows: list[tuple]) -> tuple[IntentTable, dict[int, Intent]]:  # type: ignore[type-arg]
    table, plain = IntentTable(), {}
    index = -1
    for gap, *fields in rows:
        index += gap
        table.add(index, *fields)
        plain[index] = Intent(index, *fields)
    return table, plain


@given(st.lists(intents, max_size=30), st.integers(-5, 1600))
def test_the_table_is_the_mapping_of_its_intents(rows, probe):  # type: ignore[no-untyped-def]
    table, plain = _both(rows)
    assert list(table) == list(plain)
    assert len(table) == len(plain)
    assert dict(table.items()) == plain
    assert table == plain and plain == table
    for i, it in plain.items():
        assert table[i] == it
        assert type(table[i].srcs) is tuple and type(table[i].dsts) is tuple
    assert (probe in table) == (probe in plain)
    assert table.get(probe) == plain.get(probe)
    if probe not in plain:
        with pytest.raises(KeyError):
            table[probe]
    assert pickle.loads(pickle.dumps(table)) == plain


@given(st.lists(intents, min_size=1, max_size=30), st.data())
def test_rows_and_positions_are_the_intents_fields(rows, data):  # type: ignore[no-untyped-def]
    table, plain = _both(rows)
    keys = list(plain)
    for k, i in enumerate(keys):
        hint = data.draw(st.integers(0, len(keys) + 1))
        assert table.read(i, hint)[0] == k
        it = plain[i]
        assert table.read(i, hint) == (k, it.kind, it.op, it.srcs, it.dsts, it.scalars)
        assert table.restore(k) == (it.restores, it.gm_bytes)
    assert table.read(keys[-1] + 1, 0) is None


def test_indices_must_increase() -> None:
    table = IntentTable()
    table.add(3, "op", "TADD", (1, 2), (3,), ())
    for index in (3, 2):
        with pytest.raises(ValueError, match="after one at 3"):
            table.add(index, "op", "TADD", (), (), ())
    assert list(table) == [3]


def test_a_compiled_kernel_keeps_its_intents_in_a_table() -> None:
    module = random_kernel(7, KernelSpec(60, reach_back=False))[0]
    em = compile_module(module, verify_input=False).emitted
    assert type(em.intents) is IntentTable
    tiles = [b.index for b in em.program.blocks() if type(b.start).__name__ == "TileStart"]
    assert list(em.intents) == tiles
    kinds = {it.kind for it in em.intents.values()}
    assert "op" in kinds and kinds <= set(KINDS)


_LAYOUT_PROBE = """
import gc
from ptoc.passes.pipeline import compile_module
from ptoc.testing import KernelSpec, random_kernel
module = random_kernel(3, KernelSpec(300, reach_back=False))[0]
compiled = compile_module(module, verify_input=False)
results = [r for op in compiled.module.walk() for r in op.results]
print(len(results), sum(any(type(x) is dict for x in gc.get_referents(r)) for r in results))
"""


def test_values_named_late_keep_the_shared_instance_layout() -> None:
    """Legalize gives its new values the name hints of the old ones after a whole kernel
    of values exists; they must not get a dictionary each
    (``pto_base._share_value_attributes``). In a fresh interpreter, where the kernel is
    built before anything is named (the state that gave every legalized value its own
    dictionary)."""
    out = subprocess.run(
        [sys.executable, "-c", _LAYOUT_PROBE], capture_output=True, text=True, check=True
    ).stdout.split()
    results, with_dict = int(out[0]), int(out[1])
    assert results > 300
    assert with_dict == 0
