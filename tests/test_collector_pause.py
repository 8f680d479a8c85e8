"""``allocate`` pauses Python's cyclic garbage collector for the call, and gives it back as it found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

import drasat.solver.allocation.api as api
from drasat.models.errors import InputError, Unschedulable
from drasat.solver import allocate
from drasat.solver.verification.verifier import verify

from .explain_inputs import claim, gpus, problem


@pytest.fixture()
def collecting_while_planning(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Whether the collector ran while each call planned its claims (a stage inside the call)."""
    seen: list[bool] = []
    plan_claims = api.plan_claims

    def observed(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return plan_claims(*args, **kwargs)

    monkeypatch.setattr(api, "plan_claims", observed)
    was_enabled = gc.isenabled()
    yield seen
    if was_enabled:
        gc.enable()


@pytest.mark.parametrize("solver", ["greedy", "cp-sat"])
def test_the_collector_is_paused_inside_the_call_and_running_after_it(
    collecting_while_planning: list[bool], solver: str
) -> None:
    p = problem(claim("one", gpus(2)))
    gc.enable()
    answer = allocate(p, solver=solver)
    assert verify(p, answer.results) == []
    assert collecting_while_planning == [False]
    assert gc.isenabled()


def test_the_collector_runs_again_after_a_refused_call(collecting_while_planning: list[bool]) -> None:
    gc.enable()
    with pytest.raises(Unschedulable):
        allocate(problem(claim("big", gpus(6))))
    assert collecting_while_planning == [False]
    assert gc.isenabled()
    with pytest.raises(InputError):
        allocate(problem(claim("one", gpus(1))), solver="no-such-solver")
    assert gc.isenabled()


def test_a_collector_the_caller_paused_stays_paused(collecting_while_planning: list[bool]) -> None:
    p = problem(claim("one", gpus(1)))
    gc.disable()
    answer = allocate(p)
    assert verify(p, answer.results) == []
    assert not gc.isenabled()
    assert collecting_while_planning == [False]
