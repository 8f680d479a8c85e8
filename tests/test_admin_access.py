"""Admin access to devices needs the namespace label ``resource.kubernetes.io/admin-access: "true"``.

The API server refuses to store a claim asking for admin access in any other namespace,
so ``drasat validate`` reports it and ``drasat solve`` refuses it (exit 2). Without
Namespace objects in the input the rule cannot be checked: a warning says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.solver.allocation.problem import problem_from_objects
from drasat.solver.verification.verifier import verify

from .printed import printed_allocations

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FORBIDDEN = (
    "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label "
    "on the containing namespace"
)
CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: inspect, namespace: monitoring}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com, adminAccess: true}
"""


def namespace(labels: str) -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: monitoring, labels: {{{labels}}}}}\n"


def run(tmp_path: Path, command: str, *documents: str) -> tuple[Path, Result]:
    load_all_commands()
    path = tmp_path / "admin.yaml"
    path.write_text("---\n".join(documents))
    args = (
        [command, str(path)]
        if command == "validate"
        else [command, "--node", "gpu-node-1", "-o", "json", str(EXAMPLES / "cluster.yaml"), str(path)]
    )
    return path, CliRunner().invoke(cli, args)


def test_validate_reports_a_claim_outside_an_admin_namespace(tmp_path: Path) -> None:
    path, result = run(tmp_path, "validate", CLAIM, namespace("team: a"))
    assert result.exit_code == 2
    assert (
        f"{path}[0]: ResourceClaim/monitoring/inspect: spec.devices.requests[0].exactly.adminAccess: {FORBIDDEN} "
        "(namespace 'monitoring' does not have it)"
    ) in result.stdout


def test_validate_accepts_it_in_an_admin_namespace(tmp_path: Path) -> None:
    _, result = run(tmp_path, "validate", CLAIM, namespace('resource.kubernetes.io/admin-access: "true"'))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_the_namespace_must_be_in_the_input_once_any_namespace_is(tmp_path: Path) -> None:
    _, result = run(tmp_path, "validate", CLAIM, namespace("x: y").replace("monitoring", "other"))
    assert result.exit_code == 2
    assert "(namespace 'monitoring' is not in the input)" in result.stdout


def test_without_namespaces_validate_warns(tmp_path: Path) -> None:
    _, result = run(tmp_path, "validate", CLAIM)
    assert result.exit_code == 0
    assert result.stderr == (
        "warning: no Namespace objects in the input: admin access of monitoring/inspect is not "
        "checked against the namespace label resource.kubernetes.io/admin-access\n"
    )


def test_solve_refuses_it(tmp_path: Path) -> None:
    _, result = run(tmp_path, "solve", CLAIM, namespace("team: a"))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert f"ResourceClaim/inspect: spec.devices.requests[0].exactly.adminAccess: {FORBIDDEN}" in result.stderr


@pytest.mark.parametrize("labelled", [True, False])
def test_solve_allocates_it_in_an_admin_namespace_or_warns_without_namespaces(tmp_path: Path, labelled: bool) -> None:
    documents = [CLAIM, namespace('resource.kubernetes.io/admin-access: "true"')] if labelled else [CLAIM]
    path, result = run(tmp_path, "solve", *documents)
    assert result.exit_code == 0, result.output
    assert ("warning: no Namespace objects" in result.stderr) is not labelled
    items = json.loads(result.stdout)["items"]
    allocations = printed_allocations(items)
    assert allocations["monitoring/inspect"].devices.results[0].admin_access is True
    objects = [loaded.obj for loaded in load_paths([str(EXAMPLES / "cluster.yaml"), str(path)]).objects]
    assert verify(problem_from_objects(objects, node="gpu-node-1"), allocations) == []
