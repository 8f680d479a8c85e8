"""Derived attribute values (``SelectorEvaluator.value``): every row on both engines, which must agree.

A row is (id, expression, lists, expected): a Python value (compared with its exact
type: an int is never a bool), ``C("text")`` for a compile error whose detail contains
the text, or ``R("text")`` for a run-time error. ``lists`` is the DRAListTypeAttributes
gate. The rules are the seed's: string, int, bool, version, or a list of one of those.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from drasat.models.quantity import Quantity
from drasat.models.semver import Semver
from drasat.solver.cel import CelCompileError, CelDevice, CelRuntimeError, SelectorEvaluator, available_engines
from drasat.solver.cel.errors import MISSING_KEY_HINT

ENGINES = available_engines()
G = "gpu.example.com"
A = f'device.attributes["{G}"]'
NOT_SCALAR = "derived attribute must evaluate to string, int, bool, version or a list of those, not"
WRONG_VALUE = "derived attribute value has type"


@dataclass(frozen=True)
class C:
    text: str


@dataclass(frozen=True)
class R:
    text: str


GPU = CelDevice(
    key=(G, "pool", "slice", "gpu-0"),
    driver=G,
    attributes={
        "model": {"string": "a100"},
        "numa": {"int": 1},
        "healthy": {"bool": True},
        "driverVersion": {"version": "1.2.3+build.5"},
        "ints": {"ints": [3, 1]},
        "none": {"strings": []},
        "versions": {"versions": ["1.0.0", "2.0.0-rc.1"]},
        "numa.example.com/node": {"int": 0},
    },
    capacity={"memory": Quantity.parse("40Gi")},
)

ROWS: list[tuple[str, str, bool, object]] = [
    # scalars straight from attributes
    ("int", f"{A}.numa", False, 1),
    ("string", f"{A}.model", False, "a100"),
    ("bool", f"{A}.healthy", False, True),
    ("version-drops-build", f"{A}.driverVersion", False, Semver.parse("1.2.3")),
    ("other-domain", 'device.attributes["numa.example.com"].node', False, 0),
    ("driver", "device.driver", False, G),
    # computed values
    ("arithmetic", f"{A}.numa * 10 + 2", False, 12),
    ("string-concat", f'"numa" + string({A}.numa)', False, "numa1"),
    ("comparison", f"{A}.numa > 0", False, True),
    ("semver-literal", 'semver("2.1.0-rc.1")', False, Semver.parse("2.1.0-rc.1")),
    ("semver-major", f"{A}.driverVersion.major()", False, 1),
    ("bind", f"cel.bind(n, {A}.numa, n * 2)", False, 2),
    ("ternary", f'{A}.numa > 0 ? "high" : "low"', False, "high"),
    ("guarded-missing", f'has({A}.pcie) ? {A}.pcie : "none"', False, "none"),
    ("optional-orvalue", f"{A}.?pcie.orValue(-1)", False, -1),
    ("split-element", '"numa0-pcie1".split("-")[1]', False, "pcie1"),
    # lists
    ("list-attribute", f"{A}.ints", True, [3, 1]),
    ("list-versions", f"{A}.versions", True, [Semver.parse("1.0.0"), Semver.parse("2.0.0-rc.1")]),
    ("list-literal", '["a", "b"]', True, ["a", "b"]),
    ("list-map-macro", f"{A}.ints.map(i, i * 2)", True, [6, 2]),
    ("list-bools", "[true, false]", True, [True, False]),
    (
        "list-without-gate-compile",
        '["a", "b"]',
        False,
        C("not list(string) (list values need the DRAListTypeAttributes"),
    ),
    (
        "list-without-gate-runtime",
        f"{A}.ints",
        False,
        R(
            f"{WRONG_VALUE} list(int): it must be a string, int, bool or "
            "version (list values need the DRAListTypeAttributes feature)"
        ),
    ),
    ("list-mixed", "[1, 'a']", True, R("derived attribute value is a list mixing int and string")),
    ("list-empty-literal", "[]", True, R("derived attribute value is an empty list")),
    ("list-empty-attribute", f"{A}.none", True, R("derived attribute value is an empty list")),
    ("list-of-doubles", "[1.5]", True, C(f"{NOT_SCALAR} list(double)")),
    ("list-of-lists", "dyn([[1]])", True, R(f"{WRONG_VALUE} list(list(int))")),
    # wrong types
    ("double", "1.5", True, C(f"{NOT_SCALAR} double")),
    ("double-dyn", "dyn(1.5)", True, R(f"{WRONG_VALUE} double")),
    ("map", '{"a": 1}', True, C(f"{NOT_SCALAR} map(string, int)")),
    ("map-dyn", f'device.attributes["{G}"]', True, C(f"{NOT_SCALAR} map(string, dyn)")),
    ("map-dyn-runtime", 'dyn({"a": 1})', True, R(f"{WRONG_VALUE} map")),
    ("quantity", f'device.capacity["{G}"].memory', True, R(f"{WRONG_VALUE} kubernetes.Quantity")),
    ("quantity-static", 'quantity("1Gi")', True, C(f"{NOT_SCALAR} kubernetes.Quantity")),
    ("uint", "dyn(1u)", True, R(f"{WRONG_VALUE} uint")),
    ("null", "null", True, C(f"{NOT_SCALAR} null_type")),
    ("bytes", 'b"x"', True, C(f"{NOT_SCALAR} bytes")),
    ("optional", f"{A}.?numa", True, C(f"{NOT_SCALAR} optional_type(dyn)")),
    # errors
    ("missing-attribute", f"{A}.pcie", True, R("no such key: pcie" + MISSING_KEY_HINT)),
    ("division-by-zero", f"{A}.numa / 0", True, R("division by zero")),
    ("undeclared", "numa", True, C("undeclared reference to 'numa'")),
    ("syntax", f"{A}.numa +", True, C("compilation failed: ERROR: <input>:1:")),
    ("mixed-ternary", f'{A}.numa > 0 ? 1 : "a"', True, C("found no matching overload for '_?_:_'")),
]


def _outcome(evaluator: SelectorEvaluator, expression: str, lists: bool) -> object:
    try:
        return evaluator.value(expression, GPU, lists=lists)
    except CelCompileError as exc:
        return C(exc.detail)
    except CelRuntimeError as exc:
        return R(exc.detail)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("expression, lists, expected", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_value(engine: str, expression: str, lists: bool, expected: object) -> None:
    got = _outcome(SelectorEvaluator(engine), expression, lists)
    if isinstance(expected, (C, R)):
        assert type(got) is type(expected), got
        assert expected.text in got.text  # type: ignore[union-attr]
    else:
        assert got == expected and type(got) is type(expected), got
        if isinstance(got, list):
            assert [type(v) for v in got] == [type(v) for v in expected]  # type: ignore[attr-defined]


@pytest.mark.skipif(len(ENGINES) < 2, reason="only one CEL engine is installed")
def test_engines_agree_on_every_row() -> None:
    evaluators = [SelectorEvaluator(engine) for engine in ENGINES]
    for name, expression, lists, _ in ROWS:
        first, second = (_outcome(ev, expression, lists) for ev in evaluators)
        assert type(first) is type(second), name
        if isinstance(first, list) and isinstance(second, list):
            assert [(type(v), str(v)) for v in first] == [(type(v), str(v)) for v in second], name
        elif name != "syntax":  # parsers word syntax errors differently; both give line, column and caret
            assert (type(first), str(first)) == (type(second), str(second)), name


@pytest.mark.parametrize("engine", ENGINES)
def test_values_and_errors_are_cached_per_pair(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    evaluator = SelectorEvaluator(engine)
    calls = []
    original = evaluator._engine.value

    def counted(program: object, device: object) -> object:
        calls.append(1)
        return original(program, device)

    monkeypatch.setattr(evaluator._engine, "value", counted)
    for _ in range(3):
        assert evaluator.value(f"{A}.numa", GPU, lists=False) == 1
        with pytest.raises(CelRuntimeError, match="no such key: pcie"):
            evaluator.value(f"{A}.pcie", GPU, lists=False)
        with pytest.raises(CelCompileError, match="not double") as info:
            evaluator.value("2.5", GPU, lists=False)
        assert info.value.expression == "2.5"
    assert len(calls) == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_returned_lists_are_copies(engine: str) -> None:
    evaluator = SelectorEvaluator(engine)
    first = evaluator.value(f"{A}.ints", GPU, lists=True)
    assert isinstance(first, list)
    first.append(99)
    assert evaluator.value(f"{A}.ints", GPU, lists=True) == [3, 1]


@pytest.mark.parametrize("engine", ENGINES)
def test_compile_value_checks_the_static_type_only(engine: str) -> None:
    evaluator = SelectorEvaluator(engine)
    evaluator.compile_value(f"{A}.pcie", lists=False)  # dyn: only a device can tell
    evaluator.compile_value("[1, 2]", lists=True)
    with pytest.raises(CelCompileError, match=r"not list\(int\)"):
        evaluator.compile_value("[1, 2]", lists=False)
    with pytest.raises(CelCompileError, match="^derived attribute must evaluate to .* not double$"):
        evaluator.compile_value("1.0 / 3.0", lists=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_selectors_keep_their_own_rule(engine: str) -> None:
    """One compiled program, two uses: a value expression is no selector and the reverse."""
    evaluator = SelectorEvaluator(engine)
    assert evaluator.value(f"{A}.numa", GPU, lists=False) == 1
    with pytest.raises(CelCompileError, match="must evaluate to bool or the unknown type, not int"):
        evaluator.matches(f"{A}.numa + 1", GPU)
    assert evaluator.value(f"{A}.numa + 1", GPU, lists=False) == 2
    assert evaluator.matches(f"{A}.numa == 1", GPU) is True
    assert evaluator.value(f"{A}.numa == 1", GPU, lists=False) is True
    with pytest.raises(CelRuntimeError, match="could not be converted to bool"):
        evaluator.matches(f"{A}.numa", GPU)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_malformed_device_fails_every_value(engine: str) -> None:
    bad = CelDevice(key=(G, "pool", "slice", "bad-0"), driver=G, attributes={"v": {"version": "1.2"}}, capacity={})
    with pytest.raises(CelRuntimeError, match="attribute v: parse semantic version"):
        SelectorEvaluator(engine).value("1", bad, lists=False)
