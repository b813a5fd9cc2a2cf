"""Machines the end-to-end tests compile for."""

from __future__ import annotations

from hypothesis import assume

from ptoc.runtime import MachineConfig

#: the architectural machine, the issue's tiny machine, and a cramped two-hand one
MACHINES = {
    "default": MachineConfig(),
    "tiny": MachineConfig(depth=4, capacity=16384),
    "cramped": MachineConfig(hands=2, depth=3, capacity=8192),
}


#: the rules of kernels that are too large for a machine (not compiler defects)
LIMITS = ("capacity", "cannot be split", "tile size limit")


def assume_machine_limit(e: Exception, file: str | None = None) -> None:
    """A random kernel that does not fit the machine is no counterexample, provided the
    CompileError names a machine limit and (``file``) the kernel line of the op; anything
    else fails the test."""
    text = str(e)
    if not any(rule in text for rule in LIMITS):
        raise e
    if file is not None and getattr(e, "file", None) != file:
        raise AssertionError(f"the compile error names no kernel line: {text}") from e
    assume(False)
