"""The verify failure of a report: which output differs where, as a heatmap per output
and a table of the differing elements with both values and bit patterns."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np

#: differing elements listed per output
LISTED = 64
#: the heatmap has at most this many cells per axis (larger outputs are binned: a cell
#: is marked when any element in it differs)
HEAT_ROWS, HEAT_COLS = 64, 128


@dataclass(frozen=True)
class Mismatch:
    """One output of a failed verify: what the machine wrote (``got``), what it was
    compared with (``want``: the reference, or the author's expected function) and which
    elements differ (``bad``); ``against`` names the comparison."""

    output: str
    got: np.ndarray
    want: np.ndarray
    bad: np.ndarray
    against: str

    @property
    def count(self) -> int:
        return int(self.bad.sum())


def from_error(e: Any) -> list[Mismatch]:
    """The mismatches a VerifyError (or ToleranceError) carries (``e.outputs``)."""
    tolerances = getattr(e, "tolerances", None)
    out = []
    for name, (got, want, bad) in getattr(e, "outputs", {}).items():
        against = "the reference semantics, bit for bit"
        if tolerances is not None:
            r, a = tolerances.get(name, (0.0, 0.0))
            against = f"{e.expected} beyond rtol={r:g}, atol={a:g}"
        out.append(Mismatch(name, got, want, bad, against))
    return out


def _bits(a: Any) -> str:
    arr = np.asarray(a)
    n = arr.dtype.itemsize
    if n in (1, 2, 4, 8) and arr.dtype.kind != "O":
        return f"0x{int(arr.reshape(1).view(f'u{n}')[0]):0{2 * n}x}"
    return "-"


def _heatmap(m: Mismatch) -> str:
    bad = m.bad.reshape(m.bad.shape[0], -1) if m.bad.ndim > 1 else m.bad.reshape(1, -1)
    rows, cols = bad.shape
    hr, hc = min(rows, HEAT_ROWS), min(cols, HEAT_COLS)
    r_edges = (np.arange(hr + 1) * rows) // hr
    c_edges = (np.arange(hc + 1) * cols) // hc
    cell = max(2, min(12, 768 // hc))
    w, h = hc * cell, hr * cell
    out = [
        f'<svg class="heat" width="{w}" height="{h}" viewBox="0 0 {w} {h}">',
        f'<rect class="ok" x="0" y="0" width="{w}" height="{h}"/>',
    ]
    for i in range(hr):
        band = bad[r_edges[i] : r_edges[i + 1]]
        for j in range(hc):
            if band[:, c_edges[j] : c_edges[j + 1]].any():
                r0, c0 = int(r_edges[i]), int(c_edges[j])
                out.append(
                    f'<rect class="bad" x="{j * cell}" y="{i * cell}" width="{cell}" '
                    f'height="{cell}"><title>[{r0}, {c0}]</title></rect>'
                )
    out.append("</svg>")
    return "".join(out)


def _table(m: Mismatch) -> str:
    idx = np.argwhere(m.bad)[:LISTED]
    head = (
        "<tr><th>element</th><th>expected</th><th>bits</th><th>got (machine)</th>"
        "<th>bits</th></tr>"
    )
    rows = []
    for k in idx:
        i = tuple(int(x) for x in k)
        w, g = m.want[i], m.got[i]
        rows.append(
            f'<tr class="diffel"><td>[{", ".join(map(str, i))}]</td><td>{escape(str(w))}</td>'
            f"<td>{_bits(w)}</td><td>{escape(str(g))}</td><td>{_bits(g)}</td></tr>"
        )
    more = m.count - len(rows)
    tail = f'<p class="note">and {more} more</p>' if more > 0 else ""
    return f'<table class="mm">{head}{"".join(rows)}</table>{tail}'


def section(mismatches: list[Mismatch]) -> str:
    """The HTML of the verify failure."""
    out = ['<h2 id="mismatch">Verification mismatch</h2>']
    for m in mismatches:
        shape = "x".join(str(n) for n in m.got.shape)
        out.append(
            f'<div class="mismatch" data-output="{escape(m.output)}"><h3>{escape(m.output)}: '
            f"{m.count} of {m.bad.size} elements differ from {escape(m.against)} "
            f"({m.got.dtype} {shape})</h3>{_heatmap(m)}{_table(m)}</div>"
        )
    return "\n".join(out)
