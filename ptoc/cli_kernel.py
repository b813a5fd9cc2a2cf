"""The kernel commands of the ``ptoc`` command line: compile, verify, run, bench.

    ptoc compile FILE.py::KERNEL [--emit tile|lower-compound|legalize|pto|asm|bin|stats]
                 [-o OUT] [--print-ir-after-all] [--dump-dir DIR] [--machine SPEC]
    ptoc verify  FILE.py::KERNEL [--seed N] [--runs N] [--inputs FILE.npz] [--machine SPEC]
                 [--grid N] [--workers N | --cluster ADDRESS]
                 [--expected [FILE.py::]FN [--rtol R] [--atol A]] [--report REPORT.html]
    ptoc run     FILE.py::KERNEL [--seed N | --inputs FILE.npz] [--save OUT.npz] [--trace]
    ptoc bench   [FILE.py[::KERNEL] ...] [--repeat N] [--machine SPEC]
    ptoc report  FILE.py::KERNEL [-o REPORT.html] [--machine SPEC]

Exit status: 0 success, 1 verification mismatch (or outputs outside the tolerance of
``--expected``), 2 bad input (including kernel and compile errors), 3 machine fault,
130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from .errors import Error, VerifyError
from .tensor import TensorSpec

EXIT_OK, EXIT_MISMATCH = 0, 1


class UsageError(Error):
    """A command-line option that cannot be honoured (one message, exit status 2)."""


def check_output(path: str, option: str = "-o") -> Path:
    """``path`` as a file a command can write, or one OutputError saying why not."""
    from .errors import OutputError

    p = Path(path)
    if p.is_dir():
        raise OutputError(f"{option} {path}: is a folder; name a file to write")
    if not p.parent.is_dir():
        raise OutputError(f"{option} {path}: the folder {p.parent} does not exist")
    return p


def write_output(path: str, data: bytes | str, option: str = "-o") -> None:
    """Write a command's output file; one OutputError naming the option and the reason."""
    from .errors import OutputError

    p = check_output(path, option)
    try:
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data)
    except OSError as e:
        raise OutputError(f"{option} {path}: cannot write: {e.strerror or e}") from None


EMITS = ("tile", "lower-compound", "legalize", "pto", "allocate", "asm", "bin", "stats")


class Progress:
    """A one-line progress bar on stderr, redrawn in place (no dependency)."""

    def __init__(
        self, label: str, total: int, enabled: bool, out: TextIO | None = None
    ) -> None:
        self.label, self.total, self.enabled = label, total, enabled
        self.out = out or sys.stderr
        self.start = time.perf_counter()
        self.drawn = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        width = 24
        fill = width * done // max(self.total, 1)
        elapsed = time.perf_counter() - self.start
        eta = elapsed / done * (self.total - done) if done else 0.0
        self.out.write(
            f"\r{self.label} [{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} "
            f"{elapsed:.1f}s elapsed, {eta:.1f}s left "
        )
        self.out.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.out.write("\n")
            self.out.flush()
            self.drawn = False


def _machine(text: str | None) -> Any:
    from ptoc.backend.target import MachineConfig

    return MachineConfig.parse(text) if text else None


def _load(spec: str) -> Any:
    from .loader import load_kernel

    return load_kernel(spec)


# ------------------------------------------------------------------ compile


def cmd_compile(args: argparse.Namespace) -> int:
    from .driver import compile_kernel

    if args.output:
        check_output(args.output)
    if args.dump_dir and Path(args.dump_dir).exists() and not Path(args.dump_dir).is_dir():
        raise UsageError(f"--dump-dir {args.dump_dir}: is a file; name a folder to write to")
    k = _load(args.kernel)
    emit = args.emit
    stop = None if emit in ("asm", "bin", "stats") else emit
    result = compile_kernel(
        k,
        _machine(args.machine),
        stop_after=stop,
        print_ir_after_all=args.print_ir_after_all,
        dump_dir=args.dump_dir,
    )
    if emit == "bin":
        out = args.output or f"{k.name}.bin"
        data = result.encode()
        write_output(out, data)
        print(f"{out}: {result.stats().summary()}, {len(data)} bytes", file=sys.stderr)
        return EXIT_OK
    if emit == "asm":
        text = result.asm(source=not args.no_source)
    elif emit == "stats":
        text = result.stats().text() + "\n"
    else:
        text = str(result) + "\n"
    if args.output:
        write_output(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


# ------------------------------------------------------------------ verify


def _npz_inputs(path: str, k: Any) -> dict[str, np.ndarray]:
    """``--inputs FILE``: the arrays of an ``.npz`` by tensor name, or the one array of an
    ``.npy`` for a kernel that reads one tensor. Files are read and validated by
    :mod:`ptoc.runtime.arrays`; raw-byte arrays (how NPY stores ml_dtypes types such as
    bfloat16) are viewed as their tensor's element type when the widths agree."""
    from ptoc.runtime.arrays import ArrayFileError, load

    from .errors import InputError

    try:
        f = load(path)
    except ArrayFileError as e:
        raise InputError(str(e)) from None
    arrays = dict(f.arrays)
    if not f.npz:
        reads = k.trace().inputs
        if len(reads) != 1:
            names = ", ".join(reads) or "no tensor"
            raise InputError(
                f"{path} holds one array, but {k.name} reads {names}: pass an .npz with "
                "one array per tensor name (numpy.savez(FILE, name=array, ...))"
            )
        arrays = {reads[0]: arrays[""]}
    specs = {p.name: p.spec for p in k.params}
    for name, a in arrays.items():
        spec = specs.get(name)
        if a.dtype.kind == "V" and spec is not None:
            carrier = spec.dtype.carrier
            if a.dtype.itemsize != carrier.itemsize:
                raise InputError(
                    f"{path}: '{name}' holds raw {a.dtype.itemsize}-byte elements; the "
                    f"tensor is {spec.dtype.name} ({carrier.itemsize}-byte elements)"
                )
            arrays[name] = a.view(carrier)
    return arrays


def cmd_verify(args: argparse.Namespace) -> int:
    from .driver import compile_kernel
    from .execute import verify_on

    if args.seed < 0:
        raise UsageError(f"ptoc verify: --seed is a non-negative integer, not {args.seed}")
    if args.runs < 1:
        raise UsageError(f"ptoc verify: --runs must be at least 1, not {args.runs}")
    if args.inputs and (args.runs != 1 or args.seed != 0):
        raise UsageError("ptoc verify: --inputs and --seed/--runs exclude each other")
    if args.report:
        check_output(args.report, "--report")
    if args.workers < 1:
        raise UsageError(f"ptoc verify: --workers must be at least 1, not {args.workers}")
    if args.grid is not None and args.grid < 1:
        raise UsageError(f"ptoc verify: --grid must be at least 1, not {args.grid}")
    if args.cluster and args.workers != 1:
        raise UsageError("ptoc verify: --cluster and --workers exclude each other")
    k = _load(args.kernel)
    expected = _expected(args.expected, k) if args.expected else None
    given = _npz_inputs(args.inputs, k) if args.inputs else {}
    collector = None
    if args.report:
        from .reporting import compile_observed

        prog, collector = compile_observed(k, _machine(args.machine))
    else:
        prog = compile_kernel(k, _machine(args.machine))
    runs = 1 if given else args.runs
    big = (
        sum(
            p.spec.shape[0] * p.spec.shape[1]
            for p in k.params
            if isinstance(p.spec, TensorSpec)
        )
        >= 1 << 16
    )
    show = (
        args.progress
        if args.progress is not None
        else sys.stderr.isatty() and (runs > 1 or big)
    )
    bar = Progress(f"verify {k.name}", runs, show)
    try:
        out = verify_on(
            prog,
            given,
            expected=expected,
            rtol=args.rtol,
            atol=args.atol,
            runs=1 if given else args.runs,
            seed=0 if given else args.seed,
            progress=bar.update,
            context=f"inputs {args.inputs}" if given else None,
            grid=args.grid,
            workers=args.workers,
            cluster=args.cluster,
        )
    except VerifyError as e:  # the report marks the differing elements
        bar.close()
        if args.report:
            _write_report(args.report, prog, collector, e)
        raise
    finally:
        bar.close()
    if args.report:
        _write_report(args.report, prog, collector, None)
    which = (
        f"inputs {args.inputs}"
        if given
        else f"seed {args.seed}"
        if runs == 1
        else f"{runs} runs (seeds {args.seed}..{args.seed + runs - 1})"
    )
    close = ""
    if expected is not None and out.closeness is not None:
        worst_rel = max((r for _, r in out.closeness.values()), default=0.0)
        worst_abs = max((a for a, _ in out.closeness.values()), default=0.0)
        close = (
            f", within tolerance of {getattr(expected, '__name__', 'expected')} "
            f"(worst abs err {worst_abs:.3g}, rel err {worst_rel:.3g})"
        )
    campaign = out.campaign
    if campaign is not None:
        where = f"cluster {args.cluster}" if args.cluster else "local"
        which += f" on {campaign.workers} {where} worker(s)"
        for note in campaign.notes():
            print(f"ptoc verify: {note}", file=sys.stderr)
    cores = args.grid or getattr(k, "grid", 1)
    grid = f" x {cores} cores" if cores > 1 else ""
    print(f"{k.name}: bit-exact in {which}{close}; {prog.stats().summary()} on "
          f"{prog.machine.text()}{grid}")  # fmt: skip
    return EXIT_OK


def _write_report(path: str, prog: Any, collector: Any, error: Any) -> None:
    """``--report``: the report of the verified program, with a mismatch's elements."""
    from .reporting import from_error, write

    write(path, prog, collector, from_error(error) if error is not None else None, "--report")
    what = "with the differing elements " if error is not None else ""
    print(f"wrote the report {what}to {path}", file=sys.stderr)


def _expected(spec: str, k: Any) -> Any:
    """The function ``--expected`` names: ``FILE.py::FN``, or ``FN`` in the kernel's file."""
    from .loader import LoadError, import_file

    path, sep, name = spec.rpartition("::")
    scope = vars(import_file(path)) if sep else k.fn.__globals__
    where = path if sep else k.file
    fn = scope.get(name)
    if not callable(fn):
        import difflib

        funcs = [n for n, v in scope.items() if callable(v) and not n.startswith("_")]
        close = difflib.get_close_matches(name, funcs, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise LoadError(f"{where} has no function '{name}'{hint} for --expected")
    return fn


# ------------------------------------------------------------------ run


def run_kernel_parser() -> argparse.ArgumentParser:
    """The options of ``ptoc run FILE.py::KERNEL``."""
    p = argparse.ArgumentParser(
        prog="ptoc run",
        usage="ptoc run FILE.py::KERNEL [--seed N | --inputs FILE.npz] [--save OUT.npz] "
        "[--machine SPEC] [--trace] [--grid N] [--workers N] [--cluster ADDRESS] "
        "[--check-races]",
        description="Compile a Python kernel and run it on the machine model; prints "
        "each output.",
    )
    p.add_argument("kernel", metavar="FILE.py::KERNEL")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--seed", type=int, default=0, help="random inputs from this seed")
    src.add_argument("--inputs", metavar="FILE.npz", help="input arrays by tensor name")
    p.add_argument(
        "--save",
        "-o",
        "--output",
        dest="save",
        metavar="OUT.npz",
        help="save the outputs by tensor name (-o/--output: the same)",
    )
    p.add_argument("--machine", help="machine parameters, e.g. depth=4,capacity=16384")
    p.add_argument("--trace", action="store_true", help="print a per-bundle trace")
    p.add_argument("--grid", type=int, help="cores of the launch (default: the kernel's grid)")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="run the cores in N processes (with --cluster: N chunks of cores; default one "
        "per worker thread)",
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the cores as tasks on a Dask cluster (tcp://HOST:PORT, or local[:N] for a "
        "local one; needs pip install 'ptoc[distributed]')",
    )
    p.add_argument(
        "--check-races", action="store_true", help="report GM accesses of cores that race"
    )
    return p


def cmd_run_kernel(argv: Sequence[str]) -> int:
    from .execute import run_on

    args = run_kernel_parser().parse_args(list(argv))
    if args.save:
        check_output(args.save, "--save")
    if args.seed < 0:
        raise UsageError(f"ptoc run: --seed is a non-negative integer, not {args.seed}")
    k = _load(args.kernel)
    arrays = _npz_inputs(args.inputs, k) if args.inputs else k.random_inputs(args.seed)
    if args.workers < 1 or (args.grid is not None and args.grid < 1):
        raise UsageError("ptoc run: --grid and --workers must be at least 1")
    out = run_on(k, arrays, _machine(args.machine), trace=args.trace, grid=args.grid,
                 workers=args.workers, cluster=args.cluster,
                 check_races=args.check_races)  # fmt: skip
    if out.cluster is not None:
        c = out.cluster
        cores = len(out.status) if out.status.ndim == 2 else 1
        print(f"ptoc run: ran the {cores} cores as {c.chunks} chunk(s) on {c.workers} "
              f"worker(s) of cluster {args.cluster}", file=sys.stderr)  # fmt: skip
        for note in c.notes():
            print(f"ptoc run: {note}", file=sys.stderr)
    if args.trace and out.trace is not None:
        print(out.trace.text())
    for name, a in out.items():
        print(f"{name}: {a.dtype} {a.shape}")
        print(np.array2string(a, threshold=64, edgeitems=3, precision=6))
    from ptoc.backend.isa.fields import status_text
    from ptoc.backend.program import count_text

    per_core = out.status if out.status.ndim == 2 else out.status[None]
    status = "; ".join(
        (f"core {c}: " if len(per_core) > 1 else "")
        + " ".join(f"PE{pe}:{status_text(int(s))}" for pe, s in enumerate(row))
        for c, row in enumerate(per_core)
    )
    print(f"{k.name}: ran {count_text(out.bundles, out.scalar_blocks)}; status {status}")
    if args.save:
        import io

        buf = io.BytesIO()
        saved: dict[str, Any] = dict(out)  # np.savez types its **kwds loosely
        np.savez(buf, **saved)
        write_output(args.save, buf.getvalue(), "--save")
        print(f"saved {', '.join(out)} to {args.save}", file=sys.stderr)
    return EXIT_OK


# ------------------------------------------------------------------ report


def cmd_report(args: argparse.Namespace) -> int:
    from .reporting import compile_observed, write

    k = _load(args.kernel)
    out = args.output or f"{k.name}.html"
    check_output(out)
    prog, collector = compile_observed(k, _machine(args.machine))
    write(out, prog, collector, option="-o")
    print(f"{out}: the report of {k.name} ({prog.stats().summary()}); open it in a browser",
          file=sys.stderr)  # fmt: skip
    return EXIT_OK


# ------------------------------------------------------------------ bench


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench import measure, table
    from .loader import import_file, kernels_in, load_kernel

    specs = list(args.kernels)
    if not specs:
        specs = sorted(str(p) for p in Path("examples").glob("*.py"))
        if not specs:
            from .loader import LoadError

            raise LoadError(
                "ptoc bench: name kernels (FILE.py[::KERNEL]); no examples/*.py here"
            )
    kernels = []
    for s in specs:
        if "::" in s:
            kernels.append(load_kernel(s))
        else:
            kernels.extend(kernels_in(import_file(s)).values())
    bar = Progress("bench", len(kernels), sys.stderr.isatty())
    rows = []
    for i, k in enumerate(kernels):
        rows.append(measure(k, _machine(args.machine), repeat=args.repeat))
        bar.update(i + 1)
    bar.close()
    print(table(rows))
    return EXIT_OK


# ------------------------------------------------------------------ parser


def add_commands(sub: Any) -> None:
    """Add compile, verify, report and bench to the ``ptoc`` subcommand parser."""
    c = sub.add_parser("compile", help="compile a Python kernel (FILE.py::KERNEL)")
    c.add_argument("kernel", metavar="FILE.py::KERNEL")
    c.add_argument(
        "--emit",
        choices=EMITS,
        default="asm",
        help="what to print: a stage's IR (tile, lower-compound, legalize, pto), "
        "bundle text (asm, the default), the binary (bin) or stats",
    )
    c.add_argument("-o", "--output", help="write to a file instead of stdout (bin: KERNEL.bin)")
    c.add_argument(
        "--print-ir-after-all", action="store_true", help="print every stage's IR to stderr"
    )
    c.add_argument("--dump-dir", metavar="DIR", help="write every stage's IR to DIR/NN-stage.*")
    c.add_argument("--machine", help="machine parameters, e.g. depth=4,capacity=16384")
    c.add_argument(
        "--no-source", action="store_true", help="asm without kernel source comments"
    )
    c.set_defaults(func=cmd_compile)

    v = sub.add_parser("verify", help="compile, run and compare with the reference bit for bit")
    v.add_argument("kernel", metavar="FILE.py::KERNEL")
    v.add_argument("--seed", type=int, default=0, help="first random-input seed (default 0)")
    v.add_argument("--runs", type=int, default=1, help="how many seeds to try (default 1)")
    v.add_argument("--inputs", metavar="FILE.npz", help="verify on these arrays instead")
    v.add_argument("--machine", help="machine parameters, e.g. depth=4,capacity=16384")
    v.add_argument(
        "--grid",
        type=int,
        help="cores of the launch (default: the kernel's grid); races between cores are errors",
    )
    v.add_argument(
        "--workers", type=int, default=1, help="verify the runs in N local processes"
    )
    v.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="verify the runs on a Dask cluster (tcp://HOST:PORT, or local[:N] for a local "
        "one; needs pip install 'ptoc[distributed]')",
    )
    v.add_argument(
        "--expected",
        metavar="[FILE.py::]FN",
        help="also compare with the author's numpy function FN(**inputs) (in the kernel's "
        "file unless FILE.py:: is given) within --rtol/--atol",
    )
    v.add_argument(
        "--rtol", type=float, help="relative tolerance for --expected (default 2 ulp, >= 1e-5)"
    )
    v.add_argument("--atol", type=float, help="absolute tolerance for --expected (1e-8)")
    v.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress line on stderr (default: on a terminal for long runs)",
    )
    v.add_argument(
        "--report",
        metavar="REPORT.html",
        help="write the HTML report of the program (on a mismatch: with the differing "
        "elements marked)",
    )
    v.set_defaults(func=cmd_verify)

    rp = sub.add_parser(
        "report",
        help="write one self-contained HTML page of a compiled kernel: timeline, dataflow "
        "graph, bundles with their kernel lines, every stage's IR",
    )
    rp.add_argument("kernel", metavar="FILE.py::KERNEL")
    rp.add_argument("-o", "--output", metavar="REPORT.html", help="default: KERNEL.html")
    rp.add_argument("--machine", help="machine parameters, e.g. depth=4,capacity=16384")
    rp.set_defaults(func=cmd_report)

    b = sub.add_parser("bench", help="time trace, compile, run and verify of kernels")
    b.add_argument(
        "kernels",
        nargs="*",
        metavar="FILE.py[::KERNEL]",
        help="kernels to time (default: every kernel in examples/*.py)",
    )
    b.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    b.add_argument("--machine", help="machine parameters, e.g. depth=4,capacity=16384")
    b.set_defaults(func=cmd_bench)


def is_kernel_spec(arg: str) -> bool:
    """``ptoc run`` of a Python kernel rather than of a bundle program."""
    return "::" in arg or arg.endswith(".py")
