"""The report of every example opens in a real browser (headless Chromium): the page is
drawn (screenshot not blank, SVG pictures with shapes), its script ran without error
(``data-ready``, an empty error box, no console message) and it needs no network (no
URL in the page; a Content-Security-Policy that forbids every fetch, and host
resolution disabled, so a fetch would show up as a console error).

One browser serves the module (``browser.Browser``, over the DevTools protocol): each
page opens in its own tab, so starting Chromium is paid once, not once per page.

Skipped only when Chromium is missing and PTOC_REQUIRE_BROWSER is unset (``.ci/run``
installs Chromium and sets it, so CI fails rather than skips)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ptoc
from ptoc.loader import import_file, kernels_in
from ptoc.reporting import page

from .browser import Browser
from .png import decode

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)
REQUIRED = bool(os.environ.get("PTOC_REQUIRE_BROWSER"))


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One headless Chromium for the module's pages (each opened in its own tab)."""
    if CHROMIUM is None:
        if REQUIRED:
            pytest.fail("PTOC_REQUIRE_BROWSER is set but chromium is not installed")
        pytest.skip("chromium is not installed (apt-get install chromium); set "
                    "PTOC_REQUIRE_BROWSER=1 to fail instead of skipping")  # fmt: skip
    browser = Browser(CHROMIUM, tmp_path_factory.mktemp("profile"))
    try:
        yield browser
    finally:
        browser.close()


def open_page(
    chromium: Browser, html: Path, tmp: Path, fragment: str = ""
) -> tuple[str, str, Path]:
    """(DOM after the scripts ran, browser log, screenshot file) of one page."""
    dom, log, png = chromium.open(html, fragment)
    shot = tmp / "shot.png"
    shot.write_bytes(png)
    return dom, log, shot


@pytest.fixture(scope="module")
def rendered(
    chromium: Browser, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[str, str, str, Path]]:
    """Every example's report opened in the browser: by kernel name, (page text, DOM,
    log, screenshot)."""
    jobs = {}
    for file, name in _kernels():
        tmp = tmp_path_factory.mktemp(name)
        k = kernels_in(import_file(str(EXAMPLES / file)))[name]
        jobs[name] = (ptoc.report(k, tmp / f"{name}.html"), tmp)
    pages = chromium.open_many([html.resolve().as_uri() for html, _ in jobs.values()])
    out = {}
    for (name, (html, tmp)), (dom, log, png) in zip(jobs.items(), pages, strict=True):
        shot = tmp / "shot.png"
        shot.write_bytes(png)
        out[name] = (html.read_text(), dom, log, shot)
    return out


def _kernels() -> list[tuple[str, str]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        out += [(path.name, name) for name in kernels_in(import_file(str(path)))]
    return out


def _svg(dom: str, ident: str) -> str:
    m = re.search(rf'<svg id="{ident}".*?</svg>', dom, re.S)
    assert m, f"no <svg id={ident}> in the page"
    return m.group(0)


def console_messages(log: str) -> list[str]:
    return [ln for ln in log.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]


NETWORK = re.compile(r"https?://|(?:src|href)\s*=\s*[\"']?//", re.I)


@pytest.mark.parametrize("file,name", _kernels())
def test_report_renders_in_a_browser(chromium: Browser, rendered, file: str, name: str) -> None:
    text, dom, log, shot = rendered[name]
    assert not NETWORK.search(text), NETWORK.search(text)
    assert f'content="{page.CSP}"' in text
    assert re.search(r'<body[^>]*data-ready="1"', dom), "the report's script did not finish"
    assert re.search(r'<div id="errors"></div>', dom), "a script error was reported"
    assert not console_messages(log), console_messages(log)
    timeline = _svg(dom, "timeline")
    assert re.search(r'<path class="pe"[^>]* d="M[^"]+V', timeline)  # a PE line
    assert re.search(r'<path class="hand" d="M', timeline)  # queue entries drawn
    graph = _svg(dom, "graph")
    assert graph.count('<g class="op"') >= 2 and "<rect" in graph
    assert re.search(r'<g class="edges">\s*<path d="M', graph)  # at least one edge
    assert dom.count('<div class="b ') == len(re.findall(r'id="s\d+"', text))
    pixels = decode(shot, rows=320)  # the title, the statistics and the timeline
    colours = {tuple(p) for p in pixels[::3, ::3].reshape(-1, pixels.shape[2])}
    assert len(colours) > 20 and float(pixels.std()) > 10.0


def test_selecting_a_block_marks_it_in_both_pictures(chromium: Browser, tmp_path: Path) -> None:
    """The page's selection (what a click on a bundle, a column or a node does), through
    a link to block 3 of softmax: the bundle, its graph node and its timeline column are
    marked."""
    k = kernels_in(import_file(str(EXAMPLES / "softmax.py")))["softmax"]
    html = ptoc.report(k, tmp_path / "softmax.html")
    dom, log, _ = open_page(chromium, html, tmp_path, "#s3")
    assert not console_messages(log)
    assert re.search(r'<div class="b k-op sel" id="s3">', dom)
    assert len(re.findall(r'class="b [^"]*sel"', dom)) == 1
    assert re.search(r'<g class="op sel" id="n\d+" data-steps="3">', dom)
    cursor = re.search(r'<rect id="cursor" x="([\d.]+)"[^>]*visibility="visible"', dom)
    timeline = _svg(dom, "timeline")
    left = float(re.search(r'data-left="([\d.]+)"', timeline).group(1))
    cw = float(re.search(r'data-cw="([\d.]+)"', timeline).group(1))
    assert cursor and float(cursor.group(1)) == pytest.approx(left + 3 * cw)


def test_the_checks_catch_errors_and_fetches(chromium: Browser, tmp_path: Path) -> None:
    """Control: a page with a failing script and an image from the network, under the
    report's policy, shows both in the DOM and the log the tests read."""
    bad = tmp_path / "bad.html"
    onerror = page.SCRIPT.split("(function", 1)[0]
    bad.write_text(
        f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        f'content="{page.CSP}"></head><body><div id="errors"></div>'
        f'<script>{onerror}</script><img src="http://example.invalid/x.png">'
        "<script>undefinedFunction();</script></body></html>"
    )
    dom, log, _ = open_page(chromium, bad, tmp_path)
    assert re.search(r'<div id="errors">[^<]*undefinedFunction', dom)
    assert any("Content Security Policy" in m for m in console_messages(log)), log[-3000:]
    assert NETWORK.search(bad.read_text())


def test_blank_screenshots_are_detected(tmp_path: Path) -> None:
    """Control of the screenshot check: a single-colour PNG has one colour."""
    import struct
    import zlib

    w, h = 40, 10
    rows = b"".join(b"\x00" + b"\xff\xff\xff" * w for _ in range(h))

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    png = tmp_path / "blank.png"
    head = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    png.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    pixels = decode(png)
    assert pixels.shape == (h, w, 3) and len({tuple(p) for p in pixels.reshape(-1, 3)}) == 1
    assert float(np.asarray(pixels).std()) == 0.0


def test_ci_installs_the_browser_and_requires_it() -> None:
    """``.ci/run`` installs Chromium when it is missing (as root or through sudo) and sets
    PTOC_REQUIRE_BROWSER, so that these tests fail on CI instead of skipping."""
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert "if [ ! -x /usr/bin/chromium ]; then" in ci
    assert re.search(r"apt-get install -y( -qq)? chromium", ci)
    assert 'if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi' in ci
    assert "export PTOC_REQUIRE_BROWSER=1" in ci
    assert ci.index("PTOC_REQUIRE_BROWSER=1") < ci.index("python -m pytest")
