"""``drasat schedule`` (and ``solve`` with Pods) as a user runs them: outputs, exit codes, messages."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.solver import Features
from drasat.solver.scheduling.cluster import cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.pod_problem import pods_problem
from drasat.solver.verification.verifier import verify

from .cluster_factory import device_class, gpu_slice, node, pod, violations
from .printed import printed_allocations

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")


def drasat(*args: str, stdin: str | None = None):
    load_all_commands()
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def test_example_pods_are_placed_as_the_library_places_them_and_verified():
    result = drasat("schedule", "-o", "json", EXAMPLES)
    assert result.exit_code == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    placed = {i["metadata"]["name"]: i["spec"]["nodeName"] for i in items if i["kind"] == "Pod"}
    claims = [i for i in items if i["kind"] == "ResourceClaim"]
    assert placed == {"trainer-0": "gpu-node-1", "notebook-0": "gpu-node-2"}
    assert all(c["status"]["allocation"]["devices"]["results"] and c["status"]["reservedFor"] for c in claims)
    placements = schedule(cluster_from_objects([o.obj for o in load_paths([EXAMPLES]).objects]))
    assert {p.pod.name: p.node for p in placements} == placed and violations(placements) == []


def test_table_and_wide_show_nodes_and_devices():
    table = drasat("schedule", "-o", "table", EXAMPLES)
    assert table.exit_code == 0 and "trainer-0" in table.stdout and "gpu=gpu-0,nic=nic-0" in table.stdout
    wide = drasat("schedule", "-o", "wide", EXAMPLES)
    assert wide.exit_code == 0 and "nic.example.com" in wide.stdout and "trainer-0-gpu-and-nic-" in wide.stdout


def _stream(*docs) -> str:
    return yaml.safe_dump_all(list(docs))


def test_a_pending_pod_exits_1_with_the_summary_and_the_placed_pods_still_printed():
    text = _stream(
        device_class(),
        node("n0"),
        gpu_slice("n0", 1),
        node("n1", cpu="1"),
        pod("fits", requests={"cpu": "2"}),
        pod("big", requests={"cpu": "9"}),
    )
    result = drasat("schedule", "-o", "yaml", "-", stdin=text)
    assert result.exit_code == 1
    assert "pod default/big is pending: 0/2 nodes are available: 2 Insufficient cpu" in result.stderr
    assert [i["metadata"]["name"] for i in yaml.safe_load(result.stdout)["items"]] == ["fits"]


def test_verbose_lists_each_nodes_reason():
    text = _stream(device_class(), node("n0", cpu="1"), pod("big", requests={"cpu": "2"}))
    result = drasat("schedule", "-v", "-", stdin=text)
    assert result.exit_code == 1 and "  n0: Insufficient cpu" in result.stderr
    assert yaml.safe_load(result.stdout)["items"] == []  # nothing placed: kubectl's empty List


def test_pods_option_orders_and_refuses_unknown_or_ambiguous_names():
    text = _stream(device_class(), node("n0"), pod("a"), pod("a", namespace="other"), pod("b"))
    chosen = drasat("schedule", "--pods", "default/b,other/a", "-o", "json", "-", stdin=text)
    assert chosen.exit_code == 0
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in json.loads(chosen.stdout)["items"]] == [
        ("default", "b"),
        ("other", "a"),
    ]
    ambiguous = drasat("schedule", "--pods", "a", "-", stdin=text)
    assert ambiguous.exit_code == 2 and ambiguous.stdout == ""
    assert "ambiguous: give one of default/a, other/a" in ambiguous.stderr
    missing = drasat("schedule", "--pods", "default/zzz", "-", stdin=text)
    assert missing.exit_code == 2 and "no Pod default/zzz" in missing.stderr
    bound = drasat("schedule", "--pods", "x", "-", stdin=_stream(node("n0"), pod("x", nodeName="n0")))
    assert bound.exit_code == 2 and "already bound to node n0" in bound.stderr


def test_no_pending_pods_is_said_not_silent():
    result = drasat("schedule", "-", stdin=_stream(node("n0"), pod("x", nodeName="n0")))
    assert result.exit_code == 0 and "no pending pods" in result.stderr
    assert yaml.safe_load(result.stdout) == {"apiVersion": "v1", "kind": "List", "items": []}


def test_bad_input_is_exit_2_without_traceback():
    result = drasat("schedule", "-", stdin="apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: [1]}\n")
    assert result.exit_code == 2 and result.stdout == "" and "Traceback" not in result.stderr


def test_help_names_the_options():
    result = drasat("schedule", "--help")
    assert result.exit_code == 0 and all(o in result.stdout for o in ("--pods", "--solver", "wide", "Exit status"))


def test_solve_with_pods_allocates_their_claims_reserved_for_them():
    result = drasat("solve", "--node", "gpu-node-1", "--pods", "default/trainer-0", "-o", "json", EXAMPLES)
    assert result.exit_code == 0, result.stderr
    (item,) = json.loads(result.stdout)["items"]
    assert item["metadata"]["name"].startswith("trainer-0-gpu-and-nic-")
    assert item["status"]["reservedFor"] == [
        {"resource": "pods", "name": "trainer-0", "uid": "2d0c6f3e-8a41-4b7e-9f25-6c1d3e8b7a90"}
    ]
    objects = [o.obj for o in load_paths([EXAMPLES]).objects]
    question = pods_problem(objects, node="gpu-node-1", pods=["default/trainer-0"], claims=None, features=Features())
    assert verify(question.problem, printed_allocations([item])) == []


def test_solve_refuses_an_ambiguous_claim_name_naming_the_candidates():
    text = _stream(
        device_class(),
        node("n0"),
        gpu_slice("n0"),
        *(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "c", "namespace": ns},
                "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            }
            for ns in ("a", "b")
        ),
    )
    result = drasat("solve", "--claims", "c", "-", stdin=text)
    assert result.exit_code == 2 and "ambiguous: give one of a/c, b/c" in result.stderr
    named = drasat("solve", "--claims", "b/c", "-o", "json", "-", stdin=text)
    assert named.exit_code == 0 and [i["metadata"]["namespace"] for i in json.loads(named.stdout)["items"]] == ["b"]
