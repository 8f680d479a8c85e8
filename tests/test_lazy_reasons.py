"""An Unschedulable's reasons are worked out when read, once: a verdict alone costs no explanation."""

from __future__ import annotations

import pytest

from drasat.models.errors import Unschedulable
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import NodeInfo, Problem, allocate
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
def test_reasons_worked_out_when_read_and_once(monkeypatch, solver):
    calls = []
    real = explanation.explain  # allocate imports it when the reasons are read
    monkeypatch.setattr(explanation, "explain", lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    with pytest.raises(Unschedulable) as caught:
        allocate(_two_claims_one_gpu(), solver=solver)
    assert calls == []
    first = caught.value.reasons
    assert first and caught.value.reasons == first and calls == [1]


def test_reasons_given_or_set_as_lists():
    failure = Unschedulable("no", reasons=["a"])
    assert failure.reasons == ["a"]
    failure.reasons = ["b"]
    assert failure.reasons == ["b"] and Unschedulable("no").reasons == []
