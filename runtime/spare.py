"""A kept machine per thread, for callers that run one kernel after another on a machine
of their own and drop it when the run is over (``ptoc.run``, ``run_compiled``).

Speed only: a machine given back with :func:`keep_machine` is reset when
:func:`spare_machine` hands it out again -- the state of a new core of its configuration,
its dense memory zeroed again where it was written (``MachineState.reset``) -- which
costs less than building a core and letting the old one go. Nothing else may refer to a
machine given back.
"""

from __future__ import annotations

import threading

from ptoc.backend.target import MachineConfig

from .machine import Machine

#: per thread: the machine the last finished run gave back (at most one)
_KEPT = threading.local()


def spare_machine(config: MachineConfig) -> Machine:
    """A machine in the state of ``Machine(config)``: the calling thread's kept one when
    it has this configuration and can be reset, else a new one."""
    m = getattr(_KEPT, "machine", None)
    if m is not None:
        _KEPT.machine = None
        if (m.config is config or m.config == config) and m.state.reset():
            return m
    return Machine(config)


def keep_machine(m: Machine | None) -> None:
    """Keep ``m``, whose run is over and which nothing else refers to, for the calling
    thread's next :func:`spare_machine` (the one kept before goes; None: keep none)."""
    _KEPT.machine = m
