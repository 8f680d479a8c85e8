"""Claims are keyed by namespace/name (issue 24): two namespaces may each hold a claim of one name, as
``kubectl get resourceclaims -A -o yaml`` prints them, and every command and the library tell them apart."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_text
from drasat.solver import allocate, compare, explain, problem_from_objects
from drasat.solver.verification.verifier import verify

from .explain_inputs import NODE, claim, gpus
from .printed import printed_allocations


def _in(namespace: str, document: str) -> str:
    return document.replace("namespace: d", f"namespace: {namespace}")


def _as_kubectl_lists(*documents: str) -> str:
    """The node's objects, then the claims as one ``kind: List``, as ``kubectl get -A -o yaml`` prints them."""
    claims = [yaml.safe_load(d) for d in documents]
    return NODE + "---\n" + yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": claims})


TWO = _as_kubectl_lists(_in("a", claim("c", gpus(2))), _in("b", claim("c", gpus(1))))
TOO_MANY = _as_kubectl_lists(_in("a", claim("c", gpus(4))), _in("b", claim("c", gpus(1))))


def _problem(text: str = TWO):
    return problem_from_objects(list(load_text(text)), node="node-1")


def drasat(*args: str, stdin: str) -> Result:
    load_all_commands()
    return CliRunner().invoke(cli, [*args, "-"], input=stdin, catch_exceptions=False)


def test_the_library_keys_results_by_namespace_and_name() -> None:
    p = _problem()
    answer = allocate(p)
    assert verify(p, answer.results) == []
    assert {key: [r.device for r in result.devices.results] for key, result in answer.results.items()} == {
        "a/c": ["gpu-0", "gpu-1"],
        "b/c": ["gpu-2"],
    }


def test_solve_allocates_both_and_prints_each_in_its_namespace() -> None:
    result = drasat("solve", "-o", "json", stdin=TWO)
    assert result.exit_code == 0, result.stderr
    answer = printed_allocations(json.loads(result.stdout)["items"])
    assert sorted(answer) == ["a/c", "b/c"] and verify(_problem(), answer) == []
    assert [len(answer[k].devices.results) for k in ("a/c", "b/c")] == [2, 1]
    table = drasat("solve", "-o", "table", stdin=TWO)
    assert [line.split()[:2] for line in table.stdout.splitlines()[1:] if "gpu-" in line] == [
        ["a/c", "gpu"],
        ["a/c", "gpu"],
        ["b/c", "gpu"],
    ]


def test_solve_allocates_the_one_named_by_namespace() -> None:
    result = drasat("solve", "-o", "json", "--claims", "b/c", stdin=TWO)
    assert result.exit_code == 0, result.stderr
    answer = printed_allocations(json.loads(result.stdout)["items"])
    p = problem_from_objects(list(load_text(TWO)), node="node-1", claims=["b/c"])
    assert list(answer) == ["b/c"] and verify(p, answer) == []


def test_explain_names_each_claim_by_namespace() -> None:
    fits = drasat("explain", "-o", "json", stdin=TWO)
    assert fits.exit_code == 0, fits.stderr
    data = json.loads(fits.stdout)
    assert [(c["claim"], c["device"]) for c in data["choice"]] == [
        ("a/c", "gpu.example.com/node-1/gpu-0"),
        ("a/c", "gpu.example.com/node-1/gpu-1"),
        ("b/c", "gpu.example.com/node-1/gpu-2"),
    ]
    p = _problem()
    chosen = explain(p).choice
    assert [(c.claim, c.device) for c in chosen] == [(c["claim"], c["device"]) for c in data["choice"]]
    assert verify(p, allocate(p).results) == []  # the choice is allocate's answer, verified
    refused = drasat("explain", stdin=TOO_MANY)
    assert refused.exit_code == 1, refused.stderr
    assert "claim a/c, request gpu: count 3 fits (it asks 4)" in refused.stdout
    assert "wanted by claim a/c request gpu (4 devices), claim b/c request gpu (1 device)" in refused.stdout


def test_compare_sets_both_claims_side_by_side() -> None:
    result = drasat("compare", "-o", "json", stdin=TWO)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["claims"] == ["a/c", "b/c"] and data["identical"] is True
    assert data["greedy"]["devices"] == {
        "a/c": {"gpu": ["gpu.example.com/node-1/gpu-0", "gpu.example.com/node-1/gpu-1"]},
        "b/c": {"gpu": ["gpu.example.com/node-1/gpu-2"]},
    }
    p = _problem()
    sides = compare(p)
    assert verify(p, sides.greedy.results) == [] and verify(p, sides.cp_sat.results) == []
    table = drasat("compare", stdin=TWO).stdout
    assert any(line.split()[:2] == ["a/c", "gpu"] for line in table.splitlines())
    assert any(line.split()[:2] == ["b/c", "gpu"] for line in table.splitlines())
