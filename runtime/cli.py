"""``ptoc run``: execute an assembly (``.s``) or binary program on the machine model.

    ptoc run FILE.s|FILE.bin [--machine depth=4,capacity=16384] [--gpr a0=0x1000]
             [--gpr 2:a0=0x2000] [--gm 0x1000=in.npy] [--save out.npz] [--trace]

Exit status: 0 success, 2 bad command-line input (unreadable file, assembly or decode
error, bad option), 3 machine fault (one line: bundle index, operation and rule).

``--save`` writes an ``.npz`` holding, for every tile in a queue at the end, its
relative name (``T#1``...) -> ``(pes, ValidRow, ValidCol)`` values in the DataType
carrier (zeros on PEs outside its allocation mask; bool for predicate tiles; ml_dtypes
carriers such as bfloat16 load back as raw void bytes -- ``.view()`` them),
``<name>.defined`` (bool, same shape), ``status`` (uint8 per PE) and ``gm@0x<addr>`` for
every ``--gm`` region read back with its input's dtype and shape.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

import numpy as np

from ptoc.backend import asm, encoding
from ptoc.backend.errors import Error
from ptoc.backend.isa.fields import status_text
from ptoc.backend.program import Program, count_text

from .config import MachineConfig
from .faults import MachineFault
from .machine import Machine

EXIT_OK, EXIT_BAD_INPUT, EXIT_FAULT = 0, 2, 3


class _Bad(Exception):
    """Bad command-line input; the message is printed as is."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Bad(f"ptoc run: {message}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ptoc run", description="Run a PTO program on the machine model.")
    p.add_argument("file", help="FILE.s (assembly) or a binary of little-endian parcels")
    p.add_argument(
        "--machine", default="", help="machine parameters, e.g. depth=4,capacity=16384"
    )
    p.add_argument("--gpr", action="append", default=[], metavar="[PE:]REG=VALUE",
                   help="set a GPR on every PE, or on one PE with PE:REG=VALUE")  # fmt: skip
    p.add_argument("--gm", action="append", default=[], metavar="ADDR=FILE.npy",
                   help="place an array's raw bytes in global memory at ADDR")  # fmt: skip
    p.add_argument("--save", metavar="OUT.npz", help="save tiles, status and --gm regions")
    p.add_argument("--trace", action="store_true", help="print a per-bundle trace")
    return p


def load_program(path: str) -> Program:
    """Assemble ``.s`` text, decode anything else; ptoc errors become ``_Bad``."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise _Bad(f"{path}: cannot read: {e.strerror}") from None
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
        return int(text.strip(), 0)
    except ValueError:
        raise _Bad(f"ptoc run: {what} {text.strip()!r} is not an integer") from None


def _set_gprs(m: Machine, specs: list[str]) -> None:
    for spec in specs:
        target, sep, value = spec.partition("=")
        if not sep:
            raise _Bad(f"ptoc run: --gpr {spec!r} is not REG=VALUE or PE:REG=VALUE")
        pe_text, colon, reg = target.rpartition(":")
        pe = _int(pe_text, "PE") if colon else None
        try:
            m.set_gpr(reg.strip(), _int(value, "GPR value"), pe)
        except Error as e:
            raise _Bad(f"ptoc run: --gpr {spec!r}: {e}") from None


def _place_gm(m: Machine, specs: list[str]) -> list[tuple[int, np.ndarray]]:
    regions = []
    for spec in specs:
        addr_text, sep, path = spec.partition("=")
        if not sep:
            raise _Bad(f"ptoc run: --gm {spec!r} is not ADDR=FILE.npy")
        addr = _int(addr_text, "GM address")
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise _Bad(f"ptoc run: --gm {spec!r}: cannot load {path}: {e}") from None
        try:
            m.load_gm(addr, arr)
        except Error as e:
            raise _Bad(f"ptoc run: --gm {spec!r}: {e}") from None
        regions.append((addr, arr))
    return regions


def _save(m: Machine, path: str, regions: list[tuple[int, np.ndarray]]) -> None:
    out: dict[str, np.ndarray] = {}
    for name, view in m.tiles().items():
        out[name] = view.values
        out[f"{name}.defined"] = view.defined
    out["status"] = m.status
    for addr, arr in regions:
        out[f"gm@0x{addr:x}"] = m.read_gm(addr, arr.dtype, arr.shape)
    try:
        with open(path, "wb") as f:
            np.savez(f, **out)  # type: ignore[arg-type]
    except OSError as e:
        raise _Bad(f"ptoc run: cannot write {path}: {e.strerror}") from None


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
        program = load_program(args.file)
        m = Machine(config)
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
        if args.save:
            _save(m, args.save, regions)
        return EXIT_OK
    except _Bad as e:
        print(str(e), file=err)
        return EXIT_BAD_INPUT
