"""A hypothesis corpus of random DAGs (20 to 500 ops, mixed tile sizes and DataTypes,
every shape-changing op, windows with row steps and padded extents, adversarial
inputs): every one that compiles validates and runs with zero faults, bit-exact to the
reference; one that does not names a machine limit and the op's kernel line.

The example counts scale with the hypothesis profile (``ci``: 10, 7 and 6 kernels;
``HYPOTHESIS_PROFILE=thorough``: hundreds).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.dialects.reference import run_reference
from ptoc.passes.diagnostics import CompileError
from ptoc.passes.execute import compare, run_compiled
from ptoc.passes.geometry import default_tile_limit
from ptoc.passes.pipeline import compile_module
from ptoc.testing import KernelSpec, random_kernel

from .conftest import MACHINES, assume_machine_limit

SMALL = ((4, 32), (8, 16), (1, 64), (2, 8), (8, 32))
MIXED = ((4, 32), (8, 64), (16, 16), (1, 128), (32, 64), (64, 128), (2, 8))
#: odd shapes: padded geometry (5x3, 3x17) and uneven row pieces (33 rows)
ODD = ((5, 3), (1, 8), (33, 32), (16, 64), (7, 100), (3, 17))


def _check(seed: int, spec: KernelSpec, machine: str) -> None:
    config = MACHINES[machine]
    module, inputs = random_kernel(seed, spec)
    try:
        ck = compile_module(module, config, verify_input=False)
    except CompileError as e:
        assume_machine_limit(e)
        return
    compare(run_compiled(ck, inputs, config), run_reference(module, inputs))


def _spec(ops: int, shapes, machine: str, pes: int = 1, shape_ops: float = 0.4) -> KernelSpec:  # type: ignore[no-untyped-def]
    return KernelSpec(
        ops,
        shapes=shapes,
        pes=pes,
        shape_ops=shape_ops,
        windows=True,
        extents=True,
        adversarial=True,
        budget=default_tile_limit(MACHINES[machine]),
    )


@settings(max_examples=max(1, settings.default.max_examples // 6))
@given(
    seed=st.integers(0, 2**31 - 1),
    ops=st.integers(20, 500),
    pes=st.sampled_from([1, 2, 4]),
    shapes=st.sampled_from([MIXED, ODD]),
    shape_ops=st.sampled_from([0.0, 0.3, 0.6]),
)
def test_random_dag_default_machine(seed: int, ops: int, pes: int, shapes, shape_ops) -> None:  # type: ignore[no-untyped-def]
    _check(seed, _spec(ops, shapes, "default", pes, shape_ops), "default")


@settings(max_examples=max(1, settings.default.max_examples // 8))
@given(
    seed=st.integers(0, 2**31 - 1),
    ops=st.integers(20, 500),
    shapes=st.sampled_from([SMALL, ODD]),
)
def test_random_dag_tiny_machine(seed: int, ops: int, shapes) -> None:  # type: ignore[no-untyped-def]
    _check(seed, _spec(ops, shapes, "tiny"), "tiny")


@settings(max_examples=max(1, settings.default.max_examples // 10))
@given(seed=st.integers(0, 2**31 - 1), ops=st.integers(20, 300))
def test_random_dag_cramped_machine(seed: int, ops: int) -> None:
    _check(seed, _spec(ops, SMALL, "cramped", pes=2), "cramped")
