"""The report as one self-contained HTML page: inline CSS, SVG and a small script; no
network resource (a Content-Security-Policy forbids any), no external font."""

from __future__ import annotations

import difflib
import json
from html import escape

from ptoc.backend.asm import format_command
from ptoc.backend.program import Block

from . import graph as graph_mod
from . import timeline as timeline_mod
from .collect import ReportData, StageIR, source_text
from .mismatch import Mismatch
from .mismatch import section as mismatch_section

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

CSS = """
body{font:13px/1.35 system-ui,sans-serif;margin:12px;color:#222}
h1{font-size:18px;margin:4px 0}h2{font-size:15px;margin:14px 0 6px}
.stats{color:#444;margin-bottom:6px}.note{color:#666;font-style:italic}
.box{border:1px solid #ccc;overflow:auto;position:relative}
.cols{display:flex;gap:10px;align-items:flex-start}
.cols>div{flex:1 1 50%;min-width:0}
#gbox,#bbox{height:70vh}
pre{margin:0;font:12px/1.3 ui-monospace,monospace;white-space:pre}
.b{padding:3px 6px;border-bottom:1px solid #eee;cursor:pointer}
.b.sel{background:#fff3b0}.b .src{color:#555;font:11px ui-monospace,monospace}
.b.k-refresh,.b.k-spill,.b.k-reload,.b.k-filler{background:#fdf1e6}
.b.k-scalar{background:#eef5fb}.b.sel{background:#fff3b0}
.kind{font-size:11px;color:#a04000;margin-left:6px}
#timeline .frame{fill:none;stroke:#bbb}#timeline .pe{fill:none;stroke-width:1.5}
#timeline .hand{fill:#7fb3d5}#timeline .cap{stroke:#888;stroke-dasharray:6 3}
#timeline .peak{stroke:#c0392b}#timeline .bound{stroke:#27ae60;stroke-dasharray:4 2}
#timeline text{font-size:10px}#timeline .axis{text-anchor:end;fill:#666}
#timeline .label{fill:#333}#timeline .cap-t{fill:#666}#timeline .peak-t{fill:#c0392b}
#timeline .bound-t{fill:#27ae60}#cursor{fill:#f1c40f;opacity:.45}
#graph .edges path{fill:none;stroke:#999}#graph text{font-size:10px;text-anchor:middle}
#graph g.op{cursor:pointer}#graph g.op.sel rect{stroke:#d35400;stroke-width:3}
#graph g.op rect{stroke:#555}
.sw{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px;border:1px solid #777}
.diff .add{background:#e6ffec}.diff .del{background:#ffebe9}.diff .hunk{color:#0550ae}
details{margin:4px 0}summary{cursor:pointer}
#errors{color:#b00;white-space:pre-wrap}
table.mm{border-collapse:collapse;font:12px ui-monospace,monospace}
table.mm td,table.mm th{border:1px solid #ddd;padding:1px 6px}
.heat rect.bad{fill:#c0392b}.heat rect.ok{fill:#e8f6ec}
"""

#: the script: wires the pictures and the bundle list both ways; sets data-ready
SCRIPT = r"""
window.onerror = function (msg, src, line, col) {
  var e = document.getElementById('errors');
  if (e) e.textContent += msg + ' (line ' + line + ':' + col + ')\n';
};
(function () {
  var D = JSON.parse(document.getElementById('report-data').textContent);
  var tl = document.getElementById('timeline');
  var bbox = document.getElementById('bbox'), gbox = document.getElementById('gbox');
  var graph = document.getElementById('graph');
  var cursor = document.getElementById('cursor');
  var nodeOf = {};
  var current = null, currentNode = null;
  function columnOf(step) {
    var lo = 0, hi = D.starts.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (D.starts[mid] <= step) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  function select(step, scroll) {
    var b = document.getElementById('s' + step);
    if (current) current.classList.remove('sel');
    if (currentNode) currentNode.classList.remove('sel');
    current = b; currentNode = nodeOf[step] || null;
    if (b) {
      b.classList.add('sel');
      // scroll the bundle list only, not the page
      if (scroll) bbox.scrollTop = b.offsetTop - bbox.clientHeight / 2;
    }
    if (currentNode) currentNode.classList.add('sel');
    if (tl && cursor && D.starts.length) {
      var cw = parseFloat(tl.getAttribute('data-cw'));
      var left = parseFloat(tl.getAttribute('data-left'));
      cursor.setAttribute('x', left + columnOf(step) * cw);
      cursor.setAttribute('visibility', 'visible');
    }
  }
  var ops = document.querySelectorAll('#graph g.op');
  for (var i = 0; i < ops.length; i++) {
    (function (g) {
      var steps = (g.getAttribute('data-steps') || '').split(' ');
      for (var k = 0; k < steps.length; k++) if (steps[k] !== '') nodeOf[steps[k]] = g;
      g.addEventListener('click', function () {
        if (steps[0] !== '') select(+steps[0], true);
      });
    })(ops[i]);
  }
  var hit = document.getElementById('hit');
  if (hit) hit.addEventListener('click', function (ev) {
    var r = tl.getBoundingClientRect();
    var x = (ev.clientX - r.left) * (tl.viewBox.baseVal.width / r.width);
    var cw = parseFloat(tl.getAttribute('data-cw'));
    var col = Math.floor((x - parseFloat(tl.getAttribute('data-left'))) / cw);
    if (col >= 0 && col < D.starts.length) select(D.starts[col], true);
  });
  var list = document.getElementById('bundles');
  if (list) list.addEventListener('click', function (ev) {
    var b = ev.target.closest('.b');
    if (!b) return;
    select(+b.id.slice(1), false);
    if (currentNode && graph) {  // bring the node into the graph's box
      var r = currentNode.getBBox();
      gbox.scrollTop = graph.offsetTop + r.y - gbox.clientHeight / 2;
      gbox.scrollLeft = r.x - gbox.clientWidth / 2;
    }
  });
  // a link to a block: REPORT.html#s12 selects block 12 when the page opens
  var m = /^#s(\d+)$/.exec(window.location.hash);
  if (m) select(+m[1], true);
  document.body.setAttribute('data-ready', '1');
})();
"""


def _block_text(block: Block) -> str:
    cmds = [c for c in (block.start, *block.commands, block.stop) if c is not None]
    return "\n".join(format_command(c) for c in cmds)


def _bundles(data: ReportData) -> str:
    prog = data.program
    tl = data.timeline
    blocks = {b.index: b for b in data.blocks}
    out = ['<div id="bundles">']
    for step, (kind, cmd) in enumerate(zip(tl.kinds, tl.commands, strict=True)):
        src = source_text(prog.sources.get(cmd)) if kind == "op" else ""
        label = "" if kind == "op" else f'<span class="kind">{kind}</span>'
        if kind == "scalar":
            src = "set scalar registers"
        elif kind != "op":
            src = f"{kind} (inserted by the allocator)"
        out.append(
            f'<div class="b k-{kind}" id="s{step}"><div class="src">[{step}] {escape(src)}'
            f"{label}</div><pre>{escape(_block_text(blocks[cmd]))}</pre></div>"
        )
    out.append("</div>")
    return "\n".join(out)


def _diff(prev: StageIR, cur: StageIR) -> tuple[str, int, int]:
    lines = difflib.unified_diff(
        prev.text.splitlines(), cur.text.splitlines(), prev.name, cur.name, lineterm="", n=2
    )
    out, added, removed = [], 0, 0
    for ln in lines:
        cls = ""
        if ln.startswith("@@"):
            cls = "hunk"
        elif ln.startswith("+") and not ln.startswith("+++"):
            cls, added = "add", added + 1
        elif ln.startswith("-") and not ln.startswith("---"):
            cls, removed = "del", removed + 1
        out.append(f'<span class="{cls}">{escape(ln)}</span>' if cls else escape(ln))
    return "\n".join(out), added, removed


def _stages(data: ReportData) -> str:
    if not data.stages:
        return '<p class="note">no stage IR: the program was not compiled from a kernel</p>'
    out = []
    prev: StageIR | None = None
    for s in data.stages:
        cut = f" (the first {s.shown} of {s.total} ops)" if s.truncated else ""
        lines = s.text.count("\n") + 1
        if prev is None:
            head = f"{escape(s.name)}: {lines} lines{cut}"
            body = ""
        else:
            diff, added, removed = _diff(prev, s)
            head = (
                f"{escape(s.name)}: {lines} lines{cut}; +{added} -{removed} against "
                f"{escape(prev.name)}"
            )
            body = (
                f'<details class="stage-diff" open><summary>diff against '
                f'{escape(prev.name)}</summary><pre class="diff">{diff}</pre></details>'
            )
        out.append(
            f'<details class="stage" data-stage="{escape(s.name)}"><summary>{head}</summary>'
            f"{body}<details><summary>the whole IR after {escape(s.name)}</summary>"
            f"<pre>{escape(s.text)}</pre></details></details>"
        )
        prev = s
    out.append('<p class="note">emit: the bundle program (the bundles above are its text)</p>')
    return "\n".join(out)


def _graph(data: ReportData) -> str:
    if data.graph is None or data.graph.number_of_nodes() == 0:
        return '<p class="note">no dataflow graph: not compiled from a kernel</p>'
    g, note = graph_mod.summarise(data.graph)
    lay = graph_mod.layout(g)
    note_html = f'<p class="note">{escape(note)}</p>' if note else ""
    return f"{note_html}{graph_mod.svg(g, lay)}"


def render(data: ReportData, mismatches: list[Mismatch] | None = None) -> str:
    """The HTML text of the report (``mismatches``: the verify failure to show)."""
    prog = data.program
    tl = data.timeline
    tl_svg, cols = timeline_mod.svg(tl, data.bound)
    st = prog.stats()
    machine = prog.machine.text() if prog.machine is not None else "default machine"
    binned = (
        f"; {tl.steps} blocks binned into {cols.columns} columns (max per column)"
        if cols.columns < tl.steps
        else ""
    )
    over = ", ".join(f"{k} {v}" for k, v in st.overhead.items() if v) or "none"
    payload = json.dumps({"starts": [int(s) for s in cols.starts]})
    title = escape(data.title)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>ptoc report: {title}</title><style>{CSS}</style></head><body>",
        f"<h1>ptoc report: {title}</h1>",
        f'<div class="stats">{escape(st.summary())} ({sum(st.by_op.values())} kernel, '
        f"inserted {escape(over)}); peak {tl.peak} B/PE against the live set "
        f"{data.bound} B/PE (the lower bound from liveness, without spills); "
        f"{escape(machine)}</div>",
        '<div id="errors"></div>',
    ]
    if mismatches:
        parts.append(mismatch_section(mismatches))
    parts += [
        "<h2>Timeline</h2>",
        f'<div class="note">Local bytes per PE and entries per hand after every block'
        f"{binned}; click a column for its bundle. {timeline_mod.legend(tl.used.shape[1])}"
        "</div>",
        f'<div class="box">{tl_svg}</div>',
        '<div class="cols"><div><h2>Dataflow graph</h2>',
        f'<div class="note">ops coloured by engine, tiles grey, memory order dashed; '
        f"click an op for its bundle. {graph_mod.legend()}</div>",
        f'<div class="box" id="gbox">{_graph(data)}</div></div>',
        "<div><h2>Bundles</h2>",
        '<div class="note">each block with its kernel line; click one to find it in the '
        "pictures</div>",
        f'<div class="box" id="bbox">{_bundles(data)}</div></div></div>',
        "<h2>Pipeline stages</h2>",
        _stages(data),
        f'<script type="application/json" id="report-data">{payload}</script>',
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts)
