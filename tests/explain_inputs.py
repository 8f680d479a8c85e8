"""Hand-built inputs for drasat explain's tests: one node (tests/data/explain/node.yaml) and helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drasat.models.loader import load_text
from drasat.solver import Features
from drasat.solver.allocation.problem import Problem, problem_from_objects
from drasat.solver.explanation.conflicts import core as _core
from drasat.solver.explanation.explain import Explanation

NODE = (Path(__file__).parent / "data" / "explain" / "node.yaml").read_text()


def claim(name: str, requests: str, constraints: str = "") -> str:
    """A pending ResourceClaim in namespace d, its requests and constraints in YAML flow style."""
    return (
        f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: {name}, namespace: d}}\n"
        f"spec: {{devices: {{requests: [{requests}]{', constraints: [' + constraints + ']' if constraints else ''}}}}}\n"
    )


def gpus(n: int, name: str = "gpu", extra: str = "") -> str:
    """A request for ``n`` devices of class gpu (``extra``: more fields of ``exactly``)."""
    return f"{{name: {name}, exactly: {{deviceClassName: gpu, count: {n}{', ' + extra if extra else ''}}}}}"


def held(name: str, *devices: str, pool: str = "node-1", driver: str = "gpu.example.com") -> str:
    """An allocated claim in namespace d holding ``devices``."""
    results = ", ".join(f"{{request: g, driver: {driver}, pool: {pool}, device: {d}}}" for d in devices)
    return (
        f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: {name}, namespace: d}}\n"
        "spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}\n"
        f"status: {{allocation: {{devices: {{results: [{results}]}}}}}}\n"
    )


def problem(*documents: str, gates: dict[str, bool] | None = None) -> Problem:
    return problem_from_objects(
        list(load_text(NODE + "".join(documents))), node="node-1", features=Features.from_mapping(gates)
    )


def assert_minimal(p: Problem, found: Explanation) -> None:
    """The conflict cannot hold together, and dropping any member makes the rest feasible."""
    from drasat.solver.allocation.cp_sat.model import build_model
    from drasat.solver.allocation.planning.claims import plan_claims
    from drasat.solver.allocation.planning.inventory import build_inventory
    from drasat.solver.cel import SelectorEvaluator

    inv = build_inventory(p)
    model = build_model(inv, plan_claims(p, inv, SelectorEvaluator()))
    meanings = [rule.meaning for rule in found.conflict_rules]
    members = [a for a in model.assumptions if a.meaning in meanings]
    assert len(members) == len(meanings) and _core(model, members, deadline=1e18) is not None
    for dropped in members:
        assert _core(model, [a for a in members if a is not dropped], deadline=1e18) is None, dropped.meaning


def steps(found: Explanation, request: str = "gpu") -> dict[str, Any]:
    """reason -> devices named, for the first alternative of ``request``."""
    funnel = next(f for f in found.funnel if f.request == request)
    return {s.reason: s.devices for s in funnel.steps}


def assert_choice_verifies(p: Problem, found: Explanation) -> None:
    """A feasible explanation's choice is the allocation ``allocate`` returns, and the verifier accepts it."""
    from drasat.solver import allocate
    from drasat.solver.verification.verifier import verify

    answer = allocate(p)
    assert found.feasible and verify(p, answer.results) == []
    assert [(c.claim, c.request, c.device) for c in found.choice] == [
        (label, r.request, f"{r.driver}/{r.pool}/{r.device}")
        for label, result in answer.results.items()
        for r in result.devices.results
    ]
