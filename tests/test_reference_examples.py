"""Issue 15 item 3: every ``ptoc.lang`` entry of docs/reference.md has a runnable
example, and every example runs: it compiles, verifies bit for bit on the machine model,
and its program contains what the entry says the function records or lowers to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ptoc
from ptoc import docgen

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference.md"


def sections() -> dict[str, str]:
    """The text of every ``### `pt.NAME(...)``` entry, by NAME."""
    text = PAGE.read_text().split("## Tile operators")[0]
    parts = re.split(r"^### `pt\.(\w+)\(.*$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


SECTIONS = sections()
PRELUDE = "import numpy as np\n\nimport ptoc\nimport ptoc.lang as pt\n"


def test_every_entry_has_one_example() -> None:
    from ptoc import lang

    assert set(SECTIONS) == {e.name for e in docgen.entries_of(lang)}
    assert f"```python\n{PRELUDE}```" in PAGE.read_text()
    for name, body in SECTIONS.items():
        blocks = re.findall(r"^```python\n(.*?)^```", body, flags=re.M | re.S)
        assert len(blocks) == 1, name
        assert f"def {name}_example(" in blocks[0] and f"pt.{name}(" in blocks[0], name
        assert blocks[0].rstrip().endswith(f"ptoc.verify({name}_example)"), name


def _expected_ops(body: str) -> list[str]:
    """The mnemonics the entry lists under ``lowers to`` (else ``records``)."""
    for key in ("lowers to", "records"):
        m = re.search(rf"^\* {key}: (.*)$", body, flags=re.M)
        if m:
            return re.findall(r"`(T[A-Z0-9]+)`", m.group(1))
    return []


@pytest.mark.parametrize("name", list(SECTIONS))
def test_example_runs(name: str, monkeypatch) -> None:
    """The block runs as the page shows it (``ptoc.verify`` raises on a mismatch), and
    the verified kernel's program has every operation the entry names."""
    body = SECTIONS[name]
    (code,) = re.findall(r"^```python\n(.*?)^```", body, flags=re.M | re.S)
    verified: list[ptoc.Program] = []
    real_verify = ptoc.verify

    def verify(k, *args, **kwargs):  # the example's own call, watched
        out = real_verify(k, *args, **kwargs)
        verified.append(ptoc.compile(k))
        return out

    monkeypatch.setattr(ptoc, "verify", verify)
    namespace: dict[str, object] = {"__name__": "__reference__"}
    # the block's first line (the decorator) at its line of the page, for diagnostics
    line = PAGE.read_text().splitlines().index(f"def {name}_example(")
    exec(compile(PRELUDE + "\n" * (line - 5) + code, str(PAGE), "exec"), namespace)
    (prog,) = verified
    ran = set(prog.stats().by_op)
    missing = [m for m in _expected_ops(body) if m not in ran]
    assert not missing, f"pt.{name}: the example's program has no {missing} ({sorted(ran)})"
