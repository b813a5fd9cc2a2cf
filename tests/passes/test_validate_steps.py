"""The validator's replay of scalar instructions: each instruction's effect is decoded
once per command (``_step``) and must equal the literal rule that reads the instruction's
fields by name on every execution."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import scalar_form
from ptoc.backend.isa.fields import GPR_NAMES
from ptoc.backend.program import Scalar
from ptoc.passes.allocate.gprs import Binding
from ptoc.passes.allocate.gprs import Scalar as Sym
from ptoc.passes.emit import Emitted, IntentTable
from ptoc.passes.validate import MASK64, TABLE, _add, _ldi, _Replay, _right, _times

TABLE_BINDINGS = (Binding(0, 0), Binding(1, 64, True), Binding(2, 0))


def _by_name(r: _Replay, c: Scalar) -> None:
    """The literal rule: the instruction's fields read by name every time it runs."""
    f = dict(c.fields)
    rd = f.get("RegDst", 0)
    m = c.mnemonic
    val: Sym | None
    if m == "C.MOVI":
        val = Sym(f["simm5"] & MASK64)
    elif m == "LUI":
        imm = f["imm20"] - (1 << 20) if f["imm20"] >> 19 else f["imm20"]
        val = Sym((imm << 12) & MASK64)
    elif m == "ADDI":
        val = _add(r.gpr.get(f["SrcL"]), Sym(f["uimm12"]))
    elif m in ("ADD", "SUB"):
        right = _right(r.gpr.get(f["SrcR"]), f.get("SrcRType", 0), f.get("shamt", 0))
        if m == "SUB":
            right = _times(right, Sym(MASK64))
        val = _add(r.gpr.get(f["SrcL"]), right)
    elif m == "SLLI":
        val = _times(r.gpr.get(f["SrcL"]), Sym((1 << f["shamt"]) & MASK64))
    elif m == "MUL":
        val = _times(r.gpr.get(f["SrcL"]), r.gpr.get(f["SrcR"]))
    elif m == "LDI" and r.gpr.get(f["SrcL"]) == TABLE and _ldi(f) in r.table:
        b = r.table[_ldi(f)]
        val = Sym(0, None, ((f"param{b.tensor}", 1),)) if b.scalar else Sym(0, b)
    else:
        val = None
    if rd != 0:
        r.gpr[rd] = val


def _replay() -> _Replay:
    abi = {b: GPR_NAMES[10 + k] for k, b in enumerate(TABLE_BINDINGS)}
    em = Emitted(None, IntentTable(), (), 0, "k", abi, table=TABLE_BINDINGS)  # type: ignore[arg-type]
    return _Replay(em, 4, 8, 1 << 20)


#: constants in every binade (0, 1, small, around 2**31 and 2**32, the top binade)
_VALUES = st.one_of(
    st.sampled_from([0, 1, 4095, 4096, 2**31 - 1, 2**31, 2**32 - 1, 2**63, 2**64 - 1]),
    st.integers(0, 2**12).map(lambda e: 1 << (e % 64)),
    st.integers(0, 2**64 - 1),
)
_REG = st.integers(0, len(GPR_NAMES) - 1)
_SYMS = st.one_of(
    st.none(),
    st.just(TABLE),
    _VALUES.map(Sym),
    st.builds(lambda v, k: Sym(v, TABLE_BINDINGS[k]), _VALUES, st.integers(0, 2)),
    st.builds(lambda v, c: Sym(v, None, (("i0", c),)), _VALUES, st.integers(1, 2**64 - 1)),
    st.builds(lambda c: Sym(0, None, (("i0", 1), ("param1", c))), st.integers(1, 7)),
)


@st.composite
def _instruction(draw: st.DrawFn) -> Scalar:
    name = draw(
        st.sampled_from(
            ["C.MOVI", "LUI", "ADDI", "ADD", "SUB", "SLLI", "MUL", "LDI", "MIN", "SETC.LT"]
        )
    )
    form = scalar_form(name)
    fields = []
    for fd in form.fields:
        if fd.name in ("RegDst", "SrcL", "SrcR"):
            v = draw(_REG)
        elif fd.name == "SrcRType":
            v = draw(st.integers(0, 3))
        elif fd.name == "shamt":
            v = draw(st.integers(0, 63))
        elif fd.name == "simm12" and name == "LDI":
            v = draw(st.integers(0, 4))
        else:
            v = draw(st.integers(0, (1 << 20) - 1)) % (1 << min(getattr(fd, "width", 20), 20))
        fields.append((fd.name, v))
    return Scalar(form.mnemonic, tuple(fields))


@settings(max_examples=400)
@given(
    st.lists(_SYMS, min_size=len(GPR_NAMES), max_size=len(GPR_NAMES)),
    st.lists(_instruction(), max_size=12),
)
def test_decoded_steps_replay_as_the_fields_read_by_name(
    regs: list[Sym | None], program: list[Scalar]
) -> None:
    """Constants in every binade, addresses, polynomials, unknown registers and the
    argument table's register; every instruction the replay knows (and two it does not)
    with every SrcRType and shift, run twice (the second run from the decoded step):
    the registers after each instruction equal the literal rule's. Mutation-checked:
    dropping an address base in the ADDI fast path, or SUB replayed as ADD, fails."""
    fast, slow = _replay(), _replay()
    for reg, value in enumerate(regs[1:], 1):  # (register 0 is zero)
        fast.gpr[reg] = slow.gpr[reg] = value
    for c in program * 2:
        fast.scalar(c)
        _by_name(slow, c)
        assert fast.gpr == slow.gpr
