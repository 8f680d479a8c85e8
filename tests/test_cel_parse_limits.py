"""cel-go's parser limits (Kubernetes keeps cel-go's defaults) and Kubernetes' run-time cost limit.

cel-go refuses an expression nested more than 250 levels, counted by its ANTLR listener
per grammar rule ("expression recursion limit exceeded: 250") and by its AST builder
("max recursion depth exceeded"). cel-cpp, behind the cel-expr engine, stops at 32:
drasat must accept what Kubernetes accepts on every engine. At run time Kubernetes
stops at 1,000,000 cost units, not at cel-cpp's 10,000 iterations.
"""

from __future__ import annotations

import pytest

from drasat.solver.cel import CelDevice, SelectorEvaluator, available_engines
from drasat.solver.cel.errors import CelCompileError
from drasat.solver.cel.syntax import parse

DEVICE = CelDevice(("driver", "pool", "gpu-0"), "gpu.example.com", {}, {})
LISTENER = "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
VISITOR = "ERROR: <input>:-1:0: max recursion depth exceeded"


def plus_chain(terms: int) -> str:
    return " + ".join(["1"] * terms) + " > 0"


def call_chain(calls: int) -> str:
    return "device.driver" + ".lowerAscii()" * calls + ' == "gpu.example.com"'


def parens(levels: int) -> str:
    return "(" * levels + "true" + ")" * levels


def mixed(selects: int, terms: int) -> str:
    """Selections inside the left operand of a ``+`` chain: only the AST builder adds them up."""
    return "{'a': {'a': 1}}" + ".a" * selects + " + 1" * terms + " > 0"


@pytest.fixture(params=available_engines())
def evaluator(request: pytest.FixtureRequest) -> SelectorEvaluator:
    return SelectorEvaluator(request.param)


@pytest.mark.parametrize(
    "below, above", [(plus_chain(249), plus_chain(250)), (call_chain(248), call_chain(249)), (parens(249), parens(250))]
)
def test_the_listener_limit(evaluator: SelectorEvaluator, below: str, above: str) -> None:
    assert evaluator.matches(below, DEVICE) is True
    with pytest.raises(CelCompileError) as refused:
        evaluator.compile(above)
    assert refused.value.detail == f"compilation failed: {LISTENER}"


def test_a_chain_kubernetes_accepts_and_cel_cpp_alone_would_not(evaluator: SelectorEvaluator) -> None:
    assert evaluator.matches(plus_chain(41), DEVICE) is True
    assert evaluator.matches(call_chain(30), DEVICE) is True


def test_the_ast_builder_limit_adds_up_different_rules() -> None:
    parse(mixed(124, 125))  # 124 selections + 125 additions + 1 comparison = 250 visits
    with pytest.raises(CelCompileError) as refused:
        parse(mixed(125, 125))
    assert refused.value.detail == f"compilation failed: {VISITOR}"


def test_code_point_limit() -> None:
    with pytest.raises(CelCompileError, match="expression code point size exceeds limit: size: 100001, limit 100000"):
        parse("'" + "x" * 99_999 + "'")


LIST100 = "[" + ",".join(str(i) for i in range(100)) + "]"


def test_ten_thousand_iterations_are_within_kubernetes_cost_limit(evaluator: SelectorEvaluator) -> None:
    """Estimated cost 71,411: Kubernetes evaluates it, although cel-cpp stops at 10,000 iterations."""
    assert evaluator.matches(f"{LIST100}.all(x, {LIST100}.all(y, x + y >= 0))", DEVICE) is True


def right_nested(levels: int) -> str:
    """``1 + (1 + (1 + ...))``: each level keeps three ``calc`` contexts open (the invocation, the
    operator, the right operand's invocation) while the parenthesised rest is parsed."""
    body = "1"
    for _ in range(levels):
        body = f"1 + ({body})"
    return body + " > 0"


def test_contexts_stay_open_across_parentheses() -> None:
    parse(right_nested(83))  # 3 * 83 + 1 = 250 open calc contexts
    with pytest.raises(CelCompileError) as refused:
        parse(right_nested(84))
    assert refused.value.detail == f"compilation failed: {LISTENER}"
