"""drasat explain --pods: the scheduler's summary over every node, then the devices per node class."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.solver import Features
from drasat.solver.scheduling.cluster import cluster_from_objects
from drasat.solver.scheduling.pod_explanation import explain_pods
from drasat.solver.scheduling.pods import select_pods

ROOT = Path(__file__).resolve().parents[1]
INPUTS = [str(ROOT / "examples" / "cluster.yaml"), str(Path(__file__).parent / "data" / "explain" / "pods.yaml")]


def test_a_pod_too_big_for_every_node_is_explained_once_for_the_class_of_alike_nodes() -> None:
    cluster = cluster_from_objects([o.obj for o in load_paths(INPUTS).objects], Features())
    (huge,) = explain_pods(cluster, select_pods(cluster, ["default/huge"]))
    assert not huge.feasible and huge.summary == "0/2 nodes are available: 2 cannot allocate all claims."
    assert huge.node_reasons == {
        "gpu-node-1": ["cannot allocate all claims"],
        "gpu-node-2": ["cannot allocate all claims"],
    }
    (node_class,) = huge.classes  # both nodes look alike: explained once
    assert node_class.nodes == ["gpu-node-1", "gpu-node-2"]
    (short,) = node_class.explanation.short_requests
    assert short.startswith("claim default/huge-gpus-") and short.endswith(", request gpus")
    assert [f.data["count"] for f in node_class.explanation.fixes if f.kind == "count"] == [4]


def test_cli_summary_for_cpu_and_choice_for_a_pod_that_fits() -> None:
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", "--pods", "default/cpuhog", *INPUTS])
    assert (
        result.exit_code == 1 and result.stdout == "pod default/cpuhog: 0/2 nodes are available: 2 Insufficient cpu.\n"
    )
    fits = CliRunner().invoke(
        cli,
        [
            "explain",
            "-o",
            "json",
            "--pods",
            "default/trainer-0",
            *INPUTS,
            str(ROOT / "examples" / "pods.yaml"),
            str(ROOT / "examples" / "claims.yaml"),
        ],
    )
    assert fits.exit_code == 0, fits.stderr
    document = json.loads(fits.stdout)
    assert document["kind"] == "PodExplanationList"
    (data,) = document["pods"]
    assert data["feasible"] and data["node"] == "gpu-node-1" and data["choice"]
    assert {c["request"] for c in data["choice"]} == {"gpu", "nic"}


def test_without_node_or_pods_every_pending_pod_is_judged_over_every_node() -> None:
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", str(ROOT / "examples")])
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("pod ")]
    assert lines == [
        "pod default/trainer-0: schedulable: node gpu-node-1 would be chosen",
        "pod default/notebook-0: schedulable: node gpu-node-2 would be chosen "
        "(in the queue's order, after 1 pod placed before it)",
    ]  # each in the state the queue leaves it: where drasat schedule puts it
    scheduled = CliRunner().invoke(cli, ["schedule", "-o", "json", str(ROOT / "examples")])
    nodes = {
        item["metadata"]["name"]: item["spec"]["nodeName"]
        for item in json.loads(scheduled.stdout)["items"]
        if item["kind"] == "Pod"
    }
    assert nodes == {"trainer-0": "gpu-node-1", "notebook-0": "gpu-node-2"}


def test_pods_on_one_node_get_that_node_s_own_verdict_and_none_is_dropped() -> None:
    """With --node, a pod too big in CPU is not called feasible on its devices alone, and a pod
    without claims is not left out: each gets the scheduler's verdict for that node."""
    load_all_commands()
    result = CliRunner().invoke(
        cli, ["explain", "--pods", "default/huge,default/cpuhog", "--node", "gpu-node-1", *INPUTS]
    )
    assert result.exit_code == 1, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("pod ")]
    assert lines == [
        "pod default/huge: 0/1 nodes are available: 1 cannot allocate all claims.",
        "pod default/cpuhog: 0/1 nodes are available: 1 Insufficient cpu.",
    ]
    unknown = CliRunner().invoke(cli, ["explain", "--pods", "default/huge", "--node", "nosuch", *INPUTS])
    assert unknown.exit_code == 2 and unknown.stdout == "" and "--node nosuch" in unknown.stderr


def test_nothing_to_explain_is_a_notice_as_solve_says_it() -> None:
    """No pending pod (or claim) in the namespace: a notice and exit 0, as solve and schedule answer it."""
    load_all_commands()
    pods = CliRunner().invoke(cli, ["explain", "-n", "nosuchns", *INPUTS])
    assert (pods.exit_code, pods.stdout) == (0, "")
    assert pods.stderr == "notice: no pending pods in namespace nosuchns (pods without spec.nodeName)\n"
    claims = CliRunner().invoke(cli, ["explain", "-n", "nosuchns", "--node", "gpu-node-1", *INPUTS])
    solved = CliRunner().invoke(cli, ["solve", "-n", "nosuchns", "--node", "gpu-node-1", *INPUTS])
    assert (claims.exit_code, claims.stdout, claims.stderr) == (0, "", solved.stderr)
    assert solved.stderr.startswith("notice: nothing to allocate: ")


def test_claims_beside_pods_are_bad_input() -> None:
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", "--pods", "default/huge", "--claims", "default/nosuch", *INPUTS])
    assert result.exit_code == 2 and result.stdout == "" and "--claims cannot be combined" in result.stderr


def test_json_is_one_object_whatever_the_question(tmp_path: Path) -> None:
    load_all_commands()
    claims = CliRunner().invoke(
        cli, ["explain", "-o", "json", "--node", "gpu-node-1", "--claims", "default/huge-x", *INPUTS]
    )
    pods = CliRunner().invoke(cli, ["explain", "-o", "json", "--pods", "default/cpuhog", *INPUTS])
    assert json.loads(pods.stdout)["kind"] == "PodExplanationList"
    assert claims.exit_code == 2  # no such claim: bad input, and nothing on stdout
    single = ROOT / "examples"
    one = CliRunner().invoke(
        cli, ["explain", "-o", "json", "--node", "gpu-node-1", "--claims", "default/two-gpus", str(single)]
    )
    assert json.loads(one.stdout)["kind"] == "ClaimsExplanation"
