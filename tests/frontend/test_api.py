"""The public API: compile (stages, dumps, stats), run, reference, verify, inputs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

import ptoc
from ptoc.backend.isa import DataType
from ptoc.dialects.pto import PtoOp
from ptoc.dialects.reference import run_reference
from ptoc.dialects.tile_base import TileOp
from ptoc.errors import InputError, Mismatch
from ptoc.execute import compare

from .helpers import write_kernels

SRC = """\
T = ptoc.Tensor[ptoc.fp32, 8, 64]

@ptoc.kernel
def add(x: T, y: T, out: T):
    pt.store(out, pt.load(x) + pt.load(y))

@ptoc.kernel
def sub(x: T, y: T, out: T):
    pt.store(out, pt.load(x) - pt.load(y))

@ptoc.kernel
def softmax(x: T, out: T):
    t = pt.load(x)
    e = pt.exp(t - pt.row_max(t))
    pt.store(out, e / pt.row_sum(e))
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ptoc.Kernel]:
    return write_kernels(tmp_path_factory.mktemp("api"), SRC)[1]


def _xy(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal((8, 64)).astype(np.float32) for n in ("x", "y")}


def test_every_datatype_has_a_ptoc_name() -> None:
    for d in DataType:
        t = getattr(ptoc, d.name.lower())
        assert t.datatype is d and repr(t) == f"ptoc.{d.name.lower()}"


def test_program_text_binary_and_stats(kernels) -> None:
    prog = ptoc.compile(kernels["softmax"])
    assert isinstance(prog, ptoc.Program)
    text = prog.asm()
    assert ptoc.Program.parse(text).program == prog.program
    annotated = prog.asm(source=True)  # comments name the kernel lines, and still assemble
    assert "// " in annotated and "pt.exp(t - pt.row_max(t))" in annotated
    assert ptoc.Program.parse(annotated).program == prog.program
    assert ptoc.Program.decode(prog.encode()).program == prog.program
    # count the bundles from the text, independently of the stats code
    words = [ln.split(None, 1) for ln in text.splitlines() if ln.startswith("BSTART.")]
    counted = Counter(
        "scalar" if w[0] == "BSTART.STD" else w[1].split(",")[0] if "," in w[1] else w[0][7:]
        for w in words
    )
    s = prog.stats()
    # a bundle is a tile bundle; scalar blocks are counted apart (docs/formats.md)
    assert s.bundles == len(words) - counted["scalar"] == prog.program.bundle_count()
    assert s.scalar_blocks == counted["scalar"] == 1
    assert {**s.by_op, "scalar": s.scalar_blocks} == dict(counted)
    assert s.overhead_bundles == 0  # softmax needs no refresh or spill
    assert s.peak_bytes == prog.alloc.peak_bytes > 0


def test_stop_after_each_stage(kernels) -> None:
    k = kernels["softmax"]
    for stage, kind in (("trace", TileOp), ("tile", TileOp), ("lower-compound", TileOp),
                        ("legalize", PtoOp), ("pto", PtoOp), ("allocate", PtoOp)):  # fmt: skip
        module = ptoc.compile(k, stop_after=stage)
        f = next(op for op in module.ops if isinstance(op, func.FuncOp))
        body = [op for op in f.body.block.ops if not isinstance(op, func.ReturnOp)]
        assert any(isinstance(op, kind) for op in body), stage
    allocated = ptoc.compile(k, stop_after="allocate")
    assert "refs" in str(allocated) and "hands" in str(allocated)
    assert isinstance(ptoc.compile(k, stop_after="emit"), ptoc.Program)
    with pytest.raises(ValueError, match="unknown stage 'lower'"):
        ptoc.compile(k, stop_after="lower")


def test_print_ir_after_all_and_dump_dir(kernels, capsys, tmp_path: Path) -> None:
    ptoc.compile(kernels["softmax"], print_ir_after_all=True, dump_dir=tmp_path / "d")
    err = capsys.readouterr().err
    assert [ln for ln in err.splitlines() if ln.startswith("// -----// IR Dump After")] == [
        f"// -----// IR Dump After {s} //----- //" for s in ptoc.STAGES
    ]
    files = sorted(p.name for p in (tmp_path / "d").iterdir())
    assert files == ["01-trace.mlir", "02-lower-compound.mlir", "03-legalize.mlir",
                     "04-allocate.mlir", "05-emit.s"]  # fmt: skip
    assert "tile.rowmax" in (tmp_path / "d" / "01-trace.mlir").read_text()


def test_reference_walk_matches_the_dialect_interpreter(kernels) -> None:
    for k in kernels.values():
        arrays = {n: a for n, a in _xy(5).items() if n in k.trace().inputs}
        mine = ptoc.reference(k, **arrays)
        theirs = run_reference(k.trace().module, arrays)
        assert mine.keys() == theirs.keys()
        assert all(mine[n].tobytes() == theirs[n].tobytes() for n in mine)


def test_run_returns_outputs_by_name_with_trace(kernels) -> None:
    arrays = _xy(1)
    out = ptoc.run(ptoc.compile(kernels["add"]), trace=True, **arrays)
    assert list(out) == ["out"]
    assert out["out"].tobytes() == (arrays["x"] + arrays["y"]).tobytes()
    assert out.trace is not None and out.bundles >= 4 and out.status.shape == (4,)


def test_inputs_are_checked(kernels) -> None:
    k = kernels["add"]
    x, y = _xy().values()
    with pytest.raises(InputError, match="add has no tensor 'z'; its tensors are x"):
        ptoc.reference(k, x=x, y=y, z=x)
    with pytest.raises(InputError, match="add reads 'y', which was not given"):
        ptoc.reference(k, x=x)
    with pytest.raises(InputError, match=r"'x' has shape \(4, 64\), the tensor is \(8, 64\)"):
        ptoc.reference(k, x=x[:4], y=y)
    # nothing is dropped silently: no imaginary part, no field, no datetime reinterpreted
    for bad, why in (
        (x.astype(np.complex64), "complex"),
        (x.astype("datetime64[s]"), "datetime"),
        (np.zeros(x.shape, [("a", np.float32)]), "structured"),
        (x.astype(object), "object"),
    ):
        with pytest.raises(InputError, match=f"'x' cannot be a fp32 tensor: .*{why}"):
            ptoc.run(ptoc.compile(k), x=bad, y=y)
    # float64 arrays are rounded to the tensor type, exactly as numpy's astype does
    got = ptoc.reference(k, x=x.astype(np.float64), y=y)["out"]
    assert got.tobytes() == (x + y).tobytes()


def test_verify_reports_the_first_differing_elements(kernels) -> None:
    """A program of ``add`` checked against the reference of ``sub``: every element with
    y != 0 differs; the report names indices, values and bit patterns."""
    prog = ptoc.compile(kernels["add"])
    prog.kernel = kernels["sub"]
    arrays = _xy(2)
    with pytest.raises(ptoc.VerifyError) as info:
        ptoc.verify(prog, **arrays)
    e = info.value
    x, y = arrays["x"], arrays["y"]
    a, s = (x + y).view(np.uint32), (x - y).view(np.uint32)
    differ = np.argwhere(a != s)
    assert e.counts == {"out": (len(differ), 512)}
    first = e.mismatches[0]
    assert first.index == tuple(int(i) for i in differ[0])
    assert first.machine_bits == int(a[first.index]) and first.reference_bits == int(
        s[first.index]
    )
    assert f"0x{first.machine_bits:08x}" in str(e) and f"0x{first.reference_bits:08x}" in str(e)
    assert len(e.mismatches) == 8


def test_compare_counts_nan_payloads_and_signed_zeros() -> None:
    bits = np.array([0x7FC00000, 0x00000000, 0x3F800000], np.uint32)
    other = np.array([0x7FC00001, 0x80000000, 0x3F800000], np.uint32)
    with pytest.raises(ptoc.VerifyError) as info:
        compare("k", {"o": other.view(np.float32)}, {"o": bits.view(np.float32)})
    ms = info.value.mismatches
    assert [m.index for m in ms] == [(0,), (1,)]
    assert (ms[1].machine_bits, ms[1].reference_bits) == (0x80000000, 0)
    assert ms[1].text() == "o[1]: machine -0.0 (0x80000000), reference 0.0 (0x00000000)"
    assert isinstance(ms[0], Mismatch) and "nan" in ms[0].text()
    compare("k", {"o": bits.view(np.float32)}, {"o": bits.view(np.float32).copy()})


def test_verify_without_arrays_uses_random_inputs(kernels) -> None:
    got = ptoc.verify(kernels["softmax"])
    x = kernels["softmax"].random_inputs(0)["x"]
    assert np.allclose(got["out"].sum(axis=1), 1.0, atol=1e-5)
    assert x.dtype == np.float32 and x.shape == (8, 64)


def test_calling_a_kernel_directly_is_an_error(kernels) -> None:
    with pytest.raises(ptoc.KernelError, match="not called like a Python function") as info:
        kernels["add"](1, 2, 3)
    assert info.value.file == __file__


def test_import_ptoc_is_light() -> None:
    import subprocess
    import sys

    code = "import ptoc, sys; print('xdsl' in sys.modules, 'networkx' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]
