"""``allocate`` pauses Python's automatic garbage collection for the call, and gives it back as it found it --
also with several threads calling at once, and with the host switching the collector off or on meanwhile."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

import drasat.solver.allocation.api as api
from drasat.models.collector import collection_paused, collector_paused
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
        seen.append(not collection_paused())
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


def _blocking(monkeypatch: pytest.MonkeyPatch, hook):  # type: ignore[no-untyped-def]
    """plan_claims runs ``hook(call number)`` first: a call held inside, where the test wants it."""
    plan_claims, calls, lock = api.plan_claims, [], threading.Lock()

    def held(*args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            calls.append(None)
            number = len(calls)
        hook(number)
        return plan_claims(*args, **kwargs)

    monkeypatch.setattr(api, "plan_claims", held)


def _run(*targets) -> None:  # type: ignore[no-untyped-def]
    errors: list[BaseException] = []

    def guarded(target):  # type: ignore[no-untyped-def]
        try:
            target()
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread below
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []


def test_a_call_ending_leaves_the_collection_paused_for_a_call_still_running(monkeypatch) -> None:
    """Thread A's call starts first and ends first; thread B's call, still running, must stay paused."""
    a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()
    seen_by_b: list[bool] = []

    def hook(number: int) -> None:
        if number == 1:  # A
            a_inside.set()
            assert b_inside.wait(10)
        else:  # B: looks once A's call has returned
            assert a_inside.wait(10)
            b_inside.set()
            assert a_done.wait(10)
            seen_by_b.append(collection_paused())

    _blocking(monkeypatch, hook)
    gc.enable()
    before = gc.get_threshold()

    def first() -> None:
        allocate(problem(claim("a", gpus(1))), solver="greedy")
        a_done.set()

    def second() -> None:
        assert a_inside.wait(10)
        allocate(problem(claim("b", gpus(1))), solver="greedy")

    _run(first, second)
    assert seen_by_b == [True]
    assert gc.isenabled() and gc.get_threshold() == before


@pytest.mark.parametrize("switch", ["disable", "enable"])
def test_the_host_switching_the_collector_during_a_call_is_kept(monkeypatch, switch: str) -> None:
    inside, switched = threading.Event(), threading.Event()

    def hook(number: int) -> None:
        inside.set()
        assert switched.wait(10)

    _blocking(monkeypatch, hook)
    gc.enable() if switch == "disable" else gc.disable()
    before = gc.get_threshold()

    def host() -> None:
        assert inside.wait(10)
        getattr(gc, switch)()
        switched.set()

    try:
        _run(lambda: allocate(problem(claim("a", gpus(1))), solver="greedy"), host)
        assert gc.isenabled() is (switch == "enable")
        assert gc.get_threshold() == before
    finally:
        gc.enable()


def test_four_threads_calling_at_once_never_collect_inside_and_restore_the_thresholds(monkeypatch) -> None:
    collecting_inside: list[bool] = []
    _blocking(monkeypatch, lambda number: collecting_inside.append(not collection_paused()))
    gc.enable()
    gc.set_threshold(500, 7, 9)  # the host's own tuning, to be given back exactly
    try:

        def caller() -> None:
            for i in range(25):
                allocate(problem(claim(f"c{i}", gpus(1 + i % 2))), solver="greedy" if i % 2 else "cp-sat")

        _run(caller, caller, caller, caller)
        assert len(collecting_inside) == 100 and not any(collecting_inside)
        assert gc.isenabled() and gc.get_threshold() == (500, 7, 9)
    finally:
        gc.set_threshold(700, 10, 10)


def test_a_threshold_the_host_sets_during_a_pause_is_kept() -> None:
    before = gc.get_threshold()
    try:
        with collector_paused():
            assert collection_paused()
            gc.set_threshold(1234, 5, 6)
        assert gc.get_threshold() == (1234, 5, 6)
    finally:
        gc.set_threshold(*before)


def test_nested_pauses_end_with_the_outermost() -> None:
    gc.enable()
    before = gc.get_threshold()
    with collector_paused():
        with collector_paused():
            pass
        assert collection_paused()
    assert not collection_paused() and gc.get_threshold() == before
