"""Differential fuzzing of the joint placement against the scheduler (``schedule``), on small random clusters.

Nodes with a little cpu and one GPU that is either whole or two halves (a shared counter);
pods of a few sizes, two priorities, some asking for the whole GPU or "whole, else half"
(firstAvailable), some in gang PodGroups. For every input the batch must:
- place at least as many pods as ``schedule``, priority by priority (highest first) — counting for
  ``schedule`` only what is a legal answer: a gang it places in part does not count;
- place every gang whole or not at all;
- pass the verifier on every pod and on every node's joint allocation.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasat.solver.batch.passes import group_of, placed_by_priority
from drasat.solver.batch.placement import schedule_batch
from drasat.solver.scheduling.one_by_one import Placement, schedule
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.verification.verifier import verify

from .cluster_factory import make_cluster, node, pod, violations

settings.register_profile(
    "batch-fuzz",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "batch-fuzz-long",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = settings.get_profile({"long": "batch-fuzz-long"}.get(os.environ.get("HYPOTHESIS_PROFILE", ""), "batch-fuzz"))
GPU = "gpu.example.com"
GROUPS = ("g0", "g1")


def _gpu(node_name: str) -> list[dict[str, Any]]:
    """One GPU: whole, or two halves (one memory counter)."""
    pool = {"name": node_name, "generation": 1, "resourceSliceCount": 2}

    def device(name: str, kind: str, memory: str) -> dict[str, Any]:
        return {
            "name": name,
            "attributes": {"kind": {"string": kind}},
            "consumesCounters": [{"counterSet": "mem", "counters": {"memory": {"value": memory}}}],
        }

    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-counters"},
            "spec": {
                "driver": GPU,
                "nodeName": node_name,
                "pool": pool,
                "sharedCounters": [{"name": "mem", "counters": {"memory": {"value": "80Gi"}}}],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-gpus"},
            "spec": {
                "driver": GPU,
                "nodeName": node_name,
                "pool": pool,
                "devices": [
                    device("gpu-whole", "whole", "80Gi"),
                    device("gpu-half-0", "half", "40Gi"),
                    device("gpu-half-1", "half", "40Gi"),
                ],
            },
        },
    ]


def _shared_objects() -> list[dict[str, Any]]:
    classes = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": kind},
            "spec": {"selectors": [{"cel": {"expression": f'device.attributes["{GPU}"].kind == "{kind}"'}}]},
        }
        for kind in ("whole", "half")
    ]
    templates = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [request]}}},
        }
        for name, request in (
            ("whole", {"name": "gpu", "exactly": {"deviceClassName": "whole"}}),
            (
                "whole-or-half",
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "whole", "deviceClassName": "whole"},
                        {"name": "half", "deviceClassName": "half"},
                    ],
                },
            ),
        )
    ]
    groups = [
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}},
        }
        for name in GROUPS
    ]
    return classes + templates + groups


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    docs = _shared_objects()
    for doc in docs:
        if doc["kind"] == "PodGroup":  # minCount 1 lets a gang run in part; above its members, all of them
            doc["spec"]["schedulingPolicy"]["gang"]["minCount"] = draw(st.integers(1, 4))
    for n in range(draw(st.integers(1, 3))):
        docs.append(node(f"n{n}", cpu=str(draw(st.integers(2, 8)))))
        if draw(st.booleans()):
            docs += _gpu(f"n{n}")
    for i in range(draw(st.integers(1, 8))):
        spec: dict[str, Any] = {"priority": draw(st.sampled_from([0, 0, 100]))}
        group = draw(st.sampled_from([None, None, *GROUPS]))
        if group:
            spec["schedulingGroup"] = {"podGroupName": group}
        template = draw(st.sampled_from([None, None, "whole", "whole-or-half"]))
        claims = [{"name": "gpu", "resourceClaimTemplateName": template}] if template else None
        docs.append(pod(f"p{i}", claims=claims, requests={"cpu": str(draw(st.integers(1, 4)))}, **spec))
    return docs


def _split_gangs(placements: list[Placement], min_counts: dict[str, int] | None = None) -> list[str]:
    """The gangs placed in part below what they need: some pods placed, fewer than their minCount (or all
    pending members, where that is fewer), as kube-scheduler's gang Permit would never let through."""
    outcomes: dict[str, list[bool]] = {}
    for p in placements:
        if group_of(p.pod):
            outcomes.setdefault(group_of(p.pod), []).append(p.node is not None)
    need = min_counts or {}
    return sorted(
        group for group, seen in outcomes.items() if 0 < sum(seen) < min(need.get(group, len(seen)), len(seen))
    )


def _min_counts(docs: list[dict[str, Any]]) -> dict[str, int]:
    return {
        f"{d['metadata']['namespace']}/{d['metadata']['name']}": d["spec"]["schedulingPolicy"]["gang"]["minCount"]
        for d in docs
        if d["kind"] == "PodGroup"
    }


def _legal(placements: list[Placement], min_counts: dict[str, int] | None = None) -> list[Placement]:
    """``placements`` with the gangs placed in part taken out (their pods count as pending)."""
    split = set(_split_gangs(placements, min_counts))
    return [Placement(p.pod) if group_of(p.pod) in split else p for p in placements]


@FUZZ
@given(clusters())
def test_the_batch_never_places_fewer_pods_than_the_scheduler_and_is_always_valid(docs):
    one = schedule(make_cluster(*docs))
    result = schedule_batch(make_cluster(*docs))
    batch = result.placements
    assert [p.label for p in batch] == [p.label for p in one]
    need = _min_counts(docs)
    assert [n for _, n in placed_by_priority(batch)] >= [n for _, n in placed_by_priority(_legal(one, need))]
    assert _split_gangs(batch, need) == []
    assert violations(batch) == []
    assert [v for check in result.nodes for v in verify(check.problem, check.allocations)] == []


@FUZZ
@given(clusters(), st.sampled_from([0.01, 0.05, 0.2, 0.5]))
def test_cut_short_by_a_tiny_timeout_the_batch_still_answers_validly(docs, seconds):
    """Whatever the deadline leaves of the run (the model's build, its search, the pass in the scheduler's
    order, the decoding), every pod has an outcome, gangs hold, and every allocation is verified."""
    result = schedule_batch(make_cluster(*docs), options=AllocateOptions(time_limit=seconds))
    batch = result.placements
    assert [p.label for p in batch] == [p.label for p in schedule(make_cluster(*docs))]
    assert _split_gangs(batch, _min_counts(docs)) == []
    assert violations(batch) == []
    assert [v for check in result.nodes for v in verify(check.problem, check.allocations)] == []
    assert all(p.node or p.reason for p in batch)


def test_a_scheduler_answer_with_a_split_gang_counts_without_the_gang():
    """The reference the fuzzer compares with is itself checked: a split gang's placed member is taken out."""
    docs = [
        *_shared_objects(),
        node("n0", cpu="2"),
        pod("a", requests={"cpu": "2"}, schedulingGroup={"podGroupName": "g0"}),
        pod("b", requests={"cpu": "2"}, schedulingGroup={"podGroupName": "g0"}),
    ]
    one = schedule(make_cluster(*docs))
    assert [p.node for p in one] == ["n0", None] and _split_gangs(one) == ["default/g0"]
    assert [p.node for p in _legal(one)] == [None, None]


def _outcome(placements: list[Placement]) -> list[tuple]:
    return [
        (
            p.label,
            p.node,
            p.reason,
            sorted(p.node_reasons.items()),
            sorted((name, r.pool, r.device) for name, a in p.allocations.items() for r in a.devices.results),
        )
        for p in placements
    ]


@FUZZ
@given(clusters())
def test_the_schedulers_shortcuts_change_no_answer(docs):
    """``schedule`` asks best-scored nodes first and skips nodes where a claim shape found no devices
    before; with both shortcuts off (every node asked, as before them) every pod's node, devices and
    reasons are the same."""
    from unittest import mock

    from drasat.solver.scheduling import devices_step, one_by_one

    fast = schedule(make_cluster(*docs))
    with (
        mock.patch.object(one_by_one, "_scores_fixed", return_value=False),
        mock.patch.object(devices_step.Devices, "failed_before", return_value=False),
    ):
        slow = schedule(make_cluster(*docs))
    assert _outcome(fast) == _outcome(slow)


@FUZZ
@given(clusters(), st.sampled_from([None, 0.05, 0.5]), st.sampled_from([1, 2]))
def test_in_blocks_of_one_node_the_batch_is_still_never_below_the_scheduler(docs, seconds, processes):
    """The big-cluster path (a model per block of nodes, each given what the blocks before it left) forced on
    these small clusters, each node a block, in this process or dealt into two forked lanes (``lanes``): never
    fewer pods than ``schedule`` (priority by priority) with the time it needs, always valid whatever the
    deadline."""
    from unittest import mock

    from drasat.solver.batch import blocks, placement

    options = AllocateOptions() if seconds is None else AllocateOptions(time_limit=seconds)
    with mock.patch.object(placement, "SINGLE_MODEL_NODES", 0), mock.patch.object(blocks, "BLOCK_NODES", 1):
        result = schedule_batch(make_cluster(*docs), options=options, processes=processes)
    batch, need = result.placements, _min_counts(docs)
    if seconds is None:
        one = schedule(make_cluster(*docs))
        assert [n for _, n in placed_by_priority(batch)] >= [n for _, n in placed_by_priority(_legal(one, need))]
    assert _split_gangs(batch, need) == []
    assert violations(batch) == []
    assert [v for check in result.nodes for v in verify(check.problem, check.allocations)] == []
    assert all(p.node or p.reason for p in batch)
