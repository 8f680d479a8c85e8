"""The public interface of drasat.solver.cel: engine choice, caching, errors, threads."""

from __future__ import annotations

import threading

import pytest

from drasat.models.errors import EvaluationError, SelectorError
from drasat.models.quantity import Quantity
from drasat.solver import cel
from drasat.solver.cel import (
    CelCompileError,
    CelDevice,
    CelRuntimeError,
    SelectorEvaluator,
    available_engines,
    default_engine_name,
)

ENGINES = available_engines()
DEV = CelDevice(
    key=("d", "p", "s", "dev-0"),
    driver="d",
    attributes={"model": {"string": "x"}},
    capacity={"mem": Quantity.parse("1Gi")},
)


def test_available_engines_lists_known_names() -> None:
    assert "celpy" in ENGINES
    assert set(ENGINES) <= {"cel-expr", "celpy"}


def test_default_engine_prefers_cel_expr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DRASAT_CEL_ENGINE", raising=False)
    assert default_engine_name() == ENGINES[0]
    monkeypatch.setenv("DRASAT_CEL_ENGINE", "celpy")
    assert default_engine_name() == "celpy"
    assert SelectorEvaluator().engine_name == "celpy"
    monkeypatch.setenv("DRASAT_CEL_ENGINE", "nonsense")
    with pytest.raises(ValueError):
        default_engine_name()


def test_unknown_engine_is_rejected() -> None:
    with pytest.raises(ValueError):
        SelectorEvaluator("v8")


def test_error_classes_fit_drasats_hierarchy() -> None:
    assert issubclass(CelCompileError, SelectorError)
    assert issubclass(CelRuntimeError, EvaluationError)
    assert set(cel.__all__) == {
        "CelDevice",
        "CelCompileError",
        "CelRuntimeError",
        "SelectorEvaluator",
        "available_engines",
        "default_engine_name",
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_compile_reports_detail_with_caret(engine: str) -> None:
    evaluator = SelectorEvaluator(engine)
    with pytest.raises(CelCompileError) as info:
        evaluator.compile("device.driver == 1 && noSuch")
    lines = info.value.detail.split("\n")
    assert lines[0].startswith("compilation failed: ERROR: <input>:1:")
    assert lines[1] == " | device.driver == 1 && noSuch"
    assert lines[2].endswith("^")
    evaluator.compile('device.driver == "d"')  # compiles: no exception


@pytest.mark.parametrize("engine", ENGINES)
def test_results_and_errors_are_cached_per_pair(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    evaluator = SelectorEvaluator(engine)
    calls = []
    original = evaluator._engine.evaluate
    monkeypatch.setattr(evaluator._engine, "evaluate", lambda p, d: calls.append(1) or original(p, d))
    for _ in range(3):
        assert evaluator.matches('device.attributes["d"].model == "x"', DEV) is True
        with pytest.raises(CelRuntimeError, match="no such key: nope"):
            evaluator.matches('device.attributes["d"].nope == 1', DEV)
    assert len(calls) == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_compile_errors_are_cached_and_raised_again(engine: str) -> None:
    evaluator = SelectorEvaluator(engine)
    for _ in range(2):
        with pytest.raises(CelCompileError, match="must evaluate to bool"):
            evaluator.matches("1 + 1", DEV)


@pytest.mark.parametrize("engine", ENGINES)
def test_evaluation_off_the_main_thread(engine: str) -> None:
    results: list[object] = []

    def work() -> None:
        ev = SelectorEvaluator(engine)
        try:
            results.append(
                ev.matches(
                    "["
                    + ",".join(map(str, range(100)))
                    + "].all(x, ["
                    + ",".join(map(str, range(100)))
                    + "].all(y, x + y >= 0))",
                    DEV,
                )
            )
        except CelRuntimeError as exc:
            results.append(exc.detail)
        results.append(ev.matches('device.capacity["d"].mem.compareTo(quantity("1024Mi")) == 0', DEV))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    # 10,000 iterations: past cel-cpp's budget but well within Kubernetes' cost limit (estimate 71,411)
    assert results == [True, True]


@pytest.mark.skipif(len(ENGINES) < 2, reason="needs both engines")
def test_engines_share_nothing_but_agree() -> None:
    a, b = SelectorEvaluator("cel-expr"), SelectorEvaluator("celpy")
    expression = 'device.capacity["d"].mem.isGreaterThan(quantity("1G")) && device.attributes["d"].model == "x"'
    assert a.matches(expression, DEV) is b.matches(expression, DEV) is True
