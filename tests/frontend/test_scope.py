"""String annotations (``from __future__ import annotations``) are evaluated in the
scope that defined the kernel: the defining function's locals and the kernel's closure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc
import ptoc.lang as pt
from ptoc.cli import main


def make(n: int):
    # n and T are locals of make(); the annotations below are strings
    T = ptoc.Tensor[ptoc.fp32, n, 64]

    @ptoc.kernel
    def scaled(x: ptoc.Tensor[ptoc.fp32, n, 64], out: T):
        pt.store(out, pt.load(x) * 2.0)

    return scaled


def make_pes(rows: int):
    @ptoc.kernel(pes=2)
    def halves(x: ptoc.Tensor[ptoc.fp32, rows, 64], out: ptoc.Tensor[ptoc.fp32, rows, 64]):
        r = (pt.pe() * (rows // 2), rows // 2)
        pt.store(out, pt.load(x, rows=r), rows=r)

    return halves


def test_annotations_use_the_defining_functions_locals() -> None:
    k = make(8)
    assert [p.spec.shape for p in k.params] == [(8, 64), (8, 64)]
    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    assert np.array_equal(ptoc.verify(k, x=x)["out"], x * 2)
    assert make(4).params[0].spec.shape == (4, 64)  # each call its own scope


def test_decorator_with_arguments_sees_the_same_scope() -> None:
    k = make_pes(16)
    assert k.pes == 2 and k.params[0].spec.shape == (16, 64)
    ptoc.verify(k)


def test_an_unknown_name_is_still_a_located_kernel_error() -> None:
    def bad():
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, nowhere, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):  # noqa: F821
            pt.store(out, pt.load(x))

    with pytest.raises(ptoc.KernelError, match="name 'nowhere' is not defined") as info:
        bad()
    assert info.value.line is not None and info.value.file == __file__


def test_from_the_command_line(tmp_path: Path, capsys) -> None:
    p = tmp_path / "nested.py"
    p.write_text(
        "from __future__ import annotations\n"
        "import ptoc\nimport ptoc.lang as pt\n\n"
        "def build(n):\n"
        "    @ptoc.kernel\n"
        "    def twice(x: ptoc.Tensor[ptoc.fp32, n, 64], out: ptoc.Tensor[ptoc.fp32, n, 64]):\n"
        "        pt.store(out, pt.load(x) + pt.load(x))\n"
        "    return twice\n\n"
        "twice = build(8)\n"
    )
    assert main(["verify", f"{p}::twice"]) == 0
    assert capsys.readouterr().out.startswith("twice: bit-exact in seed 0")
