"""Helpers for frontend tests: kernels written to real files (so diagnostics can show
their source lines), and the ops a traced kernel contains."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ptoc.kernel import Kernel
from ptoc.loader import import_file, kernels_in

HEADER = "import numpy as np\nimport ptoc\nimport ptoc.lang as pt\n"


def write_kernels(
    tmp_path: Path, body: str, name: str = "kern.py"
) -> tuple[Path, dict[str, Kernel]]:
    """Write ``HEADER + body`` to a file, import it and return (path, kernels by name).

    Line numbers in ``body`` start at 4 (after the three header lines).
    """
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body))
    return path, kernels_in(import_file(path))


def op_names(k: Kernel) -> list[str]:
    """The op names of a traced kernel body, without the return."""
    from xdsl.dialects import func

    f = next(op for op in k.trace().module.ops if isinstance(op, func.FuncOp))
    return [op.name for op in f.body.block.ops if op.name != "func.return"]
