"""The report page: stage IRs with their diffs, bundles linked to kernel lines, the API
(``ptoc.report``, ``Program.report``) and the command line (``ptoc report``,
``ptoc verify --report``)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest

import ptoc
from ptoc.cli import main
from ptoc.execute import compare
from ptoc.loader import load_kernel
from ptoc.reporting import build, compile_observed, from_error, render
from ptoc.reporting.collect import StageIR, ir_text
from ptoc.reporting.page import _diff

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOFTMAX = f"{EXAMPLES / 'softmax.py'}::softmax"


def test_stage_diff_counts_the_changed_lines() -> None:
    a = StageIR("one", "x = 1\ny = 2\nz = 3\n", 3, 3)
    b = StageIR("two", "x = 1\ny = 20\nz = 3\nw = <4>\n", 4, 4)
    html, added, removed = _diff(a, b)
    assert (added, removed) == (2, 1)
    assert '<span class="del">-y = 2</span>' in html
    assert '<span class="add">+w = &lt;4&gt;</span>' in html  # escaped


def test_every_stage_with_a_diff_against_the_one_before() -> None:
    prog, collector = compile_observed(load_kernel(SOFTMAX))
    assert [s.name for s in collector.stages] == ["trace", "lower-compound", "legalize",
                                                  "allocate"]  # fmt: skip
    assert "tile.rowmax" in collector.stages[0].text
    assert "pto.trowmax" in collector.stages[2].text
    page = render(build(prog, collector))
    stages = re.findall(r'<details class="stage" data-stage="([\w-]+)"><summary>([^<]*)', page)
    assert [s for s, _ in stages] == ["trace", "lower-compound", "legalize", "allocate"]
    for (_, head), prev in zip(stages[1:], ["trace", "lower-compound", "legalize"]):
        assert re.search(rf"\+\d+ -\d+ against {prev}$", head), head
    legalize = page.split('data-stage="legalize"')[1].split('data-stage="allocate"')[0]
    assert '<span class="add">+' in legalize and "pto.trowmax" in legalize


def test_bundles_show_their_kernel_line_and_graph_node() -> None:
    prog, collector = compile_observed(load_kernel(SOFTMAX))
    data = build(prog, collector)
    page = render(data)
    src = (EXAMPLES / "softmax.py").read_text().splitlines()
    for n in data.order:
        d = data.graph.nodes[n]
        step = d["step"]
        block = page.split(f'id="s{step}"')[1].split("</div>")[0]
        assert f"softmax.py:{d['source'].line}: " in block
        assert unescape(block).split(": ", 1)[1].startswith(src[d["source"].line - 1].strip())
        # the graph node of the op names this step
        assert re.search(rf'<g class="op" id="n\d+" data-steps="{step}">', page)
    # the TROWMAX op node is drawn with its mnemonic
    assert ">TROWMAX<" in page


def test_large_stage_text_is_cut() -> None:
    from ptoc.driver import compile_kernel

    module = compile_kernel(load_kernel(SOFTMAX), stop_after="legalize")
    whole = ir_text(module)
    assert not whole.truncated and whole.text == str(module)
    cut = ir_text(module, limit=3)
    assert cut.truncated and cut.shown == 3 and cut.total == whole.total
    assert cut.text.startswith(f"// @softmax: the first 3 of {whole.total} ops")


def test_api_report_and_program_report(tmp_path: Path) -> None:
    k = load_kernel(SOFTMAX)
    a = ptoc.report(k, tmp_path / "a.html")
    b = ptoc.compile(k).report(tmp_path / "b.html")
    assert a.read_text() == b.read_text()
    assert 'data-stage="allocate"' in a.read_text()


def test_report_of_a_parsed_program(tmp_path: Path) -> None:
    """A program without a kernel: its timeline and bundles, no graph and no stages."""
    prog = ptoc.Program.parse((EXAMPLES / "vadd.s").read_text())
    text = prog.report(tmp_path / "p.html").read_text()
    assert 'id="timeline"' in text and 'id="s0"' in text
    assert "not compiled from a kernel" in text and 'id="graph"' not in text


def test_cli_report(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.html"
    assert main(["report", SOFTMAX, "-o", str(out)]) == 0
    assert 'id="graph"' in out.read_text()
    assert main(["report", SOFTMAX, "-o", str(tmp_path / "no" / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "the folder" in err and "does not exist" in err and "Traceback" not in err


WRONG = """
import numpy as np


def wrong(x):
    m = x - x.max(axis=1, keepdims=True)
    e = np.exp(m)
    out = e / e.sum(axis=1, keepdims=True)
    out[2, 5:9] += 1.0   # four elements the kernel does not compute
    out[7, 63] = -1.0
    return out
"""


def test_verify_report_marks_the_differing_elements(tmp_path: Path, capsys) -> None:
    (tmp_path / "wrong.py").write_text(WRONG)
    out = tmp_path / "v.html"
    code = main(["verify", SOFTMAX, "--expected", f"{tmp_path / 'wrong.py'}::wrong",
                 "--report", str(out)])  # fmt: skip
    assert code == 1
    assert "wrote the report with the differing elements" in capsys.readouterr().err
    page = out.read_text()
    assert 'data-output="out"' in page and "5 of 512 elements differ from wrong" in page
    rows = re.findall(r'<tr class="diffel"><td>\[(\d+), (\d+)\]</td>', page)
    assert [(int(r), int(c)) for r, c in rows] == [(2, 5), (2, 6), (2, 7), (2, 8), (7, 63)]
    # the heatmap (8x64 cells) marks exactly those cells
    cells = re.findall(r'<rect class="bad"[^>]*><title>\[(\d+), (\d+)\]</title>', page)
    assert sorted((int(r), int(c)) for r, c in cells) == [(2, 5), (2, 6), (2, 7), (2, 8),
                                                          (7, 63)]  # fmt: skip
    # both values' bits: the machine wrote a softmax value, the expected function -1.0
    row = page.split("<td>[7, 63]</td>")[1].split("</tr>")[0]
    assert "<td>-1.0</td><td>0xbf800000</td>" in row


def test_verify_report_without_a_mismatch(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ok.html"
    assert main(["verify", SOFTMAX, "--report", str(out)]) == 0
    assert "Verification mismatch" not in out.read_text()


def test_a_bit_mismatch_carries_its_arrays() -> None:
    want = {"out": np.array([[1.0, -0.0], [np.nan, 2.0]], dtype=np.float32)}
    got = {"out": np.array([[1.0, 0.0], [np.nan, 2.0]], dtype=np.float32)}
    with pytest.raises(ptoc.VerifyError) as ei:
        compare("k", got, want)
    (m,) = from_error(ei.value)
    assert m.output == "out" and m.count == 1 and bool(m.bad[0, 1])
    assert "bit for bit" in m.against
    from ptoc.reporting.mismatch import section

    html = section([m])
    assert (
        "<td>[0, 1]</td><td>-0.0</td><td>0x80000000</td><td>0.0</td><td>0x00000000</td>" in html
    )
