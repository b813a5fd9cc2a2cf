"""``run_compiled``'s per-kernel run plan (uniform ABI registers set at once, outputs
read from precomputed addresses) leaves the machine and the outputs exactly as
``place``, ``Machine.run`` and ``read_outputs`` do on a new machine."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.passes.execute as execute_module
from ptoc.passes.execute import place, read_outputs, run_compiled
from ptoc.passes.pipeline import compile_module
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.spare import _KEPT, keep_machine
from ptoc.testing import KernelSpec, random_kernel
from tests.compiler.kernels import KERNELS

CONFIGS = [MachineConfig(gm_size=1 << 21), MachineConfig(gm_size=1 << 20)]


def _both(ck, inputs, config, reuse=False):  # type: ignore[no-untyped-def]
    """(outputs, state snapshot) of ``run_compiled`` (on a new machine, or ``reuse``:
    on the one the last run kept) and of the step-by-step run on a new machine."""
    if not reuse:
        keep_machine(None)
    got = run_compiled(ck, inputs, config)
    kept = _KEPT.machine
    assert kept is not None
    fast = kept.snapshot()
    m = Machine(config)
    placement = place(ck, m, inputs)
    m.run(ck.program)
    want = read_outputs(ck, m, placement)
    return got, fast, want, m.snapshot()


def _same(got, fast, want, slow) -> None:  # type: ignore[no-untyped-def]
    assert got.keys() == want.keys()
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape
        assert got[name].tobytes() == want[name].tobytes(), name
    assert fast == slow


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_example_kernels(name: str) -> None:
    module, inputs = KERNELS[name](1)
    ck = compile_module(module, CONFIGS[0])
    _same(*_both(ck, inputs, CONFIGS[0]))


@pytest.mark.parametrize("seed", range(6))
def test_random_kernels(seed: int) -> None:
    config = CONFIGS[seed % 2]
    module, inputs = random_kernel(seed, KernelSpec(30 + 11 * seed))
    ck = compile_module(module, config, verify_input=False)
    _same(*_both(ck, inputs, config))


def test_the_plan_is_taken_where_it_applies() -> None:
    """Kernels whose registers are all uniform bases take the plan, the others (per-PE
    bases, scalar parameters, an argument table) the step-by-step path; both paths
    occur among the example kernels."""
    taken = {}
    for name in sorted(KERNELS):
        module, _ = KERNELS[name](1)
        ck = compile_module(module, CONFIGS[0])
        taken[name] = execute_module._run_plan(ck, CONFIGS[0].pes) is not None
    assert any(taken.values()) and not all(taken.values()), taken


def test_missing_input_zeroes_the_tensor() -> None:
    """An input left out is zero on both paths (as an output is)."""
    module, inputs = KERNELS["transpose"](2)
    ck = compile_module(module, CONFIGS[0])
    first = next(iter(inputs))
    fewer = {k: v for k, v in inputs.items() if k != first}
    run_compiled(ck, {**inputs, first: np.ones_like(inputs[first])}, CONFIGS[0])
    # (the kept machine ran with that input: its memory is written where it was)
    _same(*_both(ck, fewer, CONFIGS[0], reuse=True))
