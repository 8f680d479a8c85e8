"""drasat explain --pods: the scheduler's summary over every node, then the devices per node class."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from drasat.cli.main import _register, cli
from drasat.models.loader import load_paths
from drasat.solver import Features
from drasat.solver.cluster import cluster_from_objects
from drasat.solver.pod_explanation import explain_pods
from drasat.solver.pods import select_pods

ROOT = Path(__file__).resolve().parents[1]
INPUTS = [str(ROOT / "examples" / "cluster.yaml"), str(Path(__file__).parent / "data" / "explain" / "pods.yaml")]


def test_a_pod_too_big_for_every_node_is_explained_once_for_the_class_of_alike_nodes() -> None:
    cluster = cluster_from_objects([o.obj for o in load_paths(INPUTS).objects], Features())
    (huge,) = explain_pods(cluster, select_pods(cluster, ["default/huge"]))
    assert not huge.feasible and huge.summary == "0/2 nodes are available: 2 cannot allocate all claims."
    assert huge.node_reasons == {"gpu-node-1": ["cannot allocate all claims"], "gpu-node-2": ["cannot allocate all claims"]}
    (node_class,) = huge.classes  # both nodes look alike: explained once
    assert node_class.nodes == ["gpu-node-1", "gpu-node-2"]
    (short,) = node_class.explanation.short_requests
    assert short.startswith("claim default/huge-gpus-") and short.endswith(", request gpus")
    assert [f.data["count"] for f in node_class.explanation.fixes if f.kind == "count"] == [4]


def test_cli_summary_for_cpu_and_choice_for_a_pod_that_fits() -> None:
    _register()
    result = CliRunner().invoke(cli, ["explain", "--pods", "default/cpuhog", *INPUTS])
    assert result.exit_code == 1 and result.stdout == "pod default/cpuhog: 0/2 nodes are available: 2 Insufficient cpu.\n"
    fits = CliRunner().invoke(cli, ["explain", "-o", "json", "--pods", "default/trainer-0", *INPUTS,
                                    str(ROOT / "examples" / "pods.yaml"), str(ROOT / "examples" / "claims.yaml")])
    assert fits.exit_code == 0, fits.stderr
    (data,) = json.loads(fits.stdout)
    assert data["feasible"] and data["node"] == "gpu-node-1" and data["choice"]
    assert {c["request"] for c in data["choice"]} == {"gpu", "nic"}


def test_without_node_or_pods_every_pending_pod_is_judged_over_every_node() -> None:
    _register()
    result = CliRunner().invoke(cli, ["explain", str(ROOT / "examples")])
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("pod ")]
    assert lines == ["pod default/trainer-0: schedulable: node gpu-node-1 would be chosen",
                     "pod default/notebook-0: schedulable: node gpu-node-1 would be chosen"]  # each against the input
