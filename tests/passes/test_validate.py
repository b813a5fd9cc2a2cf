"""The allocation validator accepts compiled programs and rejects every kind of broken
one: a wrong reference, a wrong scalar, a dropped refresh, a lost spill, overflow."""

from __future__ import annotations

import dataclasses

import pytest

from ptoc.backend.isa.fields import Hand
from ptoc.backend.program import Ior, Iot, Program, ScalarStart, Stop, TileRef
from ptoc.passes.emit import Emitted, IntentTable
from ptoc.passes.pipeline import CompiledKernel, compile_module
from ptoc.passes.validate import ValidationError, validate
from ptoc.runtime import MachineConfig
from ptoc.testing import KernelBuilder


def _reuse_kernel():
    kb = KernelBuilder("reuse")
    x = kb.tensor("x", "FP32", (8, 64))
    o = kb.tensor("o", "FP32", (8, 64))
    a = kb.load(x, (8, 64))
    b = kb.exp(a)
    c = kb.add(a, b)
    d = kb.mul(c, b)
    kb.store(o, kb.sub(d, a))
    return kb.finish()


def _compiled(**machine: int) -> CompiledKernel:
    return compile_module(_reuse_kernel(), MachineConfig(**machine))


def _replay(em: Emitted, **machine: int):
    return validate(em, MachineConfig(**machine))


def _with(em: Emitted, i: int, cmd) -> Emitted:  # type: ignore[no-untyped-def]
    cmds = list(em.program.commands)
    cmds[i] = cmd
    return dataclasses.replace(em, program=Program(tuple(cmds)))


def _find(em: Emitted, pred) -> int:  # type: ignore[no-untyped-def]
    return next(i for i, c in enumerate(em.program.commands) if pred(c))


def test_compiled_programs_validate() -> None:
    r = _replay(_compiled().emitted)
    assert r.kinds == {"op": 6} and r.scalar_blocks == 1 and r.peak_bytes > 0


def test_a_wrong_reference_is_caught() -> None:
    em = _compiled().emitted
    i = _find(em, lambda c: isinstance(c, Iot) and len(c.srcs) == 2)
    iot = em.program.commands[i]
    swapped = dataclasses.replace(iot, srcs=iot.srcs[::-1])
    with pytest.raises(ValidationError, match=r"source 0 .* holds value .* the IR reads value"):
        _replay(_with(em, i, swapped))


def test_an_empty_position_is_caught() -> None:
    em = _compiled().emitted
    i = _find(em, lambda c: isinstance(c, Iot) and len(c.srcs) == 2)
    iot = em.program.commands[i]
    bad = dataclasses.replace(iot, srcs=(TileRef(iot.srcs[0].hand, 9), iot.srcs[1]))
    with pytest.raises(ValidationError, match="empty queue position"):
        _replay(_with(em, i, bad))


def test_a_wrong_gpr_is_caught() -> None:
    em = _compiled().emitted
    i = _find(em, lambda c: isinstance(c, Ior))
    bad = dataclasses.replace(em.program.commands[i], src0=em.program.commands[i].src1)
    with pytest.raises(ValidationError, match=r"B\.IOR slot 0"):
        _replay(_with(em, i, bad))


def test_a_dropped_refresh_is_caught() -> None:
    ck = _compiled(hands=1, depth=3)
    assert ck.stats.refresh >= 1
    em = ck.emitted
    start = next(i for i, it in em.intents.items() if it.kind == "refresh")
    stop = start + next(
        k for k, c in enumerate(em.program.commands[start:]) if type(c).__name__ == "Stop"
    )
    cmds = em.program.commands[:start] + em.program.commands[stop + 1 :]
    shift = stop + 1 - start
    intents = {
        (i - shift if i > start else i): dataclasses.replace(it, index=i)
        for i, it in em.intents.items()
        if i != start
    }
    bad = dataclasses.replace(em, program=Program(cmds), intents=intents)
    with pytest.raises(ValidationError):
        _replay(bad, hands=1, depth=3)


def test_a_reload_from_the_wrong_place_is_caught() -> None:
    ck = _compiled(hands=1, depth=2)
    em = ck.emitted
    i = next(i for i, it in em.intents.items() if it.kind == "reload")
    it = em.intents[i]
    wrong = it.scalars[0]._replace(value=it.scalars[0].value + 64)
    intents = dict(em.intents)
    intents[i] = dataclasses.replace(it, scalars=(wrong, *it.scalars[1:]))
    with pytest.raises(ValidationError, match=r"B\.IOR slot 0|reload of value"):
        _replay(dataclasses.replace(em, intents=intents), hands=1, depth=2)


def test_capacity_and_depth_are_checked() -> None:
    em = _compiled().emitted
    with pytest.raises(ValidationError, match="above the capacity 4096"):
        _replay(em, capacity=4096)
    with pytest.raises(ValidationError, match="outside the 4x2 queues"):
        _replay(em, depth=2)


def test_a_branch_block_no_loop_explains_is_caught() -> None:
    """A straight-line kernel's scalar block turned into a COND branch (the same branch
    twice: the first one is named)."""
    em = _compiled().emitted
    i = _find(em, lambda c: isinstance(c, ScalarStart))
    cond = ScalarStart("STD", "COND", 0)
    em = _with(em, i, cond)
    cmds = [*em.program.commands, cond, Stop()]
    em = dataclasses.replace(em, program=Program(tuple(cmds)))
    with pytest.raises(ValidationError, match=rf"block at command {i} is a COND branch"):
        _replay(em)


def _table_without(em: Emitted, drop: int) -> IntentTable:
    """``em``'s intents as the emitter's table, less the bundle at command ``drop``."""
    table = IntentTable()
    for i, it in em.intents.items():
        if i != drop:
            table.add(i, it.kind, it.op, it.srcs, it.dsts, it.scalars, it.restores, it.gm_bytes)
    return table


def test_a_bundle_without_an_intent_is_caught() -> None:
    """Read from the emitter's table and from a plain mapping of intents alike."""
    em = _compiled().emitted
    i = list(em.intents)[2]
    plain = {k: it for k, it in em.intents.items() if k != i}
    for intents in (_table_without(em, i), plain):
        with pytest.raises(
            ValidationError, match=rf"command {i}: a tile bundle with no recorded"
        ):
            _replay(dataclasses.replace(em, intents=intents))


def test_a_bundle_binding_other_operands_is_caught() -> None:
    em = _compiled().emitted
    i = _find(em, lambda c: isinstance(c, Iot) and len(c.srcs) == 2)
    iot = em.program.commands[i]
    with pytest.raises(
        ValidationError, match=r"binds 1 sources / 1 destinations, the IR means 2"
    ):
        _replay(_with(em, i, dataclasses.replace(iot, srcs=iot.srcs[:1])))


def test_a_destination_on_a_missing_hand_is_caught() -> None:
    """A result committed to hand M, the first past the last of a machine with two hands
    (its sources in range)."""
    em = _compiled(hands=2).emitted
    i = _find(em, lambda c: isinstance(c, Iot) and c.dst is not None)
    bad = dataclasses.replace(em.program.commands[i], dst=Hand.M)
    with pytest.raises(ValidationError, match="destination hand M does not exist"):
        _replay(_with(em, i, bad), hands=2)
