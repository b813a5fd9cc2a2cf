"""``ptoc.verify(kernel, expected=fn, rtol=..., atol=...)``: the author's own check.

Bit-exactness proves that the machine computes what the traced operations mean; it
cannot tell whether those operations are what the author meant (a softmax dividing by
``row_max`` verifies bit for bit). ``expected`` is the author's numpy function of the
input arrays; its results are compared with the machine's outputs within a tolerance,
element by element, and the worst elements are reported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .errors import Deviation, Error, InputError, ToleranceError
from .kernel import Kernel
from .pyerror import exception_text, raised_at

#: how many deviating elements a ToleranceError lists
SHOWN = 8
#: the default relative tolerance is this many units of the output type's epsilon ...
EPS_UNITS = 2
#: ... but never tighter than this; the default absolute tolerance for float outputs
MIN_RTOL, FLOAT_ATOL = 1e-5, 1e-8


def default_tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for an output of numpy dtype ``dtype``: exact for integers; for
    floats two units of the type's epsilon (at least 1e-5) and 1e-8."""
    if dtype.kind in "iub":
        return 0.0, 0.0
    eps = float(np.finfo(dtype).eps)
    return max(MIN_RTOL, EPS_UNITS * eps), FLOAT_ATOL


def expected_outputs(
    kernel: Kernel, fn: Callable[..., Any], arrays: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Call ``fn(**arrays)`` and name its results by output: a dict by output name, one
    array (a kernel with one output) or a sequence in the kernel's store order."""
    outputs = kernel.trace().outputs
    name = getattr(fn, "__name__", repr(fn))
    try:
        result = fn(**{k: np.array(v) for k, v in arrays.items()})
    except (Error, KeyboardInterrupt):
        raise
    except Exception as e:
        raise InputError(
            f"{raised_at(e)}the expected function {name} raised {exception_text(e)}; it is "
            f"called with the input arrays by tensor name: {name}({', '.join(arrays)})"
        ) from None
    if isinstance(result, Mapping):
        named = dict(result)
    elif isinstance(result, (tuple, list)) and len(outputs) > 1:
        if len(result) != len(outputs):
            raise InputError(
                f"the expected function {name} returned {len(result)} arrays; "
                f"{kernel.name} has {len(outputs)} outputs ({', '.join(outputs)})"
            )
        named = dict(zip(outputs, result))
    elif len(outputs) == 1:
        named = {outputs[0]: result}
    else:
        raise InputError(
            f"the expected function {name} returned one {type(result).__name__}; "
            f"{kernel.name} has {len(outputs)} outputs: return a dict by name "
            f"({', '.join(outputs)})"
        )
    unknown = [k for k in named if k not in outputs]
    if unknown:
        raise InputError(
            f"the expected function {name} returned {', '.join(map(repr, unknown))}, "
            f"which {kernel.name} does not store to; its outputs are {', '.join(outputs)}"
        )
    specs = {p.name: p.spec for p in kernel.params}
    out: dict[str, np.ndarray] = {}
    for k, v in named.items():
        try:
            a = np.asarray(v)
            if a.dtype.kind not in "biuf" and a.dtype.kind != "V":
                a = a.astype(np.float64)
        except (TypeError, ValueError) as e:
            raise InputError(
                f"the expected function {name} returned a non-numeric {k!r}: {e}"
            ) from None
        if a.shape != specs[k].shape:
            raise InputError(
                f"the expected function {name} returned {k!r} of shape {a.shape}; the "
                f"tensor is {specs[k].shape}"
            )
        out[k] = a
    return out


def _float64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def compare_close(
    kernel: str,
    got: Mapping[str, np.ndarray],
    want: Mapping[str, np.ndarray],
    rtol: float | None,
    atol: float | None,
    context: str = "",
    expected_name: str = "expected",
) -> dict[str, tuple[float, float]]:
    """Raise ToleranceError unless ``|got - want| <= atol + rtol * |want|`` for every
    element of every output in ``want`` -- ``numpy.isclose(got, want, rtol, atol,
    equal_nan=True)`` in float64: NaN matches NaN, an infinity only itself. Returns the
    largest (abs, rel) error of each output."""
    deviations: list[tuple[float, Deviation]] = []
    counts: dict[str, tuple[int, int]] = {}
    worst: dict[str, tuple[float, float]] = {}
    tolerances: dict[str, tuple[float, float]] = {}
    outputs: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for name, w_raw in want.items():
        g_raw = got[name]
        r_default, a_default = default_tolerance(g_raw.dtype)
        r = r_default if rtol is None else float(rtol)
        a = a_default if atol is None else float(atol)
        tolerances[name] = (r, a)
        g, w = _float64(g_raw), _float64(w_raw)
        # numpy.isclose's rule: finite pairs within atol + rtol * |w|; an infinity
        # matches only itself and (equal_nan) a NaN only a NaN
        finite = np.isfinite(g) & np.isfinite(w)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            diff = np.abs(g - w)
            limit = a + r * np.abs(w)
            err = np.where(same, 0.0, np.where(finite, diff, np.inf))
            bad = np.where(finite, diff > limit, ~same)
            rel = np.where(err == 0, 0.0, err / np.where(w == 0, 0.0, np.abs(w)))
            excess = np.where(bad, np.where(finite, diff - limit, np.inf), -np.inf)
        rel = np.where(np.isnan(rel), np.inf, rel)
        worst[name] = (float(err.max(initial=0.0)), float(rel.max(initial=0.0)))
        n = int(bad.sum())
        if not n:
            continue
        counts[name] = (n, w.size)
        outputs[name] = (g_raw, w_raw, bad)
        order = np.argsort(-excess, axis=None, kind="stable")[:SHOWN]
        for flat in order:
            if not bad.flat[flat]:
                break
            i = tuple(int(k) for k in np.unravel_index(int(flat), w.shape))
            dev = Deviation(name, i, g_raw[i], w_raw[i], float(err[i]), float(rel[i]))
            deviations.append((float(excess[i]), dev))
    if counts:
        deviations.sort(key=lambda d: -d[0])
        e = ToleranceError(
            kernel,
            [d for _, d in deviations[:SHOWN]],
            counts,
            tolerances,
            context,
            expected_name,
        )
        e.outputs = outputs
        raise e
    return worst
