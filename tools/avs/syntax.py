"""Lexer, syntax tree and parser for the subset of ASL that the AVS test files use.

The subset: top-level ``func`` declarations (optionally ``pure`` or ``readonly``) with
typed parameters and an optional ``=> Type`` result; ``let``/``var``/``constant``
declarations (including ``let (a, -) = ...``), assignments to names, fields, array
elements (``x[[i]]``) and bit slices (``x[hi:lo]``), ``if/elsif/else``, ``for .. to/downto
.. looplimit``, ``while``, ``repeat .. until``, ``case .. of when .. otherwise``,
``assert``, ``return``, ``unreachable``; expressions with integer, hexadecimal and
bit-vector literals, ``Zeros{N}`` style parameterised calls, record literals
``T { f = e, ... }``, tuples, ``if .. then .. else`` expressions, ``as`` type
annotations (kept as text), and the usual unary, arithmetic, bitwise, comparison and
boolean operators.

Types are only skipped and remembered as text: the interpreter is dynamically typed.
Every node carries the 1-based source line it starts on, so a failing assertion can be
reported as ``file:line``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class AslSyntaxError(Exception):
    """A construct outside the supported subset, or malformed input, at ``line``."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.message = message
        self.line = line


# ----------------------------------------------------------------------------- lexer


@dataclass(frozen=True, slots=True)
class Token:
    """One token; ``kind`` is id, int, real, bits, str, op or eof."""

    kind: str
    text: str
    line: int


KEYWORDS = frozenset(
    [
        "func",
        "pure",
        "readonly",
        "begin",
        "end",
        "let",
        "var",
        "constant",
        "if",
        "then",
        "elsif",
        "else",
        "for",
        "to",
        "downto",
        "do",
        "looplimit",
        "while",
        "repeat",
        "until",
        "case",
        "of",
        "when",
        "otherwise",
        "where",
        "assert",
        "return",
        "unreachable",
        "pass",
        "as",
        "array",
        "type",
    ]
)
#: word operators (kept as ``op`` tokens)
WORD_OPS = frozenset({"DIV", "DIVRM", "MOD", "AND", "OR", "XOR", "EOR", "NOT", "IN", "RDIV"})

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r]+)
  | (?P<nl>\n)
  | (?P<comment>//[^\n]*)
  | (?P<block>/\*.*?\*/)
  | (?P<hex>0x[0-9A-Fa-f_]+)
  | (?P<real>[0-9]+\.[0-9]+)
  | (?P<int>[0-9][0-9_]*)
  | (?P<bits>'[01 ]*')
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\[\[|==|!=|<=|>=|&&|\|\||=>|\.\.|::|<<|>>|\+:|-->|<->|[-+*/<>=!&|:.,;()\[\]{}^~])
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str) -> list[Token]:
    """Split ASL source into tokens (comments and whitespace dropped)."""
    out: list[Token] = []
    pos = 0
    line = 1
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise AslSyntaxError(f"unexpected character {text[pos]!r}", line)
        kind = m.lastgroup
        s = m.group()
        if kind == "nl":
            line += 1
        elif kind == "block":
            line += s.count("\n")
        elif kind in ("ws", "comment"):
            pass
        elif kind == "hex":
            out.append(Token("int", s, line))
        elif kind == "real":
            out.append(Token("real", s, line))
        elif kind == "id":
            out.append(Token("op" if s in WORD_OPS else "id", s, line))
        else:
            assert kind is not None
            out.append(Token(kind, s, line))
        pos = m.end()
    out.append(Token("eof", "", line))
    return out


# ----------------------------------------------------------------------------- syntax tree


@dataclass(slots=True)
class Node:
    line: int


@dataclass(slots=True)
class Lit(Node):
    """An integer, boolean, bit-vector (``'0101'`` -> ``("bits", "0101")``) or string."""

    value: object


@dataclass(slots=True)
class Name(Node):
    id: str


@dataclass(slots=True)
class Call(Node):
    """``f(args)``, ``Zeros{N}``, ``SignExtend{64}(x)``: ``targs`` are the ``{}`` ones."""

    name: str
    args: list[Node]
    targs: list[Node] = field(default_factory=list)


@dataclass(slots=True)
class Field(Node):
    obj: Node
    name: str


@dataclass(slots=True)
class Index(Node):
    """Array element ``obj[[index]]``."""

    obj: Node
    index: Node


@dataclass(slots=True)
class Slice(Node):
    """Bit slice ``obj[hi:lo]`` (``lo`` None: a single bit ``obj[i]``)."""

    obj: Node
    hi: Node
    lo: Node | None


@dataclass(slots=True)
class Unary(Node):
    op: str
    operand: Node


@dataclass(slots=True)
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass(slots=True)
class Cond(Node):
    test: Node
    then: Node
    orelse: Node


@dataclass(slots=True)
class RecordLit(Node):
    type: str
    fields: list[tuple[str, Node]]


@dataclass(slots=True)
class TupleLit(Node):
    items: list[Node]


@dataclass(slots=True)
class As(Node):
    """``expr as Type``: the type is kept as text and not checked."""

    expr: Node
    type: str


@dataclass(slots=True)
class Discard(Node):
    """``-`` in a tuple pattern or argument position."""


# statements


@dataclass(slots=True)
class Decl(Node):
    """``let``/``var``/``constant``: ``names`` holds one name or a tuple pattern
    (``None`` for ``-``); ``value`` is None for an uninitialised ``var x: T;``."""

    kind: str
    names: list[str | None]
    tuple_pattern: bool
    type: str | None
    value: Node | None


@dataclass(slots=True)
class Assign(Node):
    target: Node
    value: Node


@dataclass(slots=True)
class ExprStmt(Node):
    expr: Node


@dataclass(slots=True)
class If(Node):
    branches: list[tuple[Node, list[Node]]]
    orelse: list[Node] | None


@dataclass(slots=True)
class For(Node):
    var: str
    start: Node
    stop: Node
    down: bool
    body: list[Node]


@dataclass(slots=True)
class While(Node):
    test: Node
    body: list[Node]


@dataclass(slots=True)
class Repeat(Node):
    body: list[Node]
    until: Node


@dataclass(slots=True)
class Case(Node):
    subject: Node
    arms: list[tuple[list[Node], list[Node]]]
    otherwise: list[Node] | None


@dataclass(slots=True)
class Assert(Node):
    test: Node
    text: str


@dataclass(slots=True)
class Return(Node):
    value: Node | None


@dataclass(slots=True)
class Unreachable(Node):
    pass


@dataclass(slots=True)
class Func(Node):
    name: str
    params: list[tuple[str, str]]
    result: str | None
    body: list[Node]
    qualifier: str | None = None


@dataclass(slots=True)
class Module:
    """A parsed file: its functions by name (later definitions must not repeat one)."""

    funcs: dict[str, Func]


# ----------------------------------------------------------------------------- parser

#: binary operator precedence (higher binds tighter)
_PREC: dict[str, int] = {
    "-->": 1,
    "<->": 1,
    "||": 2,
    "&&": 3,
    "==": 4,
    "!=": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "IN": 4,
    "+": 5,
    "-": 5,
    "OR": 5,
    "XOR": 5,
    "EOR": 5,
    "::": 5,
    "*": 6,
    "/": 6,
    "DIV": 6,
    "DIVRM": 6,
    "MOD": 6,
    "AND": 6,
    "<<": 6,
    ">>": 6,
    "RDIV": 6,
    "^": 7,
}


class Parser:
    """Recursive-descent parser over :func:`tokenize` output; keeps the source text so
    that an ``assert`` can be reported verbatim."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self.toks = tokenize(text)
        self.i = 0

    # -- token helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, text: str) -> bool:
        t = self.tok
        return t.text == text and t.kind in ("op", "id")

    def take(self) -> Token:
        t = self.tok
        self.i += 1
        return t

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise AslSyntaxError(
                f"expected {text!r}, found {self.tok.text or 'end of file'!r}", self.tok.line
            )
        return self.take()

    def ident(self) -> str:
        t = self.tok
        if t.kind != "id" or t.text in KEYWORDS:
            raise AslSyntaxError(f"expected a name, found {t.text or 'end of file'!r}", t.line)
        self.i += 1
        return t.text

    # -- module
    def module(self) -> Module:
        funcs: dict[str, Func] = {}
        while self.tok.kind != "eof":
            f = self.func()
            if f.name in funcs:
                raise AslSyntaxError(f"function {f.name} is defined twice", f.line)
            funcs[f.name] = f
        return Module(funcs)

    def func(self) -> Func:
        line = self.tok.line
        qualifier = None
        if self.at("pure") or self.at("readonly"):
            qualifier = self.take().text
        if not self.at("func"):
            raise AslSyntaxError(
                f"only function declarations are supported at top level, found "
                f"{self.tok.text!r}",
                self.tok.line,
            )
        self.take()
        name = self.ident()
        self.expect("(")
        params: list[tuple[str, str]] = []
        while not self.at(")"):
            pname = self.ident()
            self.expect(":")
            params.append((pname, self.type_text()))
            if not self.accept(","):
                break
        self.expect(")")
        result = None
        if self.accept("=>"):
            result = self.type_text()
        self.expect("begin")
        body = self.block(("end",))
        self.expect("end")
        self.expect(";")
        return Func(line, name, params, result, body, qualifier)

    def type_text(self) -> str:
        """Skip one type (``integer {0..7}``, ``bits(64)``, ``array [[N]] of T``, a name)
        and return its text."""
        start = self.i
        if self.accept("array"):
            self.expect("[[")
            self.skip_balanced("]")
            self.expect("]")
            self.expect("]")
            self.expect("of")
            self.type_text()
            return self.source_between(start, self.i)
        if self.accept("("):  # a tuple type
            self.skip_balanced(")")
            self.expect(")")
            return self.source_between(start, self.i)
        t = self.tok
        if t.kind != "id":
            raise AslSyntaxError(f"expected a type, found {t.text or 'end of file'!r}", t.line)
        self.i += 1
        if self.at("("):
            self.take()
            self.skip_balanced(")")
            self.expect(")")
        if self.at("{"):
            self.take()
            self.skip_balanced("}")
            self.expect("}")
        return self.source_between(start, self.i)

    def skip_balanced(self, closer: str) -> None:
        """Advance to the ``closer`` that ends the current bracket (not consuming it)."""
        depth = 0
        while True:
            t = self.tok
            if t.kind == "eof":
                raise AslSyntaxError(f"unterminated bracket, expected {closer!r}", t.line)
            if depth == 0 and t.text == closer:
                return
            if t.text in ("(", "{", "["):
                depth += 1
            elif t.text == "[[":
                depth += 2
            elif t.text in (")", "}", "]"):
                depth -= 1
            self.i += 1

    # -- statements
    def block(self, enders: tuple[str, ...]) -> list[Node]:
        out: list[Node] = []
        while not any(self.at(e) for e in enders):
            if self.tok.kind == "eof":
                raise AslSyntaxError(
                    f"expected {enders[0]!r} before end of file", self.tok.line
                )
            out.append(self.statement())
        return out

    def statement(self) -> Node:
        t = self.tok
        line = t.line
        if t.kind == "id":
            kw = t.text
            if kw in ("let", "var", "constant"):
                return self.decl()
            if kw == "if":
                return self.if_stmt()
            if kw == "for":
                return self.for_stmt()
            if kw == "while":
                self.take()
                test = self.expr()
                if self.accept("looplimit"):
                    self.expr()
                self.expect("do")
                body = self.block(("end",))
                self.expect("end")
                self.expect(";")
                return While(line, test, body)
            if kw == "repeat":
                self.take()
                body = self.block(("until",))
                self.expect("until")
                test = self.expr()
                if self.accept("looplimit"):
                    self.expr()
                self.expect(";")
                return Repeat(line, body, test)
            if kw == "case":
                return self.case_stmt()
            if kw == "assert":
                self.take()
                start = self.i
                test = self.expr()
                text = self.source_between(start, self.i)
                self.expect(";")
                return Assert(line, test, text)
            if kw == "return":
                self.take()
                value = None if self.at(";") else self.expr()
                self.expect(";")
                return Return(line, value)
            if kw == "unreachable":
                self.take()
                self.accept("(")
                self.accept(")")
                self.expect(";")
                return Unreachable(line)
            if kw == "pass":
                self.take()
                self.expect(";")
                return ExprStmt(line, Lit(line, None))
        if self.at("-") and self.peek().text == "=":  # - = f(); discards a result
            self.take()
            self.take()
            value = self.expr()
            self.expect(";")
            return ExprStmt(line, value)
        if self.at("("):  # tuple assignment (a, b) = ...
            save = self.i
            try:
                target = self.postfix()
                if isinstance(target, TupleLit) and self.accept("="):
                    value = self.expr()
                    self.expect(";")
                    return Assign(line, target, value)
            except AslSyntaxError:
                pass
            self.i = save
        target = self.expr()
        if self.accept("="):
            value = self.expr()
            self.expect(";")
            if not isinstance(target, (Name, Field, Index, Slice, TupleLit)):
                raise AslSyntaxError("the left side of '=' is not assignable", line)
            return Assign(line, target, value)
        self.expect(";")
        return ExprStmt(line, target)

    def source_between(self, a: int, b: int) -> str:
        """The source text of tokens ``a`` .. ``b - 1`` (joined with single spaces)."""
        text = " ".join(t.text for t in self.toks[a:b])
        return re.sub(r"\s*([(),\[\]])\s*|\s+(\.)\s*", lambda m: m.group(1) or m.group(2), text)

    def decl(self) -> Decl:
        line = self.tok.line
        kind = self.take().text
        names: list[str | None] = []
        tuple_pattern = False
        if self.accept("("):
            tuple_pattern = True
            while True:
                if self.accept("-"):
                    names.append(None)
                else:
                    names.append(self.ident())
                if not self.accept(","):
                    break
            self.expect(")")
        else:
            names.append(self.ident())
            while self.accept(","):
                names.append(self.ident())
        type_ = None
        if self.accept(":"):
            type_ = self.type_text()
        value = None
        if self.accept("="):
            value = self.expr()
        self.expect(";")
        return Decl(line, kind, names, tuple_pattern, type_, value)

    def if_stmt(self) -> If:
        line = self.tok.line
        self.expect("if")
        branches: list[tuple[Node, list[Node]]] = []
        test = self.expr()
        self.expect("then")
        branches.append((test, self.block(("elsif", "else", "end"))))
        orelse = None
        while True:
            if self.accept("elsif"):
                test = self.expr()
                self.expect("then")
                branches.append((test, self.block(("elsif", "else", "end"))))
            elif self.accept("else"):
                orelse = self.block(("end",))
            else:
                break
        self.expect("end")
        self.expect(";")
        return If(line, branches, orelse)

    def for_stmt(self) -> For:
        line = self.tok.line
        self.expect("for")
        var = self.ident()
        self.expect("=")
        start = self.expr()
        if self.accept("to"):
            down = False
        else:
            self.expect("downto")
            down = True
        stop = self.expr()
        if self.accept("looplimit"):
            self.expr()
        self.expect("do")
        body = self.block(("end",))
        self.expect("end")
        self.expect(";")
        return For(line, var, start, stop, down, body)

    def case_stmt(self) -> Case:
        line = self.tok.line
        self.expect("case")
        subject = self.expr()
        self.expect("of")
        arms: list[tuple[list[Node], list[Node]]] = []
        otherwise = None
        while True:
            if self.accept("when"):
                pats = [self.pattern()]
                while self.accept(","):
                    pats.append(self.pattern())
                if self.accept("where"):
                    raise AslSyntaxError("'when ... where' guards are not supported", line)
                self.expect("=>")
                arms.append((pats, self.block(("when", "otherwise", "end"))))
            elif self.accept("otherwise"):
                self.expect("=>")
                otherwise = self.block(("when", "otherwise", "end"))
            else:
                break
        self.expect("end")
        self.expect(";")
        return Case(line, subject, arms, otherwise)

    def pattern(self) -> Node:
        line = self.tok.line
        e = self.binary(5)
        if self.accept(".."):
            return Binary(line, "..", e, self.binary(5))
        return e

    # -- expressions
    def expr(self) -> Node:
        if self.at("if"):
            line = self.take().line
            test = self.expr()
            self.expect("then")
            then = self.expr()
            if self.at("elsif"):
                self.toks[self.i] = Token("id", "if", self.tok.line)  # elsif == else if
                return Cond(line, test, then, self.expr())
            self.expect("else")
            return Cond(line, test, then, self.expr())
        return self.binary(1)

    def binary(self, min_prec: int) -> Node:
        left = self.unary()
        while True:
            t = self.tok
            prec = _PREC.get(t.text) if t.kind == "op" else None
            if prec is None or prec < min_prec:
                return left
            self.i += 1
            right = self.expr() if self.at("if") else self.binary(prec + 1)
            left = Binary(t.line, t.text, left, right)

    def unary(self) -> Node:
        t = self.tok
        if t.kind == "op" and t.text in ("-", "!", "NOT", "~"):
            self.i += 1
            return Unary(t.line, "!" if t.text == "~" else t.text, self.unary())
        return self.postfix()

    def postfix(self) -> Node:
        e = self.primary()
        while True:
            t = self.tok
            if t.text == "." and t.kind == "op":
                self.i += 1
                e = Field(t.line, e, self.ident())
            elif t.text == "[[":
                self.i += 1
                idx = self.expr()
                self.expect("]")
                self.expect("]")
                e = Index(t.line, e, idx)
            elif t.text == "[" and t.kind == "op":
                self.i += 1
                hi = self.expr()
                lo = None
                if self.accept(":"):
                    lo = self.expr()
                elif self.accept("+:"):
                    width = self.expr()
                    lo = hi
                    hi = Binary(t.line, "-", Binary(t.line, "+", lo, width), Lit(t.line, 1))
                self.expect("]")
                e = Slice(t.line, e, hi, lo)
            elif t.text == "as" and t.kind == "id":
                self.i += 1
                e = As(t.line, e, self.type_text())
            else:
                return e

    def primary(self) -> Node:
        t = self.tok
        line = t.line
        if t.kind == "int":
            self.i += 1
            return Lit(line, int(t.text.replace("_", ""), 0))
        if t.kind == "real":
            self.i += 1
            return Lit(line, ("real", t.text))
        if t.kind == "bits":
            self.i += 1
            return Lit(line, ("bits", t.text[1:-1].replace(" ", "")))
        if t.kind == "str":
            self.i += 1
            return Lit(line, t.text[1:-1])
        if t.text == "(" and t.kind == "op":
            self.i += 1
            items = [self.tuple_item()]
            while self.accept(","):
                items.append(self.tuple_item())
            self.expect(")")
            return items[0] if len(items) == 1 else TupleLit(line, items)
        if t.kind == "id":
            if t.text in ("TRUE", "FALSE"):
                self.i += 1
                return Lit(line, t.text == "TRUE")
            name = self.ident()
            if self.at("{"):
                nxt, nxt2 = self.peek(), self.peek(2)
                if (nxt.kind == "id" and nxt2.text == "=") or nxt.text == "}":
                    return self.record(line, name)
                self.take()
                targs = [self.expr()]
                while self.accept(","):
                    targs.append(self.expr())
                self.expect("}")
                args = self.call_args() if self.at("(") else []
                return Call(line, name, args, targs)
            if self.at("("):
                return Call(line, name, self.call_args())
            return Name(line, name)
        raise AslSyntaxError(f"unexpected {t.text or 'end of file'!r}", line)

    def tuple_item(self) -> Node:
        if self.at("-") and self.peek().text in (",", ")"):
            return Discard(self.take().line)
        return self.expr()

    def call_args(self) -> list[Node]:
        self.expect("(")
        args: list[Node] = []
        while not self.at(")"):
            args.append(self.expr())
            if not self.accept(","):
                break
        self.expect(")")
        return args

    def record(self, line: int, type_: str) -> RecordLit:
        self.expect("{")
        fields: list[tuple[str, Node]] = []
        while not self.at("}"):
            fname = self.ident()
            self.expect("=")
            fields.append((fname, self.expr()))
            if not self.accept(","):
                break
        self.expect("}")
        return RecordLit(line, type_, fields)


def parse(text: str) -> Module:
    """Parse one ASL file of the supported subset."""
    return Parser(text).module()
