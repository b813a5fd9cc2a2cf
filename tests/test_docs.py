"""Every code block of README.md and docs/*.md runs as shown, and docs/reference.md is
what ``python -m ptoc.docgen`` generates.

* ```` ```python ```` blocks run in order, one namespace per file (a page builds on its
  earlier blocks), with the page itself as the source file, so kernel diagnostics point
  at the page's lines;
* ```` ```sh ```` blocks: every ``ptoc ...`` command (also after ``&&``) runs and exits 0,
  in a scratch folder where ``examples/`` is the repository's;
* ```` ```python no-run ```` marks a block that is deliberately not runnable (rare);
  blocks of other languages (``text``, ``asm``, no tag) are output and pseudocode.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(?P<info>.*)$")
#: at most this many deliberately unrunnable blocks in all the docs
MAX_NO_RUN = 2


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the first code line
    lang: str
    flags: tuple[str, ...]
    text: str


def blocks(page: Path) -> list[Block]:
    out: list[Block] = []
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        info = m["info"].split()
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        assert j < len(lines), f"{page}:{i + 1}: unterminated code block"
        lang, flags = (info[0], tuple(info[1:])) if info else ("", ())
        out.append(Block(page, i + 2, lang, flags, "\n".join(lines[i + 1 : j]) + "\n"))
        i = j + 1
    return out


ALL = [b for p in PAGES for b in blocks(p)]


def _id(p: Path) -> str:
    return str(p.relative_to(ROOT))


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


#: the reference page's examples run one by one in tests/test_reference_examples.py
RUN_ELSEWHERE = {ROOT / "docs" / "reference.md"}


@pytest.mark.parametrize("page", [p for p in PAGES if p not in RUN_ELSEWHERE and any(
                                  b.lang == "python" for b in blocks(p))], ids=_id)  # fmt: skip
def test_python_blocks_run(page: Path, scratch: Path) -> None:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for b in blocks(page):
        if b.lang != "python" or "no-run" in b.flags:
            continue
        code = compile("\n" * (b.line - 1) + b.text, str(page), "exec")
        try:
            exec(code, namespace)
        except Exception as e:
            raise AssertionError(f"{_id(page)}:{b.line}: the block fails: {e!r}") from e


def _ptoc_commands(b: Block) -> list[list[str]]:
    out = []
    for line in b.text.splitlines():
        line = line.split("#", 1)[0].strip()
        for part in line.split("&&"):
            words = shlex.split(part)
            if words[:1] == ["ptoc"]:
                out.append(words[1:])
    return out


SH = [b for b in ALL if b.lang == "sh" and "no-run" not in b.flags and _ptoc_commands(b)]


@pytest.mark.parametrize("block", SH, ids=[f"{_id(b.page)}:{b.line}" for b in SH])
def test_sh_blocks_run(block: Block, scratch: Path) -> None:
    """The ptoc commands of a block, in order, in one folder (a later one may read what
    an earlier one wrote)."""
    from ptoc.cli import main

    for argv in _ptoc_commands(block):
        assert main(argv) == 0, f"{_id(block.page)}:{block.line}: ptoc {' '.join(argv)}"


def test_sh_blocks_invoke_ptoc() -> None:
    """Every sh block runs something here (or installs/tests, which the suite itself is)."""
    for b in (b for b in ALL if b.lang == "sh" and "no-run" not in b.flags):
        ok = _ptoc_commands(b) or re.search(r"pip install|pytest|python -m ptoc", b.text)
        assert ok, f"{_id(b.page)}:{b.line}: an sh block with no ptoc command"


def test_unrunnable_blocks_are_marked_and_rare() -> None:
    marked = [b for b in ALL if "no-run" in b.flags]
    # python blocks, or sh blocks that need what a test run does not have (a network
    # clone of an external checkout)
    assert all(b.lang in ("python", "sh") for b in marked)
    assert len(marked) <= MAX_NO_RUN, [f"{_id(b.page)}:{b.line}" for b in marked]
    assert any(b.lang == "python" for b in ALL)


def test_reference_page_is_fresh() -> None:
    from ptoc import docgen

    assert docgen.REFERENCE_PATH.read_text() == docgen.generate(), (
        "docs/reference.md is stale: run python -m ptoc.docgen"
    )


def test_reference_page_lists_every_lang_function() -> None:
    import ptoc.lang as pt

    text = (ROOT / "docs" / "reference.md").read_text()
    for name in pt.__all__:
        needle = f"`pt.{name}`" if name[0].isupper() else f"### `pt.{name}("
        assert needle in text, name


@pytest.mark.parametrize(
    "block", [b for b in ALL if b.lang == "asm"], ids=lambda b: f"{_id(b.page)}:{b.line}"
)
def test_asm_blocks_assemble(block: Block) -> None:
    """Bundle text shown in the docs is valid assembler input."""
    from ptoc.backend.asm import parse

    assert len(parse(block.text, file=str(block.page))) > 0
