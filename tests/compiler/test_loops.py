"""Run-time loops end to end (D12): ``pt.range``, scalar parameters, run-time windows,
carried tiles, allocation across the back edge, the path-checking validator, and the
bounds check of a window a run-time index moves."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptoc
import ptoc.lang as pt
from ptoc.backend.program import Program, TileStart
from ptoc.passes.validate import ValidationError, validate

TINY = ptoc.MachineConfig(depth=4, capacity=16384)
MACHINES = [pytest.param(None, id="default"), pytest.param(TINY, id="tiny")]
F32 = ptoc.fp32


def _x(rows: int, cols: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


#: FP32 bit patterns a loop's data must carry through unchanged or as the ops define:
#: quiet and signalling NaNs with payloads, +-0, +-inf, the smallest and largest
#: subnormals, the top binade, ties of the rounding (x.5) and values below 1
_SPECIAL = np.array(
    [0x7FC00001, 0xFFC12345, 0x7F800001, 0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
     0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFE, 0x3FC00000, 0x40200000, 0x3E800000],
    np.uint32,
).view(np.float32)  # fmt: skip


def _wild(rows: int, cols: int, seed: int) -> np.ndarray:
    """Normal values with a quarter of the elements replaced by :data:`_SPECIAL` ones."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    pick = rng.random((rows, cols)) < 0.25
    x[pick] = rng.choice(_SPECIAL, int(pick.sum()))
    return x


@ptoc.kernel
def exp_rows(
    x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32], n: ptoc.Scalar[ptoc.s32]
):
    for i in pt.range(0, n, 8):
        pt.store(out, pt.exp(pt.load(x, rows=(i, 8))), rows=(i, 8))


@ptoc.kernel
def column_sum(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 8, 32]):
    acc = pt.full((8, 32), 0.0, F32)
    for i in pt.range(0, 64, 8):
        acc = acc + pt.load(x, rows=(i, 8))
    pt.store(out, acc)


@ptoc.kernel
def invariant_and_through(
    x: ptoc.Tensor[F32, 64, 32],
    bias: ptoc.Tensor[F32, 8, 32],
    out: ptoc.Tensor[F32, 64, 32],
    keep: ptoc.Tensor[F32, 8, 32],
    n: ptoc.Scalar[ptoc.s32],
):
    b = pt.load(bias)  # read in every iteration
    c = pt.exp(b)  # live through the loop, stored after it
    for i in pt.range(0, n, 8):
        pt.store(out, pt.load(x, rows=(i, 8)) * b, rows=(i, 8))
    pt.store(keep, c)


@ptoc.kernel
def nested(x: ptoc.Tensor[F32, 64, 64], out: ptoc.Tensor[F32, 64, 64]):
    for i in pt.range(0, 64, 16):
        for j in pt.range(0, 64, 32):
            t = pt.load(x, rows=(i, 16), cols=(j, 32))
            pt.store(out, t + t, rows=(i, 16), cols=(j, 32))


@ptoc.kernel
def init_reused(x: ptoc.Tensor[F32, 32, 32], out: ptoc.Tensor[F32, 8, 32],
                first: ptoc.Tensor[F32, 8, 32]):  # fmt: skip
    a0 = pt.load(x, rows=(0, 8))
    acc = a0
    for i in pt.range(8, 32, 8):
        acc = pt.maximum(acc, pt.load(x, rows=(i, 8)))
    pt.store(out, acc)
    pt.store(first, a0 + a0)  # the initial value is read after the loop too


# ----------------------------------------------------------------------------- reference


def test_reference_follows_the_loop() -> None:
    x = _x(64, 32)
    got = ptoc.reference(column_sum, x=x)["out"]
    want = np.zeros((8, 32), np.float32)
    for k in range(8):
        want = want + x[8 * k : 8 * k + 8]
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_reference_runs_as_many_iterations_as_the_scalar_says() -> None:
    x = _x(64, 32)
    out = ptoc.reference(exp_rows, x=x, n=24)["out"]
    assert np.all(out[24:] == 0) and np.all(out[:24] > 0)
    assert np.all(ptoc.reference(exp_rows, x=x, n=0)["out"] == 0)


def test_the_traced_loop_is_one_scf_for() -> None:
    text = str(column_sum.trace().module)
    assert text.count("scf.for") == 1 and text.count("tile.load") == 1
    assert "iter_args" in text


# ----------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("n", [0, 8, 40, 64])
def test_exp_rows_verifies_for_every_trip_count(machine, n: int) -> None:
    prog = ptoc.compile(exp_rows, machine)
    ptoc.verify(prog, x=_x(64, 32), n=n)


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("k", [column_sum, nested, init_reused], ids=lambda k: k.name)
def test_loop_kernels_verify(machine, k) -> None:
    prog = ptoc.compile(k, machine)
    for seed in range(2):
        ptoc.verify(prog, **k.random_inputs(seed))


@pytest.mark.parametrize("machine", MACHINES)
def test_invariant_and_live_through_tiles(machine) -> None:
    prog = ptoc.compile(invariant_and_through, machine)
    for n in (0, 16, 64):
        ptoc.verify(prog, x=_x(64, 32), bias=_x(8, 32, 1), n=n)


def test_program_size_does_not_grow_with_the_trip_count() -> None:
    prog = ptoc.compile(exp_rows)
    runs = [ptoc.run(prog, x=_x(64, 32), n=n) for n in (8, 64)]
    assert runs[1].bundles - runs[0].bundles == 7 * 3  # three bundles per iteration
    assert prog.program.bundle_count() == runs[0].bundles  # one iteration: each once


@given(
    start=st.integers(0, 7).map(lambda v: v * 8),
    count=st.integers(0, 8),
    step=st.sampled_from([8, 16, 24]),
)
def test_random_loop_bounds_verify(start: int, count: int, step: int) -> None:
    stop = min(64 - 8, start + step * count) + 1

    @ptoc.kernel
    def k(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32],
          lo: ptoc.Scalar[ptoc.s32], hi: ptoc.Scalar[ptoc.s32]):  # fmt: skip
        for i in pt.range(lo, hi, step):
            pt.store(out, pt.load(x, rows=(i, 8)) * 2.0, rows=(i, 8))

    out = ptoc.verify(k, x=_x(64, 32), lo=start, hi=stop)["out"]
    touched = sorted({r for i in range(start, stop, step) for r in range(i, i + 8)})
    assert np.array_equal(out[touched], _x(64, 32)[touched] * 2)


# ----------------------------------------------------------------------------- faults


def test_a_window_moved_out_of_its_tensor_stops_the_machine() -> None:
    prog = ptoc.compile(exp_rows)
    with pytest.raises(ptoc.MachineFault) as info:
        ptoc.run(prog, x=_x(64, 32), n=72)
    e = info.value
    assert "run-time row start 64" in e.rule and "'x'" in e.rule and "0..56" in e.rule
    assert e.source is not None and e.source.line > 0  # the kernel line of the load
    with pytest.raises(ptoc.ReferenceFault, match="outside the 64x32 tensor"):
        ptoc.reference(exp_rows, x=_x(64, 32), n=72)


def test_scalar_arguments_are_checked() -> None:
    with pytest.raises(ptoc.InputError, match=r"'n'.* not given"):
        ptoc.run(ptoc.compile(exp_rows), x=_x(64, 32))
    with pytest.raises(ptoc.InputError, match="is an integer"):
        ptoc.reference(exp_rows, x=_x(64, 32), n=1.5)
    with pytest.raises(ptoc.InputError, match=r"outside -2147483648\.\.2147483647"):
        ptoc.reference(exp_rows, x=_x(64, 32), n=1 << 40)
    with pytest.raises(ptoc.InputError, match="run-time scalar parameters"):
        exp_rows.random_inputs(0)


# ----------------------------------------------------------------------------- validator


def _push_extra_filler(em, at: int, hand):  # type: ignore[no-untyped-def]
    """``em`` with a copy of its first filler bundle, pushing into ``hand``, in front of
    command ``at`` (and of any label there): every command index from ``at`` on moves.
    Through the text, so that the labels of the branches move with their blocks."""
    from ptoc.backend.asm import format_command
    from ptoc.backend.program import Iot, Stop

    cmds = list(em.program.commands)
    filler_at = min(i for i, it in em.intents.items() if it.kind == "filler")
    end = next(i for i in range(filler_at, len(cmds)) if isinstance(cmds[i], Stop))
    filler = [
        dataclasses.replace(c, dst=hand) if isinstance(c, Iot) else c
        for c in cmds[filler_at : end + 1]
    ]
    assert isinstance(filler[0], TileStart)
    lines = em.program.asm().splitlines()
    commands = [k for k, line in enumerate(lines) if not line.endswith(":")]
    where = commands[at] if at < len(commands) else len(lines)
    while where > 0 and lines[where - 1].endswith(":"):
        where -= 1
    lines[where:where] = [format_command(c) for c in filler]
    broken = Program.parse("\n".join(lines) + "\n")
    assert len(broken.commands) == len(cmds) + len(filler)

    def moved(i: int) -> int:
        return i + len(filler) if i >= at else i

    intents = {
        moved(i): dataclasses.replace(it, index=moved(i)) for i, it in em.intents.items()
    }
    intents[at] = dataclasses.replace(em.intents[filler_at], index=at)
    positions = ("init", "guard", "header", "latch", "exit")
    loops = tuple(
        dataclasses.replace(lp, **{k: moved(getattr(lp, k)) for k in positions})
        for lp in em.loops
    )
    ifs = {
        moved(g): dataclasses.replace(c, guard=moved(c.guard), exit=moved(c.exit))
        for g, c in em.ifs.items()
    }
    checks = {moved(i): dataclasses.replace(c, index=moved(i)) for i, c in em.checks.items()}
    return dataclasses.replace(
        em, program=broken, intents=intents, loops=loops, ifs=ifs, checks=checks
    )


def test_validator_rejects_a_back_edge_with_another_queue_state() -> None:
    from ptoc.backend.isa.fields import Hand
    from ptoc.passes.pipeline import Options, run_pipeline

    c = run_pipeline(exp_rows.trace().module.clone(), options=Options(validate=False))
    em = c.emitted
    assert em is not None and len(em.loops) == 1
    validate(em, ptoc.MachineConfig())  # as emitted: valid
    # a filler into hand U, which the body leaves alone, just before the latch: each
    # iteration would grow U by one
    bad = _push_extra_filler(em, em.loops[0].latch, Hand.U)
    with pytest.raises(ValidationError, match="back edge leaves the queues"):
        validate(bad, ptoc.MachineConfig())


# ----------------------------------------------------------------------------- DSL rules


def _trace_error(fn) -> ptoc.KernelError:  # type: ignore[no-untyped-def]
    with pytest.raises(ptoc.KernelError) as info:
        ptoc.kernel(fn).trace()
    return info.value


def test_a_python_value_changed_in_the_body_is_refused() -> None:
    def k(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32]):
        row = 0
        for _ in pt.range(0, 8):
            pt.store(out, pt.load(x, rows=(row, 8)), rows=(row, 8))
            row += 8

    e = _trace_error(k)
    assert "the Python value 'row' changes in the body of a pt.range loop" in e.message


def test_break_out_of_a_run_time_loop_is_refused() -> None:
    def k(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32]):
        for i in pt.range(0, 64, 8):
            pt.store(out, pt.load(x, rows=(i, 8)), rows=(i, 8))
            break

    assert "left early" in _trace_error(k).message


def test_a_tile_of_a_finished_body_is_refused_after_the_loop() -> None:
    def k(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 8, 32]):
        for i in pt.range(0, 64, 8):
            t = pt.load(x, rows=(i, 8))
        pt.store(out, t)

    assert "inside a finished pt.range loop body" in _trace_error(k).message


def test_a_run_time_integer_has_no_trace_time_value() -> None:
    def k(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32]):
        for i in pt.range(0, 64, 8):
            if i > 3:
                pt.store(out, pt.load(x))

    assert "has no truth value at trace time" in _trace_error(k).message

    def k2(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32]):
        for i in pt.range(0, 64, 8):
            pt.store(out, pt.load(x, rows=(int(i), 8)))

    assert "has no value at trace time" in _trace_error(k2).message


def test_steps_are_positive_python_integers() -> None:
    def k(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32]):
        for i in pt.range(64, 0, -8):
            pt.store(out, pt.load(x, rows=(i, 8)), rows=(i, 8))

    assert "the step is a positive Python integer" in _trace_error(k).message


def test_a_carried_run_time_integer_is_a_located_compile_error() -> None:
    @ptoc.kernel
    def k(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32]):
        row = 0
        for _ in pt.range(0, 8):
            pt.store(out, pt.load(x, rows=(row, 8)), rows=(row, 8))
            row = row + 8 + _ * 0

    with pytest.raises(ptoc.CompileError, match="carried from iteration to iteration"):
        ptoc.compile(k)


@ptoc.kernel(pes=4)
def per_pe(x: ptoc.Tensor[F32, 128, 32], out: ptoc.Tensor[F32, 128, 32]):
    # PE p owns rows 32p .. 32p + 31 and walks them 8 rows per iteration
    for i in pt.range(0, 32, 8):
        t = pt.load(x, rows=(pt.pe() * 32 + i, 8))
        pt.store(out, pt.abs(t), rows=(i + pt.pe() * 32, 8))


@pytest.mark.parametrize("machine", MACHINES)
def test_per_pe_offsets_plus_a_run_time_index(machine) -> None:
    x = _x(128, 32)
    out = ptoc.verify(ptoc.compile(per_pe, machine), x=x)["out"]
    assert np.array_equal(out, np.abs(x))


# ----------------------------------------------------------------------------- random bodies

_OPS = ("add", "mul", "max", "exp_sub", "abs")


def _random_body_kernel(ops: list[tuple[str, int, int]], invariants: int, carried: bool):
    """A loop whose body loads a block, combines it with ``invariants`` tiles loaded
    before the loop by ``ops`` ((kind, operand a, operand b) over the values so far) and
    stores the last value; with ``carried``, an accumulator adds it up across iterations."""

    @ptoc.kernel
    def k(
        x: ptoc.Tensor[F32, 64, 32],
        w: ptoc.Tensor[F32, 32, 32],
        out: ptoc.Tensor[F32, 64, 32],
        total: ptoc.Tensor[F32, 8, 32],
        n: ptoc.Scalar[ptoc.s32],
    ):
        inv = [pt.load(w, rows=(8 * j, 8)) for j in range(invariants)]
        acc = pt.full((8, 32), 0.0, F32)
        for i in pt.range(0, n, 8):
            vals = [pt.load(x, rows=(i, 8)), *inv]
            for kind, a, b in ops:
                p, q = vals[a % len(vals)], vals[b % len(vals)]
                if kind == "add":
                    vals.append(p + q)
                elif kind == "mul":
                    vals.append(p * q)
                elif kind == "max":
                    vals.append(pt.maximum(p, q))
                elif kind == "exp_sub":
                    vals.append(pt.exp(p - pt.row_max(q)))
                else:
                    vals.append(pt.abs(p))
            pt.store(out, vals[-1], rows=(i, 8))
            if carried:
                acc = acc + vals[-1]
        pt.store(total, acc)

    return k


@given(
    ops=st.lists(
        st.tuples(st.sampled_from(_OPS), st.integers(0, 9), st.integers(0, 9)),
        min_size=1,
        max_size=7,
    ),
    invariants=st.integers(0, 4),
    carried=st.booleans(),
    n=st.integers(0, 8).map(lambda v: 8 * v),
    tiny=st.booleans(),
    data=st.integers(0, 2**16),
)
def test_random_loop_bodies_allocate_validate_and_verify(
    ops, invariants, carried, n, tiny, data
):
    k = _random_body_kernel(ops, invariants, carried)
    prog = ptoc.compile(k, TINY if tiny else None)  # validates every path
    # payload bits of NaNs, signed zeros, infinities and subnormals compared bit for bit
    ptoc.verify(prog, x=_wild(64, 32, data), w=_wild(32, 32, data + 1), n=n)


# ----------------------------------------------------------------------------- pt.when

_PREDICATES = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _when_kernel(symbol: str):
    @ptoc.kernel
    def k(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32],
          a: ptoc.Scalar[ptoc.s32], b: ptoc.Scalar[ptoc.s32]):  # fmt: skip
        for r in pt.range(0, 64, 8):
            s = r + a
            cond = {
                "<": s.__lt__, "<=": s.__le__, ">": s.__gt__,
                ">=": s.__ge__, "==": s.__eq__, "!=": s.__ne__,
            }[symbol](b)  # fmt: skip
            with pt.when(cond):
                pt.store(out, pt.load(x, rows=(r, 8)) + 1.0, rows=(r, 8))

    return k


@pytest.mark.parametrize("symbol", list(_PREDICATES))
@given(a=st.integers(-40, 40), b=st.integers(-40, 80))
def test_when_runs_its_body_exactly_when_the_condition_holds(symbol, a, b) -> None:
    x = _x(64, 32)
    out = ptoc.verify(_when_kernel(symbol), x=x, a=a, b=b)["out"]
    for r in range(0, 64, 8):
        ran = _PREDICATES[symbol](r + a, b)
        want = x[r : r + 8] + 1 if ran else np.zeros((8, 32), np.float32)
        assert np.array_equal(out[r : r + 8], want), (r, ran)


@ptoc.kernel
def when_tail(
    x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32], rows: ptoc.Scalar[ptoc.s32]
):
    b = pt.load(x, rows=(0, 8))  # live across the loop and the conditional
    for r in pt.range(0, 64, 8):
        with pt.when(r < rows):
            t = pt.load(x, rows=(r, 8))
            with pt.when(r > 8):
                pt.store(out, t * b, rows=(r, 8))
            with pt.when(r <= 8):
                pt.store(out, t - b, rows=(r, 8))


@pytest.mark.parametrize("machine", MACHINES)
def test_nested_conditionals_in_a_loop_verify(machine) -> None:
    prog = ptoc.compile(when_tail, machine)
    for rows in (0, 8, 24, 64):
        ptoc.verify(prog, x=_x(64, 32), rows=rows)


def test_a_conditional_may_not_replace_a_tile() -> None:
    def k(x: ptoc.Tensor[F32, 8, 32], out: ptoc.Tensor[F32, 8, 32], n: ptoc.Scalar[ptoc.s32]):
        t = pt.load(x)
        with pt.when(n > 0):
            t = t + 1.0
        pt.store(out, t)

    assert "'t' is assigned in the body of pt.when" in _trace_error(k).message


def test_a_condition_has_no_trace_time_truth_value() -> None:
    def k(x: ptoc.Tensor[F32, 8, 32], out: ptoc.Tensor[F32, 8, 32], n: ptoc.Scalar[ptoc.s32]):
        if n > 0:
            pt.store(out, pt.load(x))

    assert "has no truth value at trace time" in _trace_error(k).message

    def k2(x: ptoc.Tensor[F32, 8, 32], out: ptoc.Tensor[F32, 8, 32]):
        with pt.when(True):
            pt.store(out, pt.load(x))

    assert "pt.when takes a comparison of run-time integers" in _trace_error(k2).message


def test_validator_rejects_a_conditional_body_that_changes_the_queues() -> None:
    from ptoc.backend.isa.fields import Hand
    from ptoc.passes.pipeline import Options, run_pipeline

    @ptoc.kernel
    def k(x: ptoc.Tensor[F32, 8, 32], out: ptoc.Tensor[F32, 8, 32], n: ptoc.Scalar[ptoc.s32]):
        with pt.when(n > 0):
            pt.store(out, pt.exp(pt.load(x)))

    c = run_pipeline(k.trace().module.clone(), options=Options(validate=False))
    em = c.emitted
    assert em is not None and len(em.ifs) == 1
    validate(em, ptoc.MachineConfig())
    (cond,) = em.ifs.values()
    bad = _push_extra_filler(em, cond.exit, Hand.N)  # the end of the body
    with pytest.raises(ValidationError, match="its body leaves the queues"):
        validate(bad, ptoc.MachineConfig())


@ptoc.kernel
def row_block_matmul(
    a: ptoc.Tensor[ptoc.fp16, 64, 32],
    b: ptoc.Tensor[ptoc.fp16, 32, 32],
    c: ptoc.Tensor[F32, 64, 32],
    n: ptoc.Scalar[ptoc.s32],
):
    for i in pt.range(0, n, 16):  # the A operand's window moves with the index
        pt.store(c, pt.matmul(pt.load(a, rows=(i, 16)), pt.load(b), dtype=F32), rows=(i, 16))


@pytest.mark.parametrize("machine", MACHINES)
def test_a_matmul_whose_operand_window_moves(machine) -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    out = ptoc.verify(ptoc.compile(row_block_matmul, machine), a=a, b=b, n=48)["c"]
    want = a.astype(np.float64)[:48] @ b.astype(np.float64)
    assert np.allclose(out[:48], want, rtol=1e-5, atol=1e-5) and not out[48:].any()


@ptoc.kernel
def store_then_load(
    x: ptoc.Tensor[F32, 64, 32], buf: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32]
):
    for i in pt.range(0, 64, 8):
        pt.store(buf, pt.exp(pt.load(x, rows=(i, 8))), rows=(i, 8))
        # the load must see the store above: memory order through a moving window
        pt.store(out, pt.load(buf, rows=(i, 8)) + 1.0, rows=(i, 8))


def test_memory_order_holds_for_moving_windows() -> None:
    ptoc.verify(store_then_load, x=_x(64, 32), buf=np.zeros((64, 32), np.float32))


@pytest.mark.parametrize("machine", MACHINES)
def test_run_time_integers_share_registers_by_live_range(machine) -> None:
    """Twelve loops one after another, each with its own bounds and index: more run-time
    integers than there are registers, but only one loop's are live at a time."""
    T = ptoc.Tensor[F32, 96, 64]

    @ptoc.kernel
    def twelve_loops(x: T, out: T):
        for j in range(12):
            for r in pt.range(8 * j, 8 * j + 8, 4):
                pt.store(out, pt.load(x, rows=(r, 4)) * float(j + 1), rows=(r, 4))

    xs = _x(96, 64, 5)
    got = ptoc.verify(ptoc.compile(twelve_loops, machine), x=xs)["out"]
    scale = np.repeat(np.arange(1, 13, dtype=np.float32), 8)[:, None]
    assert np.array_equal(got, xs * scale)


def test_nested_loops_with_a_carried_inner_tile() -> None:
    """An inner loop's result read after it inside an outer loop: the validator sees the
    inner loop's exit rename as a new value of every outer iteration."""
    T = ptoc.Tensor[F32, 64, 64]

    @ptoc.kernel
    def block_sums(x: T, out: ptoc.Tensor[F32, 8, 64]):
        for b in pt.range(0, 2, 1):
            acc = pt.load(x, rows=(0, 8)) * 0.0
            for r in pt.range(0, 64, 8):
                acc = acc + pt.load(x, rows=(r, 8))
            pt.store(out, acc * 2.0, rows=(0, 8))
            del b

    xs = _x(64, 64, 6)
    for m in (None, TINY):
        got = ptoc.verify(ptoc.compile(block_sums, m), x=xs)["out"]
        want = np.zeros((8, 64), np.float32)
        for r in range(0, 64, 8):
            want = want + xs[r : r + 8]
        assert np.array_equal(got, want * np.float32(2.0))


def test_a_stale_copy_where_the_header_is_dead_is_accepted() -> None:
    """The back edge may leave anything in an entry that is dead at the loop header (the
    body never reads it: its replay from the header would have failed), but a live entry
    must hold the header's value."""
    from ptoc.passes.validate import _returns_to

    head = [[(7, 4096), (-1, 512)], []]
    assert _returns_to([[(7, 4096), (9, 512)], []], head)  # a stale copy in a dead slot
    assert not _returns_to([[(9, 4096), (-1, 512)], []], head)  # another value, live slot
    assert not _returns_to([[(7, 4096), (-1, 4096)], []], head)  # other bytes
    assert not _returns_to([[(7, 4096)], []], head)  # another length
