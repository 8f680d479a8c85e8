"""Alike claims under a match constraint merged into counts of claims per label (solver/allocation/cp_sat/merge.py,
rules/matching.py): CP-SAT still returns the depth-first search's answer, device for device, whether the
guess without backtracking holds (decoded from the merged model) or not (decoded again with the claims apart)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasat.models.errors import Unschedulable
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import NodeInfo, Problem, allocate
from drasat.solver.allocation.cp_sat.model import build_model
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.inventory import build_inventory
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.verification.verifier import verify

NODE = NodeInfo("node-1")
SPLIT = "decoded again with such claims apart"


def _problem(numa: list[int], counts: list[int]) -> Problem:
    """Devices in this order on these NUMA nodes; one claim per count, each for that many devices on one NUMA node."""
    devices = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": n}}} for i, n in enumerate(numa)]
    node_slice = ResourceSlice.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "gpus"},
            "spec": {
                "driver": "d.example.com",
                "nodeName": NODE.name,
                "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        }
    )
    claims = [
        ResourceClaim.model_validate(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"claim-{c}"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpus", "exactly": {"deviceClassName": "any", "count": count}}],
                        "constraints": [{"matchAttribute": "d.example.com/numa"}],
                    }
                },
            }
        )
        for c, count in enumerate(counts)
    ]
    any_class = DeviceClass.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"}}
    )
    return Problem(node=NODE, slices=[node_slice], classes=[any_class], claims=claims)


def _devices(problem: Problem, solver: str, budget: int | None = None) -> tuple[dict | None, list[str]]:
    """Each claim's devices (None: unschedulable) and the notes of the search."""
    try:
        answer = allocate(problem, solver=solver, greedy_budget=budget)
    except Unschedulable:
        return None, []
    assert verify(problem, answer.results) == []
    return {n: [d.device for d in r.devices.results] for n, r in answer.results.items()}, answer.stats.notes


@pytest.mark.parametrize(
    "numa, counts, split",
    [
        ([0, 0, 1, 1, 2, 2], [2, 2, 2], False),  # each claim fills the next NUMA node: the guess holds
        ([2, 0, 1, 1, 2, 1, 2], [3, 3], True),  # the second claim starts on NUMA 0, which has one device
        ([1, 0, 2, 2, 0, 0, 0], [2, 2, 2], True),  # the first claim starts on NUMA 1, which has one device
    ],
)
def test_matched_claims_decode_kubernetes_answer(numa, counts, split):
    problem = _problem(numa, counts)
    greedy, _ = _devices(problem, "greedy")
    cp_sat, notes = _devices(problem, "cp-sat", budget=0)
    assert cp_sat == greedy
    assert any(SPLIT in note for note in notes) == split
    inv = build_inventory(problem)
    merged = build_model(inv, plan_claims(problem, inv, SelectorEvaluator()), merge=True)
    assert len(merged.plans) == len(counts) and len(merged.vars) == 1  # one count for all the claims


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    numa=st.lists(st.integers(0, 3), min_size=1, max_size=10),
    counts=st.lists(st.sampled_from([1, 2, 2, 3]), min_size=2, max_size=5),
)
def test_matched_claims_agree_with_depth_first_search(numa, counts):
    problem = _problem(numa, counts)
    assert _devices(problem, "cp-sat", budget=0)[0] == _devices(problem, "greedy")[0]


@pytest.mark.parametrize(
    "numa, counts",
    [
        ([2, 0, 1, 1, 2, 1, 2], [3, 3]),  # the guess goes wrong: the merged model cannot decode the second claim
        ([1, 0, 2, 2, 0, 0, 0], [2, 2, 2]),  # ... nor the first
    ],
)
def test_time_up_while_decoding_matched_claims_returns_the_allocation_found(numa, counts, monkeypatch):
    """After the first solve found an allocation, time runs out (every later solve): that allocation comes back,
    marked not exact, its merged claims each under one label, not a SolveTimeout from the model built again."""
    from drasat.models.errors import SolveTimeout
    from drasat.solver.allocation.cp_sat import stages

    real = stages.Stages.solve
    solved: list[bool] = []  # one deadline for the call: the model built again gets no solve either

    def solve(self, *assume, **options):  # type: ignore[no-untyped-def]
        if options.get("hint_only"):
            return False  # the guess checked by propagation alone: "no" says nothing, a real solve follows
        if solved:
            raise SolveTimeout("the CP-SAT solver ran out of time (raise --timeout)")
        solved.append(True)
        return real(self, *assume, **options)

    monkeypatch.setattr(stages.Stages, "solve", solve)
    problem = _problem(numa, counts)
    answer = allocate(problem, greedy_budget=0)
    assert not answer.stats.exact
    assert verify(problem, answer.results) == []
    assert sorted(answer.results) == sorted(c.name for c in problem.claims)


def test_solves_counted_include_those_of_the_merged_model(monkeypatch):
    """A split costs the merged model's solves and the model built again's: the stats count every one."""
    from drasat.solver.allocation.cp_sat import stages

    real, calls = stages.Stages.solve, []

    def solve(self, *assume, **options):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(self, *assume, **options)

    monkeypatch.setattr(stages.Stages, "solve", solve)
    answer = allocate(_problem([1, 0, 2, 2, 0, 0, 0], [2, 2, 2]), greedy_budget=0)
    assert any(SPLIT in note for note in answer.stats.notes)
    assert answer.stats.cp_sat_solves == len(calls)
