"""The DSL-kernel fuzz target: random ``ptoc.lang`` kernels (every shape-changing op,
windows with row steps, up to four PEs) traced, compiled, validated and run on the
default and the tiny machine with adversarial inputs (every binade, subnormals, +-0,
+-inf, NaN payloads quiet and signalling, integer extremes), bit-exact against the
reference: no internal exception, no fault, no mismatch.

Bounded by the hypothesis profile (``ci``: 10 kernels; ``HYPOTHESIS_PROFILE=thorough``:
hundreds).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptoc
from ptoc.passes.geometry import default_tile_limit
from ptoc.testing import KernelSpec, random_kernel

from .conftest import MACHINES, assume_machine_limit
from .dsl_source import dsl_kernel

#: tile shapes per machine: the default machine gets tiles up to 32 KiB (split into row
#: pieces), the tiny one tiles that fit its 16 KiB several times over
SHAPES = {
    "default": ((4, 32), (8, 64), (16, 16), (1, 128), (32, 64), (64, 128), (2, 8), (5, 3)),
    "tiny": ((4, 32), (8, 16), (1, 64), (2, 8), (8, 32), (3, 17), (33, 32)),
}


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return tmp_path_factory.mktemp("dsl_fuzz")


@settings(max_examples=max(1, settings.default.max_examples // 6))
@given(
    seed=st.integers(0, 2**31 - 1),
    ops=st.integers(10, 120),
    pes=st.sampled_from([1, 2, 4]),
    machine=st.sampled_from(sorted(SHAPES)),
    shape_ops=st.sampled_from([0.3, 0.6, 0.9]),
)
def test_random_dsl_kernels_verify_bit_exact(
    kernel_dir, seed: int, ops: int, pes: int, machine: str, shape_ops: float
) -> None:  # type: ignore[no-untyped-def]
    config = MACHINES[machine]
    spec = KernelSpec(
        ops,
        shapes=SHAPES[machine],
        pes=pes,
        shape_ops=shape_ops,
        windows=True,
        adversarial=True,
        budget=default_tile_limit(config),
    )
    module, inputs = random_kernel(seed, spec)
    kernel = dsl_kernel(module, kernel_dir)
    try:
        program = ptoc.compile(kernel, config)
    except ptoc.CompileError as e:
        assume_machine_limit(e, kernel.file)
        return
    ptoc.verify(program, **inputs)
