"""``ptoc run``: execute an assembly (``.s``) or binary program on the machine model.

    ptoc run FILE.s|FILE.bin [--machine depth=4,capacity=16384] [--gpr a0=0x1000]
             [--gpr 2:a0=0x2000] [--gm 0x1000=in.npy] [--gm 0x3000=in.npz:NAME]
             [--read 0x2000:FP32:8x64] [-o|--save out.npz] [--trace]

Exit status: 0 success, 2 bad command-line input (unreadable file, assembly or decode
error, bad option or array file), 3 machine fault (one line: bundle index, operation
and rule).

``--gm ADDR=FILE`` places the bytes of an array at ``ADDR``: an ``.npy``, or an ``.npz``
holding exactly one array (``FILE.npz:NAME`` picks a member of one holding several).
Files are read by :mod:`ptoc.runtime.arrays`, which refuses malformed, truncated and
non-numeric files in one line.

``--read ADDR:DTYPE:SHAPE`` reads a GM range back after the run (``DTYPE`` a DataType
such as ``FP32`` / ``BF16`` / ``S8`` or a numpy name such as ``float32``; ``SHAPE``
like ``8x64``), prints it and saves it with ``--save``.

``--save`` (also ``-o``) writes an ``.npz`` holding, for every tile in a queue at the
end, its relative name (``T#1``...) -> ``(pes, ValidRow, ValidCol)`` values in the
DataType carrier (zeros on PEs outside its allocation mask; bool for predicate tiles;
ml_dtypes carriers such as bfloat16 load back as raw void bytes -- ``.view()`` them),
``<name>.defined`` (bool, same shape), ``status`` (uint8 per PE) and ``gm@0x<addr>``
for every ``--gm`` region (read back with its input's dtype and shape) and every
``--read`` range.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from ptoc.backend import asm, encoding
from ptoc.backend.errors import Error
from ptoc.backend.isa import DataType, dtype_by_name, info
from ptoc.backend.isa.fields import status_text
from ptoc.backend.literals import LiteralError, is_decimal, parse_int, show
from ptoc.backend.program import Program, count_text
from ptoc.backend.target import MachineConfig

from .arrays import ArrayFileError, array_dtype_rule, load_one
from .faults import MachineFault
from .machine import Machine

EXIT_OK, EXIT_BAD_INPUT, EXIT_FAULT = 0, 2, 3


class _Bad(Exception):
    """Bad command-line input; the message is printed as is."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Bad(f"ptoc run: {message}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="ptoc run",
        description="Run a PTO program on the machine model. (ptoc run FILE.py::KERNEL "
        "compiles and runs a kernel instead; see ptoc run FILE.py::KERNEL --help.)",
    )
    p.add_argument("file", help="FILE.s (assembly) or a binary of little-endian parcels")
    p.add_argument(
        "--machine", default="", help="machine parameters, e.g. depth=4,capacity=16384"
    )
    p.add_argument("--gpr", action="append", default=[], metavar="[PE:]REG=VALUE",
                   help="set a GPR on every PE, or on one PE with PE:REG=VALUE")  # fmt: skip
    p.add_argument("--gm", action="append", default=[], metavar="ADDR=FILE",
                   help="place an array's bytes in global memory at ADDR (FILE.npy, "
                   "FILE.npz holding one array, or FILE.npz:NAME)")  # fmt: skip
    p.add_argument("--read", action="append", default=[], metavar="ADDR:DTYPE:SHAPE",
                   help="after the run, read a GM range (e.g. 0x2000:FP32:8x64); "
                   "printed, and saved with --save")  # fmt: skip
    p.add_argument("-o", "--save", metavar="OUT.npz",
                   help="save tiles, status, --gm regions and --read ranges")  # fmt: skip
    p.add_argument("--trace", action="store_true", help="print a per-bundle trace")
    return p


def load_program(path: str) -> Program:
    """Assemble ``.s`` text, decode anything else; ptoc errors become ``_Bad``."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise _Bad(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:  # an embedded NUL byte in the name
        raise _Bad(f"{path!r}: cannot read: {e}") from None
    try:
        if path.endswith(".s"):
            return asm.parse(data.decode("utf-8"), file=path)
        return encoding.decode(data)
    except UnicodeDecodeError:
        raise _Bad(f"{path}: not UTF-8 text") from None
    except Error as e:
        raise _Bad(str(e) if path.endswith(".s") else f"{path}: {e}") from None


def _int(text: str, what: str) -> int:
    try:
        return parse_int(text)
    except LiteralError as e:
        raise _Bad(f"ptoc run: {what} {e}") from None


def _set_gprs(m: Machine, specs: list[str]) -> None:
    for spec in specs:
        target, sep, value = spec.partition("=")
        if not sep:
            raise _Bad(f"ptoc run: --gpr {show(spec)} is not REG=VALUE or PE:REG=VALUE")
        pe_text, colon, reg = target.rpartition(":")
        pe = _int(pe_text, "PE") if colon else None
        try:
            m.set_gpr(reg.strip(), _int(value, "GPR value"), pe)
        except Error as e:
            raise _Bad(f"ptoc run: --gpr {show(spec)}: {e}") from None


def _array_file(path: str, max_bytes: int) -> np.ndarray:
    """``FILE.npy``, ``FILE.npz`` (one array) or ``FILE.npz:NAME``."""
    key = None
    if not Path(path).exists():
        m = re.fullmatch(r"(.+\.npz):([^:/\\]+)", path)
        if m:
            path, key = m.group(1), m.group(2)
    return load_one(path, key, max_bytes)


def _place_gm(m: Machine, specs: list[str]) -> list[tuple[int, np.ndarray]]:
    regions = []
    for spec in specs:
        addr_text, sep, path = spec.partition("=")
        if not sep or not path:
            raise _Bad(f"ptoc run: --gm {show(spec)} is not ADDR=FILE")
        addr = _int(addr_text, "GM address")
        try:
            arr = _array_file(path, m.config.gm_size)
            m.load_gm(addr, arr)
        except (ArrayFileError, Error) as e:
            raise _Bad(f"ptoc run: --gm {show(spec, 60)}: {e}") from None
        regions.append((addr, arr))
    return regions


@dataclass(frozen=True)
class Read:
    """One ``--read ADDR:DTYPE:SHAPE`` range."""

    addr: int
    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def key(self) -> str:
        return f"gm@0x{self.addr:x}"


def parse_read(spec: str) -> Read:
    """``0x2000:FP32:8x64`` -> a :class:`Read`; ``_Bad`` names what is wrong."""
    parts = spec.split(":")
    if len(parts) != 3:
        raise _Bad(
            f"ptoc run: --read {show(spec)} is not ADDR:DTYPE:SHAPE (e.g. 0x2000:FP32:8x64)"
        )
    addr = _int(parts[0], "--read address")
    dt = _read_dtype(parts[1].strip(), spec)
    dims = [d.strip() for d in parts[2].lower().replace(",", "x").split("x")]
    if not dims or not all(is_decimal(d) and len(d) <= 12 for d in dims):
        raise _Bad(f"ptoc run: --read {show(spec)}: the shape is sizes joined by x, e.g. 8x64")
    return Read(addr, dt, tuple(int(d) for d in dims))


def _read_dtype(name: str, spec: str) -> np.dtype:
    dt: DataType | None
    try:
        dt = dtype_by_name(name)
    except KeyError:
        dt = None
    if dt is not None:
        i = info(dt)
        if i.bits < 8:
            raise _Bad(
                f"ptoc run: --read {show(spec)}: {dt.name} packs two elements per byte; "
                "read it as U8"
            )
        return i.carrier
    try:
        np_dt = np.dtype(name)
    except TypeError:
        raise _Bad(
            f"ptoc run: --read {show(spec)}: unknown element type {show(name)} (a DataType "
            "such as FP32, BF16, S8, or a numpy name such as float32)"
        ) from None
    rule = array_dtype_rule(np_dt)
    if rule is not None or np_dt.kind == "V":
        raise _Bad(f"ptoc run: --read {show(spec)}: {rule or f'{np_dt} is raw bytes'}")
    return np_dt


def _reads(m: Machine, reads: list[Read]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for r in reads:
        if r.key in out:
            raise _Bad(f"ptoc run: --read names address 0x{r.addr:x} twice")
        try:
            out[r.key] = m.read_gm(r.addr, r.dtype, r.shape)
        except Error as e:
            raise _Bad(f"ptoc run: --read 0x{r.addr:x}: {e}") from None
    return out


def _save(
    m: Machine, path: str, regions: list[tuple[int, np.ndarray]], reads: dict[str, np.ndarray]
) -> None:
    out: dict[str, np.ndarray] = {}
    for name, view in m.tiles().items():
        out[name] = view.values
        out[f"{name}.defined"] = view.defined
    out["status"] = m.status
    for addr, arr in regions:
        out[f"gm@0x{addr:x}"] = m.read_gm(addr, arr.dtype, arr.shape)
    out.update(reads)  # an explicit --read of a --gm address wins
    try:
        with open(path, "wb") as f:
            np.savez(f, **out)  # type: ignore[arg-type]
    except OSError as e:
        raise _Bad(f"ptoc run: cannot write {path}: {e.strerror or e}") from None
    except ValueError as e:  # an embedded NUL byte in the name
        raise _Bad(f"ptoc run: cannot write {path!r}: {e}") from None


def run_main(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The ``ptoc run`` command; returns the exit status and never raises for bad input."""
    out = out or sys.stdout
    err = err or sys.stderr
    args_in = list(argv)
    if args_in[:1] == ["run"]:
        args_in = args_in[1:]
    try:
        try:
            args = _parser().parse_args(args_in)
        except SystemExit as e:  # --help
            return int(e.code or 0)
        try:
            config = MachineConfig.parse(args.machine)
        except Error as e:
            raise _Bad(f"ptoc run: --machine: {e}") from None
        reads = [parse_read(r) for r in args.read]
        program = load_program(args.file)
        try:
            m = Machine(config)
        except Error as e:
            raise _Bad(f"ptoc run: --machine: {e}") from None
        _set_gprs(m, args.gpr)
        regions = _place_gm(m, args.gm)
        try:
            report = m.run(program, trace=args.trace)
        except MachineFault as f:
            print(f"{args.file}: {f}", file=err)
            return EXIT_FAULT
        if report.trace is not None:
            print(report.trace.text(), file=out)
        status = " ".join(f"PE{pe}:{status_text(int(s))}" for pe, s in enumerate(m.status))
        ran = count_text(report.bundles, report.scalar_blocks)
        print(f"{args.file}: ran {ran}; status {status}", file=out)
        values = _reads(m, reads)
        for key, a in values.items():
            print(f"{key}: {a.dtype} {a.shape}", file=out)
            print(np.array2string(a, threshold=64, edgeitems=3, precision=6), file=out)
        if args.save:
            _save(m, args.save, regions, values)
        return EXIT_OK
    except _Bad as e:
        print(str(e), file=err)
        return EXIT_BAD_INPUT
