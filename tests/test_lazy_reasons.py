"""An Unschedulable is a verdict with its data: it costs no explanation; ``explain`` gives one, proving nothing twice."""

from __future__ import annotations

import pytest

from drasat.models.errors import Unschedulable
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import NodeInfo, Problem, allocate, explain
from drasat.solver.explanation import explain as explanation


def _two_claims_one_gpu() -> Problem:
    gpu = ResourceSlice.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n",
                "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0"}],
            },
        }
    )
    cls = DeviceClass.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
    )
    claims = [
        ResourceClaim.model_validate(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"c{i}"},
                "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
            }
        )
        for i in range(2)
    ]
    return Problem(NodeInfo("n"), [gpu], [cls], claims)


@pytest.mark.parametrize("solver", ["greedy", "cp-sat"])
def test_a_verdict_costs_no_explanation_and_explain_gives_it_without_proving_again(monkeypatch, solver):
    explained, proved = [], []
    real_funnel, real_allocate = explanation.explain_funnel, explanation._allocate
    monkeypatch.setattr(explanation, "explain_funnel", lambda *a, **kw: explained.append(1) or real_funnel(*a, **kw))
    p = _two_claims_one_gpu()
    with pytest.raises(Unschedulable) as caught:
        allocate(p, solver=solver)
    assert explained == [] and caught.value.reasons == []
    assert caught.value.problem is p and caught.value.stats.greedy_steps > 0  # the depth-first search proved it
    monkeypatch.setattr(explanation, "_allocate", lambda *a, **kw: proved.append(1) or real_allocate(*a, **kw))
    found = explain(p, proven=caught.value)  # the library's explain, as README shows it
    assert explained == [1] and proved == []  # the verdict given is not proved a second time
    assert any("allocated at most once" in line for line in found.summary())
    assert explain(p).summary() == found.summary() and proved == [1]  # without it, explain proves it itself


def test_reasons_given_or_set_as_lists():
    failure = Unschedulable("no", reasons=["a"])
    assert failure.reasons == ["a"]
    failure.reasons = ["b"]
    assert failure.reasons == ["b"] and Unschedulable("no").reasons == []
