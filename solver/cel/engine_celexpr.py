"""The cel-expr-python engine (Google's C++ CEL runtime), in the "checked-fast" design.

Two environments, one per job:

* the *check* environment types ``device`` as the message ``kubernetes.DRADevice`` and
  Quantity/Semver as messages, so ``quantity("1") == 1``, ``device.nosuch`` and
  undeclared names fail at compile time with cel's own texts, as in Kubernetes;
* the *run* environment sees ``device`` as a plain map and carries Quantity and Semver as
  tagged ``bytes`` (a distinct runtime kind, which attributes never produce), so
  evaluation needs no protobuf messages and the library overloads can be told apart by
  kind (``add(quantity)`` vs ``add(int)``); the carriers live in :mod:`.celexpr_values`.

cel-expr-python 0.1.3 leaks a reference per call into a Python function; drasat caches
every (expression, device) result, so each pair pays that at most once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor_pool, struct_pb2

from . import library as lib
from .analysis import Analysis, DriverTest, Needs, analyse
from .celexpr_device import CelExprDevice, Plan
from .celexpr_values import adapt, decode, encode, go_type, to_value
from .check_proto import CHECK_FILE
from .device import CelDevice
from .errors import COST_EXCEEDED, CelCompileError, CelRuntimeError, compilation_failed, missing_key, non_bool_result
from .syntax import Node, parse

NAME = "cel-expr"


def available() -> bool:
    try:
        import cel_expr_python.cel  # noqa: F401
    except ImportError:
        return False
    return True


# --- environments ---------------------------------------------------------------------
def _pool() -> descriptor_pool.DescriptorPool:
    """Quantity, Semver and DRADevice as messages (see :mod:`.check_proto`), built at run time (no protoc needed)."""
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(struct_pb2.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(CHECK_FILE)
    return pool


def _declarations(check: bool) -> list[Any]:
    """Kubernetes' quantity, semver and includes functions; typed faithfully only for checking."""
    from cel_expr_python import cel

    T = cel.Type
    q = T("kubernetes.Quantity") if check else T.BYTES
    s = T("kubernetes.Semver") if check else T.BYTES
    B, INT, D, STR = T.BOOL, T.INT, T.DOUBLE, T.STRING

    def ov(oid: str, ret: Any, params: list[Any], member: bool, fn: Callable[..., Any] | None) -> Any:
        kwargs = {} if check or fn is None else {"impl": adapt(fn)}
        return cel.Overload(oid, ret, params, is_member=member, **kwargs)

    cmp_impl = lib.compare_to
    table = {
        "quantity": [ov("string_to_quantity", q, [STR], False, lib.quantity)],
        "isQuantity": [ov("is_quantity_string", B, [STR], False, lib.is_quantity)],
        "isInteger": [ov("quantity_is_integer", B, [q], True, lib.is_integer)],
        "asInteger": [ov("quantity_get_int", INT, [q], True, lib.as_integer)],
        "asApproximateFloat": [ov("quantity_get_float", D, [q], True, lib.as_approximate_float)],
        "add": [ov("quantity_add", q, [q, q], True, lib.add), ov("quantity_add_int", q, [q, INT], True, lib.add)],
        "sub": [ov("quantity_sub", q, [q, q], True, lib.sub), ov("quantity_sub_int", q, [q, INT], True, lib.sub)],
        "semver": [
            ov("string_to_semver", s, [STR], False, lib.semver),
            ov("string_bool_to_semver", s, [STR, B], False, lib.semver),
        ],
        "isSemver": [
            ov("is_semver_string", B, [STR], False, lib.is_semver),
            ov("is_semver_string_bool", B, [STR, B], False, lib.is_semver),
        ],
        "major": [ov("semver_major", INT, [s], True, lambda v: lib.semver_part(v, "major"))],
        "minor": [ov("semver_minor", INT, [s], True, lambda v: lib.semver_part(v, "minor"))],
        "patch": [ov("semver_patch", INT, [s], True, lambda v: lib.semver_part(v, "patch"))],
    }
    for name, fn in (
        ("compareTo", cmp_impl),
        ("isGreaterThan", lambda a, b: cmp_impl(a, b) > 0),
        ("isLessThan", lambda a, b: cmp_impl(a, b) < 0),
    ):
        ret = INT if name == "compareTo" else B
        table[name] = [ov(f"quantity_{name}", ret, [q, q], True, fn)]
        if check:  # in the run environment one bytes/bytes overload serves both
            table[name].append(ov(f"semver_{name}", ret, [s, s], True, fn))
    table["includes"] = _includes(check, ov)
    return [cel.FunctionDecl(name, overloads) for name, overloads in table.items()]


def _includes(check: bool, ov: Callable[..., Any]) -> list[Any]:
    """DRA's ``dyn.includes(dyn)``; at run time one overload per kind pair (dyn never matches)."""
    from cel_expr_python import cel

    T = cel.Type
    if check:
        return [ov("dra_includes_dyn_dyn", T.BOOL, [T.DYN, T.DYN], True, None)]
    kinds = {
        "string": T.STRING,
        "int": T.INT,
        "uint": T.UINT,
        "bool": T.BOOL,
        "double": T.DOUBLE,
        "bytes": T.BYTES,
        "list": T.List(T.DYN),
    }
    return [
        ov(f"dra_includes_{a}_{b}", T.BOOL, [ta, tb], True, lib.includes)
        for a, ta in kinds.items()
        for b, tb in kinds.items()
    ]


class _Envs:
    """Both environments, built once per process on first use."""

    def __init__(self) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

        def extensions() -> list[Any]:
            return [ext_bindings.ExtBindings(), ext_strings.ExtStrings(version=2), ext_optional.ExtOptional()]

        self.check = cel.NewEnv(
            descriptor_pool=_pool(),
            variables={"device": cel.Type("kubernetes.DRADevice")},
            extensions=extensions(),
            functions=_declarations(check=True),
        )
        self.run = cel.NewEnv(
            variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
            extensions=extensions(),
            functions=_declarations(check=False),
        )


# --- compile and evaluate ----------------------------------------------------------------
_GO_PARSER_LIMITS = ("recursion limit exceeded", "max recursion depth exceeded", "code point size exceeds limit")
_STATUS = re.compile(r"^[A-Z_]+: ")
_SUFFIX = re.compile(r" \[[A-Z_]+\]$")


def _clean(message: str) -> str:
    return _SUFFIX.sub("", _STATUS.sub("", message.strip()))


class Program:
    """A compiled expression: the run-environment program, what it reads of a device, and its
    checked result type in cel-go's spelling (whether that type is right depends on the use)."""

    __slots__ = ("expression", "needs", "driver", "plan", "result", "memo", "text", "fallback")

    def __init__(self, expression: Any, needs: Needs, driver: DriverTest | None, result: str, text: str = "") -> None:
        self.expression, self.needs, self.driver, self.result = expression, needs, driver, result
        self.plan = Plan(needs)
        self.memo: dict[Any, bool | str] = {}  # selector result (or error text) by what it read
        self.text = text
        self.fallback: Any = None  # the celpy program, once cel-expr's iteration budget was hit


_MEMO_SIZE = 65536


def _frozen(data: Any) -> Any:
    """A hashable copy of projected device data (nested dicts and lists of plain values)."""
    if isinstance(data, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in data.items()))
    if isinstance(data, list):
        return ("list", tuple(_frozen(v) for v in data))
    return (data.__class__, data)


class CelExprEngine:
    """Compiles selectors and evaluates them on device data; stateless apart from the envs."""

    name = NAME

    def __init__(self) -> None:
        self._envs: _Envs | None = None
        self._lock = threading.Lock()
        self._celpy_engine: Any = None

    def _celpy(self) -> Any:
        """The pure-Python engine, for what cel-cpp's fixed limits refuse but Kubernetes accepts:
        nesting deeper than cel-cpp's 32 levels (cel-go allows 250), and evaluations longer than
        cel-cpp's 10,000 iterations (Kubernetes allows 1,000,000 cost units)."""
        with self._lock:
            if self._celpy_engine is None:
                from .engine_celpy import CelpyEngine

                self._celpy_engine = CelpyEngine()
            return self._celpy_engine

    def _env(self) -> _Envs:
        with self._lock:
            if self._envs is None:
                self._envs = _Envs()
            return self._envs

    def compile(self, text: str) -> Program:
        envs = self._env()
        parsed = None
        try:
            parsed = parse(text)
            analysis: Analysis | None = analyse(parsed, _fold)
        except CelCompileError as exc:
            if any(limit in exc.detail for limit in _GO_PARSER_LIMITS):
                raise  # cel-go's parser limits, which cel-cpp's parser does not share
            analysis = None  # cel-expr's own parser reports the problem below, in its words
        try:
            checked = envs.check.compile(text)
        except RuntimeError as exc:
            if parsed is not None and "recursion" in str(exc).lower():
                return self._celpy().compile(text)  # within cel-go's 250 levels, beyond cel-cpp's 32
            raise CelCompileError(compilation_failed(_clean(str(exc))), text) from None
        if analysis is None:  # cel-expr accepts what the neutral parser rejected: limits first
            analyse(parse(text))
        assert analysis is not None
        try:
            program = envs.run.compile(analysis.rewritten)
        except RuntimeError as exc:  # pragma: no cover - the check environment accepted it
            raise CelCompileError(compilation_failed(_clean(str(exc))), text) from None
        return Program(program, analysis.needs, analysis.driver, go_type(checked.return_type().name()), text)

    def prepare(self, device: CelDevice) -> CelExprDevice:
        """The device's per-evaluator form; carriers are built lazily, only for what is read."""
        return CelExprDevice(device)

    def evaluate(self, program: Program, device: CelExprDevice) -> bool:
        """A selector's verdict. Devices that look the same to the expression (same values of
        everything it reads) get the same verdict: a node of identical GPUs costs one run."""
        if program.__class__ is not Program:  # compiled by celpy (see compile)
            return bool(self._celpy().evaluate(program, device.for_celpy(self._celpy())))
        key = None if program.needs.full else _frozen(device.project(program.plan))
        hit = program.memo.get(key) if key is not None else None
        if hit is None:
            hit = self._verdict(program, device)
            if key is not None:
                if len(program.memo) >= _MEMO_SIZE:
                    program.memo.clear()
                program.memo[key] = hit
        if isinstance(hit, bool):
            return hit
        raise CelRuntimeError(hit)

    def _verdict(self, program: Program, device: CelExprDevice) -> bool | str:
        try:
            value = self._run(program, device)
        except _BudgetExceeded:  # cel-cpp's iteration budget is not Kubernetes' cost limit: ask celpy
            if not _within_limit(program):
                return COST_EXCEEDED
            try:
                return bool(self._celpy().evaluate(self._fallback(program), device.for_celpy(self._celpy())))
            except CelRuntimeError as exc:
                return exc.detail
        kind = value.type().name()
        if kind == "BOOL":
            return bool(value.value())
        if kind == "ERROR":
            return _runtime_text(str(value.value()))
        return non_bool_result(_result_type(kind, value))

    def _fallback(self, program: Program) -> Any:
        if program.fallback is None:
            program.fallback = self._celpy().compile(program.text)
        return program.fallback

    def value(self, program: Program, device: CelExprDevice) -> Any:
        """The result in the neutral form :func:`.values.checked` takes (a derived attribute's value)."""
        if program.__class__ is not Program:  # compiled by celpy (see compile)
            return self._celpy().value(program, device.for_celpy(self._celpy()))
        try:
            value = self._run(program, device)
        except _BudgetExceeded:
            if not _within_limit(program):
                raise CelRuntimeError(COST_EXCEEDED) from None
            return self._celpy().value(self._fallback(program), device.for_celpy(self._celpy()))
        if value.type().name() == "ERROR":
            try:
                text = str(value.value())
            except (TypeError, RuntimeError):  # an optional value, which Python cannot read
                return to_value(value)
            raise CelRuntimeError(_runtime_text(text))
        return to_value(value)

    def _run(self, program: Program, device: CelExprDevice) -> Any:
        data = device.full() if program.needs.full else device.project(program.plan)
        try:
            value = program.expression.eval(data={"device": data})
        except RuntimeError as exc:
            text = _runtime_text(str(exc))
            raise (_BudgetExceeded() if text == COST_EXCEEDED else CelRuntimeError(text)) from None
        if value.type().name() == "ERROR" and _error_text(value) == COST_EXCEEDED:
            raise _BudgetExceeded()
        return value


class _BudgetExceeded(Exception):
    """cel-cpp stopped at its fixed 10,000 iterations."""


def _within_limit(program: Program) -> bool:
    """Whether Kubernetes' estimate keeps the program under its run-time limit, so that Kubernetes
    would have finished what cel-cpp stopped (see the celpy engine for the other case)."""
    from .cost import MAX_COST, estimated_cost  # the cost model (and its type checker) only for this rare case

    cost = estimated_cost(program.text)
    return cost is None or cost <= MAX_COST


def _error_text(value: Any) -> str:
    try:
        return _runtime_text(str(value.value()))
    except (TypeError, RuntimeError):  # an optional value, which Python cannot read
        return ""


def _fold(node: Node) -> str | None:
    """``quantity("40Gi")`` / ``semver("1.2.3")`` with literal arguments -> a bytes literal carrier.

    Invalid literals are left alone so that they still fail at run time, as in Kubernetes.
    """
    if node.target is not None or node.name not in ("quantity", "semver") or not node.args:
        return None
    if not all(a.kind == "literal" for a in node.args):
        return None
    try:
        value = (lib.quantity if node.name == "quantity" else lib.semver)(*(a.value for a in node.args))
    except (lib.LibError, TypeError):
        return None
    carrier = encode(value)
    return 'b"' + "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:03o}" for c in carrier) + '"'


def _result_type(kind: str, value: Any) -> str:
    if kind == "BYTES":
        return lib.type_name(decode(value.value()))
    return go_type(kind).split("(")[0]


_KEY = re.compile(r'Key not found in map : "?(.*?)"?$')


def _runtime_text(message: str) -> str:
    """cel-cpp's run-time texts in Kubernetes' (cel-go's) words where they differ."""
    text = _clean(message)
    if "Iteration budget exceeded" in text:
        return COST_EXCEEDED
    found = _KEY.search(text)
    if found:
        return missing_key(found.group(1))
    if text.startswith("No matching overloads found"):
        return lib.NO_SUCH_OVERLOAD
    if text == "divide by zero":
        return "division by zero"
    if text.startswith("modulus by zero"):
        return "modulus by zero"
    return text
