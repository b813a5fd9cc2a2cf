"""The AVS tool's ASL parser, pinned on small snippets (no pto-spec checkout needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the tool lives in the checkout, not the installed package
    sys.path.insert(0, str(ROOT))

from tools.avs import syntax as s  # noqa: E402


def parse_main(body: str, extra: str = "") -> s.Func:
    module = s.parse(extra + "func main() => integer\nbegin\n" + body + "\nend;\n")
    return module.funcs["main"]


def test_tokens_cover_hex_bits_array_brackets_comments_and_reals() -> None:
    toks = s.tokenize("x[[0x1F]] = '10 01'; // c\n/* b\n */ 2.5 DIVRM")
    got = [(t.kind, t.text) for t in toks]
    assert got == [
        ("id", "x"),
        ("op", "[["),
        ("int", "0x1F"),
        ("op", "]"),
        ("op", "]"),
        ("op", "="),
        ("bits", "'10 01'"),
        ("op", ";"),
        ("real", "2.5"),
        ("op", "DIVRM"),
        ("eof", ""),
    ]
    assert toks[-2].line == 3  # the block comment's newline counts


def test_precedence_binds_multiplication_over_addition_over_comparison() -> None:
    (st,) = parse_main("assert a + b * c == d && !e;").body
    assert isinstance(st, s.Assert)
    test = st.test
    assert isinstance(test, s.Binary) and test.op == "&&"
    eq = test.left
    assert isinstance(eq, s.Binary) and eq.op == "=="
    add = eq.left
    assert isinstance(add, s.Binary) and add.op == "+"
    assert isinstance(add.right, s.Binary) and add.right.op == "*"
    assert isinstance(test.right, s.Unary) and test.right.op == "!"


def test_parameterised_calls_record_literals_slices_and_type_annotations() -> None:
    body = (
        "var w: bits(64) = Zeros{64} + 0xc2019181;\n"
        "w[26:25] = '00';\n"
        "let r = T { a = 1, b = SignExtend{64}(w[7:0]) };\n"
        "let i = (r.a + 1) as integer {0..PTO_COUNT-1};\n"
        "let (x, -) = F(i as TileIndex, w[3]);"
    )
    decl, assign, rec, ann, pair = parse_main(body).body
    assert isinstance(decl, s.Decl) and decl.type == "bits(64)"
    assert isinstance(decl.value, s.Binary)
    zeros = decl.value.left
    assert isinstance(zeros, s.Call) and zeros.name == "Zeros" and not zeros.args
    assert isinstance(assign, s.Assign) and isinstance(assign.target, s.Slice)
    assert isinstance(rec, s.Decl) and isinstance(rec.value, s.RecordLit)
    assert [f for f, _ in rec.value.fields] == ["a", "b"]
    sign = rec.value.fields[1][1]
    assert isinstance(sign, s.Call) and sign.name == "SignExtend" and len(sign.targs) == 1
    assert isinstance(ann, s.Decl) and isinstance(ann.value, s.As)
    assert isinstance(pair, s.Decl) and pair.tuple_pattern and pair.names == ["x", None]


def test_control_flow_statements_and_helper_functions() -> None:
    text = (
        "pure func Twice(n: integer) => integer\nbegin\n    return n * 2;\nend;\n\n"
        "func main() => integer\nbegin\n"
        "    for i = 0 to 3 looplimit 4 do x = i; end;\n"
        "    for i = 3 downto 0 do x = i; end;\n"
        "    while x < 3 looplimit 9 do x = x + 1; end;\n"
        "    if x == 1 then y = 1; elsif x == 2 then y = 2; else y = 3; end;\n"
        "    case x of when 1, 2 => y = 0; otherwise => unreachable; end;\n"
        "    - = Twice(1);\n"
        "    return 0;\nend;\n"
    )
    module = s.parse(text)
    assert module.funcs["Twice"].qualifier == "pure"
    kinds = [type(st).__name__ for st in module.funcs["main"].body]
    assert kinds == ["For", "For", "While", "If", "Case", "ExprStmt", "Return"]
    down = module.funcs["main"].body[1]
    assert isinstance(down, s.For) and down.down


def test_assert_keeps_its_source_text_and_line() -> None:
    (st,) = parse_main(
        "    assert ReadTileElement(1, 0, 0) ==\n        Zeros{PTO_XLEN} + 7;"
    ).body
    assert isinstance(st, s.Assert)
    assert st.line == 3
    assert st.text == "ReadTileElement(1,0,0)== Zeros { PTO_XLEN } + 7"


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("func main() => integer\nbegin\n  x = ;\nend;\n", "unexpected ';'", 3),
        ("type T of integer;\n", "only function declarations", 1),
        ("func main() => integer\nbegin\n  x = 1\nend;\n", "expected ';'", 4),
        ("func main() => integer\nbegin\n  F() = 1;\nend;\n", "not assignable", 3),
        ("func f() begin end;\nfunc f() begin end;\n", "defined twice", 2),
        ("func main() => integer\nbegin\n  x = $;\nend;\n", "unexpected character", 3),
    ],
)
def test_syntax_errors_name_the_line(text: str, message: str, line: int) -> None:
    with pytest.raises(s.AslSyntaxError) as e:
        s.parse(text)
    assert message in e.value.message
    assert e.value.line == line
