"""Shape-changing ops compile to bundles that never fault: fill-pad to wider and taller
shapes, and the row pieces legalize cuts when tiles exceed the split size."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc
import ptoc.lang as pt
from ptoc.backend.isa import DataType
from ptoc.backend.program import TileStart
from ptoc.dialects.modes import CMode
from ptoc.dialects.reference import run_reference
from ptoc.passes.execute import compare, run_compiled, verify_module
from ptoc.passes.pipeline import compile_module
from ptoc.runtime import MachineConfig
from ptoc.testing import KernelBuilder
from ptoc.testing.random_kernel import adversarial

from .conftest import MACHINES


@ptoc.kernel
def _pad_to_64(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):
    pt.store(out, pt.fillpad(pt.load(x, cols=(0, 32)), (8, 64), float("-inf")))


def test_fillpad_to_more_columns_than_the_source_allocation_has() -> None:
    """The issue's kernel: the 8x64 destination's LB2 (Col 64) was omitted, so it
    inherited the source's Col 32 and faulted Fault_TileAllocation."""
    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    out = ptoc.verify(_pad_to_64, x=x)["out"]
    assert np.array_equal(out[:, :32], x[:, :32]) and np.all(out[:, 32:] == -np.inf)


#: (DataType, source shape, fill-pad shape): wider than the source's physical Col, and
#: (S8 5x3 -> 5x6) a wider destination with fewer physical rows than its source
CASES = [
    ("FP32", (8, 4), (8, 8)),
    ("U32", (1, 8), (2, 16)),
    ("S8", (5, 3), (5, 6)),
    ("FP16", (3, 17), (9, 40)),
    ("U8", (1, 1), (1, 128)),
    ("BF16", (7, 2), (7, 3)),
]


@pytest.mark.parametrize("machine", ["default", "tiny", "cramped"])
@pytest.mark.parametrize(("dt", "src", "dst"), CASES)
def test_fillpad_widening_and_growing_verifies(
    dt: str, src: tuple[int, int], dst: tuple[int, int], machine: str
) -> None:
    kb = KernelBuilder("pad")
    x = kb.tensor("x", dt, dst)
    o = kb.tensor("o", dt, dst)
    value = 7 if dt[0] in "SU" else -1.5
    kb.store(o, kb.fillpad(kb.load(x, src), value, dst))
    rng = np.random.default_rng(3)
    verify_module(kb.finish(), {"x": adversarial(rng, DataType[dt], dst)}, MACHINES[machine])


def test_a_one_row_piece_is_extracted_with_its_row_count() -> None:
    """33 rows split into 32 + 1 on the tiny machine: the TEXTRACT that cuts the last
    (one-row) piece out of a whole 33-row tile omitted LB1, so its ValidRow defaulted to
    the source's 33 and faulted (row offset + ValidRow exceeds the source ValidRow)."""
    kb = KernelBuilder("one_row")
    x = kb.tensor("x", "FP32", (33, 32))
    o = kb.tensor("o", "FP32", (33, 32))
    whole = kb.concat(kb.load(x, (33, 16)), kb.load(x, (33, 16), (0, 16)))  # kept whole
    kb.store(o, kb.add(whole, kb.load(x, (33, 32))))  # split into row pieces
    x_in = np.arange(33 * 32, dtype=np.float32).reshape(33, 32)
    verify_module(kb.finish(), {"x": x_in}, MACHINES["tiny"])


def test_operands_split_at_different_sizes_are_recut_to_the_finest() -> None:
    """A U16 33x32 tile splits into 32-row pieces, an S32 one into 16-row pieces (the
    cramped machine's 2 KiB split size): an op over both once refused ("split into
    different row pieces"); the converted S32 value must not keep 32-row (4 KiB) pieces,
    and the last one-row piece must keep the physical shape of its extent."""
    kb = KernelBuilder("recut")
    a = kb.tensor("a", "S32", (33, 32))
    b = kb.tensor("b", "U16", (33, 32))
    o = kb.tensor("o", "S32", (33, 32))
    wide = kb.cvt(kb.load(b, (33, 32)), "S32")
    kb.store(o, kb.max(kb.load(a, (33, 32)), wide))
    rng = np.random.default_rng(5)
    inputs = {
        "a": adversarial(rng, DataType.S32, (33, 32)),
        "b": adversarial(rng, DataType.U16, (33, 32)),
    }
    for machine in ("cramped", "tiny", "default"):
        ck = verify_module(kb.finish(), inputs, MACHINES[machine])
        assert ck.report is not None and ck.report.peak_bytes <= MACHINES[machine].capacity


def _mnemonics(ck) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.op.mnemonic for c in ck.program if isinstance(c, TileStart) and c.op is not None]


def test_a_whole_op_gets_its_operand_assembled_from_row_pieces() -> None:
    """On the cramped machine (8 KiB, 2 KiB pieces) an 8 KiB tile cannot be whole for an
    op: the row sums run per piece and are assembled (TFILLPAD + TINSERT) for the
    TEXTRACT, instead of "its sources and results need 16384 bytes"."""
    kb = KernelBuilder("assemble")
    x = kb.tensor("x", "FP32", (33, 32))
    o = kb.tensor("o", "FP32", (33, 32))
    sums = kb.rowsum(kb.exp(kb.load(x, (33, 32))))
    kb.store(o, kb.extract(sums, (1, 0), (30, 1)))
    rng = np.random.default_rng(8)
    ck = verify_module(kb.finish(), {"x": adversarial(rng, DataType.FP32, (33, 32))},
                       MACHINES["cramped"])  # fmt: skip
    ops = _mnemonics(ck)
    assert ops.count("TFILLPAD") == 1 and ops.count("TINSERT") == 2 and ops.count("TEXP") == 3


def test_assembly_of_a_type_tfillpad_lacks_starts_from_texpands() -> None:
    """S64 has no TFILLPAD: the pieces go into a TEXPANDS tile. (An 11 KiB machine with
    2 KiB pieces: the add's three 4 KiB tiles exceed it, so the add runs in pieces.)"""
    kb = KernelBuilder("assemble64")
    x = kb.tensor("x", "S64", (33, 8))
    o = kb.tensor("o", "S64", (33, 8))
    t, u = kb.load(x, (33, 8)), kb.load(x, (33, 8), pe=(0, 0))
    kb.store(o, kb.extract(kb.add(t, u), (3, 1), (29, 5)))
    module = kb.finish()
    machine = MachineConfig(capacity=11264)
    inputs = {"x": adversarial(np.random.default_rng(9), DataType.S64, (33, 8))}
    ck = compile_module(module, machine, max_tile_bytes=2048)
    compare(run_compiled(ck, inputs, machine), run_reference(module, inputs))
    ops = _mnemonics(ck)
    assert "TFILLPAD" not in ops and "TEXPANDS" in ops and ops.count("TINSERT") == 2


def test_a_column_sum_of_assembled_pieces_keeps_the_fold_order() -> None:
    kb = KernelBuilder("colsum")
    x = kb.tensor("x", "FP32", (33, 32))
    o = kb.tensor("o", "FP32", (1, 32))
    kb.store(o, kb.colsum(kb.exp(kb.load(x, (33, 32)))))
    rng = np.random.default_rng(10)
    for machine in ("tiny", "default"):
        verify_module(kb.finish(), {"x": adversarial(rng, DataType.FP32, (33, 32))},
                      MACHINES[machine])  # fmt: skip


def test_a_predicate_is_computed_again_for_other_row_pieces() -> None:
    """A TSEL over FP32 tiles split into row pieces, with the predicate of an FP16
    compare that is not split (or split otherwise): the predicate's rows were cut out
    with a TEXTRACT of the predicate tile (DataType field 31), which the machine rejects
    (Fault_IllegalInstruction); the compare now runs again on the pieces' rows."""
    kb = KernelBuilder("pred_pieces")
    h = kb.tensor("h", "FP16", (33, 32))
    x = kb.tensor("x", "FP32", (33, 32))
    o = kb.tensor("o", "FP32", (33, 32))
    p = kb.cmp(CMode.GT, kb.load(h, (33, 32)), kb.load(h, (33, 32), pe=(0, 0)))
    kb.store(o, kb.sel(p, kb.load(x, (33, 32)), kb.exp(kb.load(x, (33, 32)))))
    q = kb.cmp(CMode.LT, kb.load(h, (33, 32)), 0.5)
    kb.store(o, kb.sel(q, kb.load(x, (33, 32)), -1.0))
    rng = np.random.default_rng(11)
    inputs = {
        "h": adversarial(rng, DataType.FP16, (33, 32)),
        "x": adversarial(rng, DataType.FP32, (33, 32)),
    }
    for machine in ("tiny", "cramped", "default"):
        ck = verify_module(kb.finish(), inputs, MACHINES[machine])
        cmps = sum(op in ("TCMP", "TCMPS") for op in _mnemonics(ck))
        assert cmps == {"default": 2, "tiny": 4, "cramped": 6}[machine]  # one per piece
