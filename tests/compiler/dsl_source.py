"""Write a random ``tile`` kernel (``ptoc.testing.random_kernel``) as a ``ptoc.lang``
kernel: Python source a user could have written, one statement per op, so the fuzz
target drives the whole DSL path (tracing and its checks, compile, run, reference).

Loads with a padded extent have no DSL form; the kernels translated here are drawn
without them (``KernelSpec(extents=False)``).
"""

from __future__ import annotations

import math
from pathlib import Path

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_fill as fill
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.reference import kernel_func, kernel_pes_of, tensor_args
from ptoc.dialects.tile_base import tile_type
from ptoc.dialects.tile_memory import LoadOp, StoreOp
from ptoc.kernel import Kernel
from ptoc.loader import import_file, kernels_in
from ptoc.testing.builder import _BINARY, _EXPAND, _SCALAR, _UNARY

#: the Python operator of each binary kind
OPERATOR = {"ADD": "+", "SUB": "-", "MUL": "*", "DIV": "/", "AND": "&", "OR": "|", "XOR": "^"}
FUNCTION = {"MAX": "pt.maximum", "MIN": "pt.minimum"}
COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">="}
REDUCE = {
    f"T{axis}{kind}": f"pt.{axis.lower()}_{kind.lower()}"
    for axis in ("ROW", "COL")
    for kind in ("SUM", "MAX", "MIN", "PROD", "ARGMAX", "ARGMIN")
}


class Untranslatable(Exception):
    """An op the DSL has no spelling for."""


def number(v: float | int) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return 'float("nan")'
        if math.isinf(v):
            return 'float("inf")' if v > 0 else 'float("-inf")'
        return repr(v)
    return str(int(v))


def _dtype(v: SSAValue | str) -> str:
    name = v if isinstance(v, str) else tile_type(v).dt.value
    return f"ptoc.{name.lower()}"


class _Writer:
    def __init__(self) -> None:
        self.names: dict[SSAValue, str] = {}
        self.lines: list[str] = []

    def name(self, v: SSAValue) -> str:
        return self.names[v]

    def define(self, op: Operation, expr: str) -> None:
        outs = [f"v{len(self.names) + i}" for i in range(len(op.results))]
        for r, n in zip(op.results, outs, strict=True):
            self.names[r] = n
        self.lines.append(f"    {', '.join(outs)} = {expr}")

    def window(self, op: LoadOp | StoreOp, rows: int) -> tuple[str, str]:
        (r0, c0), (pr, pc) = op.origin, op.pe_offsets
        row = f"{pr} * pt.pe() + {r0}" if pr else str(r0)
        col = f"{pc} * pt.pe() + {c0}" if pc else str(c0)
        return row, col

    def op(self, op: Operation) -> None:
        n = self.name
        if isinstance(op, LoadOp):
            t = op.tile
            if t.extent != t.valid:
                raise Untranslatable("a load with a padded extent")
            row, col = self.window(op, t.valid[0])
            tensor = op.tensor.name_hint
            self.define(op, f"pt.load({tensor}, rows=({row}, {t.valid[0]}), cols=({col}, "
                        f"{t.valid[1]}), step={op.row_step})")  # fmt: skip
        elif isinstance(op, StoreOp):
            row, col = self.window(op, 0)
            tensor = op.dest.name_hint
            self.lines.append(f"    pt.store({tensor}, {n(op.value)}, {row}, {col}, "
                              f"step={op.row_step})")  # fmt: skip
        elif type(op) in _BINARY.values() or type(op) in _EXPAND.values():
            kind = op.MNEMONIC[1:].removeprefix("ROWEXPAND").removeprefix("COLEXPAND")  # type: ignore[attr-defined]
            a, b = n(op.operands[0]), n(op.operands[1])
            self.define(op, f"{FUNCTION[kind]}({a}, {b})" if kind in FUNCTION else
                        f"{a} {OPERATOR[kind]} {b}")  # fmt: skip
        elif type(op) in _SCALAR.values():
            kind, a = op.MNEMONIC[1:-1], n(op.operands[0])  # type: ignore[attr-defined]
            s = number(op.scalar.value)  # type: ignore[attr-defined]
            self.define(op, f"{FUNCTION[kind]}({a}, {s})" if kind in FUNCTION else
                        f"{a} {OPERATOR[kind]} {s}")  # fmt: skip
        elif type(op) in _UNARY.values():
            self.define(op, f"pt.{op.MNEMONIC[1:].lower()}({n(op.operands[0])})")  # type: ignore[attr-defined]
        elif isinstance(op, ew.CvtOp):
            rounding = op.rmode.data.value if op.rmode is not None else "rne"
            self.define(op, f"pt.cast({n(op.src)}, {_dtype(op.result)}, {rounding!r}, "
                        f"saturate={op.sat is not None})")  # fmt: skip
        elif isinstance(op, red.ReduceOp):
            self.define(op, f"{REDUCE[op.MNEMONIC]}({n(op.src)})")
        elif isinstance(op, (red.RowExpandOp, red.ColExpandOp)):
            self.define(
                op, f"pt.broadcast_to({n(op.operands[0])}, {tile_type(op.result).valid})"
            )
        elif isinstance(op, red.ExpdifOp):
            self.define(op, f"pt.exp_diff({n(op.operands[0])}, {n(op.operands[1])})")
        elif isinstance(op, irr.TransOp):
            self.define(op, f"pt.transpose({n(op.src)})")
        elif isinstance(op, irr.ConcatOp):
            self.define(op, f"pt.concat({n(op.lhs)}, {n(op.rhs)})")
        elif isinstance(op, irr.ExtractOp):
            r, c = op.offset
            self.define(op, f"pt.extract({n(op.src)}, {r}, {c}, {tile_type(op.result).valid})")
        elif isinstance(op, fill.InsertOp):
            r, c = op.offset
            self.define(op, f"pt.insert({n(op.old)}, {n(op.src)}, {r}, {c})")
        elif isinstance(op, fill.FillPadOp):
            shape, value = tile_type(op.result).valid, number(op.scalar.value)
            self.define(op, f"pt.fillpad({n(op.src)}, {shape}, {value})")
        elif isinstance(op, irr.SortOp):
            desc = op.descending is not None
            self.define(op, f"pt.sort({n(op.src)}, {op.width.value.data}, descending={desc})")
        elif isinstance(op, irr.MrgSortOp):
            desc = op.descending is not None
            self.define(op, f"pt.merge({n(op.lhs)}, {n(op.rhs)}, descending={desc})")
        elif isinstance(op, irr.GatherOp):
            values, (vr, vc) = n(op.values), tile_type(op.values).valid
            if tile_type(op.index).valid[1] == 1 and vc > 1:
                # pt.gather broadcasts a one-column index over the columns: narrow first
                values = f"pt.extract({values}, 0, 0, ({vr}, 1))"
            self.define(op, f"pt.gather({values}, {n(op.index)})")
        elif isinstance(op, irr.ScatterOp):
            rows = tile_type(op.result).valid[0]
            self.define(op, f"pt.scatter({n(op.values)}, {n(op.index)}, {rows})")
        elif isinstance(op, irr.PartOp):
            kind = op.MNEMONIC[5:].lower()  # type: ignore[index]
            self.define(op, f"pt.partial_{kind}({n(op.lhs)}, {n(op.rhs)})")
        elif isinstance(op, irr.CiOp):
            t = tile_type(op.result)
            self.define(op, f"pt.iota({t.valid[1]}, {op.start.value.data}, "
                        f"{op.descending is not None}, {_dtype(op.result)})")  # fmt: skip
        elif isinstance(op, irr.TriOp):
            t = tile_type(op.result)
            self.define(op, f"pt.tri({t.valid}, {op.diagonal.value.data}, "
                        f"{op.upper is not None}, {_dtype(op.result)})")  # fmt: skip
        elif isinstance(op, fill.HistogramOp):
            self.define(op, f"pt.histogram({n(op.src)}, {n(op.filter)}, {op.byte.value.data})")
        elif isinstance(op, (ew.CmpOp, ew.CmpsOp)):
            other = (n(op.operands[1]) if isinstance(op, ew.CmpOp)
                     else number(op.scalar.value))  # fmt: skip
            self.define(op, f"{n(op.operands[0])} {COMPARE[op.cmode.data.value]} {other}")
        elif isinstance(op, (ew.SelOp, ew.SelsOp)):
            other = (n(op.operands[2]) if isinstance(op, ew.SelOp)
                     else number(op.scalar.value))  # fmt: skip
            self.define(op, f"pt.where({n(op.operands[0])}, {n(op.operands[1])}, {other})")
        else:
            raise Untranslatable(op.name)


def dsl_source(module) -> str:  # type: ignore[no-untyped-def]
    """The ``ptoc.lang`` source of the one kernel of a ``tile`` module."""
    f = kernel_func(module)
    w = _Writer()
    params = ", ".join(
        f"{a.name}: ptoc.Tensor[{_dtype(a.type.dt.value)}, {a.type.dims[0]}, {a.type.dims[1]}]"
        for a in tensor_args(f)
    )
    for op in f.body.block.ops:
        if not isinstance(op, func.ReturnOp):
            w.op(op)
    head = [
        "import ptoc",
        "import ptoc.lang as pt",
        "",
        "",
        f"@ptoc.kernel(pes={kernel_pes_of(f)})",
        f"def {f.sym_name.data}({params}):",
    ]
    return "\n".join(head + w.lines) + "\n"


def dsl_kernel(module, directory: Path) -> Kernel:  # type: ignore[no-untyped-def]
    """Write the DSL source of ``module`` to ``directory`` and import its kernel."""
    path = directory / f"{kernel_func(module).sym_name.data}.py"
    path.write_text(dsl_source(module))
    (kernel,) = kernels_in(import_file(path)).values()
    return kernel
