"""Every diagnostic a kernel author can cause: the rule, the file, the line, the caret.

Each kernel is written to a real file (line numbers start at 4 after the header of
``helpers.write_kernels``) so the excerpt under the message is the user's own line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc
from ptoc.backend.isa import op
from ptoc.dtypes import DTYPES
from ptoc.errors import CompileError, KernelError, ReferenceFault

from .helpers import write_kernels

TINY = ptoc.MachineConfig(depth=4, capacity=16384)


def _error(tmp_path: Path, body: str, name: str, machine=None) -> KernelError:
    path, kernels = write_kernels(tmp_path, body)
    with pytest.raises(ptoc.Error) as info:
        ptoc.compile(kernels[name], machine)
    e = info.value
    assert isinstance(e, (KernelError, CompileError))
    assert e.file == str(path)
    return e


def _lines(e: Exception) -> list[str]:
    return str(e).splitlines()


def test_shape_mismatch_names_both_shapes(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):
            a = pt.load(x)
            b = pt.load(x, rows=(0, 4))
            pt.store(out, a + b)
        """,
        "k",
    )
    assert (e.line, e.col) == (8, 19)
    assert _lines(e)[0].endswith(
        ":8:19: error: shape mismatch in '+': (8, 64) and (4, 64) cannot be broadcast together"
    )
    assert _lines(e)[1:3] == ["    pt.store(out, a + b)", "                  ^^^^^"]
    assert e.hint and "(rows, 1)" in e.hint


def test_illegal_datatype_lists_the_catalog_types(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.s32, 8, 64], out: ptoc.Tensor[ptoc.s32, 8, 64]):
            t = pt.load(x)
            pt.store(out, pt.exp(t))
        """,
        "k",
    )
    legal = ", ".join(d.name.lower() for d in sorted(op("TEXP").dtypes))
    assert (e.line, e.col) == (7, 19)
    assert e.message == f"pt.exp does not accept s32 tiles: TEXP takes {legal}"
    assert _lines(e)[2] == " " * 18 + "^" * len("pt.exp(t)")


def test_tile_too_large_for_the_machine(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 1, 8192], out: ptoc.Tensor[ptoc.fp32, 1, 8192]):
            t = pt.load(x)
            pt.store(out, t)
        """,
        "k",
        TINY,
    )
    assert (e.line, e.col) == (6, 9)
    assert e.message == (
        "a 1x8192 fp32 tile is too large for the machine: one row needs 32768 bytes per PE, "
        "and tiles are split into row pieces of at most 4096 bytes (capacity 16384 bytes "
        "per PE)"
    )
    assert e.hint and "cols=(start, n)" in e.hint


def test_operands_too_large_together_is_a_compile_error_at_the_line(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        T = ptoc.Tensor[ptoc.fp32, 64, 64]

        @ptoc.kernel
        def k(x: T, out: T):
            pt.store(out, pt.transpose(pt.load(x)))
        """,
        "k",
        TINY,
    )
    assert isinstance(e, CompileError)  # TTRANS cannot be split into row pieces
    assert (e.line, e.col) == (8, 19)
    assert e.message == (
        "TTRANS: its sources and results need 32768 bytes per PE at once, more than the "
        "machine's capacity of 16384 bytes per PE"
    )


@pytest.mark.parametrize(
    ("code", "line", "col", "message", "hint"),
    [
        ("    if t > 0:\n        t = -t\n", 7, 8, "the truth value of a tile is not known at "
         "trace time", "pt.where(pred, a, b)"),
        ("    for v in t:\n        pass\n", 7, 5, "iterating over a tile is not supported",
         "t[r0:r1, c0:c1]"),
        ("    t = np.exp(t)\n", 7, 9, "numpy function np.exp cannot run on a tile", "pt.exp"),
        ("    t = t // 2.0\n", 7, 9, "'//' (floor division) is not a PTO operation", "'/'"),
        ("    t = t ** 2\n", 7, 9, "'**' is not a PTO operation", "t * t"),
        ("    t = x + 1.0\n", 7, 9, "'x' is a global-memory tensor, not a tile", "pt.load(x)"),
        ("    n = float(t)\n", 7, 9, "a tile cannot be converted to a Python number at trace "
         "time", "pt.where"),
        ("    t = t[::2]\n", 7, 9, "t[...]: the row slice None:None:2 must select a nonempty "
         "range with step 1", "step=n"),
    ],
)  # fmt: skip
def test_unsupported_python_constructs_say_what_to_write(
    tmp_path: Path, code: str, line: int, col: int, message: str, hint: str
) -> None:
    body = (
        "@ptoc.kernel\n"
        "def k(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):\n"
        "    t = pt.load(x)\n" + code + "    pt.store(out, t)\n"
    )
    e = _error(tmp_path, body, "k")
    assert (e.line, e.col) == (line, col)
    assert e.message == message
    assert e.hint and hint in e.hint


def test_returning_a_value_points_at_the_return(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):
            t = pt.exp(pt.load(x))
            return t
        """,
        "k",
    )
    assert (e.line, e.col) == (7, 5)
    assert e.message == "a kernel returns nothing; its results are the tensors it stores to"
    assert _lines(e)[1:][:2] == ["    return t", "    ^^^^^^^^"]


def test_store_of_the_wrong_type_and_mixed_operands(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp16, 8, 64]):
            pt.store(out, pt.load(x))
        """,
        "k",
    )
    assert (e.line, e.col) == (6, 5)
    assert e.message == "pt.store: the tile is fp32 but the tensor 'out' is fp16"
    assert e.hint == "convert it first: pt.cast(t, ptoc.fp16)"
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 8, 64], y: ptoc.Tensor[ptoc.fp16, 8, 64],
              out: ptoc.Tensor[ptoc.fp32, 8, 64]):
            pt.store(out, pt.load(x) * pt.load(y))
        """,
        "k",
    )
    assert (e.line, e.col) == (7, 19)
    assert e.message == "'*': operands have different element types fp32 and fp16"


def test_window_outside_the_tensor_names_the_pe(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel(pes=4)
        def k(x: ptoc.Tensor[ptoc.fp32, 16, 64], out: ptoc.Tensor[ptoc.fp32, 16, 64]):
            t = pt.load(x, rows=(pt.pe() * 4, 8))
            pt.store(out, t, row=pt.pe() * 4)
        """,
        "k",
    )
    assert (e.line, e.col) == (6, 9)
    assert e.message == (
        "pt.load: the window rows 12..19, cols 0..63 on PE 3 is outside the 16x64 tensor 'x'"
    )


def test_scalar_not_representable(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.s8, 8, 64], out: ptoc.Tensor[ptoc.s8, 8, 64]):
            pt.store(out, pt.load(x) + 300)
        """,
        "k",
    )
    assert (e.line, e.col) == (6, 19)
    assert e.message == "'+': S8 scalar 300 is outside -128..127"


def test_bad_annotations_point_at_the_def(tmp_path: Path) -> None:
    path = tmp_path / "ann.py"
    path.write_text(
        "import ptoc\n\n@ptoc.kernel\ndef k(x, out: ptoc.Tensor[ptoc.fp32, 8, 64]):\n    pass\n"
    )
    with pytest.raises(KernelError) as info:
        ptoc.loader.import_file(path)
    e = info.value
    assert (e.file, e.line, e.col) == (str(path), 4, 1)
    assert e.message == (
        "kernel parameter 'x' has no annotation; every parameter is a tensor or a run-time "
        "scalar"
    )
    path.write_text("import ptoc\n\nT = ptoc.Tensor[ptoc.fp32, 8]\n")
    with pytest.raises(KernelError) as info:
        ptoc.loader.import_file(path)
    assert (info.value.line, info.value.col) == (3, 5)
    assert "a DataType and two dimensions, not 2" in info.value.message


def test_lang_outside_a_kernel() -> None:
    import ptoc.lang as pt

    with pytest.raises(KernelError) as info:
        pt.exp(1.0)
    assert (
        info.value.message
        == "pt.exp is only usable inside a @ptoc.kernel function while it is traced"
    )
    assert info.value.file == __file__


def test_reference_fault_and_machine_fault_name_the_kernel_line(tmp_path: Path) -> None:
    path, kernels = write_kernels(
        tmp_path,
        """\
        I = ptoc.Tensor[ptoc.s32, 8, 64]

        @ptoc.kernel
        def k(x: I, y: I, out: I):
            pt.store(out, pt.load(x) / pt.load(y))
        """,
    )
    x, y = np.ones((8, 64), np.int32), np.zeros((8, 64), np.int32)
    with pytest.raises(ReferenceFault) as info:
        ptoc.reference(kernels["k"], x=x, y=y)
    assert (info.value.file, info.value.line, info.value.col) == (str(path), 8, 19)
    assert info.value.message == "TDIV has an integer zero divisor"
    with pytest.raises(ptoc.TileLegalityFault) as fault:
        ptoc.run(ptoc.compile(kernels["k"]), x=x, y=y)
    notes = "\n".join(fault.value.__notes__)
    assert f"from the kernel at {path}:8:19" in notes
    assert "pt.store(out, pt.load(x) / pt.load(y))" in notes


def test_compound_lowering_failure_is_a_compile_error_at_its_line(
    tmp_path: Path, monkeypatch
) -> None:
    from ptoc.dialects.compound_ops import QuantizeMxOp
    from ptoc.passes import lower_compound

    monkeypatch.delitem(lower_compound.LOWERINGS, QuantizeMxOp, raising=False)
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.e4m3, 8, 64]):
            mx = pt.quantize_mx(pt.load(x))
            pt.store(out, mx.elements)
        """,
        "k",
    )
    assert isinstance(e, CompileError) and (e.line, e.col) == (6, 10)
    assert e.message == "pt.quantize_mx: no lowering for this compound op"


def test_compound_static_rule_is_checked_while_tracing(tmp_path: Path) -> None:
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 8, 40], out: ptoc.Tensor[ptoc.e4m3, 8, 40]):
            pt.store(out, pt.quantize_mx(pt.load(x)).elements)
        """,
        "k",
    )
    assert (e.line, e.col) == (6, 19)
    assert (
        e.message
        == "pt.quantize_mx: MX quantization needs cols % 32 == 0 (pto-isa), not cols=40"
    )


def test_errors_never_show_library_paths(tmp_path: Path) -> None:
    root = Path(ptoc.__file__).resolve().parent
    e = _error(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.s32, 8, 64], out: ptoc.Tensor[ptoc.s32, 8, 64]):
            pt.store(out, pt.sqrt(pt.load(x)))
        """,
        "k",
    )
    assert str(root) not in str(e) and str(root.parent / "dialects") not in str(e)


def test_compound_data_rule_is_a_reference_fault_at_its_line(tmp_path: Path) -> None:
    path, kernels = write_kernels(
        tmp_path,
        """\
        L = ptoc.Tensor[ptoc.fp32, 1, 8]

        @ptoc.kernel
        def k(a: L, b: L, out: ptoc.Tensor[ptoc.fp32, 1, 16]):
            merged, _ = pt.merge_sorted(pt.load(a), pt.load(b))
            pt.store(out, merged)
        """,
    )
    a = np.arange(8, dtype=np.float32).reshape(1, 8)  # ascending: not sorted descending
    b = -a
    with pytest.raises(ReferenceFault) as info:
        ptoc.reference(kernels["k"], a=a, b=b)
    e = info.value
    assert (e.file, e.line, e.col) == (str(path), 8, 17)
    assert e.message.startswith("pt.merge_sorted: list 0 is not sorted descending: ")


def test_cast_to_e8m0_obeys_the_catalogs_type_pair_rule(tmp_path) -> None:
    """An s32 -> e8m0 TCVT always faults on the machine: it is a trace-time KernelError,
    and every source the catalog allows still traces."""
    legal = op("TCVT").sources_for(ptoc.e8m0.datatype)
    assert legal is not None
    path, ks = write_kernels(
        tmp_path,
        """\
        @ptoc.kernel
        def to_e8m0(x: ptoc.Tensor[ptoc.s32, 8, 64], out: ptoc.Tensor[ptoc.e8m0, 8, 64]):
            pt.store(out, pt.cast(pt.load(x), ptoc.e8m0))
        """,
    )
    with pytest.raises(ptoc.KernelError) as info:
        ptoc.compile(ks["to_e8m0"])
    e = info.value
    assert (e.file, e.line) == (str(path), 6)
    assert e.message == (
        "pt.cast: TCVT to e8m0 takes fp32, fp16, bf16 sources, not s32 (the catalog's "
        "type-pair rule)"
    )
    assert e.hint == "convert in two steps: pt.cast(pt.cast(t, ptoc.fp32), ptoc.e8m0)"
    for d in (DTYPES[n] for n in ("fp32", "fp16", "bf16", "s32", "u8", "e4m3")):
        dt = d.datatype
        body = (
            f"@ptoc.kernel\ndef k(x: ptoc.Tensor[ptoc.{d.name}, 8, 64], "
            "out: ptoc.Tensor[ptoc.e8m0, 8, 64]):\n"
            "    pt.store(out, pt.cast(pt.load(x), ptoc.e8m0))\n"
        )
        _, got = write_kernels(tmp_path, body, name=f"k_{d.name}.py")
        if dt in legal:
            got["k"].trace()
        else:
            with pytest.raises(ptoc.KernelError, match="type-pair rule"):
                got["k"].trace()


def test_the_tile_dialect_rejects_an_illegal_tcvt_pair() -> None:
    from xdsl.utils.exceptions import VerifyException

    from ptoc.dialects.tile_elementwise import CvtOp
    from ptoc.testing import KernelBuilder

    kb = KernelBuilder("k")
    t = kb.load(kb.tensor("x", "S32", (8, 64)), (8, 64))
    with pytest.raises(VerifyException, match="TCVT to E8M0 accepts only BF16, FP16, FP32"):
        CvtOp(t, "E8M0").verify()
    CvtOp(kb.load(kb.tensor("y", "FP16", (8, 64)), (8, 64)), "E8M0").verify()
