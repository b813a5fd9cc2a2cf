"""An interpreter of the ASL subset of :mod:`tools.avs.syntax`.

Functions a test file defines run here; every other function, every model variable
(``_Tiles``, ``_LastFault``, ...) and every named constant comes from a *model* (the
ptoc binding of :mod:`tools.avs.model`, or a small stand-in in the unit tests), through
the :class:`Model` protocol. A name shaped like an enumeration member
(``TileDataType_FP32``, ``Fault_TileLegality``) that the model does not define
evaluates to an :class:`~tools.avs.values.Enum` of that name.

Semantics kept from ASL: integers are unbounded; ``bits(N)`` arithmetic wraps modulo
2**N; ``DIV`` is exact division, ``DIVRM`` rounds down, ``MOD`` is the non-negative
remainder; ``&&``/``||`` short-circuit; ``for`` bounds are inclusive; values have value
semantics (:func:`~tools.avs.values.copy_value`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from . import syntax as s
from .outcome import AssertionFailed, Untranslated
from .values import (
    Array,
    AslRuntimeError,
    Bits,
    Enum,
    Opaque,
    OpaqueComparison,
    Record,
    copy_value,
    fmt,
    values_equal,
)

_ENUM_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*_[A-Za-z0-9_]+$")


class Model(Protocol):
    """What the interpreter needs from the machine the test runs against."""

    def lookup(self, name: str) -> Any:
        """A model variable or constant; KeyError when the model has none of that name."""
        ...

    def assign(self, name: str, value: Any) -> None:
        """Write a model variable; KeyError when the model has none of that name."""
        ...

    def function(self, name: str) -> Callable[..., Any] | None:
        """The binding of an ASL function, or None."""
        ...


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _int(v: Any, what: str) -> int:
    if isinstance(v, Opaque):
        raise OpaqueComparison(v.reason)
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, Bits):
            raise AslRuntimeError(f"{what} must be an integer, not bits({v.width}) {v}")
        raise AslRuntimeError(f"{what} must be an integer, not {fmt(v)}")
    return v


def _bool(v: Any, what: str) -> bool:
    if isinstance(v, Opaque):
        raise OpaqueComparison(v.reason)
    if not isinstance(v, bool):
        raise AslRuntimeError(f"{what} must be a boolean, not {fmt(v)}")
    return v


def builtin_zeros(n: int) -> Bits:
    return Bits(n, 0)


def builtin_ones(n: int) -> Bits:
    return Bits(n, (1 << n) - 1)


def _uint(b: Any) -> int:
    if isinstance(b, Bits):
        return b.value
    return _int(b, "UInt's argument")


def _sint(b: Any) -> int:
    if isinstance(b, Bits):
        return b.signed()
    return _int(b, "SInt's argument")


def _extend(b: Any, n: int, signed: bool) -> Bits:
    if not isinstance(b, Bits):
        raise AslRuntimeError("ZeroExtend/SignExtend need a bits value")
    if n < b.width:
        raise AslRuntimeError(f"extending bits({b.width}) to {n} bits")
    return Bits(n, b.signed() if signed else b.value)


#: standard-library functions of ASL the tests use; ``targs`` are the ``{}`` arguments
BUILTINS: dict[str, Callable[[list[Any], list[Any]], Any]] = {
    "Zeros": lambda a, t: builtin_zeros(_int((t or a)[0], "Zeros width")),
    "Ones": lambda a, t: builtin_ones(_int((t or a)[0], "Ones width")),
    "UInt": lambda a, t: _uint(a[0]),
    "SInt": lambda a, t: _sint(a[0]),
    "ZeroExtend": lambda a, t: _extend(a[0], _int((t or a[1:])[0], "width"), False),
    "SignExtend": lambda a, t: _extend(a[0], _int((t or a[1:])[0], "width"), True),
    "IsZero": lambda a, t: isinstance(a[0], Bits) and a[0].value == 0,
    "IsOnes": lambda a, t: isinstance(a[0], Bits) and a[0].value == (1 << a[0].width) - 1,
    "Len": lambda a, t: a[0].width,
    "Min": lambda a, t: min(_int(a[0], "Min"), _int(a[1], "Min")),
    "Max": lambda a, t: max(_int(a[0], "Max"), _int(a[1], "Max")),
    "Abs": lambda a, t: abs(_int(a[0], "Abs")),
    "Replicate": lambda a, t: Bits(
        a[0].width * _int((t or a[1:])[0], "count"),
        int(format(a[0].value, f"0{a[0].width}b") * _int((t or a[1:])[0], "count") or "0", 2),
    ),
}


class Interpreter:
    """Runs the functions of one parsed test file against a model."""

    def __init__(self, module: s.Module, model: Model) -> None:
        self.module = module
        self.model = model
        #: line of the statement being executed (for reports of binding failures)
        self.line = 0
        self.depth = 0
        #: the innermost executing test-defined function
        self.frames: list[str] = []
        #: assertions skipped because they compare an ASL-internal value: (line, text, why)
        self.skipped: list[tuple[int, str, str]] = []
        #: assertions evaluated against ptoc (not skipped)
        self.checked = 0

    # ------------------------------------------------------------------ calls

    def run(self, name: str = "main") -> Any:
        """Call a test-defined function with no arguments (``main``)."""
        return self.call(name, [], [], 0)

    def call(self, name: str, args: list[Any], targs: list[Any], line: int) -> Any:
        f = self.module.funcs.get(name)
        if f is not None:
            return self.call_func(f, args, line)
        b = BUILTINS.get(name)
        if b is not None:
            try:
                return b(args, targs)
            except (IndexError, AttributeError, TypeError, ValueError) as e:
                raise AslRuntimeError(f"{name}: bad arguments ({e})") from None
        binding = self.model.function(name)
        if binding is None:
            raise Untranslated(name, "no binding for this ASL function")
        return binding(*args)

    def call_func(self, f: s.Func, args: list[Any], line: int) -> Any:
        if len(args) != len(f.params):
            raise AslRuntimeError(f"{f.name} takes {len(f.params)} arguments, not {len(args)}")
        self.depth += 1
        if self.depth > 200:
            raise AslRuntimeError("call depth exceeds 200")
        env = {p: copy_value(a) for (p, _), a in zip(f.params, args)}
        self.frames.append(f.name)
        try:
            self.block(f.body, env)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
            self.frames.pop()
        return None

    # ------------------------------------------------------------------ statements

    def block(self, body: list[s.Node], env: dict[str, Any]) -> None:
        for st in body:
            self.stmt(st, env)

    def stmt(self, st: s.Node, env: dict[str, Any]) -> None:
        self.line = st.line
        if isinstance(st, s.ExprStmt):
            self.eval(st.expr, env)
        elif isinstance(st, s.Assign):
            self.assign(st.target, self.eval(st.value, env), env)
        elif isinstance(st, s.Decl):
            self.decl(st, env)
        elif isinstance(st, s.If):
            for test, body in st.branches:
                if _bool(self.eval(test, env), "an if condition"):
                    self.block(body, env)
                    return
            if st.orelse is not None:
                self.block(st.orelse, env)
        elif isinstance(st, s.For):
            lo = _int(self.eval(st.start, env), "a for bound")
            hi = _int(self.eval(st.stop, env), "a for bound")
            rng = range(lo, hi - 1, -1) if st.down else range(lo, hi + 1)
            for i in rng:
                env[st.var] = i
                self.block(st.body, env)
        elif isinstance(st, s.While):
            n = 0
            while _bool(self.eval(st.test, env), "a while condition"):
                n += 1
                if n > 1_000_000:
                    raise AslRuntimeError("a while loop ran more than a million times")
                self.block(st.body, env)
        elif isinstance(st, s.Repeat):
            while True:
                self.block(st.body, env)
                if _bool(self.eval(st.until, env), "an until condition"):
                    break
        elif isinstance(st, s.Case):
            self.case(st, env)
        elif isinstance(st, s.Assert):
            self.assertion(st, env)
        elif isinstance(st, s.Return):
            raise _Return(None if st.value is None else self.eval(st.value, env))
        elif isinstance(st, s.Unreachable):
            raise AssertionFailed(st.line, "unreachable", "the test reached 'unreachable'")
        else:  # pragma: no cover - the parser produces only the nodes above
            raise AslRuntimeError(f"unsupported statement {type(st).__name__}")

    def decl(self, st: s.Decl, env: dict[str, Any]) -> None:
        if st.value is None:
            for n in st.names:
                if n is not None:
                    env[n] = self.default_value(st.type or "")
            return
        v = self.eval(st.value, env)
        if st.tuple_pattern and isinstance(v, Opaque):
            v = tuple(v for _ in st.names)  # an opaque tuple has opaque components
        if st.tuple_pattern:
            if not isinstance(v, tuple) or len(v) != len(st.names):
                raise AslRuntimeError(f"cannot unpack {fmt(v)} into {len(st.names)} names")
            for n, x in zip(st.names, v):
                if n is not None:
                    env[n] = copy_value(x)
        else:
            name = st.names[0]
            assert name is not None
            env[name] = copy_value(v)

    def default_value(self, type_text: str) -> Any:
        """The initial value of an uninitialised ``var x: T;``."""
        t = type_text.replace(" ", "")
        m = re.fullmatch(r"bits\((\d+)\)", t)
        if m:
            return Bits(int(m.group(1)), 0)
        if t.startswith("integer"):
            return 0
        if t == "boolean":
            return False
        m = re.fullmatch(r"array\[\[(.+?)\]\]of(.+)", t)
        if m:
            n = _int(self.eval(s.Parser(m.group(1)).expr(), {}), "an array length")
            return Array([self.default_value(m.group(2)) for _ in range(n)])
        make = self.model.function(f"__default_{t}")
        if make is not None:
            return make()
        raise Untranslated(f"type {type_text}", "no default value for this type")

    def case(self, st: s.Case, env: dict[str, Any]) -> None:
        v = self.eval(st.subject, env)
        for pats, body in st.arms:
            for p in pats:
                if isinstance(p, s.Binary) and p.op == "..":
                    lo = _int(self.eval(p.left, env), "a case range")
                    hi = _int(self.eval(p.right, env), "a case range")
                    hit = lo <= _int(v, "a case subject") <= hi
                else:
                    hit = values_equal(v, self.eval(p, env))
                if hit:
                    self.block(body, env)
                    return
        if st.otherwise is not None:
            self.block(st.otherwise, env)
            return
        raise AslRuntimeError(f"no case arm matches {fmt(v)}")

    def assertion(self, st: s.Assert, env: dict[str, Any]) -> None:
        try:
            self.check(st, env)
        except OpaqueComparison as e:
            self.skipped.append((st.line, st.text, e.reason))
            return
        self.checked += 1

    def check(self, st: s.Assert, env: dict[str, Any]) -> None:
        test = st.test
        if isinstance(test, s.Binary) and test.op in ("==", "!=", "<", "<=", ">", ">="):
            left = self.eval(test.left, env)
            right = self.eval(test.right, env)
            ok = self.binary_values(test.op, left, right)
            if not ok:
                raise AssertionFailed(
                    st.line, st.text, f"left is {fmt(left)}, right is {fmt(right)}"
                )
            return
        v = self.eval(test, env)
        if not _bool(v, "an assertion"):
            raise AssertionFailed(st.line, st.text, self.explain(test, env))

    def explain(self, test: s.Node, env: dict[str, Any]) -> str:
        """What ptoc gave for a failed boolean assertion (its operands, re-evaluated)."""
        if isinstance(test, s.Unary) and test.op == "!":
            return "it is TRUE"
        if isinstance(test, s.Binary) and test.op in ("&&", "||"):
            parts = []
            for side in (test.left, test.right):
                try:
                    parts.append(fmt(self.eval(side, env)))
                except Exception:  # a side that cannot be re-evaluated is left out
                    parts.append("?")
            return f"operands are {parts[0]} {test.op} {parts[1]}"
        return "it is FALSE"

    # ------------------------------------------------------------------ assignment

    def assign(self, target: s.Node, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, s.Name):
            if target.id in env:
                env[target.id] = copy_value(value)
                return
            try:
                self.model.assign(target.id, copy_value(value))
            except KeyError:
                raise Untranslated(target.id, "no binding for this model variable") from None
        elif isinstance(target, s.Field):
            obj = self.eval(target.obj, env)
            setter = getattr(obj, "asl_set", None)
            if setter is None:
                raise AslRuntimeError(f"{fmt(obj)} has no field {target.name}")
            setter(target.name, copy_value(value))
        elif isinstance(target, s.Index):
            obj = self.eval(target.obj, env)
            setter = getattr(obj, "asl_setindex", None)
            if setter is None:
                raise AslRuntimeError(f"{fmt(obj)} is not an array")
            setter(_index(self.eval(target.index, env)), copy_value(value))
        elif isinstance(target, s.Slice):
            base = self.eval(target.obj, env)
            hi = _int(self.eval(target.hi, env), "a slice bound")
            lo = hi if target.lo is None else _int(self.eval(target.lo, env), "a slice bound")
            setter = getattr(base, "asl_setslice", None)
            if setter is not None:
                setter(hi, lo, value)
                return
            if not isinstance(base, Bits):
                raise AslRuntimeError(f"slice assignment to {fmt(base)}")
            if isinstance(value, Bits) and value.width != hi - lo + 1:
                raise AslRuntimeError(f"assigning bits({value.width}) to the slice [{hi}:{lo}]")
            self.assign(target.obj, base.with_slice(hi, lo, value), env)
        elif isinstance(target, s.TupleLit):
            if not isinstance(value, tuple) or len(value) != len(target.items):
                raise AslRuntimeError("tuple assignment of a value of another shape")
            for t, v in zip(target.items, value):
                if not isinstance(t, s.Discard):
                    self.assign(t, v, env)
        else:
            raise AslRuntimeError("assignment to an expression that is not assignable")

    # ------------------------------------------------------------------ expressions

    def eval(self, e: s.Node, env: dict[str, Any]) -> Any:
        if isinstance(e, s.Lit):
            v = e.value
            if isinstance(v, tuple) and v[0] == "bits":
                return Bits.of(v[1])
            if isinstance(v, tuple) and v[0] == "real":
                raise Untranslated("real literal", "real arithmetic is outside the subset")
            return v
        if isinstance(e, s.Name):
            return self.name(e.id, env)
        if isinstance(e, s.Call):
            args = [self.eval(a, env) for a in e.args]
            targs = [self.eval(a, env) for a in e.targs]
            return self.call(e.name, args, targs, e.line)
        if isinstance(e, s.Binary):
            return self.binary(e, env)
        if isinstance(e, s.Unary):
            v = self.eval(e.operand, env)
            if isinstance(v, Opaque):
                raise OpaqueComparison(v.reason)
            if e.op == "!":
                return not _bool(v, "the operand of '!'")
            if e.op == "-":
                return -_int(v, "the operand of unary '-'")
            if e.op == "NOT":
                if isinstance(v, Bits):
                    return Bits(v.width, ~v.value)
                return not _bool(v, "the operand of NOT")
        if isinstance(e, s.Field):
            obj = self.eval(e.obj, env)
            getter = getattr(obj, "asl_get", None)
            if getter is None:
                raise AslRuntimeError(f"{fmt(obj)} has no field {e.name}")
            return getter(e.name)
        if isinstance(e, s.Index):
            obj = self.eval(e.obj, env)
            getter = getattr(obj, "asl_index", None)
            if getter is None:
                raise AslRuntimeError(f"{fmt(obj)} is not an array")
            return getter(_index(self.eval(e.index, env)))
        if isinstance(e, s.Slice):
            base = self.eval(e.obj, env)
            hi = _int(self.eval(e.hi, env), "a slice bound")
            lo = hi if e.lo is None else _int(self.eval(e.lo, env), "a slice bound")
            getter = getattr(base, "asl_slice", None)
            if getter is not None:
                return getter(hi, lo)
            if isinstance(base, int) and not isinstance(base, bool):
                return Bits(hi - lo + 1, base >> lo)
            if not isinstance(base, Bits):
                raise AslRuntimeError(f"slice of {fmt(base)}")
            return base.slice(hi, lo)
        if isinstance(e, s.Cond):
            test = _bool(self.eval(e.test, env), "an if-expression condition")
            return self.eval(e.then if test else e.orelse, env)
        if isinstance(e, s.As):
            return self.eval(e.expr, env)
        if isinstance(e, s.TupleLit):
            return tuple(self.eval(x, env) for x in e.items)
        if isinstance(e, s.RecordLit):
            make = self.model.function(f"__record_{e.type}")
            fields = {k: copy_value(self.eval(v, env)) for k, v in e.fields}
            if make is not None:
                return make(fields)
            return Record(e.type, fields)
        raise AslRuntimeError(f"unsupported expression {type(e).__name__}")

    def name(self, ident: str, env: dict[str, Any]) -> Any:
        if ident in env:
            return env[ident]
        try:
            return self.model.lookup(ident)
        except KeyError:
            pass
        if _ENUM_NAME.match(ident) and not ident.startswith("_"):
            return Enum(ident)
        if ident.startswith("_"):
            raise Untranslated(ident, "no binding for this model variable")
        raise Untranslated(ident, "no binding for this name")

    def binary(self, e: s.Binary, env: dict[str, Any]) -> Any:
        op = e.op
        if op == "&&":
            return _bool(self.eval(e.left, env), "'&&'") and _bool(
                self.eval(e.right, env), "'&&'"
            )
        if op == "||":
            return _bool(self.eval(e.left, env), "'||'") or _bool(
                self.eval(e.right, env), "'||'"
            )
        if op == "-->":
            return (not _bool(self.eval(e.left, env), "'-->'")) or _bool(
                self.eval(e.right, env), "'-->'"
            )
        return self.binary_values(op, self.eval(e.left, env), self.eval(e.right, env))

    def binary_values(self, op: str, a: Any, b: Any) -> Any:
        for v in (a, b):
            if isinstance(v, Opaque):
                raise OpaqueComparison(v.reason)
        if op == "==":
            return values_equal(a, b)
        if op == "!=":
            return not values_equal(a, b)
        if op == "<->":
            return _bool(a, "'<->'") == _bool(b, "'<->'")
        if isinstance(a, Bits) or isinstance(b, Bits):
            return _bits_op(op, a, b)
        if op in ("AND", "OR", "XOR", "EOR") and isinstance(a, bool):
            p, q = _bool(a, op), _bool(b, op)
            return {"AND": p and q, "OR": p or q}.get(op, p != q)
        x = _int(a, f"the left operand of {op}")
        y = _int(b, f"the right operand of {op}")
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        if op in ("DIV", "/"):
            if y == 0 or x % y:
                raise AslRuntimeError(f"{x} DIV {y} is not an exact division")
            return x // y
        if op == "DIVRM":
            if y == 0:
                raise AslRuntimeError("DIVRM by zero")
            return x // y
        if op == "MOD":
            if y == 0:
                raise AslRuntimeError("MOD by zero")
            return x % y
        if op == "^":
            return x**y
        if op == "<<":
            return x << y
        if op == ">>":
            return x >> y
        if op == "<":
            return x < y
        if op == "<=":
            return x <= y
        if op == ">":
            return x > y
        if op == ">=":
            return x >= y
        if op in ("AND", "OR", "XOR", "EOR"):
            return {"AND": x & y, "OR": x | y}.get(op, x ^ y)
        raise AslRuntimeError(f"unsupported operator {op}")


def _index(v: Any) -> int:
    if isinstance(v, Bits):
        return v.value
    return _int(v, "an array index")


def _bits_op(op: str, a: Any, b: Any) -> Any:
    if op == "::":
        if not (isinstance(a, Bits) and isinstance(b, Bits)):
            raise AslRuntimeError("'::' concatenates two bits values")
        return Bits(a.width + b.width, (a.value << b.width) | b.value)
    if isinstance(a, Bits) and isinstance(b, Bits):
        if a.width != b.width:
            raise AslRuntimeError(f"{op} of bits({a.width}) and bits({b.width})")
        w, x, y = a.width, a.value, b.value
    elif isinstance(a, Bits):
        w, x, y = a.width, a.value, _int(b, f"the right operand of {op}")
    else:
        if op not in ("+", "*"):
            raise AslRuntimeError(f"integer {op} bits is not ASL")
        w, x, y = b.width, _int(a, f"the left operand of {op}"), b.value
    if op == "+":
        return Bits(w, x + y)
    if op == "-":
        return Bits(w, x - y)
    if op == "*":
        return Bits(w, x * y)
    if op in ("AND", "OR", "XOR", "EOR"):
        return Bits(w, {"AND": x & y, "OR": x | y}.get(op, x ^ y))
    if op == "<<":
        return Bits(w, x << y)
    if op == ">>":
        return Bits(w, x >> y)
    if op in ("<", "<=", ">", ">="):
        raise AslRuntimeError(f"ordering comparison {op} of bits values")
    raise AslRuntimeError(f"unsupported bits operator {op}")
