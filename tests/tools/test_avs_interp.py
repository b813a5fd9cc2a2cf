"""The AVS tool's ASL interpreter, pinned on small snippets against a stand-in model."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the tool lives in the checkout, not the installed package
    sys.path.insert(0, str(ROOT))

from tools.avs import syntax  # noqa: E402
from tools.avs.interp import Interpreter  # noqa: E402
from tools.avs.outcome import AssertionFailed, Untranslated  # noqa: E402
from tools.avs.values import Bits, ElementBits, Enum, Opaque, Record  # noqa: E402


class StandIn:
    """A model with one record variable ``_R``, a constant and a few functions."""

    def __init__(self) -> None:
        self.record = Record("R", {"n": 1, "bits": Bits(8, 0)})
        self.calls: list[tuple[Any, ...]] = []

    def lookup(self, name: str) -> Any:
        if name == "_R":
            return self.record
        if name == "WIDTH":
            return 8
        raise KeyError(name)

    def assign(self, name: str, value: Any) -> None:
        if name != "_R":
            raise KeyError(name)
        self.record = value

    def function(self, name: str) -> Callable[..., Any] | None:
        if name == "Note":
            return lambda *a: self.calls.append(a)
        if name == "Handler":
            return lambda: Opaque("dispatch record")
        if name == "Element":
            return lambda: ElementBits(64, 0xFF, 8)
        return None


def run(body: str, extra: str = "", model: StandIn | None = None) -> Any:
    text = extra + "func main() => integer\nbegin\n" + body + "\nend;\n"
    it = Interpreter(syntax.parse(text), model or StandIn())
    return it, it.run()


def test_bits_arithmetic_wraps_and_integers_do_not() -> None:
    _, v = run(
        "let a = Zeros{8} + 0x1ff;\n let b = Ones{4} + 1;\n let c = 7 DIVRM 2;\n"
        " let d = -7 MOD 3;\n let e = UInt(a) * 1000;\n return e + c + d;"
    )
    assert v == 255 * 1000 + 3 + 2


def test_exact_div_requires_divisibility() -> None:
    with pytest.raises(Exception, match="not an exact division"):
        run("return 7 DIV 2;")


def test_slices_read_and_write_through_names_fields_and_concatenation() -> None:
    model = StandIn()
    _, v = run(
        "var w: bits(16) = Zeros{16} + 0x00f0;\n w[3:0] = '1010';\n w[15] = '1';\n"
        " _R.bits[7:4] = w[3:0];\n let cat = w[15:12] :: '01';\n return UInt(cat);",
        model=model,
    )
    assert v == 0b1000_01
    assert model.record.fields["bits"] == Bits(8, 0b1010_0000)


def test_values_are_copied_when_bound() -> None:
    model = StandIn()
    _, v = run("var r = _R;\n r.n = 5;\n return _R.n * 10 + r.n;", model=model)
    assert v == 15
    assert model.record.fields["n"] == 1


def test_functions_loops_case_and_tuples() -> None:
    helper = (
        "func Pair(x: integer) => (integer, boolean)\nbegin\n"
        "    case x of\n        when 0, 1 => return (x, TRUE);\n"
        "        otherwise => return (x * 2, FALSE);\n    end;\nend;\n\n"
    )
    _, v = run(
        "var total = 0;\n for i = 0 to 3 do\n   let (y, small) = Pair(i);\n"
        "   if small then total = total + y; else total = total + 100 * y; end;\n end;\n"
        " return total;",
        extra=helper,
    )
    assert v == 0 + 1 + 400 + 600


def test_enumeration_members_compare_by_name() -> None:
    _, v = run(
        "let a = TileDataType_FP32;\n"
        "return if a == TileDataType_FP32 && a != TileDataType_U8 then 1 else 0;"
    )
    assert v == 1
    assert Enum("TileDataType_FP32").member == "FP32"


def test_a_failing_assertion_reports_its_line_text_and_both_sides() -> None:
    with pytest.raises(AssertionFailed) as e:
        run("let x = Zeros{16} + 3;\n assert x == Zeros{16} + 4;")
    assert e.value.line == 4
    assert e.value.text == "x == Zeros { 16 } + 4"
    assert e.value.detail == "left is 0x0003, right is 0x0004"
    with pytest.raises(AssertionFailed) as e2:
        run("assert Zeros{2} == '01';")
    assert e2.value.detail == "left is '00', right is '01'"


def test_an_element_word_compares_at_its_element_width() -> None:
    it, _ = run(
        "assert Element() == Ones{64};\n assert Element() == Zeros{64} + 0xff;\n return 0;"
    )
    assert it.checked == 2
    with pytest.raises(AssertionFailed):
        run("assert Element() == Zeros{64} + 0x1ff;")


def test_assertions_on_opaque_values_are_skipped_and_counted() -> None:
    it, v = run("assert Handler() == TileHandler_X;\n assert TRUE;\n return 0;")
    assert v == 0
    assert [(ln, why) for ln, _, why in it.skipped] == [(3, "dispatch record")]
    assert it.checked == 1


def test_unknown_functions_and_variables_are_untranslated() -> None:
    with pytest.raises(Untranslated) as e:
        run("Mystery(1);")
    assert e.value.binding == "Mystery"
    with pytest.raises(Untranslated) as e2:
        run("let x = _Unknown;")
    assert e2.value.binding == "_Unknown"


def test_bindings_see_arguments_after_evaluation() -> None:
    model = StandIn()
    run("Note(WIDTH + 1, '01', TRUE);\n return 0;", model=model)
    assert model.calls == [(9, Bits(2, 1), True)]
