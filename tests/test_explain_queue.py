"""explain agrees with schedule (issue 24, item 5): a pod is explained in the state the queue leaves it.

Two nodes with two GPUs each; two one-GPU pods, then a two-GPU pod. ``schedule`` spreads the one-GPU pods
(least-allocated scoring) and leaves the two-GPU pod pending; ``explain`` used to call it schedulable on node-a.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_text
from drasat.solver import Features
from drasat.solver.batch.placement import schedule_batch
from drasat.solver.scheduling.cluster import Cluster, cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.verification.verifier import verify

QUEUE = Path(__file__).parent / "data" / "explain" / "queue.yaml"


def _cluster(text: str | None = None) -> Cluster:
    return cluster_from_objects(list(load_text(QUEUE.read_text() if text is None else text)), Features())


def _one_by_one() -> dict[str, str | None]:
    """Where ``schedule`` puts each pod, every allocation checked by the verifier."""
    placements = schedule(_cluster())
    for p in placements:
        if p.node is not None:
            assert p.problem is not None and verify(p.problem, p.allocations) == [], p.label
    return {p.label: p.node for p in placements}


def _jointly() -> dict[str, str | None]:
    """Where ``schedule --batch`` puts each pod, every node's joint allocation checked by the verifier."""
    result = schedule_batch(_cluster())
    assert [v for c in result.nodes for v in verify(c.problem, c.allocations)] == []
    return {p.label: p.node for p in result.placements}


def _explain(*args: str) -> tuple[int, str]:
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", *args, str(QUEUE)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout


def test_the_two_gpu_pod_is_pending_as_schedule_leaves_it_naming_the_pods_that_took_the_room() -> None:
    placed = _one_by_one()
    assert placed == {"default/small-0": "node-a", "default/small-1": "node-b", "default/big": None}
    code, text = _explain("--pods", "default/big")
    assert code == 1, text
    assert "schedulable" not in text
    assert text.startswith("pod default/big: 0/2 nodes are available: 2 cannot allocate all claims.\n"), text
    assert "pending in the queue's order, after 2 pods placed before it" in text
    assert "on node node-a, default/small-0 (placed before it) took the room: without it the pod fits there" in text
    assert "on node node-b, default/small-1 (placed before it) took the room: without it the pod fits there" in text
    joint = _jointly()
    assert joint["default/big"] is not None and all(joint.values())  # jointly, all three fit
    assert f"drasat schedule --batch would place it on node {joint['default/big']} (3/3 pods placed jointly" in text


def test_each_node_s_claim_holds_alone_as_the_input_had_it() -> None:
    """ "without it the pod fits there": the input without the one-GPU pods, on each node alone, places it."""
    text = QUEUE.read_text()
    small = text.index("---\napiVersion: v1\nkind: Pod\nmetadata: {name: small-0")
    big = text.index("---\napiVersion: v1\nkind: Pod\nmetadata: {name: big")
    without = text[:small] + text[big:]
    for node in ("node-a", "node-b"):
        cluster = _cluster(without)
        alone = replace(cluster, nodes=[n for n in cluster.nodes if n.name == node])
        (placement,) = schedule(alone)
        assert placement.node == node and placement.problem is not None
        assert verify(placement.problem, placement.allocations) == []


def test_every_pending_pod_is_explained_where_schedule_puts_it_and_json_says_the_same() -> None:
    placed = _one_by_one()
    code, text = _explain("-o", "json")
    assert code == 1
    pods = {p["pod"]: p for p in json.loads(text)["pods"]}
    assert {name: p["node"] for name, p in pods.items()} == placed
    big = pods["default/big"]
    assert big["placedBefore"] == 2 and big["queue"]["nodeAsInput"] == "node-a"
    assert big["queue"]["tookRoom"] == [
        {"node": "node-a", "pods": ["default/small-0"]},
        {"node": "node-b", "pods": ["default/small-1"]},
    ]
    assert big["batch"]["node"] == _jointly()["default/big"] and big["batch"]["proven"] is True
    assert pods["default/small-0"]["placedBefore"] == 0 and "batch" not in pods["default/small-0"]


def test_on_one_node_the_queue_still_runs_over_every_node() -> None:
    """With --node node-b, small-0 still went to node-a before: only small-1 took node-b's room."""
    code, text = _explain("--pods", "default/big", "--node", "node-b")
    assert code == 1
    assert text.startswith("pod default/big: 0/1 nodes are available: 1 cannot allocate all claims.\n"), text
    assert "on node node-b, default/small-1 (placed before it) took the room" in text
    assert "node-a," not in text


def test_a_pod_no_node_holds_even_before_the_queue_is_not_blamed_on_the_pods_before_it(tmp_path: Path) -> None:
    """Three GPUs in one pod, nodes of two: the pods placed before it are not why, and --batch is not asked."""
    three = QUEUE.read_text().replace("count: 2", "count: 3")
    (tmp_path / "input.yaml").write_text(three)
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", "--pods", "default/big", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "after 2 pods placed before it; as the input was before them, no node takes it either" in result.stdout
    assert "took the room" not in result.stdout and "--batch" not in result.stdout
    (placement,) = [p for p in schedule(_cluster(three)) if p.label == "default/big"]
    assert placement.node is None  # schedule agrees: pending
    alone = replace(_cluster(three), pods=[p for p in _cluster(three).pods if p.name == "big"])
    assert [p.node for p in schedule(alone)] == [None]  # and without the pods before it, still pending
