"""Build one-interface kernels, run them through the real pipeline and compare with the
reference semantics bit for bit.

``check(name, inputs, body)``: every input array becomes a tensor parameter and is
loaded whole; ``body(kb, tiles)`` applies the compound interface with the KernelBuilder
and returns the tiles to store. The reference interpreter evaluates the compound ops by
their ``compound_ref`` functions; the kernel is compiled (lower-compound -> legalize ->
allocate -> emit -> validate), executed on ``ptoc.runtime.Machine`` and compared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ptoc.backend.asm import format_program
from ptoc.backend.isa import DataType, info
from ptoc.dialects.compound_ref import CompoundError
from ptoc.dialects.reference import kernel_func, run_reference
from ptoc.dialects.tile_base import tile_type
from ptoc.passes.execute import compare, place, read_outputs
from ptoc.passes.lower_compound import lower_compound_func
from ptoc.passes.pipeline import CompiledKernel, compile_module
from ptoc.runtime import Machine, MachineConfig, TileLegalityFault
from ptoc.testing import KernelBuilder

Body = Callable[[KernelBuilder, dict[str, SSAValue]], Mapping[str, SSAValue] | SSAValue]


def dtype_name(a: np.ndarray) -> str:
    for dt in DataType:
        ti = info(dt)
        if ti.exact_carrier and ti.bits >= 8 and ti.carrier == a.dtype:
            return dt.name
    raise TypeError(a.dtype)


Tiles = Mapping[str, tuple[str, tuple[int, int], tuple[int, int]]]


def build(
    name: str,
    inputs: Mapping[str, np.ndarray],
    body: Body,
    pes: int = 1,
    tiles: Tiles | None = None,
) -> ModuleOp:
    """A kernel that loads every input whole (or the ``tiles`` windows: name -> (tensor,
    (row, col), shape)), applies ``body`` and stores its results (outputs are named
    ``out``, or ``out_<key>`` for the keys ``body`` returns)."""
    kb = KernelBuilder(name, pes=pes)
    tensors = {n: kb.tensor(n, dtype_name(a), a.shape) for n, a in inputs.items()}
    if tiles is None:
        tiles = {n: (n, (0, 0), a.shape) for n, a in inputs.items()}
    loaded = {n: kb.load(tensors[src], shp, at) for n, (src, at, shp) in tiles.items()}
    res = body(kb, loaded)
    outs = (
        {"out": res} if isinstance(res, SSAValue) else {f"out_{k}": v for k, v in res.items()}
    )
    for n, v in outs.items():
        t = tile_type(v)
        kb.store(kb.tensor(n, t.dt.value, t.valid), v)
    return kb.finish()


@dataclass
class Result:
    got: dict[str, np.ndarray]
    want: dict[str, np.ndarray]
    compiled: CompiledKernel
    #: the machine's sticky status per PE after the run
    status: list[int]

    @property
    def bundles(self) -> int:
        return self.compiled.program.bundle_count()


def lowered(module: ModuleOp, matrix_bytes: int | None = None) -> ModuleOp:
    """A copy of the kernel with its compound ops lowered (verified)."""
    work = module.clone()
    if matrix_bytes is None:
        lower_compound_func(kernel_func(work))
    else:
        lower_compound_func(kernel_func(work), matrix_bytes)
    work.verify()
    return work


def run_lowered(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    machine: MachineConfig | None = None,
    matrix_bytes: int | None = None,
    max_tile_bytes: int | None = None,
) -> tuple[dict[str, np.ndarray], CompiledKernel]:
    """Compile (lower-compound -> legalize -> allocate -> emit -> validate) and execute."""
    got, ck, _ = run_lowered_status(module, inputs, machine, matrix_bytes, max_tile_bytes)
    return got, ck


def run_lowered_status(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    machine: MachineConfig | None = None,
    matrix_bytes: int | None = None,
    max_tile_bytes: int | None = None,
) -> tuple[dict[str, np.ndarray], CompiledKernel, list[int]]:
    """:func:`run_lowered`, plus the machine's sticky status per PE."""
    src = module if matrix_bytes is None else lowered(module, matrix_bytes)
    ck = compile_module(src, machine, max_tile_bytes=max_tile_bytes)
    m = Machine(machine or MachineConfig())
    placement = place(ck, m, inputs)
    m.run(ck.program)
    return read_outputs(ck, m, placement), ck, [int(s) for s in m.status]


def bundle_ops(res: Result) -> Counter[str]:
    """How many bundles of each catalog operation the compiled program has."""
    out: Counter[str] = Counter()
    for line in format_program(res.compiled.program).splitlines():
        if line.startswith("BSTART.") and not line.startswith("BSTART.STD"):
            words = line.split()  # BSTART.VEC TADD, FP32 | BSTART.TLOAD FP32
            name = words[1] if words[1].endswith(",") else words[0][len("BSTART.") :]
            out[name.rstrip(",")] += 1
    return out


def check(
    name: str,
    inputs: Mapping[str, np.ndarray],
    body: Body,
    machine: MachineConfig | None = None,
    pes: int = 1,
    tiles: Tiles | None = None,
    matrix_bytes: int | None = None,
    max_tile_bytes: int | None = None,
    status: int | None = None,
) -> Result:
    """Compile, execute and compare with the compound reference (bit for bit); the tile
    reference of the lowered kernel must agree too. ``status``: the reference status
    (``compound_ref.status``) that every PE running the kernel must publish exactly
    (the other PEs none)."""
    module = build(name, inputs, body, pes, tiles)
    want = run_reference(module, inputs)
    compare(run_reference(lowered(module, matrix_bytes), inputs), want)
    got, ck, st = run_lowered_status(module, inputs, machine, matrix_bytes, max_tile_bytes)
    compare(got, want)
    if status is not None:
        expect = [status] * pes + [0] * (len(st) - pes)
        assert st == expect, f"status per PE {_names(st)}, reference {_names(expect)}"
    return Result(got, want, ck, st)


def check_or_reject(
    name: str,
    inputs: Mapping[str, np.ndarray],
    body: Body,
    status: int | None = None,
    **kw: object,
) -> Result | None:
    """:func:`check` when the reference accepts the data; when it rejects them
    (``CompoundError``: unsorted lists, offsets out of range), the lowered program must
    fault with ``Fault_TileLegality`` before any effect: no output byte is stored (the
    outputs are prefilled with a pattern that must survive) and no flag beyond
    ``status`` is published. Returns None for a rejection."""
    module = build(name, inputs, body, int(kw.get("pes", 1)), kw.get("tiles"))  # type: ignore[arg-type]
    try:
        run_reference(module, inputs)
    except CompoundError:
        pass
    else:
        return check(name, inputs, body, status=status, **kw)  # type: ignore[arg-type]
    ck = compile_module(module, kw.get("machine"))  # type: ignore[arg-type]
    m = Machine(kw.get("machine") or MachineConfig())  # type: ignore[arg-type]
    placement = place(ck, m, inputs)
    for t in ck.abi.tensors:
        if t.output:
            m.load_gm(placement.tensors[t.name], np.full(t.nbytes, 0xA5, np.uint8))
    before = {t.name: m.read_gm(placement.tensors[t.name], np.uint8, t.nbytes)
              for t in ck.abi.tensors if t.output}  # fmt: skip
    with pytest.raises(TileLegalityFault):
        m.run(ck.program)
    for n, b in before.items():
        after = m.read_gm(placement.tensors[n], np.uint8, b.size)
        assert np.array_equal(after, b), f"output {n} was stored before the rejection"
    # The fault stops the program; bundles before it (other groups' merges) may have
    # published what the interface's status allows (NV for a signalling NaN), no more.
    allowed = 0 if status is None else status
    extra = [int(x) & ~allowed for x in m.status]
    assert extra == [0] * len(extra), f"status {_names(extra)} before the rejection"
    return None


_FLAG_NAMES = ((1, "NV"), (2, "DZ"), (4, "OF"), (8, "UF"), (16, "NX"))


def _names(st: list[int]) -> list[str]:
    return ["|".join(n for b, n in _FLAG_NAMES if s & b) or "-" for s in st]
