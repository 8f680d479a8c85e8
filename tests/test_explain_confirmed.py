"""drasat explain answers as ``allocate`` does: Kubernetes' own errors are the answer, and a fix is
offered only when ``allocate`` itself finds the changed claims an allocation (review of issue 12)."""

from __future__ import annotations

import pytest

from drasat.models.errors import EvaluationError
from drasat.solver import allocate
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.inventory import build_inventory
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.explanation.explain import explain, explain_funnel
from drasat.solver.explanation.fixes import find_fixes

from .explain_inputs import claim, gpus, problem

# Two GPU halves with no numa attribute, in a pool searched before node-1's GPUs.
HALVES = (
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: parts}\n"
    "spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: big-gpu, generation: 1, "
    "resourceSliceCount: 1}, devices: [{name: half-0}, {name: half-1}]}\n"
)
NUMA0 = "selectors: [{cel: {expression: 'device.attributes[\"example.com\"].numa == 0'}}]"


def test_a_selector_error_allocate_meets_is_explain_s_answer_even_when_a_request_is_short() -> None:
    p = problem(HALVES, claim("c3", gpus(3, extra=NUMA0)))
    with pytest.raises(EvaluationError) as solved:
        allocate(p)
    with pytest.raises(EvaluationError) as explained:
        explain(p)
    assert str(explained.value) == str(solved.value) and "no such key: numa" in str(solved.value)


def test_a_count_the_model_accepts_is_not_offered_when_allocate_refuses_it() -> None:
    """The CP-SAT model drops devices a selector fails on; Kubernetes' search stops at them. Even a
    model that says every count fits must not make "count 2 fits" a fix: allocate refuses it."""
    p = problem(HALVES, claim("c3", gpus(3, extra=NUMA0)))
    ev = SelectorEvaluator()
    inv = build_inventory(p)
    plans = plan_claims(p, inv, ev)
    found = explain_funnel(p, inv, plans, ev)
    involved = {(0, 0)}
    fixes = find_fixes(p, inv, plans, found.funnel, involved, ev, lambda *_: True, deadline=1e18)
    assert [fix.kind for fix in fixes] == []
    fine = problem(claim("c3", gpus(3, extra=NUMA0)))  # without the halves, count 2 is allocate's too
    inv = build_inventory(fine)
    plans = plan_claims(fine, inv, ev)
    fixes = find_fixes(
        fine, inv, plans, explain_funnel(fine, inv, plans, ev).funnel, involved, ev, lambda *_: True, deadline=1e18
    )
    assert [fix.text for fix in fixes] == ["claim d/c3, request gpu: count 2 fits (it asks 3)"]
