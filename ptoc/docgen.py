"""Generate ``docs/reference.md``: every ``ptoc.lang`` function and tile operator with
its signature, the operations it records and the element types it accepts.

    python -m ptoc.docgen            # rewrite docs/reference.md
    python -m ptoc.docgen --check    # exit 1 when the checked-in page is stale

Nothing here restates a type rule. Each entry has a *probe*, a call of the function on
tiles of one element type; the probe is traced once per tensor element type, and the
page lists the types the tracer accepts (the catalog's rules, as ``ptoc.lang`` applies
them) and the mnemonics of the operations it recorded. A probe that no type passes is a
generator error, so a probe cannot silently go stale.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .backend.isa import OpRow
from .docexamples import ASCENDING, BLOCKS16
from .dtypes import DTYPES, DType
from .errors import KernelError
from .pyerror import plain_signature

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_PATH = ROOT / "docs" / "reference.md"

#: element types a tensor (hence a loaded tile) can have: 8 bits or more
TENSOR_TYPES: tuple[DType, ...] = tuple(
    d for d in DTYPES.values() if d.datatype is not None and d.bits >= 8
)

F32 = DTYPES["fp32"]
F16 = DTYPES["fp16"]
U32 = DTYPES["u32"]
U8 = DTYPES["u8"]
E8M0 = DTYPES["e8m0"]

#: probe(pt, make, dtype): one call of the function on operands ``make`` builds
Probe = Callable[..., Any]


@dataclass(frozen=True)
class Entry:
    """One function of the page: its name, the probe and the section it belongs to."""

    name: str
    section: str
    probe: Probe | None  # None: the entry takes no tile of a varying type
    varies: str = "its tiles"  # what the listed types are the types of
    loads: bool = False  # list the TLOADs the probe's tiles come from (pt.load itself)
    #: the probe takes a second type (e.g. of an index tile), tried over every tensor type
    second: str | None = None
    #: a derived function's operation-table row: the page lists the row's DataTypes
    row: OpRow | None = None
    #: the probe of the runnable example when ``probe`` is None or takes other operands
    example: Probe | None = None


SECTIONS: tuple[tuple[str, str], ...] = (
    ("memory", "Loads, stores and PEs"),
    ("control", "Run-time loops and integers"),
    ("arith", "Arithmetic, comparison and broadcasting"),
    ("elementwise", "Elementwise math, conversion, selection and tile creation"),
    ("reduce", "Row and column reductions"),
    ("layout", "Shapes and layout"),
    ("select", "Sorting, gather/scatter, partial and histogram operations"),
    ("quant", "Quantization"),
    ("matrix", "Matrix products (CUBE engine)"),
    ("compound", "Compound interfaces (docs/compound.md)"),
)

T = 8, 64  # the probe tile shape

#: how the examples draw operands plain random data would make invalid (see docexamples)
PERMUTED_ROWS = "np.argsort(rng.random({shape}), axis=0)"  # a permutation per column
PERMUTED_FLAT = "rng.permutation({rows} * {cols}).reshape({shape})"  # distinct offsets

#: hand-written examples of the entries no probe can show (a window, the PE index)
WRITTEN: dict[str, str] = {
    "store": """@ptoc.kernel
def store_example(
    x: ptoc.Tensor[ptoc.fp32, 8, 64],
    out: ptoc.Tensor[ptoc.fp32, 16, 64],
):
    t = pt.load(x)
    pt.store(out, t, rows=0)  # rows 0..7
    pt.store(out, -t, rows=8)  # rows 8..15


ptoc.verify(store_example)
""",
    "pe": """@ptoc.kernel(pes=2)
def pe_example(
    x: ptoc.Tensor[ptoc.fp32, 16, 64],
    out: ptoc.Tensor[ptoc.fp32, 16, 64],
):
    t = pt.load(x, rows=(8 * pt.pe(), 8))  # PE p works on rows 8p .. 8p+7
    pt.store(out, pt.exp(t), rows=8 * pt.pe())


ptoc.verify(pe_example)
""",
}


def _derived(section: str) -> tuple[Entry, ...]:
    """The entries of the one-operation functions derived from the operation table
    (``ptoc.lang.derived``) in ``section``: their types are their row's DataTypes."""
    from .lang.derived import FAMILIES, ROWS

    return tuple(
        Entry(r.lang, section, None, row=r)
        for r in ROWS
        if r.lang is not None and r.tile is not None and FAMILIES[r.tile] == section
    )


def _mx_scales(make: Any, d: DType, shape: tuple[int, int]) -> Any:
    """The E8M0 scales an MX operand of type ``d`` takes (None for FP16/BF16)."""
    from ptoc.backend.isa.semantics.matmul import needs_scale

    return make(*shape, E8M0) if d.datatype is not None and needs_scale(d.datatype) else None


ENTRIES: tuple[Entry, ...] = (
    Entry("load", "memory", lambda pt, m, d: m(8, 64, d), loads=True),
    Entry("matmul", "matrix", lambda pt, m, d: pt.matmul(m(40, 64, d), m(64, 24, d))),
    Entry("gemv", "matrix", lambda pt, m, d: pt.gemv(m(1, 64, d), m(64, 24, d))),
    Entry(
        "matmul_mx",
        "matrix",
        lambda pt, m, d: pt.matmul_mx(
            m(8, 64, d), _mx_scales(m, d, (8, 2)), m(64, 24, d), _mx_scales(m, d, (2, 24))
        ),
    ),
    Entry("store", "memory", None),
    Entry("pe", "memory", None),
    *_derived("arith"),
    Entry("broadcast_to", "arith", lambda pt, m, d: pt.broadcast_to(m(8, 1, d), T)),
    *_derived("elementwise"),
    Entry("fma", "elementwise", lambda pt, m, d: pt.fma(m(*T, d), m(*T, d), m(*T, d))),
    Entry("cast", "elementwise", None, example=lambda pt, m, d: pt.cast(m(*T, d), F16)),
    Entry(
        "where",
        "elementwise",
        lambda pt, m, d: pt.where(m.pred(*T), m(*T, d), m(*T, d)),
        "a and b",
    ),
    Entry("full", "elementwise", lambda pt, m, d: pt.full(T, 1, d), "dtype"),
    Entry("iota", "elementwise", lambda pt, m, d: pt.iota(64, dtype=d), "dtype"),
    Entry("tri", "elementwise", lambda pt, m, d: pt.tri(T, dtype=d), "dtype"),
    *_derived("reduce"),
    Entry("exp_diff", "reduce", lambda pt, m, d: pt.exp_diff(m(*T, d), m(8, 1, d)), "t"),
    Entry("concat", "layout", lambda pt, m, d: pt.concat(m(8, 32, d), m(8, 32, d))),
    Entry("extract", "layout", lambda pt, m, d: pt.extract(m(*T, d), 0, 0, (4, 32))),
    Entry("insert", "layout", lambda pt, m, d: pt.insert(m(*T, d), m(4, 32, d), 0, 0)),
    Entry("fillpad", "layout", lambda pt, m, d: pt.fillpad(m(8, 32, d), (8, 64), 0)),
    Entry("transpose", "layout", lambda pt, m, d: pt.transpose(m(16, 16, d))),
    Entry("sort", "select", lambda pt, m, d: pt.sort(m(8, 32, d))),
    Entry(
        "merge",
        "select",
        lambda pt, m, d: pt.merge(m.drawn(1, 32, d, ASCENDING), m.drawn(1, 32, d, ASCENDING)),
    ),
    Entry(
        "gather",
        "select",
        lambda pt, m, d, i: pt.gather(
            m(*T, d), m.drawn(8, 1, i, "rng.integers(0, 8, {shape})")
        ),
        "values",
        second="rows",
    ),
    Entry(
        "scatter",
        "select",
        lambda pt, m, d, i: pt.scatter(m(*T, d), m.drawn(8, 64, i, PERMUTED_ROWS), 8),
        "values",
        second="rows",
    ),
    *(
        Entry(n, "select", lambda pt, m, d, n=n: getattr(pt, n)(m(*T, d), m(4, 32, d)))
        for n in ("partial_add", "partial_mul", "partial_max", "partial_min")
    ),
    Entry("histogram", "select", lambda pt, m, d: pt.histogram(m(8, 64, d), m(8, 1, U8), 0)),
    Entry("quantize", "quant", lambda pt, m, d: pt.quantize(m(*T, d), multiplier=2.0), "t"),
    Entry("dequantize", "quant", lambda pt, m, d: pt.dequantize(m(*T, d), 0.5), "q"),
    Entry("sort32", "compound", lambda pt, m, d: pt.sort32(m(8, 64, d)), "t"),
    Entry(
        "merge_sorted",
        "compound",
        lambda pt, m, d: pt.merge_sorted(m.sorted(1, 32, d), m.sorted(1, 32, d)),
        "the lists",
    ),
    Entry(
        "merge_blocks",
        "compound",
        lambda pt, m, d: pt.merge_blocks(m.drawn(1, 64, d, BLOCKS16), 16),
        "records",
    ),
    Entry(
        "pack_records",
        "compound",
        lambda pt, m, d: pt.pack_records(m.sorted(1, 32, d)),
        "the record values",
    ),
    Entry(
        "unpack_records",
        "compound",
        lambda pt, m, d: pt.unpack_records(m.packed(1, 32, d), d),
        "dtype (the record values)",
    ),
    Entry(
        "gather_pattern",
        "compound",
        lambda pt, m, d: pt.gather_pattern(m(*T, d), "P0101"),
        "t",
    ),
    Entry(
        "gather_flat",
        "compound",
        lambda pt, m, d: pt.gather_flat(
            m(*T, d), m.drawn(8, 64, U32, "rng.integers(0, 512, {shape})")
        ),
        "t",
    ),
    Entry(
        "gather_blocks",
        "compound",
        lambda pt, m, d: pt.gather_blocks(
            m(*T, d), m.drawn(1, 4, U32, "32 * rng.integers(0, 64, {shape})")
        ),
        "t",
    ),
    Entry(
        "scatter_flat",
        "compound",
        lambda pt, m, d: pt.scatter_flat(m(*T, d), m.drawn(8, 64, U32, PERMUTED_FLAT), (8, 64)),
        "t",
    ),
    Entry(
        "quantize_rows",
        "compound",
        lambda pt, m, d: pt.quantize_rows(m(*T, d), m(8, 1, F32)),
        "t",
    ),
    Entry(
        "dequantize_rows",
        "compound",
        lambda pt, m, d: pt.dequantize_rows(m(*T, d), m(8, 1, F32)),
        "q",
    ),
    Entry("quantize_mx", "compound", lambda pt, m, d: pt.quantize_mx(m(*T, d)), "t"),
    Entry(
        "dequantize_mx",
        "compound",
        lambda pt, m, d: pt.dequantize_mx(m(*T, d), m(8, 2, E8M0)),
        "elements",
    ),
)

#: the Tile operators (methods of ptoc.tile.Tile), probed like the functions
OPERATORS: tuple[tuple[str, Probe], ...] = (
    ("a + b", lambda pt, m, d: m(*T, d) + m(*T, d)),
    ("a - b", lambda pt, m, d: m(*T, d) - m(*T, d)),
    ("a * b", lambda pt, m, d: m(*T, d) * m(*T, d)),
    ("a / b", lambda pt, m, d: m(*T, d) / m(*T, d)),
    ("a % b", lambda pt, m, d: m(*T, d) % m(*T, d)),
    ("a & b", lambda pt, m, d: m(*T, d) & m(*T, d)),
    ("a | b", lambda pt, m, d: m(*T, d) | m(*T, d)),
    ("a ^ b", lambda pt, m, d: m(*T, d) ^ m(*T, d)),
    ("a << b", lambda pt, m, d: m(*T, d) << m(*T, d)),
    ("a >> b", lambda pt, m, d: m(*T, d) >> m(*T, d)),
    ("a + 2", lambda pt, m, d: m(*T, d) + 2),
    ("a - 2", lambda pt, m, d: m(*T, d) - 2),
    ("a * 2", lambda pt, m, d: m(*T, d) * 2),
    ("a / 2", lambda pt, m, d: m(*T, d) / 2),
    ("2 - a", lambda pt, m, d: 2 - m(*T, d)),
    ("a - b, b (R, 1)", lambda pt, m, d: m(*T, d) - m(8, 1, d)),
    ("a * b, b (1, C)", lambda pt, m, d: m(*T, d) * m(1, 64, d)),
    ("a < b (also <=, >, >=, ==, !=)", lambda pt, m, d: m(*T, d) < m(*T, d)),
    ("a < 0", lambda pt, m, d: m(*T, d) < 0),
    ("-a", lambda pt, m, d: -m(*T, d)),
    ("abs(a)", lambda pt, m, d: abs(m(*T, d))),
    ("~a", lambda pt, m, d: ~m(*T, d)),
    ("a[r0:r1, c0:c1]", lambda pt, m, d: m(*T, d)[0:4, 0:32]),
    ("a.T", lambda pt, m, d: m(16, 16, d).T),
)


class _Make:
    """Makes a probe's operands; every op it records is set-up, not listed."""

    def __init__(self, block: Any, ret: Any, dtype: DType, setup: set[Any]) -> None:
        self.block, self.ret, self.dtype, self.setup = block, ret, dtype, setup

    def _recording(self, build: Callable[[], Any]) -> Any:
        before = set(self.block.ops)
        value = build()
        self.setup.update(op for op in self.block.ops if op not in before)
        return value

    def __call__(self, rows: int, cols: int, d: DType | None = None) -> Any:
        """A (rows, cols) tile of ``d`` (default: the probed type), loaded from a tensor."""
        from ptoc.dialects.tile_types import TensorType

        from . import lang
        from .tensor import TensorSpec
        from .tile import TensorParam

        d = d or self.dtype
        ty = TensorType(d.catalog_name, (rows, cols))
        arg = self.block.insert_arg(ty, len(self.block.args))
        x = TensorParam(f"x{len(self.block.args)}", TensorSpec(d, (rows, cols)), arg)
        return self._recording(lambda: lang.load(x))

    def drawn(self, rows: int, cols: int, d: DType | None, draw: str) -> Any:
        """A tile whose example tensor is drawn by ``draw`` (plain random data would not
        be valid input); for the page's types, a tile like any other."""
        return self(rows, cols, d)

    def pred(self, rows: int, cols: int) -> Any:
        """A comparison result (pred tile)."""
        return self._recording(lambda: self(rows, cols, F32) > 0.0)

    def sorted(self, rows: int, cols: int, d: DType | None = None) -> Any:
        """Records of ``d`` values sorted by pt.sort32."""
        from . import lang

        return self._recording(lambda: lang.sort32(self(rows, cols, d)))

    def packed(self, rows: int, cols: int, d: DType | None = None) -> Any:
        """pt.pack_records of sorted ``d`` records."""
        from . import lang

        return self._recording(lambda: lang.pack_records(self.sorted(rows, cols, d)))


def _traced(call: Callable[[Any], Any], dtype: DType) -> tuple[Any, Any, set[Any], Any]:
    """Trace ``call(make)`` in a fresh probe function: (function, return op, set-up ops,
    what ``call`` returned); KernelError when the tracer refuses it."""
    from xdsl.dialects import func
    from xdsl.ir import Block, Region

    from .trace import TraceState, tracing

    block = Block()
    f = func.FuncOp("probe", ([], []), Region(block))
    ret = func.ReturnOp()
    block.add_op(ret)
    setup: set[Any] = set()
    make = _Make(block, ret, dtype, setup)
    with tracing(TraceState("probe", 1, block, ret)):
        value = call(make)
    return f, ret, setup, value


#: how the page lists a lowering's reshapes through GM (``tile.view``)
VIEW_NOTE = "GM views"


def probe(
    call: Probe, dtype: DType, loads: bool = False, lower: bool = False
) -> list[str] | None:
    """The mnemonics ``call`` records on tiles of ``dtype`` (None: a KernelError);
    ``loads``: including the TLOADs that made its tiles; ``lower``: the mnemonics of what
    lower-compound makes of them instead."""
    from . import lang

    try:
        f, ret, setup, _ = _traced(lambda make: call(lang, make, dtype), dtype)
    except KernelError:
        return None
    if lower:
        from ptoc.dialects.compound_ops import ViewOp
        from ptoc.passes.lower_compound import lower_compound_func

        lower_compound_func(f)
    names: list[str] = []
    for op in f.body.block.ops:
        if op is ret or (op in setup and not (loads and op.name == "tile.load")):
            continue
        if lower and getattr(op, "MNEMONIC", None) is None:
            if isinstance(op, ViewOp) and VIEW_NOTE not in names:
                names.append(VIEW_NOTE)  # a reshape through GM: TSTORE and TLOAD bundles
            continue
        name = getattr(op, "MNEMONIC", None) or op.name
        if name not in names:
            names.append(name)
    return names


def example(e: Entry, dtype: DType, second: DType | None = None) -> str:
    """The runnable example of entry ``e`` on tiles of ``dtype`` (and ``second``)."""
    from .docexamples import Lang, Recorder, kernel_text

    if e.name in WRITTEN:
        return WRITTEN[e.name]
    call = e.example or e.probe or _row_probe(e)
    assert call is not None, e.name

    def run(make: Any) -> Any:
        rec = Recorder(make)
        args = (Lang(rec), rec, dtype) + ((second,) if second is not None else ())
        return rec, call(*args)

    _, _, _, (rec, value) = _traced(run, dtype)
    return kernel_text(f"{e.name}_example", rec, value)


def _row_probe(e: Entry) -> Probe | None:
    """The probe of a function derived from an operation-table row: its sources are
    (8, 64) tiles of the probed type."""
    from .backend.isa import TileFamily

    if e.row is None:
        return None
    if e.row.tile is TileFamily.BINARY:
        return lambda pt, m, d: getattr(pt, e.name)(m(*T, d), m(*T, d))
    return lambda pt, m, d: getattr(pt, e.name)(m(*T, d))


#: the element types examples prefer, in order (then the first the function accepts)
EXAMPLE_TYPES = ("fp32", "s32", "fp16", "u32")


def example_type(types: list[DType]) -> DType:
    for name in EXAMPLE_TYPES:
        if DTYPES[name] in types:
            return DTYPES[name]
    return types[0]


def selector(mnemonic: str) -> str:
    """``TADD`` with its engine and selector, as the page lists a recorded operation."""
    from .backend.isa import OPS

    if mnemonic == VIEW_NOTE:
        return (
            "GM views (`TSTORE` into the scratch area and `TLOAD` back; one `TLOAD` of a "
            "tensor nothing writes for a view of tiles loaded from it)"
        )
    o = OPS.get(mnemonic)
    if o is None:
        return f"`{mnemonic}`"
    if o.mode is None:
        return f"`{mnemonic}` ({o.bstart})"
    sel = f"Mode {o.mode} Function {o.function}, selector {o.selector_text}"
    return f"`{mnemonic}` ({o.bstart} {sel})"


def accepted(
    call: Probe, loads: bool = False, second: bool = False
) -> tuple[list[DType], list[str], list[DType]]:
    """The tensor element types ``call`` traces with, the ops it records and (with
    ``second``) the second operand's types that some first type accepts."""
    types: list[DType] = []
    ops: list[str] = []
    seconds: list[DType] = []
    results: list[tuple[DType | None, list[str] | None]]
    for d in TENSOR_TYPES:
        if second:
            results = [
                (e, probe(lambda pt, m, d, e=e: call(pt, m, d, e), d, loads))
                for e in TENSOR_TYPES
            ]
        else:
            results = [(None, probe(call, d, loads))]
        for e, got in results:
            if got is None:
                continue
            if d not in types:
                types.append(d)
            if e is not None and e not in seconds:
                seconds.append(e)
            ops += [o for o in got if o not in ops]
    return types, ops, sorted(seconds, key=TENSOR_TYPES.index)


def _types(ds: list[DType]) -> str:
    if len(ds) == len(TENSOR_TYPES):
        return "every tensor type"
    return ", ".join(d.name for d in ds) or "-"


def _ops(ops: list[str]) -> str:
    return ", ".join(f"`{o}`" for o in ops)


_ROLE = re.compile(r":(?:func|class|mod):`~?(?:ptoc\.lang\.)?([\w.]+)`")


def _summary(fn: Any) -> str:
    """The first paragraph of the docstring, with Sphinx roles as plain code."""
    doc = inspect.getdoc(fn) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return _ROLE.sub(lambda m: f"``pt.{m[1]}``" if "." not in m[1] else f"``{m[1]}``", first)


def _cast_rows() -> list[str]:
    """Which (source, result) pairs pt.cast accepts, by result type."""
    rows = []
    for to in TENSOR_TYPES:
        sources = [
            d
            for d in TENSOR_TYPES
            if probe(lambda pt, m, d, to=to: pt.cast(m(*T, d), to), d) is not None
        ]
        if len(sources) == len(TENSOR_TYPES):
            continue
        rows.append(f"  to {to.name} only from {_types(sources)}")
    return rows


def entries_of(lang: Any) -> tuple[Entry, ...]:
    """:data:`ENTRIES`, then an entry without a probe for every other exported function,
    in the section named by the ``ptoc.lang`` submodule that defines it (its signature
    and summary; a probe adds the types and operations)."""
    listed = {e.name for e in ENTRIES}
    sections = {key for key, _ in SECTIONS}
    extra: list[Entry] = []
    for name in sorted(set(lang.__all__) - listed):
        if name[0].isupper():
            continue  # result classes (Records, MX, PEIndex)
        module = getattr(lang, name).__module__.rsplit(".", 1)[-1]
        if module not in sections:
            raise SystemExit(f"docgen: ptoc.lang {name} is defined outside every section")
        extra.append(Entry(name, module, None))
    return (*ENTRIES, *extra)


def _facts(e: Entry) -> list[str]:
    """The bullet lines of entry ``e``: what it records (with the operations' engines and
    selectors, or the lowering of a compound op) and the types it accepts."""
    if e.name == "cast":
        return [
            f"* records: {selector('TCVT')}",
            f"* types: {_types(list(TENSOR_TYPES))} to every tensor type, except",
            "",
            "```text",
            *_cast_rows(),
            "```",
            "",
        ]
    if e.section == "matrix" and e.probe is not None:
        from ptoc.passes.legalize.matmul import cube_form

        form = cube_form(e.name == "gemv", False, False, e.name == "matmul_mx")
        types, _, _ = accepted(e.probe, e.loads, False)
        return [
            f"* records: `tile.matmul`, legalized into `{form}` bundles between the CUBE "
            "conversions of `TLOAD` (ND2M16/ND2M32/ND2N8) and `TSTORE` (M162ND/M322ND); "
            f"further K chunks chain through {form}_ACC, a bias is {form}_BIAS or one "
            "TCOLEXPANDADD after the last chunk",
            f"* types of {e.varies}: {_types(types)} ("
            + (
                "any two"
                if e.name == "matmul_mx"
                else "a and b of one class: floating, signed or unsigned"
            )
            + ")",
            "",
        ]
    if e.row is not None:
        types = [d for d in TENSOR_TYPES if d.datatype in e.row.op.dtypes]
        return [f"* records: {selector(e.row.mnemonic)}",
                f"* types of {e.varies}: {_types(types)}", ""]  # fmt: skip
    if e.probe is None:
        return []
    types, ops, seconds = accepted(e.probe, e.loads, e.second is not None)
    if not types:
        raise SystemExit(f"docgen: the probe of pt.{e.name} accepts no type")
    out = [f"* records: {', '.join(selector(o) for o in ops)}"]
    if any(o.startswith("tile.") for o in ops):
        assert e.second is None
        lowered = probe(e.probe, example_type(types), lower=True) or []
        out.append(f"* lowers to: {', '.join(selector(o) for o in lowered)}")
    out.append(f"* types of {e.varies}: {_types(types)}")
    if e.second:
        pairs = "in the pairs the catalog lists"
        out.append(f"* types of {e.second}: {_types(seconds)} ({pairs})")
    out.append("")
    return out


def docstring_example(fn: Any) -> str | None:
    """The kernel a function's docstring gives after a line ``Example::`` (indented, up
    to the end of the docstring), dedented; None when it gives none."""
    doc = inspect.getdoc(fn) or ""
    _, sep, body = doc.partition("Example::\n")
    if not sep:
        return None
    return inspect.cleandoc("\n" + body) + "\n"


def example_of(e: Entry) -> str:
    """The example of ``e`` on its preferred type (and the first second type it pairs
    with)."""
    if e.name in WRITTEN:
        return WRITTEN[e.name]
    from . import lang

    written = docstring_example(getattr(lang, e.name))
    if written is not None:
        return written
    call = e.probe or _row_probe(e)
    if e.name == "cast" or call is None:
        return example(e, F32)
    types, _, seconds = accepted(call, e.loads, e.second is not None)
    d = example_type(types)
    if e.second is None:
        return example(e, d)
    for i in sorted(seconds, key=lambda t: t.name not in EXAMPLE_TYPES):
        if probe(lambda pt, m, dd, i=i: call(pt, m, dd, i), d) is not None:
            return example(e, d, i)
    raise SystemExit(f"docgen: pt.{e.name} takes no second type with {d.name}")


def generate() -> str:
    """The text of docs/reference.md."""
    from . import lang

    entries = entries_of(lang)
    out = [
        "# ptoc.lang reference",
        "",
        "<!-- generated by python -m ptoc.docgen; do not edit (a test checks it is fresh) -->",
        "",
        "Every function of `ptoc.lang` (`import ptoc.lang as pt`) and every tile operator,",
        "with its signature, the operations it records and the element types it accepts.",
        "The types are found by tracing each function on tiles of every tensor element type",
        "(those of 8 bits or more; narrower types exist only inside a tile's storage), so",
        "they are the catalog's rules as the tracer applies them; `ptoc isa MNEMONIC` prints",
        "an operation's row. `help(pt.NAME)` gives the full docstring. The semantics of the",
        "compound interfaces are in [compound.md](compound.md).",
        "",
        "Each entry ends with a runnable example: a small kernel generated from the probe",
        "the page traces, verified bit for bit on the machine model (the docs test runs",
        "every example of the page). They share these imports:",
        "",
        "```python",
        "import numpy as np",
        "",
        "import ptoc",
        "import ptoc.lang as pt",
        "```",
        "",
    ]
    for key, title in SECTIONS:
        out += [f"## {title}", ""]
        for e in (e for e in entries if e.section == key):
            fn = getattr(lang, e.name)
            out += [f"### `pt.{e.name}{plain_signature(fn)}`", "", _summary(fn), ""]
            out += _facts(e)
            out += ["```python", example_of(e).rstrip("\n"), "```", ""]
        if key == "memory":
            out += [
                "`pt.store` accepts every tensor type its tensor has; `pt.pe()` is the PE "
                "index (`a * pt.pe() + b` in window offsets).",
                "",
            ]
    out += ["## Tile operators", "", "| expression | records | types |", "| --- | --- | --- |"]
    for text, call in OPERATORS:
        types, ops, _ = accepted(call)
        if not types:
            raise SystemExit(f"docgen: the probe of {text} accepts no type")
        out.append(f"| `{text.replace('|', chr(92) + '|')}` | {_ops(ops)} | {_types(types)} |")
    out += [
        "",
        "`<=`, `>`, `>=`, `==` and `!=` record the same TCMP / TCMPS as `<`; "
        "`a.astype(dtype)` is `pt.cast(a, dtype)`.",
        "",
        "## Classes",
        "",
    ]
    for name in sorted(n for n in lang.__all__ if n[0].isupper()):
        out += [f"* `pt.{name}`: {_summary(getattr(lang, name))}"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ptoc.docgen", description=__doc__)
    p.add_argument("--check", action="store_true", help="exit 1 if docs/reference.md is stale")
    args = p.parse_args(argv)
    text = generate()
    if args.check:
        if REFERENCE_PATH.read_text() != text:
            print(f"{REFERENCE_PATH} is stale: run python -m ptoc.docgen", file=sys.stderr)
            return 1
        return 0
    REFERENCE_PATH.write_text(text)
    print(f"wrote {REFERENCE_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
