"""Greedy depth-first search and CP-SAT must return the same first-fit answer, and both must verify."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from drasat.models.errors import AllocationError, Unschedulable
from drasat.solver import allocate
from drasat.solver.verification.verifier import verify

from .problem_factory import problems

settings.register_profile("default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _answer(problem, **options):
    """The results, None when unschedulable, or the error text Kubernetes' search would return."""
    try:
        return allocate(problem, **options).results
    except Unschedulable:
        return None
    except AllocationError as exc:
        return str(exc)


def _devices(results):
    if results is None or isinstance(results, str):
        return results
    return {name: [(r.request, r.pool, r.device) for r in res.devices.results] for name, res in results.items()}


@given(problems())
def test_greedy_and_cp_sat_agree(problem):
    greedy = _answer(problem, solver="greedy")
    cp_sat = _answer(problem, solver="cp-sat", greedy_budget=0)
    assert _devices(cp_sat) == _devices(greedy)
    for answer in (greedy, cp_sat):
        if isinstance(answer, dict):
            assert verify(problem, answer) == []


@given(problems())
def test_prioritized_list_never_ranks_worse(problem):
    """The prioritized-list objective may pick other devices, but never later alternatives in total."""
    first_fit = _answer(problem, solver="cp-sat", greedy_budget=0)
    prioritized = _answer(problem, objective="prioritized-list")
    if isinstance(first_fit, str):
        return  # an error Kubernetes' search raises on the way; prioritized-list never searches that way
    assert (first_fit is None) == (prioritized is None)
    if prioritized is None:
        return
    assert verify(problem, prioritized) == []

    def rank(results):
        return sum(
            int(r.request.split("/s")[1]) for res in results.values() for r in res.devices.results if "/s" in r.request
        )

    assert rank(prioritized) <= rank(first_fit)
