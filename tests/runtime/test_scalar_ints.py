"""Scalar blocks of plain integer forms run on Python integers (``scalar_ints``) exactly
as on the numpy path: every GPR, the block condition (which block runs next) and the
fault when the PEs disagree on it, on values across the whole 64-bit range; blocks that
follow one another (a loop) start from the GPRs the last one kept as Python integers,
and a GPR written between runs (``set_gpr``, a machine unpickled) is seen."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ptoc.backend.asm import parse
from ptoc.runtime import Machine, MachineConfig, MachineFault
from ptoc.runtime import machine as machine_module
from ptoc.runtime.machine import compiled

REGS = ["a0", "a1", "a2", "a3", "a4", "s0", "s1", "zero"]
EDGES = [0, 1, 2, 3, 0x7F, 0x80, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32,
         (1 << 63) - 1, 1 << 63, (1 << 64) - 2, (1 << 64) - 1]  # fmt: skip
CONDITIONS = ["eq", "ne", "lt", "ge", "ltu", "geu", "and", "or"]

reg = st.sampled_from(REGS)
dst = reg  # writes to zero are discarded


@st.composite
def instruction(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["imm", "shift", "reg", "movi", "lui"]))
    if kind == "lui":  # the 20-bit immediate, sign-extended, shifted by 12
        return f"lui 0x{draw(st.integers(0, 0xFFFFF)):x}, ->{draw(dst)}"
    if kind == "imm":
        m = draw(st.sampled_from(["addi", "subi", "andi", "ori", "xori"]))
        imm = draw(st.integers(0, 4095) if m in ("addi", "subi") else st.integers(-2048, 2047))
        return f"{m} {draw(reg)}, {imm}, ->{draw(dst)}"
    if kind == "shift":
        m = draw(st.sampled_from(["slli", "srli", "srai"]))
        return f"{m} {draw(reg)}, {draw(st.integers(0, 63))}, ->{draw(dst)}"
    if kind == "movi":
        return f"c.movi {draw(st.integers(-16, 15))}, ->{draw(dst)}"
    m = draw(st.sampled_from(["add", "sub", "and", "or", "xor"]))
    mods = ["", ".sw", ".uw", ".neg" if m in ("add", "sub") else ".not"]
    mod = draw(st.sampled_from(mods))
    sh = draw(st.sampled_from(["", "<<1", "<<17", "<<31"]))
    return f"{m} {draw(reg)}, {draw(reg)}{mod}{sh}, ->{draw(dst)}"


@st.composite
def setter(draw: st.DrawFn) -> str:
    cond = draw(st.sampled_from(CONDITIONS))
    if cond not in ("and", "or") and draw(st.booleans()):
        unsigned = cond.endswith("u")
        imm = draw(st.integers(0, 4095) if unsigned else st.integers(-2048, 2047))
        return f"setc.{cond}i {draw(reg)}, {imm}"
    mods = ["", ".sw", ".uw"] + ([".not"] if cond in ("and", "or") else [".t3"])
    return f"setc.{cond} {draw(reg)}, {draw(reg)}{draw(st.sampled_from(mods))}"


def _program(body: list[str], cond: str | None) -> str:
    """A block of ``body`` (a COND block when ``cond`` sets its condition), then a block
    the condition skips and the block it targets, each marking s2."""
    head = "BSTART.STD COND, TAKEN\n" if cond else "BSTART.STD FALL\n"
    text = head + "".join(f"{i}\n" for i in body + ([cond] if cond else [])) + "BSTOP\n"
    return (
        text + "BSTART.STD FALL\nori s2, 1, ->s2\nBSTOP\n"
        "TAKEN:\nBSTART.STD FALL\nori s2, 2, ->s2\nBSTOP\n"
    )


def _machine(values: list[list[int]]) -> Machine:
    m = Machine(MachineConfig(gm_size=4096))
    for pe, row in enumerate(values):
        for r, v in zip(REGS[:-1], row, strict=True):
            m.set_gpr(r, v, pe=pe)
    return m


def _outcome(text: str, values: list[list[int]], ints: bool) -> tuple[object, ...]:
    program = parse(text)
    m = _machine(values)
    if not ints:  # the numpy path for every block
        _, steps = compiled(program)
        assert all(p.ints is not None for kind, _, p in steps if kind == "scalar")
    try:
        if ints:
            m.run(program)
        else:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(machine_module, "_run_int_block", lambda *a: None)
                m.run(program)
    except MachineFault as f:
        return ("fault", type(f).__name__, str(f), m.state.gpr.tolist())
    return ("ran", m.state.gpr.tolist(), m.status.tolist())


value = st.one_of(st.sampled_from(EDGES), st.integers(0, (1 << 64) - 1))


@settings(max_examples=300, deadline=None)
@given(
    body=st.lists(instruction(), min_size=1, max_size=6),
    cond=st.one_of(st.none(), setter(), setter()),
    values=st.lists(st.lists(value, min_size=7, max_size=7), min_size=4, max_size=4),
    uniform=st.sampled_from([True, True, True, False]),
)
@example(["addi a2, 1, ->a2"], "setc.lt a0, a1", [[1 << 63, 1, 0, 0, 0, 0, 0]] * 4, True)
@example(["srai a0, 1, ->a3"], "setc.gei a0, -1", [[1 << 63, 1, 0, 0, 0, 0, 0]] * 4, True)
@example(
    ["sub a0, a1.sw<<1, ->a2"],
    "setc.geu a2, a1.uw",
    [[5, (1 << 64) - 1, 0, 0, 0, 0, 0]] * 4,
    True,
)
def test_integer_blocks_equal_the_numpy_path(
    body: list[str], cond: str | None, values: list[list[int]], uniform: bool
) -> None:
    if uniform:  # every PE the same registers: the condition agrees
        values = [values[0]] * 4
    text = _program(body, cond)
    assert _outcome(text, values, ints=True) == _outcome(text, values, ints=False)


def test_a_block_with_another_form_keeps_the_numpy_path() -> None:
    for other in ("lwi [a0, 0], ->a1", "addi a0, 1, ->r30"):  # a memory read; a U push
        program = parse(f"BSTART.STD FALL\naddi a0, 1, ->a0\n{other}\nBSTOP\n")
        _, steps = compiled(program)
        assert steps[0][2].ints is None, other
    program = parse("BSTART.STD FALL\naddi a0, 1, ->a0\nBSTOP\n")
    _, steps = compiled(program)
    assert steps[0][2].ints is not None


def _loop(body: list[str], cond: str, count: int) -> str:
    """``body`` and ``cond`` in a block that runs ``count`` times (s3 counts down), then a
    block the condition of its last iteration chooses (``_program``)."""
    return (
        f"BSTART.STD FALL\naddi zero, {count}, ->s3\nBSTOP\n"
        "LOOP:\nBSTART.STD COND, LOOP\n"
        + "".join(f"{i}\n" for i in body)
        + "subi s3, 1, ->s3\nsetc.ne s3, zero\nBSTOP\n"
        + _program([], None).replace(
            "BSTART.STD FALL\nBSTOP\n", f"BSTART.STD COND, TAKEN\n{cond}\nBSTOP\n", 1
        )
    )


@settings(max_examples=150, deadline=None)
@given(
    body=st.lists(instruction(), min_size=1, max_size=5),
    cond=setter(),
    count=st.integers(1, 5),
    values=st.lists(st.lists(value, min_size=7, max_size=7), min_size=4, max_size=4),
    uniform=st.booleans(),
)
def test_loops_of_integer_blocks_equal_the_numpy_path(
    body: list[str], cond: str, count: int, values: list[list[int]], uniform: bool
) -> None:
    if uniform:
        values = [values[0]] * 4
    text = _loop(body, cond, count)
    assert _outcome(text, values, ints=True) == _outcome(text, values, ints=False)


@pytest.mark.parametrize("how", ["set_gpr", "pickled"])
def test_a_gpr_written_between_runs_is_seen(how: str) -> None:
    program = parse("BSTART.STD FALL\naddi a0, 1, ->a2\nBSTOP\n")
    m = _machine([[5, 0, 0, 0, 0, 0, 0]] * 4)
    m.run(program)
    assert m.gpr("a2", pe=3) == 6
    with pytest.raises(ValueError, match="read-only"):  # published GPRs never change
        m.state.gpr[0, 2] = 0
    if how == "pickled":  # (an unpickled array is writable: its integers no longer hold)
        m = pickle.loads(pickle.dumps(m))
    m.set_gpr("a0", 41)
    m.run(program)
    assert [m.gpr("a2", pe=pe) for pe in range(4)] == [42] * 4


@settings(max_examples=60, deadline=None)
@given(
    bases=st.lists(st.integers(0, 60).map(lambda k: k * 64), min_size=4, max_size=4),
    step=st.integers(0, 3).map(lambda k: k * 64),
    mask=st.sampled_from(["1000", "0100", "0010", "0001", "1100", "1111"]),
    uniform=st.booleans(),
)
def test_transfers_after_integer_blocks_read_their_registers(
    bases: list[int], step: int, mask: str, uniform: bool
) -> None:
    """A TLOAD and a TSTORE whose address registers an integer block (or two) just
    wrote read the values of each PE, kept as Python integers (no GPR array is made in
    between), as on the numpy path; so does a later block and every GPR at the end."""
    if uniform:
        bases = [bases[0]] * 4
    text = (
        f"BSTART.STD FALL\naddi a0, {step}, ->a0\naddi zero, 64, ->s0\nBSTOP\n"
        "BSTART.STD FALL\naddi a0, 8, ->a1\nBSTOP\n"
        "BSTART.TLOAD FP32\nC.B.DIMI 8, ->LB0\nC.B.DIMI 2, ->LB1\nC.B.DIMI 8, ->LB2\n"
        f"B.IOR a1, s0\nB.IOT mask={mask}, last, ->T<512B>\nBSTOP\n"
        "BSTART.STD FALL\naddi a0, 2048, ->a2\nBSTOP\n"
        f"BSTART.TSTORE FP32\nB.IOR a2, s0\nB.IOT T#1, mask={mask}, last\nBSTOP\n"
        "BSTART.STD FALL\nadd a2, a1, ->a3\nBSTOP\n"
    )
    program = parse(text)
    outcomes = []
    for ints in (True, False):
        m = Machine(MachineConfig(gm_size=16384))
        m.load_gm(0, bytes(range(256)) * 64)
        for pe, b in enumerate(bases):
            m.set_gpr("a0", b, pe=pe)
        with pytest.MonkeyPatch.context() as mp:
            if not ints:
                mp.setattr(machine_module, "_run_int_block", lambda *a: None)
            m.run(program)
        outcomes.append((m.snapshot(), m.state.gpr.tolist()))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("read_between", [False, True])
def test_a_block_that_does_not_commit_leaves_the_kept_integers(read_between: bool) -> None:
    """An integer block whose PEs disagree on the condition (the numpy path raises the
    fault), or whose branch target starts no block, changes no GPR -- whether the last
    block's GPRs are still only Python integers or also an array (``read_between``) --
    and the next run starts from the GPRs before it."""
    first = parse("BSTART.STD FALL\naddi a0, 1, ->a0\naddi a1, 3, ->a1\nBSTOP\n")
    twin = _machine([[1, 0, 0, 0, 0, 0, 0], [1, 0, 100, 0, 0, 0, 0]] * 2)
    twin.run(first)
    before = twin.state.gpr.tolist()  # (the twin's array: ``m``'s stays unmade)
    m = _machine([[1, 0, 0, 0, 0, 0, 0], [1, 0, 100, 0, 0, 0, 0]] * 2)
    m.run(first)
    assert m.state._gpr is None  # only Python integers hold the GPRs
    for bad in (
        "BSTART.STD COND, T\naddi a0, 40, ->a0\nsetc.lt a0, a2\nBSTOP\n"
        "T:\nBSTART.STD FALL\nBSTOP\n",
        "BSTART.STD DIRECT, 3\naddi a0, 40, ->a0\naddi a1, 40, ->a1\nBSTOP\n",
    ):
        if read_between:
            m.state.gpr  # noqa: B018
        with pytest.raises(MachineFault):
            m.run(parse(bad))
        assert m.state.gpr.tolist() == before
    m.run(parse("BSTART.STD FALL\nadd a0, a1, ->a3\nBSTOP\n"))
    assert [m.gpr("a3", pe=pe) for pe in range(4)] == [2 + 3] * 4
