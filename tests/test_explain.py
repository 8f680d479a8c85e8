"""drasat explain: the funnel names the cause, or a minimal conflict of rule instances does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import _register, cli
from drasat.models.loader import load_text
from drasat.solver import allocate
from drasat.solver.explanation import _core, explain
from drasat.solver.problem import problem_from_objects
from drasat.solver.verify import verify

NODE = (Path(__file__).parent / "data" / "explain" / "node.yaml").read_text()


def claim(name: str, requests: str, constraints: str = "") -> str:
    return (f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: {name}, namespace: d}}\n"
            f"spec: {{devices: {{requests: [{requests}]{', constraints: [' + constraints + ']' if constraints else ''}}}}}\n")


def gpus(n: int, name: str = "gpu") -> str:
    return f"{{name: {name}, exactly: {{deviceClassName: gpu, count: {n}}}}}"


def problem(*claims: str):  # type: ignore[no-untyped-def]
    return problem_from_objects(list(load_text(NODE + "".join(claims))), node="node-1")


def assert_minimal(p, found) -> None:  # type: ignore[no-untyped-def]
    """Dropping any member of the conflict makes the rest feasible (the conflict is minimal)."""
    from drasat.solver.cel import SelectorEvaluator
    from drasat.solver.claims import plan_claims
    from drasat.solver.inventory import build_inventory
    from drasat.solver.model import build_model

    inv = build_inventory(p)
    model = build_model(inv, plan_claims(p, inv, SelectorEvaluator()))
    members = [a for a in model.assumptions if a.meaning in found.conflict]
    assert len(members) == len(found.conflict) and _core(model, members, deadline=1e18) is not None
    for dropped in members:
        assert _core(model, [a for a in members if a is not dropped], deadline=1e18) is None, dropped.meaning


def test_a_count_beyond_the_candidates_is_named_in_the_funnel() -> None:
    p = problem(claim("big", gpus(5)))
    found = explain(p)
    assert not found.feasible and found.short_requests == ["claim d/big, request gpu"]
    (gpu,) = found.funnel
    assert (gpu.needs, gpu.candidates) == (5, 4)
    assert gpu.steps[0].reason == "not selected by the class or request selectors" and gpu.steps[0].devices == [
        "nic.example.com/node-1/nic-0"]


def test_two_claims_wanting_more_than_there_is_conflict_on_exclusivity() -> None:
    p = problem(claim("a", gpus(3)), claim("b", gpus(2)))
    found = explain(p)
    assert not found.feasible and not found.short_requests
    assert found.conflict and all("allocated at most once" in c for c in found.conflict)
    assert_minimal(p, found)


def test_match_across_requests_names_the_constraint() -> None:
    """gpu-2 is in use: numa 0 has two GPUs but no NIC, numa 1 the NIC but one GPU."""
    held = ("---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: held, namespace: d}\n"
            "spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}\n"
            "status: {allocation: {devices: {results: [{request: g, driver: gpu.example.com, pool: node-1, "
            "device: gpu-2}]}}}\n")
    pair = claim("pair", f"{gpus(2)}, {{name: nic, exactly: {{deviceClassName: nic}}}}",
                 "{requests: [gpu, nic], matchAttribute: example.com/numa}")
    assert allocate(problem(pair)).results  # without gpu-2 in use it fits
    p = problem(held, pair)
    found = explain(p)
    assert not found.feasible and not found.short_requests
    assert len(found.conflict) == 1 and "example.com/numa" in found.conflict[0], found.conflict
    held_step = [s for s in found.funnel[0].steps if s.reason.startswith("already allocated")]
    assert [(s.reason, s.devices) for s in held_step] == [("already allocated to claim d/held",
                                                           ["gpu.example.com/node-1/gpu-2"])]
    assert_minimal(p, found)


def test_one_requests_own_match_cannot_be_met() -> None:
    p = problem(claim("three", gpus(3), "{requests: [gpu], matchAttribute: example.com/numa}"))
    found = explain(p)
    assert not found.feasible and not found.short_requests
    assert len(found.conflict) == 1 and "example.com/numa" in found.conflict[0]
    assert_minimal(p, found)


def test_distinct_over_too_few_values() -> None:
    p = problem(claim("spread", gpus(3), "{requests: [gpu], distinctAttribute: example.com/numa}"))
    found = explain(p)
    assert not found.feasible and len(found.conflict) == 1 and "example.com/numa" in found.conflict[0]
    assert_minimal(p, found)


def test_a_feasible_input_says_so_and_verifies() -> None:
    p = problem(claim("fits", gpus(2)))
    assert explain(p).feasible
    assert verify(p, allocate(p).results) == []


@pytest.mark.parametrize("form", ["text", "json"])
def test_cli_outputs_and_exit_codes(tmp_path: Path, form: str) -> None:
    (tmp_path / "input.yaml").write_text(NODE + claim("a", gpus(3)) + claim("b", gpus(2)))
    _register()
    result = CliRunner().invoke(cli, ["explain", "-o", form, str(tmp_path)])
    assert result.exit_code == 1, result.stderr
    if form == "json":
        data = json.loads(result.stdout)
        assert data["feasible"] is False and data["conflict"] and data["conflict"][0]["rule"] == "exclusivity"
    else:
        assert "cannot all hold together" in result.stdout and "allocated at most once" in result.stdout
    fits = CliRunner().invoke(cli, ["explain", "--claims", "d/a", str(tmp_path)])
    assert fits.exit_code == 0 and "feasible" in fits.stdout


def test_solve_verbose_prints_the_short_form_of_the_same_explanation(tmp_path: Path) -> None:
    (tmp_path / "input.yaml").write_text(NODE + claim("three", gpus(3), "{requests: [gpu], matchAttribute: "
                                                                        "example.com/numa}"))
    _register()
    result = CliRunner().invoke(cli, ["solve", "-v", str(tmp_path)])
    assert result.exit_code == 1 and result.stdout == ""
    assert "these cannot all hold together: claim d/three: constraint #0 (matchAttribute example.com/numa)" \
        in result.stderr
