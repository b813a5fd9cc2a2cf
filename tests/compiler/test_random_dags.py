"""A hypothesis corpus of random DAGs (20 to 500 ops, mixed tile sizes and DataTypes):
every one compiles, validates and runs with zero faults, bit-exact to the reference.

The example counts scale with the hypothesis profile (``ci``: 10, 7 and 6 kernels;
``HYPOTHESIS_PROFILE=thorough``: hundreds).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.dialects.random_kernel import KernelSpec, random_kernel
from ptoc.dialects.reference import run_reference
from ptoc.passes.execute import compare, run_compiled
from ptoc.passes.pipeline import compile_module

from .conftest import MACHINES

SMALL = ((4, 32), (8, 16), (1, 64), (2, 8), (8, 32))
MIXED = ((4, 32), (8, 64), (16, 16), (1, 128), (32, 64), (64, 128), (2, 8))


def _check(seed: int, spec: KernelSpec, machine: str) -> None:
    module, inputs = random_kernel(seed, spec)
    config = MACHINES[machine]
    ck = compile_module(module, config, verify_input=False)
    compare(run_compiled(ck, inputs, config), run_reference(module, inputs))


@settings(max_examples=max(1, settings.default.max_examples // 6))
@given(seed=st.integers(0, 2**31 - 1), ops=st.integers(20, 500), pes=st.sampled_from([1, 2, 4]))
def test_random_dag_default_machine(seed: int, ops: int, pes: int) -> None:
    _check(seed, KernelSpec(ops, shapes=MIXED, pes=pes), "default")


@settings(max_examples=max(1, settings.default.max_examples // 8))
@given(seed=st.integers(0, 2**31 - 1), ops=st.integers(20, 500))
def test_random_dag_tiny_machine(seed: int, ops: int) -> None:
    _check(seed, KernelSpec(ops, shapes=SMALL), "tiny")


@settings(max_examples=max(1, settings.default.max_examples // 10))
@given(seed=st.integers(0, 2**31 - 1), ops=st.integers(20, 300))
def test_random_dag_cramped_machine(seed: int, ops: int) -> None:
    _check(seed, KernelSpec(ops, shapes=SMALL, pes=2), "cramped")
