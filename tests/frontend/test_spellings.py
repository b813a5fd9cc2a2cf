"""One spelling per concept (docs/cli.md, "Spellings"): ``pt.store(rows=, cols=)`` like
``pt.load`` (``row=`` / ``col=`` kept), ``ptoc run ... --save OUT.npz`` for both forms
(``-o`` kept for kernels), and ``ptoc run --help`` describing both forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc
from ptoc.cli import main

from .helpers import write_kernels

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = str(ROOT / "examples" / "softmax.py") + "::softmax"

KERNELS = """\
T = ptoc.Tensor[ptoc.fp32, 16, 64]


@ptoc.kernel(pes=2)
def windows(x: T, out: T):
    r = (pt.pe() * 8, 8)
    pt.store(out, pt.load(x, rows=r, cols=(0, 32)) * 2.0, rows=r, cols=(32, 32))
    pt.store(out, pt.load(x, rows=r, cols=(32, 32)), rows=pt.pe() * 8, cols=0)


@ptoc.kernel(pes=2)
def old_spelling(x: T, out: T):
    r = (pt.pe() * 8, 8)
    pt.store(out, pt.load(x, rows=r, cols=(0, 32)) * 2.0, row=pt.pe() * 8, col=32)
    pt.store(out, pt.load(x, rows=r, cols=(32, 32)), row=pt.pe() * 8)


@ptoc.kernel
def wrong_count(x: T, out: T):
    pt.store(out, pt.load(x, rows=(0, 8)), rows=(0, 4))


@ptoc.kernel
def both(x: T, out: T):
    pt.store(out, pt.load(x, rows=(0, 8)), rows=0, row=0)
"""


@pytest.fixture
def ks(tmp_path: Path):
    return write_kernels(tmp_path, KERNELS)


def test_store_takes_the_load_spelling_and_the_old_one(ks) -> None:
    _, kernels = ks
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    want = np.concatenate([x[:, 32:], x[:, :32] * 2], axis=1)
    for name in ("windows", "old_spelling"):
        got = ptoc.verify(kernels[name], x=x)["out"]
        assert np.array_equal(got, want), name


def test_store_window_rules_are_diagnostics(ks) -> None:
    _, kernels = ks
    with pytest.raises(ptoc.KernelError) as info:
        kernels["wrong_count"].trace()
    assert info.value.message == ("pt.store: rows=(0, 4) counts 4 but the tile has 8 rows")
    assert info.value.hint == "write rows=(0, 8), or give only the start"
    with pytest.raises(ptoc.KernelError, match="give rows= or row=, not both"):
        kernels["both"].trace()


def test_run_saves_with_save_and_with_the_old_o(tmp_path: Path, capsys) -> None:
    k = ptoc.loader.load_kernel(SOFTMAX)
    want = ptoc.reference(k, **k.random_inputs(1))["out"]
    for flag in ("--save", "-o", "--output"):
        out = tmp_path / f"o{flag.strip('-')}.npz"
        assert main(["run", SOFTMAX, "--seed", "1", flag, str(out)]) == 0
        assert np.load(out)["out"].tobytes() == want.tobytes()
    text = capsys.readouterr().out
    assert "softmax: ran 7 bundles, 1 scalar block" in text


def test_run_help_shows_both_forms(capsys) -> None:
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: ptoc run FILE.py::KERNEL" in out and "--save OUT.npz" in out
    assert "ptoc run also runs a bundle program" in out and "--gpr" in out
