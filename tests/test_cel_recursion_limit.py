"""drasat leaves its host's recursion limit alone, and still takes CEL as deep as Kubernetes does (250 levels):
walks that go deep continue on fresh threads (``solver/cel/stack.py``) instead of raising the limit."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from drasat.solver.cel import CelDevice, SelectorEvaluator, available_engines
from drasat.solver.cel import evaluator as evaluator_module
from drasat.solver.cel.errors import CelCompileError

from .test_cel_parse_limits import LISTENER, call_chain, parens, plus_chain

DEVICE = CelDevice(("driver", "pool", "gpu-0"), "gpu.example.com", {}, {})
DEEPEST = [plus_chain(249), call_chain(248), parens(249), "[" * 120 + "1" + "]" * 120 + " != []"]


def test_importing_and_using_drasat_leaves_the_recursion_limit_as_it_was() -> None:
    script = """
import sys
sys.setrecursionlimit(1234)
import drasat.cli.main, drasat.solver, drasat.solver.cel.syntax, drasat.solver.cel.engine_celpy
from drasat.cli.main import load_all_commands
from drasat.solver.cel import CelDevice, SelectorEvaluator, available_engines
load_all_commands()
device = CelDevice(("d", "p", "x"), "gpu.example.com", {}, {})
for engine in available_engines():
    assert SelectorEvaluator(engine).matches(" + ".join(["1"] * 249) + " > 0", device)
print(sys.getrecursionlimit())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1234"]


def _fresh(engine: str) -> SelectorEvaluator:
    evaluator_module._REGISTRY.pop(engine, None)  # no program compiled by an earlier test
    return SelectorEvaluator(engine)


def _at_depth(frames_left: int, work):  # type: ignore[no-untyped-def]
    """``work()`` called with only about ``frames_left`` frames to go before the host's limit."""

    def down(n: int):  # type: ignore[no-untyped-def]
        return work() if n <= 0 else down(n - 1)

    here = len(_stack())
    return down(sys.getrecursionlimit() - here - frames_left)


def _stack() -> list[object]:
    frame, frames = sys._getframe(), []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames


@pytest.mark.parametrize("engine", available_engines())
@pytest.mark.parametrize("limit", [1000, 400])
def test_the_deepest_expressions_kubernetes_accepts_run_under_the_hosts_limit(engine: str, limit: int) -> None:
    before = sys.getrecursionlimit()
    threads = threading.active_count()
    sys.setrecursionlimit(limit)
    try:
        for expression in DEEPEST:
            evaluator = _fresh(engine)
            assert _at_depth(150, lambda e=expression, ev=evaluator: ev.matches(e, DEVICE)) is True, expression
        with pytest.raises(CelCompileError) as refused:
            _fresh(engine).compile(plus_chain(250))
        assert refused.value.detail == f"compilation failed: {LISTENER}"
    finally:
        sys.setrecursionlimit(before)
    assert sys.getrecursionlimit() == before
    assert threading.active_count() == threads  # every thread a deep walk used has ended


def test_errors_raised_on_a_fresh_thread_reach_the_caller() -> None:
    from drasat.solver.cel.stack import deep

    @deep
    def fall(n: int) -> int:
        if n == 0:
            raise KeyError("bottom")
        return fall(n - 1)

    with pytest.raises(KeyError, match="bottom"):
        fall(400)  # far more levels than one thread takes: the error crossed several hops
