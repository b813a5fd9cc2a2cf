"""Scalar instructions of standard blocks (``BSTART.STD``): ALU, BRU, AGU and FSU forms.

Semantics from ``asl/scalar/model/alu/semantics.asl`` (``ScalarBinary``,
``ScalarBinaryW``, ``ScalarDivideSigned`` ...), ``asl/scalar/model/bru/semantics.asl``
(``ConditionHolds``, ``ExecuteCompare``, ``ExecuteSetCommit``, ``SetReturnAddress``) and
the dispatch units under ``asl/scalar/model/dispatch/`` (which immediate each form
reads, which SrcRType decoding it uses). All arithmetic is 64-bit two's complement and
wraps; a signed field is sign-extended from its width and an unsigned one
zero-extended (``ScalarDecodedWord``, from the catalog's FieldDefs). The AGU forms are in
:mod:`ptoc.runtime.agu`, the floating-point (FSU) forms in :mod:`ptoc.runtime.fsu`.

Every PE runs the instruction on its own GPR file (all PEs at once, vectorised).
Register codes (``asl/scalar/model/types/operands.asl``): sources 0..23 are GPRs,
24..27 the temporary queue entries T#1..T#4 and 28..31 U#1..U#4 (read without consuming;
an entry never pushed raises ``Fault_IllegalInstruction``, ``ScalarSourceSelectorLegal``);
destinations 1..23 write GPRs, 30 pushes U, 31 pushes T, 0 and 24..29 discard. The 16-bit
``->t`` forms push T (``WriteCompressedTResult``). Each PE has its own queue values; the
validity of an entry is one per core, as the same instructions run on every PE.

A block runs on a :class:`ScalarContext`: copies of the GPRs and the queues, an undo log
of its GM stores and the block's condition; the machine publishes the GPRs and queues
and keeps the stores only when the whole block succeeded (a faulting block leaves no
effect).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ptoc.backend.encoding import command_form_values
from ptoc.backend.isa.fields import GPR_BY_NAME, GPR_COUNT
from ptoc.backend.isa.schema import CommandForm
from ptoc.backend.program import Scalar

from .faults import BundleControlFault, IllegalInstructionFault, MachineFault, unsupported
from .gm import Memory

_U = np.uint64
_M32 = _U(0xFFFFFFFF)
M64 = (1 << 64) - 1
RA = GPR_BY_NAME["ra"]


T_PUSH, U_PUSH = 31, 30


@dataclass
class ScalarContext:
    """The state one scalar block works on (published by the machine on success)."""

    gpr: np.ndarray
    gm: Memory
    gm_size: int
    #: ``(pes, 2, 4)`` temporary queue values (T, U; entry 0 newest) and ``(2, 4)`` validity
    squeue: np.ndarray | None = None
    squeue_valid: np.ndarray | None = None
    #: ``(flat byte index, previous bytes)`` of every store, to undo a faulting block
    undo: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    #: the condition SETC.* published (None: no setter ran)
    taken: bool | None = None
    #: a grid launch's access recorder (:class:`ptoc.runtime.grid.AccessLog`), or None
    log: Any = None
    #: how many accesses the log held before the block: a rollback forgets the block's
    #: (a parallel launch merges the logged writes; an undone store wrote nothing)
    log_mark: int = field(init=False, default=0)
    #: ``(pes,)`` sticky NV/DZ/OF/UF/NX status the FSU forms OR their flags into
    status: np.ndarray | None = None
    #: CORE_STATE[39:37]: the FSU forms' active rounding mode
    fp_rounding: int = 0

    def __post_init__(self) -> None:
        if self.log is not None:
            self.log_mark = len(self.log.records)
        if self.squeue is None:
            self.squeue = np.zeros((self.gpr.shape[0], 2, 4), _U)
        if self.squeue_valid is None:
            self.squeue_valid = np.zeros((2, 4), bool)
        if self.status is None:
            self.status = np.zeros(self.gpr.shape[0], np.uint8)

    def read(self, sel: int, what: str = "") -> np.ndarray:
        """``ReadScalarRegisterOperand``: a GPR or a queue entry (not consumed)."""
        if sel < GPR_COUNT:
            return self.gpr[:, sel]
        q, k = (0, sel - 24) if sel < 28 else (1, sel - 28)
        assert self.squeue is not None and self.squeue_valid is not None
        if not self.squeue_valid[q, k]:
            raise IllegalInstructionFault(
                f"{what} reads {'TU'[q]}#{k + 1} (selector {sel}), which holds no value "
                f"(ScalarSourceSelectorLegal)",
                what,
            )
        return self.squeue[:, q, k].copy()

    def write(self, sel: int, value: np.ndarray | np.uint64) -> None:
        """``WriteScalarDestination``: a GPR, a push to U (30) or T (31), or nothing."""
        if 0 < sel < GPR_COUNT:
            self.gpr[:, sel] = value
        elif sel in (T_PUSH, U_PUSH):
            assert self.squeue is not None and self.squeue_valid is not None
            q = 0 if sel == T_PUSH else 1  # PushTemporaryQueue
            self.squeue[:, q, 1:] = self.squeue[:, q, :-1].copy()
            self.squeue[:, q, 0] = value
            self.squeue_valid[q, 1:] = self.squeue_valid[q, :-1].copy()
            self.squeue_valid[q, 0] = True

    def rollback(self) -> None:
        for index, old in reversed(self.undo):
            self.gm[index] = old
        self.undo.clear()
        if self.log is not None:
            self.log.forget(self.log_mark)


ScalarStep = Callable[[ScalarContext], None]
Op = Callable[..., np.ndarray]


def _sext(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _word(value: int) -> np.uint64:
    return _U(value & M64)


def _s(a: np.ndarray) -> np.ndarray:
    return a.view(np.int64)


def _sext32(a: np.ndarray) -> np.ndarray:
    """``SignExtend{64}(a[31:0])``."""
    return (a & _M32).astype(np.uint32).view(np.int32).astype(np.int64).view(_U)


def _lift(fn: Callable[..., int]) -> Op:
    """A per-PE Python-integer operation as a vectorised one (for the rarely used,
    data-dependent forms: division, bit fields)."""

    def op(*xs: np.ndarray) -> np.ndarray:
        return np.array([fn(*map(int, v)) & M64 for v in zip(*xs, strict=True)], _U)

    return op


# ----------------------------------------------------------------- reference helpers


def signed(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def divide_signed(a: int, b: int) -> int:
    """``ScalarDivideSigned``: truncating; division by zero gives 0."""
    if b == 0:
        return 0
    sa, sb = signed(a), signed(b)
    q = abs(sa) // abs(sb)
    return (-q if (sa < 0) != (sb < 0) else q) & M64


def remainder_signed(a: int, b: int) -> int:
    """``ScalarRemainderSigned``: ``a - q * b``; by zero gives the dividend."""
    if b == 0:
        return a
    return (a - divide_signed(a, b) * b) & M64


def divide_unsigned(a: int, b: int) -> int:
    return 0 if b == 0 else a // b


def remainder_unsigned(a: int, b: int) -> int:
    return a if b == 0 else a % b


def _w(fn: Callable[[int, int], int], sign_in: bool) -> Callable[[int, int], int]:
    """The ``...W`` variant: 32-bit operands (sign- or zero-extended), result
    ``SignExtend{64}(r[31:0])`` (``ScalarDivideSignedW`` ...)."""

    def op(a: int, b: int) -> int:
        a, b = a & 0xFFFFFFFF, b & 0xFFFFFFFF
        if sign_in:
            a, b = _sext(a, 32) & M64, _sext(b, 32) & M64
        return _sext(fn(a, b), 32) & M64

    return op


def _rotr(v: int, n: int) -> int:
    return v if n == 0 else ((v >> n) | (v << (64 - n))) & M64


def extract_bitfield(v: int, width: int, offset: int, signed_result: bool) -> int:
    """``ExtractBitfield``: ``width`` bits of ``v`` rotated right by ``offset``."""
    r = _rotr(v, offset) & ((1 << width) - 1)
    return _sext(r, width) & M64 if signed_result else r


def count_bitfield(v: int, width: int, offset: int, kind: str) -> int:
    """``CountBitfield``: population (``bcnt``), leading (``clz``) or trailing zeros."""
    f = extract_bitfield(v, width, offset, False)
    if kind == "BCNT":
        return f.bit_count()
    if kind == "CLZ":
        return width - f.bit_length()
    return width if f == 0 else (f & -f).bit_length() - 1


def modify_bitfield(v: int, width: int, offset: int, set_bits: bool) -> int:
    """``ModifyBitfield``: set or clear ``width`` bits starting at bit ``offset``
    (wrapping past bit 63)."""
    mask = (1 << width) - 1
    r = _rotr(v, offset)
    r = (r | mask) if set_bits else (r & ~mask)
    return _rotr(r & M64, (64 - offset) % 64)


def reverse_bytes(v: int, width: int, offset: int) -> int:
    """``ReverseBitfieldBytes``: the bytes of the extracted field in reverse order; a
    width that is not a whole number of bytes gives 0."""
    if width % 8:
        return 0
    f = extract_bitfield(v, width, offset, False)
    return int.from_bytes(f.to_bytes(width // 8, "little"), "big")


# ----------------------------------------------------------------- SrcR modifiers


#: the right modifier of each SrcRType code (0..3) by the form's decoding
#: (``DecodeScalar*RightModifier``)
MODIFIERS: dict[str, tuple[str | None, ...]] = {
    "binary": ("sw", "uw", "neg", None),
    "logical": ("sw", "uw", "not", None),
    "compare": (None, "sw", "uw", None),  # ApplyRestrictedCompareModifier
    "compare-logical": (None, "sw", "uw", "not"),
    "address": (None, "sw", "uw", "neg"),
    "select": (None, None, None, "neg"),  # ApplySelectModifier
}


def _modify(r: np.ndarray, code: int, decoding: str) -> np.ndarray:
    """``ApplyScalarRightModifier`` after the form's SrcRType decoding
    (``DecodeScalar*RightModifier``): ``sw`` sign-extends r[31:0], ``uw`` zero-extends
    it, ``negnot`` negates (arithmetic) or inverts (logical) it."""
    kind = MODIFIERS[decoding][code & 3]
    if kind == "sw":
        return _sext32(r)
    if kind == "uw":
        return r & _M32
    if kind == "neg":
        return _U(0) - r
    if kind == "not":
        return ~r
    return r


# ----------------------------------------------------------------- forms

_BINARY = {"ADD": np.add, "SUB": np.subtract, "AND": np.bitwise_and, "OR": np.bitwise_or,
           "XOR": np.bitwise_xor}  # fmt: skip


def _shift(kind: str, bits: int) -> Op:
    mask = _U(bits - 1)

    def op(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        n = b & mask
        if bits == 32:
            a32 = a & _M32
            if kind == "SLL":
                return _sext32(a32 << n)
            if kind == "SRL":
                return _sext32(a32 >> n)
            return _sext32((_sext32(a32).view(np.int64) >> n.astype(np.int64)).view(_U))
        if kind == "SLL":
            return a << n
        if kind == "SRL":
            return a >> n
        return (_s(a) >> n.astype(np.int64)).view(_U)

    return op


def _pick(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.where(cond, a, b), _U)


def _binary(name: str, word: bool) -> Op:
    """``ScalarBinary`` / ``ScalarBinaryW`` of a two-source operation."""
    if name in _BINARY:
        fn = _BINARY[name]
        if word:
            return lambda a, b: _sext32(fn(a, b))
        return fn
    if name in ("SLL", "SRL", "SRA"):
        return _shift(name, 32 if word else 64)
    if name == "MIN":
        return lambda a, b: _pick(_s(a) < _s(b), a, b)
    if name == "MINU":
        return lambda a, b: _pick(a < b, a, b)
    if name == "MAX":
        return lambda a, b: _pick(_s(a) > _s(b), a, b)
    if name == "MAXU":
        return lambda a, b: _pick(a > b, a, b)
    raise AssertionError(name)  # pragma: no cover


_CONDITIONS: dict[str, Op] = {
    "EQ": lambda a, b: a == b,
    "NE": lambda a, b: a != b,
    "LT": lambda a, b: _s(a) < _s(b),
    "GE": lambda a, b: _s(a) >= _s(b),
    "LTU": lambda a, b: a < b,
    "GEU": lambda a, b: a >= b,
    "AND": lambda a, b: (a & b) != 0,  # ExecuteCompareLogical
    "OR": lambda a, b: (a | b) != 0,
}

_DIVIDE: dict[str, Callable[[int, int], int]] = {
    "DIV": divide_signed,
    "DIVU": divide_unsigned,
    "REM": remainder_signed,
    "REMU": remainder_unsigned,
    "DIVW": _w(divide_signed, True),
    "DIVUW": _w(divide_unsigned, False),
    "REMW": _w(remainder_signed, True),
    "REMUW": _w(remainder_unsigned, False),
}


@dataclass(frozen=True)
class Decoded:
    """One scalar command with its catalog form: raw fields and their decoded words."""

    command: Scalar
    form: CommandForm
    fields: dict[str, int]
    #: byte address of the instruction in the program
    pc: int

    @property
    def name(self) -> str:
        return self.command.mnemonic.lower()

    def word(self, name: str) -> int:
        """``ScalarDecodedWord``: the field sign- or zero-extended to 64 bits."""
        fd = self.form.field(name)
        raw = self.fields.get(name, 0)  # a signed field holds its negative value
        return raw & M64 if fd.signed else raw & ((1 << fd.width) - 1)

    def has(self, name: str) -> bool:
        return any(fd.name == name for fd in self.form.fields)

    def source(self, name: str) -> int:
        """The Reg5 selector of a source field (``t#1`` forms: T#1, selector 24)."""
        if name in ("SrcL", "SrcR") and not self.has(name):
            return 24
        return self.fields.get(name, 0)

    def destination(self, name: str = "RegDst") -> int | None:
        """The selector a result goes to (the ``->t`` forms push T); None when the
        encoding discards it."""
        if not self.has(name):
            return T_PUSH
        rd = self.fields.get(name, 0)
        return rd if 0 < rd < GPR_COUNT or rd in (T_PUSH, U_PUSH) else None


def decode(c: Scalar, pc: int = 0) -> Decoded:
    form, values = command_form_values(c)
    return Decoded(c, form, values, pc)


def _write(rd: int | None, fn: Callable[[ScalarContext], np.ndarray]) -> ScalarStep:
    """The step computing ``fn`` (every source read first) and publishing it to ``rd``;
    a discarded result is still computed, so an unreadable source still faults."""

    def step(ctx: ScalarContext) -> None:
        value = fn(ctx)
        if rd is not None:
            ctx.write(rd, value)

    return step


def _reg_reg(
    d: Decoded, op: Op, modifier: str | None = None, shift: bool = False
) -> ScalarStep:
    a, b = d.source("SrcL"), d.source("SrcR")
    code = d.fields.get("SrcRType", 0)
    sh = _U(d.fields.get("shamt", 0) & 63) if shift else None
    rd = d.destination()

    name = d.name

    def value(ctx: ScalarContext) -> np.ndarray:
        left = ctx.read(a, name)
        right = ctx.read(b, name)
        if modifier is not None:
            right = _modify(right, code, modifier)
        if sh is not None:
            right = right << sh
        return op(left, right)

    return _write(rd, value)


def _filled(v: np.uint64) -> Callable[[ScalarContext], np.ndarray]:
    """The value ``v`` on every PE of a context: one read-only array per PE count, made
    once (an operation never writes its operands; the GPR write copies)."""
    made: dict[int, np.ndarray] = {}

    def on_every_pe(ctx: ScalarContext) -> np.ndarray:
        pes = ctx.gpr.shape[0]
        a = made.get(pes)
        if a is None:
            a = made[pes] = np.full(pes, v, _U)
            a.flags.writeable = False
        return a

    return on_every_pe


def _reg_imm(d: Decoded, op: Op, imm: int) -> ScalarStep:
    a = d.source("SrcL")
    v = _filled(_word(imm))
    rd, name = d.destination(), d.name
    return _write(rd, lambda ctx: op(ctx.read(a, name), v(ctx)))


def _const(d: Decoded, value: int, rd: int | None) -> ScalarStep:
    return _write(rd, _filled(_word(value)))


def _immediate_name(d: Decoded) -> str:
    (name,) = [fd.name for fd in d.form.fields if "imm" in fd.name]
    return name


def _compare(d: Decoded, m: str) -> Op:
    cond = m.split(".")[1]
    base = cond[:-1] if cond.endswith("I") else cond
    test = _CONDITIONS[base]
    return lambda a, b: test(a, b).astype(_U)


def _setc(d: Decoded, m: str) -> ScalarStep:
    """``ExecuteSetCommit``: the block's condition; every PE must agree (the condition
    is one per core, the PEs each evaluate it on their own GPRs)."""
    cond = m.split(".")[-1]
    immediate = cond.endswith("I")
    test = _CONDITIONS[cond[:-1] if immediate else cond]
    a = d.source("SrcL")
    if immediate:
        # ExecuteDecodedSetCommitImmediate: the immediate shifted left by shamt
        v = _word(d.word(_immediate_name(d)) << (d.fields.get("shamt", 0) & 63))
        right: Callable[[ScalarContext], np.ndarray] = _filled(v)
    else:
        b = d.source("SrcR")
        code = d.fields.get("SrcRType", 0)
        decoding = "compare-logical" if cond in ("AND", "OR") else "compare"
        if m.startswith("C."):
            right = lambda ctx: ctx.read(b, name)  # noqa: E731
        else:
            right = lambda ctx: _modify(ctx.read(b, name), code, decoding)  # noqa: E731
    name = d.name

    def step(ctx: ScalarContext) -> None:
        holds = test(ctx.read(a, name), right(ctx))
        agree = np.count_nonzero(holds)
        if 0 < agree < len(holds):
            per_pe = ", ".join(f"PE{p} {'true' if h else 'false'}" for p, h in enumerate(holds))
            raise BundleControlFault(
                f"{name} evaluates differently on the PEs ({per_pe}); a block has one "
                f"condition, so every PE must agree",
                name,
            )
        ctx.taken = bool(holds[0])

    return step


def compile_scalar(c: Scalar, pc: int = 0) -> ScalarStep:
    """A function applying ``c`` (at byte address ``pc``) to a :class:`ScalarContext`.

    Raises a MachineFault (unsupported scalar temporaries or form) at compile time,
    i.e. before the block has any effect.
    """
    from .agu import compile_agu, is_agu
    from .fsu import compile_fsu, is_fsu

    d = decode(c, pc)
    m = c.mnemonic
    if is_agu(m):
        return compile_agu(d)
    if is_fsu(m):
        return compile_fsu(d)
    if m in ("ADD", "SUB", "ADDW", "SUBW", "AND", "OR", "XOR", "ANDW", "ORW", "XORW"):
        base, word = (
            (m[:-1], True) if m in ("ADDW", "SUBW", "ANDW", "ORW", "XORW") else (m, False)
        )
        modifier = "binary" if base in ("ADD", "SUB") else "logical"
        return _reg_reg(d, _binary(base, word), modifier, shift=True)
    if m in ("SLL", "SRL", "SRA", "SLLW", "SRLW", "SRAW", "MIN", "MINU", "MAX", "MAXU"):
        word = m.endswith("W") and m[:3] in ("SLL", "SRL", "SRA")
        return _reg_reg(d, _binary(m[:3] if word else m, word))
    if m in ("ADDI", "ADDIW", "SUBI", "SUBIW", "ANDI", "ANDIW", "ORI", "ORIW", "XORI", "XORIW"):
        word = m.endswith("W")
        base = m[: -2 if word else -1]
        return _reg_imm(d, _binary(base, word), d.word(_immediate_name(d)))
    if m in ("SLLI", "SRLI", "SRAI", "SLLIW", "SRLIW", "SRAIW"):
        word = m.endswith("W")
        return _reg_imm(d, _binary(m[:3], word), d.word("shamt"))
    if m in ("MUL", "MULU"):
        return _reg_reg(d, np.multiply)  # MultiplyWord: the low 64 bits
    if m in ("MULW", "MULUW"):
        return _reg_reg(d, lambda a, b: _sext32((a & _M32) * (b & _M32)))  # ScalarMultiplyW
    if m in _DIVIDE:
        return _reg_reg(d, _lift(_DIVIDE[m]))
    if m in ("MADD", "MADDW"):
        src_d, rd = d.source("SrcD"), d.destination()
        a, b = d.source("SrcL"), d.source("SrcR")

        def madd(ctx: ScalarContext) -> np.ndarray:
            p = ctx.read(a, d.name) * ctx.read(b, d.name) + ctx.read(src_d, d.name)
            return _sext32(p) if m == "MADDW" else p  # ScalarMultiplyAddW

        return _write(rd, madd)
    if m in ("BXS", "BXU", "CLZ", "CTZ", "BCNT", "BIC", "BIS", "REV"):
        return _bitfield(d, m)
    if m == "CSEL":
        p, a, b = d.source("SrcP"), d.source("SrcL"), d.source("SrcR")
        code = d.fields.get("SrcRType", 0)
        n = d.name
        return _write(
            d.destination(),
            lambda ctx: _pick(
                ctx.read(p, n) != 0, ctx.read(a, n), _modify(ctx.read(b, n), code, "select")
            ),
        )
    if m == "LUI":
        return _const(d, _sext(d.fields.get("imm20", 0), 20) << 12, d.destination())
    if m == "C.MOVI":
        return _const(d, d.word("simm5"), d.destination())
    if m == "C.MOVR":
        a = d.source("SrcL")
        return _write(d.destination(), lambda ctx: ctx.read(a, d.name).copy())
    if m in ("C.ADD", "C.SUB", "C.AND", "C.OR"):
        return _reg_reg(d, _binary(m[2:], False))  # ExecuteDecodedCompressedBinary
    if m == "C.ADDI":
        return _reg_imm(d, np.add, d.word("simm5"))
    if m in ("C.SLLI", "C.SRLI"):
        return _reg_imm(d, _binary(m[2:5], False), d.word("uimm5"))  # T#1 shifted
    if m.startswith(("C.SEXT.", "C.ZEXT.")):
        bits = {"B": 8, "H": 16, "W": 32}[m[-1]]  # ExtendScalarValue
        if m[2] == "S":
            ext = _lift(lambda v: _sext(v, bits) & M64)
        else:
            ext = _lift(lambda v: v & ((1 << bits) - 1))
        return _reg_imm(d, lambda a, b: ext(a), 0)
    if m in ("C.CMP.EQI", "C.CMP.NEI"):
        return _reg_imm(d, _compare(d, m[2:]), d.word("simm5"))  # T#1 compared, ->t
    if m in ("SETRET", "C.SETRET"):
        # SetReturnAddress: ra = the instruction's address + (imm << 1)
        imm = d.word("imm20" if m == "SETRET" else "uimm5")
        return _const(d, pc + (imm << 1), RA)
    if m.startswith("CMP."):
        cond = m.split(".")[1]
        op = _compare(d, m)
        if cond.endswith("I"):
            return _reg_imm(d, op, d.word(_immediate_name(d)))
        decoding = "compare-logical" if cond in ("AND", "OR") else "compare"
        return _reg_reg(d, op, decoding)
    if m.startswith(("SETC.", "C.SETC.")):
        return _setc(d, m)
    raise unsupported(f"scalar instruction {d.name}", d.name)


def _bitfield(d: Decoded, m: str) -> ScalarStep:
    width = (d.fields.get("imml", 0) & 63) + 1  # ScalarDecodedBitfieldWidth
    offset = d.fields.get("immr" if m == "REV" else "imms", 0) & 63
    fn: Callable[[int], int]
    if m in ("BXS", "BXU"):
        fn = lambda v: extract_bitfield(v, width, offset, m == "BXS")  # noqa: E731
    elif m in ("CLZ", "CTZ", "BCNT"):
        fn = lambda v: count_bitfield(v, width, offset, m)  # noqa: E731
    elif m in ("BIC", "BIS"):
        fn = lambda v: modify_bitfield(v, width, offset, m == "BIS")  # noqa: E731
    else:
        fn = lambda v: reverse_bytes(v, width, offset)  # noqa: E731
    a = d.source("SrcL")
    op = _lift(fn)
    return _write(d.destination(), lambda ctx: op(ctx.read(a, d.name)))


def is_condition_setter(c: Scalar) -> bool:
    """``IsCommitConditionSetter``: SETC.* and C.SETC.EQ/NE."""
    return c.mnemonic.startswith(("SETC.", "C.SETC.")) and c.mnemonic != "C.SETC.TGT"


def run_scalar_block(ctx: ScalarContext, steps: list[ScalarStep]) -> int:
    """Apply compiled steps to ``ctx``; returns -1, or raises the first fault after
    undoing the block's stores (the caller adds where it happened from
    ``fault.step``)."""
    # the zero register always reads 0: ScalarContext.write never writes it, and no
    # operation writes into the operands it reads (GPRs are read as views)
    with np.errstate(over="ignore"):
        for i, step in enumerate(steps):
            try:
                step(ctx)
            except MachineFault as f:
                ctx.rollback()
                f.step = i
                raise
    return -1


__all__ = [
    "MachineFault",
    "ScalarContext",
    "ScalarStep",
    "compile_scalar",
    "is_condition_setter",
    "run_scalar_block",
]
