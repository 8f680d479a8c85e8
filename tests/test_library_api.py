"""The library as a Python user meets it: the public names, their docstrings, data in errors, client objects."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import drasat.models
import drasat.solver
from drasat.models.errors import Unschedulable
from drasat.models.loader import load_paths, load_text
from drasat.solver import allocate, explain
from drasat.solver.allocation.problem import problem_from_objects
from drasat.solver.explanation.explain import Explanation
from drasat.solver.verification.verifier import verify

from .explain_inputs import NODE, assert_choice_verifies, claim, gpus, problem

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_dir_of_the_solver_package_is_its_public_api() -> None:
    assert dir(drasat.solver) == sorted(drasat.solver.__all__)
    for name in ("allocate", "schedule", "explain", "explain_pods", "Explanation", "Problem"):
        assert name in drasat.solver.__all__
        assert inspect.getdoc(getattr(drasat.solver, name)), name


def _modules() -> list[str]:
    """Every module of drasat.models and drasat.solver (the CEL engine's own library functions aside)."""
    return [
        m.name
        for pkg in (drasat.models, drasat.solver)
        for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
        if not m.name.startswith("drasat.solver.cel")
    ]


@pytest.mark.parametrize("name", _modules())
def test_every_public_class_and_function_says_what_it_is(name: str) -> None:
    module = importlib.import_module(name)
    undocumented = [
        attr
        for attr, obj in vars(module).items()
        if not attr.startswith("_")
        and getattr(obj, "__module__", None) == module.__name__
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and not (obj.__doc__ or "").strip()
    ]
    assert undocumented == []


def test_unschedulable_carries_the_question_and_explain_gives_the_funnel_as_data() -> None:
    p = problem(claim("big", gpus(6)))
    with pytest.raises(Unschedulable) as caught:
        allocate(p)
    assert caught.value.problem is p and caught.value.reasons == []  # a verdict: no explanation worked out
    found = explain(p, proven=caught.value)
    assert isinstance(found, Explanation) and found.short_requests == ["claim d/big, request gpu"]
    (funnel,) = found.funnel
    assert (funnel.needs, funnel.candidates, funnel.offered) == (6, 4, 5)
    assert [(s.removed, s.devices) for s in funnel.steps] == [(1, ["nic.example.com/node-1/nic-0"])]
    assert found.summary()[0].startswith("claim d/big, request gpu: 4 candidate(s), needs 6")


def test_results_by_namespace_and_name() -> None:
    p = problem(claim("fits", gpus(2)))
    answer = allocate(p)
    assert list(answer.results) == ["d/fits"]
    assert verify(p, answer.results) == []


def test_explain_shows_the_choice_of_a_feasible_input() -> None:
    p = problem(claim("fits", gpus(2)))
    found = explain(p)
    assert [(c.claim, c.request) for c in found.choice] == [("d/fits", "gpu"), ("d/fits", "gpu")]
    assert_choice_verifies(p, found)


def test_official_client_objects_and_to_dict_go_straight_into_problem_from_objects() -> None:
    client = pytest.importorskip("kubernetes.client", reason="the kubernetes client (drasat[cluster]) is not installed")
    made = client.ResourceV1ResourceClaim(
        api_version="resource.k8s.io/v1",
        kind="ResourceClaim",
        metadata=client.V1ObjectMeta(name="from-client", namespace="default"),
        spec=client.V1ResourceClaimSpec(
            devices=client.V1DeviceClaim(
                requests=[
                    client.V1DeviceRequest(
                        name="gpus", exactly=client.V1ExactDeviceRequest(device_class_name="gpu.example.com", count=2)
                    )
                ]
            )
        ),
    )
    cluster = [o.obj for o in load_paths([str(EXAMPLES / "cluster.yaml")]).objects]
    for item in (made, made.to_dict()):
        p = problem_from_objects([*cluster, item], node="gpu-node-1")
        answer = allocate(p)
        assert verify(p, answer.results) == [] and len(answer.results["default/from-client"].devices.results) == 2


def test_objects_that_cannot_be_read_are_named() -> None:
    from drasat.models.errors import InputError

    broken = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "broken"},
        "spec": {"devices": {"requests": "none"}},
    }
    with pytest.raises(InputError, match="ResourceClaim/broken"):
        problem_from_objects([*load_text(NODE), broken], node="node-1")
