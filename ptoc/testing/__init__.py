"""Utilities for testing and fuzzing compilers of ``tile`` kernels.

``ptoc.testing`` is public: it builds ``tile`` IR without the DSL and draws random, legal,
fault-free kernels, the corpus ptoc's own property tests, fuzz target and benchmarks use.

* :class:`KernelBuilder` builds a ``tile`` module op by op (shapes and DataTypes are
  inferred, every op records the caller's ``file:line``), including the compound interfaces;
* :func:`random_kernel` draws a kernel and inputs for it from a :class:`KernelSpec`
  (deterministic in the seed); :func:`random_inputs` and :func:`adversarial_inputs` draw
  new inputs for a kernel, the latter across every binade, subnormals, +-0, +-inf and NaN
  payloads for the floats and the extremes for the integers.

It sits above ``ptoc.dialects`` (and ``ptoc.backend``) in the floors and below nothing:
no library module of ptoc imports it (``tests/test_layering.py``).
"""

from .builder import KernelBuilder
from .random_kernel import KernelSpec, adversarial_inputs, random_inputs, random_kernel

__all__ = [
    "KernelBuilder",
    "KernelSpec",
    "adversarial_inputs",
    "random_inputs",
    "random_kernel",
]
