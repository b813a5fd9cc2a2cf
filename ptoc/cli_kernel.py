"""The kernel commands of the ``ptoc`` command line: compile, verify, run, bench.

    ptoc compile FILE.py::KERNEL [--emit tile|lower-compound|legalize|pto|asm|bin|stats]
                 [-o OUT] [--print-ir-after-all] [--dump-dir DIR] [--machine SPEC]
    ptoc verify  FILE.py::KERNEL [--seed N] [--runs N] [--inputs FILE.npz] [--machine SPEC]
    ptoc run     FILE.py::KERNEL [--seed N | --inputs FILE.npz] [-o OUT.npz] [--trace]
    ptoc bench   [FILE.py[::KERNEL] ...] [--repeat N] [--machine SPEC]

Exit status: 0 success, 1 verification mismatch, 2 bad input (including kernel and
compile errors), 3 machine fault.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

EXIT_OK, EXIT_MISMATCH = 0, 1
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


def _machine(text: str | None) -> Any:
    from ptoc.runtime.config import MachineConfig

    return MachineConfig.parse(text) if text else None


def _load(spec: str) -> Any:
    from .loader import load_kernel

    return load_kernel(spec)


# ------------------------------------------------------------------ compile


def cmd_compile(args: argparse.Namespace) -> int:
    from .driver import compile as compile_kernel

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
        Path(out).write_bytes(data)
        print(
            f"{out}: {result.program.bundle_count()} bundles, {len(data)} bytes",
            file=sys.stderr,
        )
        return EXIT_OK
    if emit == "asm":
        text = result.asm(source=not args.no_source)
    elif emit == "stats":
        text = result.stats().text() + "\n"
    else:
        text = str(result) + "\n"
    if args.output:
        Path(args.output).write_text(text)
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
    from .driver import compile as compile_kernel
    from .errors import InputError
    from .execute import compare, reference_of, run_on

    if args.runs < 1:
        raise InputError(f"ptoc verify: --runs must be at least 1, not {args.runs}")
    k = _load(args.kernel)
    prog = compile_kernel(k, _machine(args.machine))
    if args.inputs:
        runs: list[tuple[str, dict[str, np.ndarray] | None]] = [
            ("inputs " + args.inputs, _npz_inputs(args.inputs, k))
        ]
    else:
        runs = [(f"seed {s}", None) for s in range(args.seed, args.seed + args.runs)]
    big = sum(p.spec.shape[0] * p.spec.shape[1] for p in k.params) >= 1 << 16
    show = (
        args.progress
        if args.progress is not None
        else sys.stderr.isatty() and (len(runs) > 1 or big)
    )
    bar = Progress(f"verify {k.name}", len(runs), show)
    try:
        for i, (what, arrays) in enumerate(runs):
            if arrays is None:
                arrays = k.random_inputs(int(what.split()[1]))
            want = reference_of(k, arrays)
            got = run_on(prog, arrays)
            compare(k.name, got, want, context=what)
            bar.update(i + 1)
    finally:
        bar.close()
    s = prog.stats()
    which = (
        runs[0][0]
        if len(runs) == 1
        else f"{len(runs)} runs (seeds {args.seed}..{args.seed + len(runs) - 1})"
    )
    print(f"{k.name}: bit-exact in {which}; {s.bundles} bundles on {prog.machine.text()}")
    return EXIT_OK


# ------------------------------------------------------------------ run


def cmd_run_kernel(argv: Sequence[str]) -> int:
    from .execute import run_on

    p = argparse.ArgumentParser(
        prog="ptoc run", description="Run a kernel on the machine model."
    )
    p.add_argument("kernel", metavar="FILE.py::KERNEL")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--seed", type=int, default=0, help="random inputs from this seed")
    src.add_argument("--inputs", metavar="FILE.npz", help="input arrays by tensor name")
    p.add_argument("-o", "--output", metavar="OUT.npz", help="save the outputs")
    p.add_argument("--machine", help="machine parameters, e.g. depth=4,capacity=16384")
    p.add_argument("--trace", action="store_true", help="print a per-bundle trace")
    args = p.parse_args(list(argv))
    k = _load(args.kernel)
    arrays = _npz_inputs(args.inputs, k) if args.inputs else k.random_inputs(args.seed)
    out = run_on(k, arrays, _machine(args.machine), trace=args.trace)
    if args.trace and out.trace is not None:
        print(out.trace.text())
    for name, a in out.items():
        print(f"{name}: {a.dtype} {a.shape}")
        print(np.array2string(a, threshold=64, edgeitems=3, precision=6))
    if args.output:
        saved: dict[str, Any] = dict(out)  # np.savez types its **kwds loosely
        with open(args.output, "wb") as fh:
            np.savez(fh, **saved)
        print(f"saved {', '.join(out)} to {args.output}", file=sys.stderr)
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
    """Add compile, verify and bench to the ``ptoc`` subcommand parser."""
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
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress line on stderr (default: on a terminal for long runs)",
    )
    v.set_defaults(func=cmd_verify)

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
