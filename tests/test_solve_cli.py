"""``drasat solve`` as a user runs it: outputs, exit codes, messages, and nothing on stdout on failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.solver import Features
from drasat.solver.scheduling.pod_problem import pods_problem
from drasat.solver.verification.verifier import verify

from .printed import printed_allocations

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")
CLAIMS = "single-gpu,two-gpus,default/gpu-with-nic"  # the example's pending claims: together they need 4 GPUs


def solve(*args: str, stdin: str | None = None):
    load_all_commands()
    return CliRunner().invoke(cli, ["solve", *args], input=stdin, catch_exceptions=False)


def test_example_allocates_and_verifies():
    result = solve("--node", "gpu-node-1", "-o", "json", EXAMPLES)
    assert result.exit_code == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["kind"] == "List" and listing["apiVersion"] == "v1"
    assert all(item["apiVersion"] == "resource.k8s.io/v1" for item in listing["items"])
    allocations = printed_allocations(listing["items"])
    objects = [loaded.obj for loaded in load_paths([EXAMPLES]).objects]
    question = pods_problem(objects, node="gpu-node-1", pods=None, claims=None, features=Features())
    assert {f"default/{c.name}" for c in question.problem.claims} == set(allocations)
    assert verify(question.problem, allocations) == []


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_yaml_output_is_a_list_of_claims(solver):
    result = solve("--node", "gpu-node-1", "--solver", solver, EXAMPLES)
    assert result.exit_code == 0
    listing = yaml.safe_load(result.stdout)
    assert [item["kind"] for item in listing["items"]] == ["ResourceClaim"] * len(listing["items"])
    assert all(item["status"]["allocation"]["devices"]["results"] for item in listing["items"])


def test_table_output_names_devices():
    result = solve("--node", "gpu-node-1", "-o", "table", EXAMPLES)
    assert result.exit_code == 0 and "gpu-0" in result.stdout and result.stdout.startswith("CLAIM ")


def test_unschedulable_is_exit_1_one_line_nothing_on_stdout():
    result = solve("--node", "gpu-node-2", "--claims", CLAIMS, EXAMPLES)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "no allocation exists" in result.stderr


def test_verbose_explains_why_not():
    result = solve("--node", "gpu-node-2", "-v", "--claims", CLAIMS, EXAMPLES)
    assert result.exit_code == 1 and "these cannot all hold together" in result.stderr
    assert "is allocated at most once" in result.stderr  # gpu-node-2 has too few free GPUs for all three


@pytest.mark.parametrize(
    "args, message",
    [
        (["--node", "nope"], "unknown node 'nope'"),
        ([], "name the node to allocate for with --node"),
        (["--node", "gpu-node-1", "--claims", "missing"], "no ResourceClaim named missing"),
        (
            ["--node", "gpu-node-1", "--feature-gates", "NoSuchGate=true"],
            "--feature-gates: unknown feature gate 'NoSuchGate'",
        ),
        (["--node", "gpu-node-1", "--feature-gates", "DRAPrioritizedList"], "NAME=true or NAME=false"),
    ],
)
def test_bad_arguments_are_exit_2(args, message):
    result = solve(*args, EXAMPLES)
    assert result.exit_code == 2 and result.stdout == "" and message in result.stderr


@pytest.mark.parametrize(
    "text",
    [
        "kind: [",
        "\x00\x01\x02",
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
        "metadata: {name: s}\nspec: {driver: d, pool: {name: p}, nosuch: 1}\n",
    ],
)
def test_bad_input_is_exit_2_without_traceback(text):
    result = solve("--node", "n", "-", stdin=text)
    assert result.exit_code == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr and result.stderr.startswith("error:")


def test_claims_option_orders_and_selects():
    result = solve("--node", "gpu-node-1", "--claims", "two-gpus,single-gpu", "-o", "json", EXAMPLES)
    assert result.exit_code == 0
    names = [item["metadata"]["name"] for item in json.loads(result.stdout)["items"]]
    assert names == ["two-gpus", "single-gpu"]
    devices = {
        item["metadata"]["name"]: [r["device"] for r in item["status"]["allocation"]["devices"]["results"]]
        for item in json.loads(result.stdout)["items"]
    }
    assert devices["two-gpus"] == ["gpu-0", "gpu-1"]  # first-fit: the first claim gets the first devices


def test_cel_compile_error_is_exit_2(tmp_path):
    text = (
        Path(EXAMPLES, "claims.yaml")
        .read_text()
        .replace(
            "deviceClassName: gpu.example.com",
            "deviceClassName: gpu.example.com\n        selectors:\n        - cel: {expression: 'device.nosuch ==='}",
            1,
        )
    )
    (tmp_path / "claims.yaml").write_text(text)
    (tmp_path / "cluster.yaml").write_text(Path(EXAMPLES, "cluster.yaml").read_text())
    result = solve("--node", "gpu-node-1", str(tmp_path))
    assert result.exit_code == 2 and result.stdout == "" and "CEL" in result.stderr


def test_console_script_runs_in_a_process():
    done = subprocess.run(
        [sys.executable, "-m", "drasat.cli", "solve", "--node", "gpu-node-1", "-o", "json", EXAMPLES],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["items"]


def test_cel_runtime_error_names_claim_request_device_and_expression(tmp_path):
    expression = 'device.attributes["gpu.example.com"].nosuch == 1'
    text = (
        Path(EXAMPLES, "claims.yaml")
        .read_text()
        .replace(
            "deviceClassName: gpu.example.com",
            f"deviceClassName: gpu.example.com\n        selectors:\n        - cel: {{expression: '{expression}'}}",
            1,
        )
    )
    (tmp_path / "claims.yaml").write_text(text)
    (tmp_path / "cluster.yaml").write_text(Path(EXAMPLES, "cluster.yaml").read_text())
    result = solve("--node", "gpu-node-1", str(tmp_path))
    assert result.exit_code == 2 and result.stdout == ""
    for part in (
        "claim default/single-gpu",
        "request gpu",
        "on device gpu.example.com/",
        "no such key: nosuch",
        expression,
    ):
        assert part in result.stderr
