"""The ``ptoc`` command line.

Exit status: 0 success, 1 verification mismatch, 2 bad input, 3 machine fault, 130
interrupted (Ctrl-C, or a KeyboardInterrupt raised by a kernel file).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ptoc.backend.errors import Error
from ptoc.errors import ReferenceFault, VerifyError
from ptoc.runtime.faults import MachineFault

if TYPE_CHECKING:
    from ptoc.backend.isa import OpDef

# the assembler, the encoder and the catalog are imported by the commands that use them,
# so ``ptoc --help`` stays fast

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT, EXIT_FAULT, EXIT_INTERRUPT = 0, 1, 2, 3, 130


class _Usage(Exception):
    """Bad command-line input; the message is printed as is."""


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise _Usage(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:  # an embedded NUL byte in the name
        raise _Usage(f"{path!r}: cannot read: {e}") from None


def _write(path: str, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as e:
        raise _Usage(f"{path}: cannot write: {e.strerror or e}") from None
    except ValueError as e:
        raise _Usage(f"{path!r}: cannot write: {e}") from None


def _load_program(path: str):  # -> Program
    from ptoc.backend import asm, encoding

    data = _read(path)
    if path.endswith(".s"):
        try:
            return asm.parse(data.decode("utf-8"), file=path)
        except UnicodeDecodeError:
            raise _Usage(f"{path}: not UTF-8 text") from None
    try:
        return encoding.decode(data)
    except Error as e:
        raise _Usage(f"{path}: {e}") from None


def cmd_asm(args: argparse.Namespace) -> int:
    from ptoc.backend import encoding

    program = _load_program(args.file)
    out = args.output or str(Path(args.file).with_suffix(".bin"))
    data = encoding.encode(program)
    _write(out, data)
    if args.verbose:
        print(f"{out}: {len(program)} commands, {program.count_text()}, {len(data)} bytes")
    return EXIT_OK


def cmd_disasm(args: argparse.Namespace) -> int:
    from ptoc.backend import asm, encoding

    data = _read(args.file)
    try:
        program = encoding.decode(data)
    except Error as e:
        raise _Usage(f"{args.file}: {e}") from None
    if args.offsets:
        for off, c in zip(program.offsets, program.commands, strict=True):
            print(f"{off:08x}  {asm.format_command(c, note=True)}")
    else:
        sys.stdout.write(asm.format_program(program))
    return EXIT_OK


def _types(o: OpDef) -> str:
    return ", ".join(t.name for t in sorted(o.dtypes)) or "-"


def describe_op(o: OpDef) -> str:
    """The catalog row of one operation as readable text."""
    sel = f"Mode {o.mode} Function {o.function} (selector {o.selector_text})"
    if o.mode is None:
        sel = f"{o.family} Function {o.function}"
    spelled = o.mnemonic if o.mode is not None else "DataType"
    lines = [
        f"{o.mnemonic}: {o.summary}",
        f"  engine      {o.engine}   spelling {o.bstart} {spelled}",
        f"  selector    {sel}",
        f"  types       {_types(o)}",
        f"  types from  {o.dtype_source}",
    ]
    for what, ts in o.type_rules.items():
        lines.append(f"  {what + ' types':<11} {', '.join(t.name for t in sorted(ts)) or '-'}")
    if o.type_pairs:
        pairs = ", ".join(f"({a.name},{b.name})" for a, b in sorted(o.type_pairs))
        lines.append(f"  type pairs  {pairs}")
    lines.append(f"  sources     {', '.join(o.sources) or '-'}")
    lines.append(f"  dests       {', '.join(o.destinations) or '-'}")
    for d in o.dims:
        how = "required" if d.required else f"default {d.default}"
        lines.append(f"  LB{d.lb}         {d.meaning} ({how})")
    if o.ior_legal:
        for s in o.ior:
            dflt = "derived" if s.default is None else f"0x{s.default:x}"
            lines.append(f"  B.IOR.{s.field} {s.meaning} (omitted: {dflt})")
    else:
        lines.append("  B.IOR       illegal")
    lines.append(f"  B.IOS       {'allowed' if o.ios_legal else 'illegal'}")
    datr = ", ".join(sorted(o.datr_fields)) or "none (all fields zero)"
    need = "mandatory" if o.datr_required else "optional"
    lines.append(f"  B.DATR      {need}; nonzero fields: {datr}")
    lines.append("  bundle form")
    lines.extend(f"    {b}" for b in o.block)
    if o.defaults:
        lines.append("  defaults")
        lines.extend(f"    - {d}" for d in o.defaults)
    if o.seed_notes:
        lines.append("  seed rules (override the 0.58.3 catalog)")
        lines.extend(f"    - {n}" for n in o.seed_notes)
    return "\n".join(lines)


def cmd_isa(args: argparse.Namespace) -> int:
    from ptoc.backend.isa import OPS, op

    if args.mnemonic:
        try:
            o = op(args.mnemonic)
        except KeyError:
            close = difflib.get_close_matches(args.mnemonic.upper(), OPS, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise _Usage(f"unknown operation {args.mnemonic!r}{hint}") from None
        print(describe_op(o))
        return EXIT_OK
    for o in OPS.values():
        types = _types(o)
        if len(types) > 60:
            types = types[:57] + "..."
        print(f"{o.mnemonic:<18} {o.engine:<5} {o.selector_text}  {types}")
    return EXIT_OK


def cmd_run(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from ptoc.runtime.cli import run_main

    return run_main(list(rest))


def run_help() -> int:
    """``ptoc run --help``: both forms, a Python kernel and a bundle program."""
    from ptoc.cli_kernel import run_kernel_parser

    print(run_kernel_parser().format_help())
    print("ptoc run also runs a bundle program as it is:\n", flush=True)
    return cmd_run(argparse.Namespace(), ["--help"])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptoc", description="PTO tile kernel compiler and machine")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("asm", help="assemble bundle text into binary parcels")
    a.add_argument("file")
    a.add_argument("-o", "--output")
    a.add_argument("-v", "--verbose", action="store_true")
    a.set_defaults(func=cmd_asm)
    d = sub.add_parser("disasm", help="print a binary as canonical bundle text")
    d.add_argument("file")
    d.add_argument("--offsets", action="store_true", help="prefix each command with its offset")
    d.set_defaults(func=cmd_disasm)
    i = sub.add_parser("isa", help="print the instruction catalog or one operation's row")
    i.add_argument("mnemonic", nargs="?")
    i.set_defaults(func=cmd_isa)
    r = sub.add_parser(
        "run",
        help="run a bundle program (or FILE.py::KERNEL) on the machine model",
        add_help=False,
    )
    r.set_defaults(func=None)
    from ptoc.cli_kernel import add_commands

    add_commands(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["run"]:
            from ptoc.cli_kernel import cmd_run_kernel, is_kernel_spec

            if any(is_kernel_spec(a) for a in argv[1:2]):
                return cmd_run_kernel(argv[1:])
            if argv[1:2] in (["-h"], ["--help"]):
                return run_help()
            return cmd_run(argparse.Namespace(), argv[1:])
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except _Usage as e:
        print(f"ptoc: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except VerifyError as e:  # the first differing elements, with both bit patterns
        print("\n".join([str(e), *getattr(e, "__notes__", [])]), file=sys.stderr)
        return EXIT_MISMATCH
    except ReferenceFault as e:  # the reference met the rule the machine would fault on
        print(str(e), file=sys.stderr)
        return EXIT_FAULT
    except MachineFault as e:  # bundle, operation, rule (and the kernel line, if known)
        print("\n".join([str(e), *getattr(e, "__notes__", [])]), file=sys.stderr)
        return EXIT_FAULT
    except Error as e:  # AsmError / DecodeError already name FILE:LINE or the offset
        print(str(e), file=sys.stderr)
        return EXIT_BAD_INPUT
    except SystemExit as e:  # argparse: --help (0) or usage errors (2)
        return int(e.code or 0)
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt as e:  # Ctrl-C, or a kernel file raising it (names the place)
        print(f"ptoc: {e}" if str(e) else "ptoc: interrupted", file=sys.stderr)
        return EXIT_INTERRUPT
    except OSError as e:  # a path a command could not open or write (-o DIR, ...)
        where = f"{e.filename}: " if e.filename else ""
        print(f"ptoc: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
