"""Machines the end-to-end tests compile for."""

from __future__ import annotations

from ptoc.runtime import MachineConfig

#: the architectural machine, the issue's tiny machine, and a cramped two-hand one
MACHINES = {
    "default": MachineConfig(),
    "tiny": MachineConfig(depth=4, capacity=16384),
    "cramped": MachineConfig(hands=2, depth=3, capacity=8192),
}
