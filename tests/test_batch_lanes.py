"""A big cluster's blocks in lanes (``solver/batch/lanes.py``): nodes dealt, the queue split, forked processes.

The lanes are forced on small clusters (every node a block, the block path from the first node), so the
answers can be checked against ``schedule`` and the verifier; a lane killed or raising is simulated by
patching what the forked process runs (the fork inherits the patch).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drasat.models.errors import InternalError
from drasat.solver.batch import blocks, lanes, placement
from drasat.solver.batch.lanes import lanes_of, split_queue
from drasat.solver.batch.placement import schedule_batch
from drasat.solver.batch.pod_classes import pod_key, sort_queue
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.pods import pending_pods
from drasat.solver.verification.verifier import verify

from .cluster_factory import make_cluster, node, pod, violations
from .test_batch_fuzz import _gpu, _shared_objects

pytestmark = pytest.mark.skipif(not lanes.CAN_FORK, reason="lanes need the fork start method (POSIX)")


@pytest.fixture
def each_node_a_block() -> Iterator[None]:
    with mock.patch.object(placement, "SINGLE_MODEL_NODES", 0), mock.patch.object(blocks, "BLOCK_NODES", 1):
        yield


def _docs(nodes: int, pods: int, gang: int = 0) -> list[dict[str, Any]]:
    """``nodes`` nodes of one GPU (whole, or two halves), ``pods`` pods each wanting a whole GPU or a half, the
    first ``gang`` of them in PodGroup g0 (minCount 1)."""
    docs = _shared_objects()
    for n in range(nodes):
        docs += [node(f"n{n}", cpu="8"), *_gpu(f"n{n}")]
    for i in range(pods):
        spec: dict[str, Any] = {"priority": 100 if i % 3 == 0 else 0}
        if i < gang:
            spec["schedulingGroup"] = {"podGroupName": "g0"}
        claims = [{"name": "gpu", "resourceClaimTemplateName": "whole-or-half" if i % 2 else "whole"}]
        docs.append(pod(f"p{i}", claims=claims, requests={"cpu": "1"}, **spec))
    return docs


def _checked(result: Any) -> None:
    assert violations(result.placements) == []
    assert [v for check in result.nodes for v in verify(check.problem, check.allocations)] == []


@given(st.integers(1, 60), st.integers(1, 9), st.integers(1, 4))
def test_lanes_are_consecutive_blocks_whose_counts_differ_by_one_at_most(nodes, size, count):
    names = [f"n{i:03d}" for i in range(nodes)]
    cut = blocks.blocks_of(names, size)
    dealt = lanes_of(cut, count)
    assert [n for lane in dealt for n in lane] == names
    assert len(dealt) == min(count, len(cut))
    per_lane = []
    for lane in dealt:  # each lane a run of whole blocks
        whole = [b for b in cut if b[0] in lane]
        assert [n for b in whole for n in b] == lane
        per_lane.append(len(whole))
    assert max(per_lane) - min(per_lane) <= 1


def test_the_queue_is_split_by_the_lanes_shares_and_gangs_stay_whole():
    cluster = make_cluster(*_docs(6, 40, gang=4))
    queue = sort_queue(cluster, pending_pods(cluster), ClusterState(cluster).book)
    parts = split_queue(queue, [4, 2])
    seen = [pod_key(pc.pod) for q in parts for c in q.classes for pc in c.members]
    assert sorted(seen) == sorted(pod_key(pc.pod) for c in queue.classes for pc in c.members)
    assert len(seen) == len(set(seen))
    assert sorted(g.index for q in parts for g in q.gangs) == [g.index for g in queue.gangs]
    for q in parts:  # a gang's members are in its lane's classes
        mine = {pod_key(pc.pod) for c in q.classes for pc in c.members}
        assert all(pod_key(pc.pod) in mine for g in q.gangs for pc in g.members)
    gang_pods = {pod_key(pc.pod) for g in queue.gangs for pc in g.members}
    for cls in queue.classes:  # singles dealt 2:1, to within one pod
        singles = [
            sum(1 for c in q.classes if c.index == cls.index for pc in c.members if pod_key(pc.pod) not in gang_pods)
            for q in parts
        ]
        total = sum(singles)
        assert abs(singles[0] - total * 4 / 6) <= 1 and abs(singles[1] - total * 2 / 6) <= 1


def test_two_lanes_place_what_the_scheduler_places_and_every_node_is_verified(each_node_a_block):
    docs = _docs(6, 14)
    result = schedule_batch(make_cluster(*docs), processes=2)
    one = schedule(make_cluster(*docs))
    assert [p.label for p in result.placements] == [p.label for p in one]
    assert result.summary.placed >= sum(1 for p in one if p.node)
    assert result.summary.placed_jointly > 0
    assert any("in 2 processes" in n for n in result.summary.notes)
    _checked(result)


def test_a_lane_that_dies_costs_its_answers_only_and_says_so(each_node_a_block):
    real = lanes.place_in_blocks

    def dying(*args: Any, nodes: list[str], **kwargs: Any) -> Any:
        if "n0" not in nodes:
            os._exit(9)
        return real(*args, nodes=nodes, **kwargs)

    docs = _docs(4, 6)
    with mock.patch.object(lanes, "place_in_blocks", dying):
        result = schedule_batch(make_cluster(*docs), processes=2)
    assert any("lane 2 of the joint placement" in n and "exit code 9" in n for n in result.summary.notes)
    assert result.summary.placed >= sum(1 for p in schedule(make_cluster(*docs)) if p.node)
    assert {p.node for p in result.placements if p.label in _jointly(result)} <= {"n0", "n1"}
    _checked(result)


def _jointly(result: Any) -> set[str]:
    return {pod for check in result.nodes for pod in check.pods}


def test_a_lane_that_raises_is_a_bug_reported_as_one(each_node_a_block):
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise ValueError("a bug in a lane")

    with mock.patch.object(lanes, "place_in_blocks", broken), pytest.raises(InternalError, match="a bug in a lane"):
        schedule_batch(make_cluster(*_docs(4, 6)), processes=2)


def test_a_small_cluster_is_one_model_whatever_the_processes_and_says_so():
    docs = _docs(3, 6)
    result = schedule_batch(make_cluster(*docs), processes=4)
    alone = schedule_batch(make_cluster(*docs))
    assert [(p.label, p.node) for p in result.placements] == [(p.label, p.node) for p in alone.placements]
    assert any("one model, searched in this process" in n for n in result.summary.notes)
    _checked(result)


def test_the_command_line_takes_processes_for_the_batch_and_refuses_ray(tmp_path):
    import yaml

    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(_docs(2, 2)))
    run = [sys.executable, "-m", "drasat.cli", "schedule", "--batch", "-o", "name", str(path)]
    one = subprocess.run(run, capture_output=True, text=True, timeout=120)
    two = subprocess.run([*run, "--processes", "2"], capture_output=True, text=True, timeout=120)
    assert one.returncode == two.returncode == 0, two.stderr
    assert one.stdout == two.stdout and one.stdout
    ray = subprocess.run([*run, "--ray", "auto"], capture_output=True, text=True, timeout=120)
    assert ray.returncode == 2 and ray.stdout == ""
    assert "--ray" in ray.stderr and "--processes" in ray.stderr


def test_a_halt_reaches_every_lane_and_the_best_so_far_is_returned(each_node_a_block):
    import threading

    from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

    halt = threading.Event()
    docs = _docs(8, 16)
    result = schedule_batch(
        make_cluster(*docs),
        options=AllocateOptions(time_limit=120),
        progress=lambda *_: halt.set(),  # the first answer a lane reports: as Ctrl-C would, once it shows
        halt=halt,
        processes=2,
    )
    notes = " ".join(result.summary.notes)
    assert "stopped (Ctrl-C)" in notes  # the lanes hear it within a poll (see the test below for one that waits)
    assert all(p.node or p.reason for p in result.placements)
    _checked(result)


def test_a_halt_after_a_lane_has_ended_still_reaches_the_others(each_node_a_block):
    """The halt is a flag the lanes poll: set once one lane has ended, it must not wait for that lane (a
    process-shared Event's set() did, for ever) and the lane still searching must hear it."""
    import threading
    import time

    from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

    real = lanes.place_in_blocks

    def lingering(state, queue, options, evaluator, budget, progress, *args: Any, nodes: list[str], **kwargs: Any):
        if "n0" not in nodes:
            return real(state, queue, options, evaluator, budget, progress, *args, nodes=nodes, **kwargs)
        time.sleep(1.0)  # the other lane has ended by now
        progress(0, None, 0.0)  # the parent's progress hook sets the halt
        while not budget.halted:
            time.sleep(0.05)
        return real(state, queue, options, evaluator, budget, progress, *args, nodes=nodes, **kwargs)

    halt, out = threading.Event(), []
    run = threading.Thread(
        target=lambda: out.append(
            schedule_batch(
                make_cluster(*_docs(4, 6)),
                options=AllocateOptions(time_limit=120),
                progress=lambda *_: halt.set(),
                halt=halt,
                processes=2,
            )
        ),
        daemon=True,
    )
    with mock.patch.object(lanes, "place_in_blocks", lingering):
        run.start()
        run.join(60)
    assert out, "the run did not return after the halt"
    assert "stopped (Ctrl-C)" in " ".join(out[0].summary.notes)
    _checked(out[0])


def test_pools_published_by_several_nodes_keep_the_blocks_in_one_process(each_node_a_block):
    docs = _docs(4, 4)
    for doc in docs:  # n1's slices publish n0's pool: two nodes, one pool
        if doc["kind"] == "ResourceSlice":
            doc["spec"]["pool"]["resourceSliceCount"] = 4 if doc["spec"]["nodeName"] in ("n0", "n1") else 2
            if doc["spec"]["nodeName"] == "n1":
                doc["spec"]["pool"]["name"] = "n0"
                doc["metadata"]["name"] += "-of-n0"
                for device in doc["spec"].get("devices", []):
                    device["name"] += "-b"
                for counter_set in doc["spec"].get("sharedCounters", []):
                    counter_set["name"] += "-b"
                for device in doc["spec"].get("devices", []):
                    for use in device["consumesCounters"]:
                        use["counterSet"] += "-b"
    result = schedule_batch(make_cluster(*docs), processes=2)
    notes = " ".join(result.summary.notes)
    assert "1 pools are published by more than one node" in notes and "in 2 processes" not in notes
    _checked(result)


def test_a_pool_reaching_every_node_leaves_the_lanes_in_use(each_node_a_block):
    """An allNodes pool is in every node's pools, but the counting model leaves the nodes it reaches to the last
    pass: it is no reason to give up the lanes (only node-local pools published by two nodes are)."""
    docs = _docs(4, 4)
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "fabric"},
            "spec": {
                "driver": "nic.example.com",
                "allNodes": True,
                "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "nic-0"}],
            },
        }
    )
    result = schedule_batch(make_cluster(*docs), processes=2)
    notes = " ".join(result.summary.notes)
    assert "in 2 processes" in notes and "published by more than one node" not in notes
    _checked(result)
