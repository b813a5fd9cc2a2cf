"""``pt.bitwise_and`` / ``pt.bitwise_or`` / ``pt.bitwise_xor``: TAND, TOR and TXOR as
functions (the operators ``&``, ``|``, ``^`` as names), derived from the operation table's
``lang`` column like every one-operation function."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc

from .helpers import op_names, write_kernels

KERNEL = """\
A = ptoc.Tensor[ptoc.u32, 8, 64]

@ptoc.kernel
def k(a: A, b: A, col: ptoc.Tensor[ptoc.u32, 8, 1], out: A):
    a, b, col = pt.load(a), pt.load(b), pt.load(col)
    pt.store(out, {expr})
"""

CASES = [
    ("pt.bitwise_and(a, b)", ["tile.and"], lambda a, b, c: a & b),
    ("pt.bitwise_or(a, 0xF0F0)", ["tile.ors"], lambda a, b, c: a | np.uint32(0xF0F0)),
    ("pt.bitwise_xor(a, col)", ["tile.rowexpand", "tile.xor"], lambda a, b, c: a ^ c),
    ("pt.bitwise_xor(a, b) | (a & b)", ["tile.xor", "tile.and", "tile.or"],
     lambda a, b, c: (a ^ b) | (a & b)),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "ops", "oracle"), CASES, ids=[c[0] for c in CASES])
def test_bitwise_functions_record_their_operation(
    tmp_path: Path, expr: str, ops: list[str], oracle
) -> None:  # type: ignore[no-untyped-def]
    _, kernels = write_kernels(tmp_path, KERNEL.format(expr=expr))
    k = kernels["k"]
    names = op_names(k)
    assert names[:3] == ["tile.load"] * 3 and names[-1] == "tile.store"
    assert names[3:-1] == ops
    rng = np.random.default_rng(7)
    a, b = (rng.integers(0, 2**32, (8, 64), dtype=np.uint32) for _ in range(2))
    c = rng.integers(0, 2**32, (8, 1), dtype=np.uint32)
    got = ptoc.reference(k, a=a, b=b, col=c)["out"]
    want = np.broadcast_to(oracle(a, b, c), (8, 64)).astype(np.uint32)
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def test_bitwise_and_runs_on_the_machine(tmp_path: Path) -> None:
    _, kernels = write_kernels(tmp_path, KERNEL.format(expr="pt.bitwise_and(a, b)"))
    rng = np.random.default_rng(8)
    a, b = (rng.integers(0, 2**32, (8, 64), dtype=np.uint32) for _ in range(2))
    c = rng.integers(0, 2**32, (8, 1), dtype=np.uint32)
    ptoc.verify(kernels["k"], a=a, b=b, col=c)


def test_bitwise_functions_refuse_float_tiles(tmp_path: Path) -> None:
    _, kernels = write_kernels(
        tmp_path,
        """\
        A = ptoc.Tensor[ptoc.fp32, 8, 64]

        @ptoc.kernel
        def k(a: A, out: A):
            t = pt.load(a)
            pt.store(out, pt.bitwise_or(t, t))
        """,
    )
    with pytest.raises(
        ptoc.KernelError, match=r"pt.bitwise_or does not accept fp32 tiles: TOR"
    ):
        kernels["k"].trace()
