"""One wording per legality rule: the ``pto`` verifier and the executor say the same thing.

Each case breaks one rule of ``backend/isa/legality.py`` twice -- once as a ``pto`` op that
the verifier rejects, once as a bundle the executor rejects before any effect -- and both
must report exactly the sentence the rule function returns.
"""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.test import Test
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.asm import parse
from ptoc.backend.isa import TABLE, DataType, legality, op
from ptoc.dialects.pto import Pto
from ptoc.runtime import Machine, MachineConfig, MachineFault, TileLegalityFault

F32 = "!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>"


def _pto_rule(body: str) -> str:
    ctx = Context()
    for d in (Builtin, Test, Pto):
        ctx.load_dialect(d)
    module = Parser(ctx, body).parse_module()
    with pytest.raises(VerifyException) as info:
        module.verify()
    return str(info.value).splitlines()[0]


def _executor_rule(text: str) -> str:
    m = Machine(MachineConfig(gm_size=1 << 16))
    before = m.snapshot()
    with pytest.raises(MachineFault) as info:
        m.run(parse(text))
    assert m.snapshot() == before  # a rejected bundle leaves no trace
    assert type(info.value) is TileLegalityFault
    return info.value.rule


def _pto(op_text: str, *types: str) -> str:
    values = "\n".join(f'%s{i} = "test.op"() : () -> {t}' for i, t in enumerate(types))
    return f'{values}\n%c = "test.op"() : () -> !pto.gpr\n{op_text}\n'


_DIM64 = "B.DIM zero, 64, ->LB0\n"
_TWO = "B.IOT T#1, T#2, mask=1111, last, ->U<2KB>\n"
_ONE = "B.IOT T#1, mask=1111, last, ->U<2KB>\n"

CASES = {
    "binding counts": (
        _pto(f"%u = pto.tadd FP32 %s0 dims [64, 8, -1] mask 15 : ({F32}) -> {F32}", F32),
        "BSTART.VEC TADD, FP32\n" + _DIM64 + _ONE + "BSTOP\n",
        legality.binding_counts(op("TADD"), 1, 1),
    ),
    "DataType": (
        _pto(
            f"%u = pto.tand FP32 %s0, %s0 dims [64, 8, -1] mask 15 : ({F32}, {F32}) -> {F32}",
            F32,
        ),
        "BSTART.VEC TAND, FP32\n" + _DIM64 + _TWO + "BSTOP\n",
        legality.dtype(op("TAND"), DataType.FP32),
    ),
    "B.DIM required": (
        _pto(f"%u = pto.texp FP32 %s0 dims [-1, 8, -1] mask 15 : ({F32}) -> {F32}", F32),
        "BSTART.SFU TEXP, FP32\n" + _ONE + "BSTOP\n",
        legality.dims(op("TEXP"), (None, 8, None)),
    ),
    "B.DIM explicit zero": (
        _pto(f"%u = pto.texp FP32 %s0 dims [64, 0, -1] mask 15 : ({F32}) -> {F32}", F32),
        "BSTART.SFU TEXP, FP32\n" + _DIM64 + "B.DIM zero, 0, ->LB1\n" + _ONE + "BSTOP\n",
        legality.dims(op("TEXP"), (64, 0, None)),
    ),
    "B.DIM absent": (
        _pto(
            "%u = pto.tmrgsort FP32 %s0, %s0 dims [16, -1, -1] mask 15 : "
            "(!pto.tile<FP32, valid 1x8, phys 4x32, 512B>, "
            "!pto.tile<FP32, valid 1x8, phys 4x32, 512B>) -> "
            "!pto.tile<FP32, valid 1x16, phys 8x16, 512B>",
            "!pto.tile<FP32, valid 1x8, phys 4x32, 512B>",
        ),
        "BSTART.SFU TMRGSORT, FP32\nB.DIM zero, 16, ->LB0\n" + _TWO + "BSTOP\n",
        legality.dims(op("TMRGSORT"), (16, None, None)),
    ),
    "B.DATR applicability": (
        _pto(
            f"%u = pto.tadd FP32 %s0, %s0 dims [64, 8, -1] datr <rmode = RNE> mask 15 : "
            f"({F32}, {F32}) -> {F32}",
            F32,
        ),
        "BSTART.VEC TADD, FP32\nB.DATR RNE\n" + _DIM64 + _TWO + "BSTOP\n",
        legality.datr_fields(op("TADD"), {"RMode": 1}),
    ),
    "B.DATR required": (
        _pto(
            f"%q = pto.tquant FP32 %s0 dims [64, 8, -1] mask 15 : ({F32}) -> "
            "!pto.tile<S8, valid 8x64, phys 8x64, 512B>",
            F32,
        ),
        "BSTART.SFU TQUANT, FP32\n" + _DIM64 + _ONE + "BSTOP\n",
        legality.datr_fields(op("TQUANT"), None),
    ),
    "destination DataType": (
        _pto(
            f"%q = pto.tquant FP32 %s0 dims [64, 8, -1] datr <dtype = S16> mask 15 : "
            f"({F32}) -> !pto.tile<S16, valid 8x64, phys 8x64, 1KB>",
            F32,
        ),
        "BSTART.SFU TQUANT, FP32\nB.DATR S16\n" + _DIM64 + _ONE + "BSTOP\n",
        legality.destination_dtype(op("TQUANT"), DataType.S16),
    ),
    "B.IOR illegal": (
        _pto(
            f"%u = pto.tadd FP32 %s0, %s0 gpr(%c) dims [64, 8, -1] mask 15 : "
            f"({F32}, {F32}) -> {F32}",
            F32,
        ),
        "BSTART.VEC TADD, FP32\nB.IOR a0\n" + _DIM64 + _TWO + "BSTOP\n",
        legality.ior_slots(op("TADD"), True, (1,)),
    ),
    "B.IOR slot count": (
        _pto(
            f"%u = pto.tadds FP32 %s0 gpr(%c, %c) dims [64, 8, -1] mask 15 : ({F32}) -> {F32}",
            F32,
        ),
        "BSTART.VEC TADDS, FP32\nB.IOR a0, a1\n" + _DIM64 + _ONE + "BSTOP\n",
        legality.ior_slots(op("TADDS"), True, (1, 1)),
    ),
    "type pair": (
        _pto(
            "%u = pto.tcvt S8 %s0 dims [64, 8, -1] datr <dtype = E8M0> mask 15 : "
            "(!pto.tile<S8, valid 8x64, phys 8x64, 512B>) -> "
            "!pto.tile<E8M0, valid 8x64, phys 8x64, 512B>",
            "!pto.tile<S8, valid 8x64, phys 8x64, 512B>",
        ),
        "BSTART.VEC TCVT, S8\nB.DATR E8M0\n" + _DIM64 + _ONE + "BSTOP\n",
        legality.source_dtype_for(op("TCVT"), DataType.S8, DataType.E8M0),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_verifier_and_executor_share_the_rule_wording(case: str) -> None:
    pto_text, asm_text, rule = CASES[case]
    assert rule is not None  # the case really breaks the rule
    assert _pto_rule(pto_text) == rule
    assert _executor_rule(asm_text) == rule


def test_b_ios_wording_is_the_rule() -> None:
    # the pto dialect has no Shared operands, so only the executor meets this rule
    text = "BSTART.VEC TADD, FP32\nB.IOS S1, mask=1111\n" + _DIM64 + _TWO + "BSTOP\n"
    assert (
        _executor_rule(text)
        == legality.shared(op("TADD"), True)
        == ("B.IOS is illegal for TADD")
    )


def test_binding_grouping_is_checked_after_the_counts() -> None:
    tfma = op("TFMA")
    shape = TABLE["TFMA"].binding
    assert legality.binding_stream(tfma, shape, ((2, False), (1, True))) is None
    assert legality.binding_stream(tfma, shape, ((2, False),)) == legality.binding_counts(
        tfma, 2, 0
    )
    assert legality.binding_stream(tfma, shape, ((1, False), (2, True))) == (
        "TFMA takes the binding stream [2 src] [1 src, dst], not [1 src] [2 src, dst]"
    )
    sort = TABLE["TSORT"].binding
    assert sort.iots is None
    assert legality.binding_stream(op("TSORT"), sort, ((1, True), (0, True))) is None
    loose = ((1, True), (0, False), (0, True))
    assert legality.binding_stream(op("TSORT"), sort, loose) is None


def test_rules_hold_for_legal_operands() -> None:
    tadd = op("TADD")
    assert legality.binding_counts(tadd, 2, 1) is None
    assert legality.dtype(tadd, DataType.FP32) is None
    assert legality.dims(tadd, (64, None, None)) is None
    assert legality.datr_fields(tadd, None) is None
    assert legality.datr_fields(tadd, {"PadValueOrByteId": 1}) is None
    assert legality.ior_slots(tadd, False, ()) is None
    assert legality.ior_slots(op("TADDS"), True, (5, 0, 0)) is None
    assert legality.ior_slots(op("TADDS"), True, (5, 0, 0), dst=3) == (
        "B.IOR RegDst is unused by TADDS and must be zero"
    )
    assert legality.shared(op("TLOAD"), True) is None
    assert legality.source_dtype_for(op("TCVT"), DataType.FP32, DataType.E8M0) is None
    assert legality.destination_dtype(op("TQUANT"), DataType.S8) is None
    assert legality.destination_dtype(op("TQUANT"), None) == (
        "TQUANT needs B.DATR.DataType S8 or U8 for its destination, not none"
    )
    assert legality.dtype(tadd, None) == "TADD needs a concrete BSTART DataType"
