"""Random DAGs over the DataTypes the executable ASL admits beyond the contract prose
(DECISIONS D9: FP64, the FP8 pair, TF32/HF32, the 64-bit and 8-bit integers) compile,
validate and run with zero faults, bit-exact to the reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.dialects.reference import run_reference
from ptoc.passes.execute import compare, run_compiled
from ptoc.passes.pipeline import compile_module
from ptoc.testing import KernelSpec, random_kernel

from .conftest import MACHINES

D9_TYPES = ("FP64", "E4M3", "E5M2", "TF32", "HF32", "S64", "U64", "S8", "U8")


@settings(max_examples=max(1, settings.default.max_examples // 8))
@given(seed=st.integers(0, 2**31 - 1), ops=st.integers(20, 200), pes=st.sampled_from([1, 4]))
def test_random_dag_at_the_asl_types(seed: int, ops: int, pes: int) -> None:
    module, inputs = random_kernel(seed, KernelSpec(ops, dtypes=D9_TYPES, pes=pes))
    config = MACHINES["default"]
    ck = compile_module(module, config, verify_input=False)
    compare(run_compiled(ck, inputs, config), run_reference(module, inputs))
