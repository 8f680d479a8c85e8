"""``drasat validate``: verdicts, exit codes, notices on stderr, no tracebacks; through click and as a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands
from drasat.models.errors import InputProblem, Location
from drasat.models.meta import TypedObject
from drasat.models.validation import register_checker, unregister_checker

from .helpers_models import REPO, SHARED, shared_files
from .shared_inputs import params
from .test_models_api_rejects import API_REJECTS

load_all_commands()

CLASS = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["validate", *args], input=input)


def test_example_cluster_is_valid() -> None:
    result = run(str(REPO / "examples"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 16 and all(line.startswith("ok ") for line in lines[:-1])
    assert lines[-1] == "15 objects: 15 valid, 0 invalid"
    assert result.stderr == ""


def test_invalid_object_prints_each_problem_with_file_document_object_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(CLASS + "---\n" + CLASS.replace("gpu.example.com", "GPU class") + "spec:\n  selectors: [{}]\n")
    result = run(str(path))
    assert result.exit_code == 2
    assert f"ok     {path}[0]: DeviceClass/gpu.example.com" in result.stdout
    assert f"FAIL   {path}[1]: DeviceClass/GPU class" in result.stdout
    assert f"       - {path}[1]: DeviceClass/GPU class: spec.selectors[0].cel: is required" in result.stdout
    assert f'{path}[1]: DeviceClass/GPU class: metadata.name: "GPU class" must be a DNS subdomain' in result.stdout
    assert result.stdout.splitlines()[-1] == "2 objects: 1 valid, 1 invalid"


def test_quiet_prints_only_problems(tmp_path: Path) -> None:
    result = run("-q", str(REPO / "examples"))
    assert result.exit_code == 0 and result.stdout == "15 objects: 15 valid, 0 invalid\n"


def test_stdin_and_notices_on_stderr() -> None:
    text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n" + CLASS
    result = run("-", input=text)
    assert result.exit_code == 0
    assert result.stdout.startswith("ok     <stdin>[1]: DeviceClass/gpu.example.com")
    assert result.stderr == "notice: <stdin>: skipped 1 apps/v1 Deployment object: drasat does not use this kind\n"


@pytest.mark.parametrize(
    "content, words",
    [
        (b"kind: [\n", "YAML error at line 2, column 1"),
        (b"\x00\x01\x02garbage" * 100, "binary file"),
        (
            b"a: &a [*a, *a]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
            + b"".join(
                f"c{i}: &c{i} [".encode() + b", ".join([f"*{'b' if i == 0 else f'c{i - 1}'}".encode()] * 10) + b"]\n"
                for i in range(7)
            ),
            "expands to more than",
        ),
        (CLASS.encode() + b"spec: {selectorz: []}\n", '(unknown field "selectorz"); did you mean "selectors"?'),
        ("metadata: {name: é}\n".encode("latin-1"), "is not UTF-8 text"),
    ],
    ids=["broken yaml", "binary", "alias bomb", "unknown field", "latin-1"],
)
def test_bad_input_is_reported_without_traceback(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "input.yaml"
    path.write_bytes(content)
    result = run(str(path))
    assert result.exit_code == 2
    assert words in result.stdout
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)


def test_missing_file_is_an_error_not_a_crash() -> None:
    result = run("/no/such.yaml")
    assert result.exit_code == 2
    assert "error  /no/such.yaml: no such file or directory" in result.stdout
    assert result.stdout.splitlines()[-1] == "0 objects: 0 valid, 0 invalid; 1 unreadable document or file"


def test_help_teaches_what_is_checked_with_examples() -> None:
    result = CliRunner().invoke(cli, ["validate", "--help"])
    assert result.exit_code == 0
    for words in (
        "What is checked",
        "devices per slice",
        "Exit status: 0",
        "drasat validate examples/",
        "kubectl get resourceslices",
        "converted to\n  v1",
    ):
        assert words in result.output


def test_registered_checkers_are_part_of_validation(tmp_path: Path) -> None:
    def no_gpus(obj: TypedObject, where: Location) -> list[InputProblem]:
        return [InputProblem(where.child("metadata.name"), "no GPUs today")] if obj.kind == "DeviceClass" else []

    path = tmp_path / "c.yaml"
    path.write_text(CLASS)
    register_checker(no_gpus)
    try:
        result = run(str(path))
    finally:
        unregister_checker(no_gpus)
    assert result.exit_code == 2 and "metadata.name: no GPUs today" in result.stdout


def test_seed_examples_are_valid_except_the_three_the_api_rejects(shared: Path) -> None:
    result = run(str(SHARED / "seeds" / "examples"))
    assert result.exit_code == 2  # seed000-05, -11, -14 break Kubernetes rules (see API_REJECTS)
    failed = {line.split()[1].rsplit(":", 1)[0] for line in result.stdout.splitlines() if line.startswith("FAIL")}
    expected = {str(SHARED / key) for key in API_REJECTS if key.startswith("seeds/")}
    assert failed == expected
    assert "KubeSchedulerConfiguration" in result.stderr and result.stdout.count("ok ") == 16


UPSTREAM = shared_files("scenarios/upstream")


@pytest.mark.parametrize("path", params(UPSTREAM), ids=lambda p: p.stem)
def test_upstream_scenario_objects_are_valid_unless_the_api_rejects_them(path: Path, shared: Path) -> None:
    result = run(str(path))
    failed = {line.split()[1].rsplit(":", 1)[0] for line in result.stdout.splitlines() if line.startswith("FAIL")}
    expected = {str(SHARED / key) for key in API_REJECTS if key.startswith(str(path.relative_to(SHARED)) + "[")}
    assert failed == expected, result.stdout
    assert result.exit_code == (2 if expected else 0)
    assert "skipped 1 scenario.drasat.dev/v1 Scenario object: drasat does not use this kind" in result.stderr
    assert "error " not in result.stdout


def test_as_a_process_with_the_installed_package() -> None:
    command = [sys.executable, "-c", "from drasat.cli.main import main; main()", "validate", str(REPO / "examples")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "15 objects: 15 valid, 0 invalid"
    broken = subprocess.run([*command[:-1], "-"], input="kind: [", capture_output=True, text=True, timeout=120)
    assert broken.returncode == 2 and "Traceback" not in broken.stderr
    assert "<stdin>[0]: YAML error at line" in broken.stdout


def test_json_output_for_ci_carries_every_verdict_and_problem() -> None:
    import json

    bad = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: Bad_Name}\n"
        "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, count: -1}}]}}\n---\n: :\n"
    )
    result = run("-o", "json", "-", input=CLASS + "---\n" + bad)
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert data["valid"] is False and data["summary"] == {"valid": 1, "invalid": 1, "unreadable": 1}
    ok, claim, broken = data["objects"]
    assert ok == {
        "file": "<stdin>",
        "document": 0,
        "path": None,
        "kind": "DeviceClass",
        "name": "gpu.example.com",
        "valid": True,
        "readable": True,
        "problems": [],
    }
    assert [p["field"] for p in claim["problems"]] == ["metadata.name", "spec.devices.requests[0].exactly.count"]
    assert broken["readable"] is False and "YAML error at line 10" in broken["problems"][0]["message"]
    clean = run("-o", "json", str(REPO / "examples"))
    assert clean.exit_code == 0 and json.loads(clean.stdout)["valid"] is True


def test_name_output_lists_only_valid_objects_and_tells_every_problem_on_stderr(tmp_path: Path) -> None:
    """Issue 24: -o name printed an invalid object's name and no problem; a broken file was not mentioned."""
    (tmp_path / "a.yaml").write_text(
        CLASS + "---\n" + CLASS.replace("gpu.example.com", "GPU class") + "---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec: [1]\n"
    )
    (tmp_path / "b.yaml").write_text("kind: [\n")
    result = run("-o", "name", str(tmp_path))
    assert result.exit_code == 2
    assert result.stdout == "deviceclass.resource.k8s.io/gpu.example.com\n"
    err = result.stderr
    assert f'error: {tmp_path / "a.yaml"}[1]: DeviceClass/GPU class: metadata.name: "GPU class"' in err
    assert f"error: {tmp_path / 'a.yaml'}[2]: Pod/d/p: spec: " in err
    assert f"error: {tmp_path / 'b.yaml'}[0]: YAML error at line 2, column 1" in err
    clean = run("-o", "name", str(REPO / "examples"))
    assert clean.exit_code == 0 and clean.stderr == "" and len(clean.stdout.splitlines()) == 15


def test_name_output_spells_each_kind_with_its_group_as_kubectl_does(tmp_path: Path) -> None:
    """kubectl's -o name is ``kind.group/name`` for every kind but the core group's (and says nothing of the
    version): podgroup.scheduling.k8s.io/grp, not podgroup/grp; a converted v1beta1 claim is still resource.k8s.io."""
    (tmp_path / "objects.yaml").write_text(
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: grp, namespace: default}\n---\n"
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb, namespace: default}\n"
        "spec: {maxUnavailable: 0, selector: {matchLabels: {app: x}}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: default}\nspec: {containers: [{name: c, image: i}]}\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\n"
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
        "spec: {devices: {requests: [{name: r, deviceClassName: gpu.example.com}]}}\n---\n" + CLASS
    )
    result = run("-o", "name", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "podgroup.scheduling.k8s.io/grp",
        "poddisruptionbudget.policy/pdb",
        "pod/x",
        "node/n",
        "resourceclaim.resource.k8s.io/c",
        "deviceclass.resource.k8s.io/gpu.example.com",
    ]
