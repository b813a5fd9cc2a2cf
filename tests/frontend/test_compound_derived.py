"""Compound DSL functions derived from their op classes (``ptoc.lang.compound.derive``).

A compound op whose constructor takes only tiles gets ``pt.<INTERFACE>`` without a
hand-written function: the same parameter names, the op's results, the op's docstring,
and the diagnostics of every compound function.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import ptoc
import ptoc.lang as pt
from ptoc.dialects import compound_ops as co
from ptoc.lang import compound

from .helpers import op_names, write_kernels


def test_every_compound_op_has_a_function() -> None:
    for cls in co.COMPOUND_OPS:
        assert callable(getattr(compound, cls.INTERFACE, None)), cls.__name__


def test_derived_functions_are_exactly_the_tile_only_ops_without_a_hand_written_one() -> None:
    assert set(compound.DERIVED) == {"gather_flat", "gather_blocks", "dequantize_mx"}
    for name, fn in compound.DERIVED.items():
        assert getattr(pt, name) is fn and name in pt.__all__
        cls = next(c for c in co.COMPOUND_OPS if name == c.INTERFACE)
        ctor = list(inspect.signature(cls.__init__).parameters)[1:]
        assert list(inspect.signature(fn).parameters) == ctor
        assert fn.__doc__ and not fn.__doc__.startswith("``%")


def test_hand_written_functions_win_over_derivation() -> None:
    assert "quantize_mx" not in compound.DERIVED  # a tile-only constructor, but it takes fmt=
    assert pt.quantize_mx.__module__ == "ptoc.lang.compound"


KERNEL = """\
@ptoc.kernel
def k(x: ptoc.Tensor[ptoc.fp32, 4, 64], o: ptoc.Tensor[ptoc.u32, 4, 16],
      out: ptoc.Tensor[ptoc.fp32, 4, 16]):
    t, offs = pt.load(x), pt.load(o)
    pt.store(out, {call})
"""


def test_a_derived_function_traces_its_op_and_verifies(tmp_path: Path) -> None:
    _, kernels = write_kernels(tmp_path, KERNEL.format(call="pt.gather_flat(t, offsets=offs)"))
    k = kernels["k"]
    assert "tile.gather_flat" in op_names(k)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    o = rng.integers(0, 4 * 64, (4, 16), dtype=np.uint32)
    got = ptoc.verify(k, x=x, o=o)["out"]
    assert got.tobytes() == x.reshape(-1)[o].tobytes()


def test_a_derived_function_reports_at_the_callers_line(tmp_path: Path) -> None:
    _, kernels = write_kernels(tmp_path, KERNEL.format(call="pt.gather_flat(t < 0.0, offs)"))
    with pytest.raises(ptoc.KernelError, match=r"pt.gather_flat does not accept pred") as e:
        kernels["k"].trace()
    assert "kern.py:8" in str(e.value)


def test_a_broken_static_rule_names_the_function(tmp_path: Path) -> None:
    _, kernels = write_kernels(tmp_path, KERNEL.format(call="pt.dequantize_mx(t, offs)"))
    with pytest.raises(ptoc.KernelError, match=r"^.*pt.dequantize_mx") as e:
        kernels["k"].trace()
    assert "kern.py:8" in str(e.value) and "tile.dequantize_mx" not in e.value.message


def test_a_wrong_call_is_a_python_type_error() -> None:
    with pytest.raises(TypeError, match="missing a required argument: 'offsets'"):
        pt.gather_flat(None)


def test_a_rule_of_the_op_is_data_reported_as_the_dsl_functions(tmp_path: Path) -> None:
    """The verifier raises ``RuleError(op, rule)``; the tracer words it for the function
    called, the IR keeps the op's name (nothing is rewritten from message text)."""
    call = "pt.gather_blocks(t[0:1, 0:4], pt.full((1, 1), 0, ptoc.u32))"
    _, kernels = write_kernels(tmp_path, KERNEL.format(call=call))
    with pytest.raises(ptoc.KernelError) as e:
        kernels["k"].trace()
    assert e.value.message == "pt.gather_blocks: the 16-byte source holds no 32-byte block"
    from ptoc.dialects.tile_base import RuleError

    err = RuleError("tile.gather_blocks", "the 16-byte source holds no 32-byte block")
    assert (err.op, err.rule) == (
        "tile.gather_blocks",
        "the 16-byte source holds no 32-byte block",
    )
    assert str(err) == "tile.gather_blocks: the 16-byte source holds no 32-byte block"
