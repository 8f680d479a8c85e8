"""Joint placement (``schedule --batch``): the showcase scenarios against one-by-one, every node verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from drasat.models.loader import load_paths
from drasat.solver import Features
from drasat.solver.allocation.problem import claim_key
from drasat.solver.batch.placement import BatchResult, schedule_batch
from drasat.solver.scheduling.cluster import Cluster, cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.verification.verifier import verify

from .cluster_factory import violations
from .scenario_runner import OWN


def _cluster(name: str) -> Cluster:
    return cluster_from_objects([o.obj for o in load_paths([str(OWN / name)]).objects], Features())


def _verified(result: BatchResult) -> list[str]:
    """The verifier, run again on every node's joint allocation (not trusting the batch's own check)."""
    return [f"{c.node}: {v}" for c in result.nodes for v in verify(c.problem, c.allocations)]


def _placed(placements) -> dict[str, str]:
    return {p.label: p.node for p in placements if p.node}


def test_gang_of_two_halves_fails_one_by_one_and_fits_jointly():
    """kubernetes#138765: first fit gives the first pod the whole GPU; jointly each pod gets a half."""
    one_by_one = _placed(schedule(_cluster("batch-gang-whole-or-half.yaml")))
    result = schedule_batch(_cluster("batch-gang-whole-or-half.yaml"))
    assert one_by_one == {"default/trainer-0": "gpu-node"}
    assert _placed(result.placements) == {"default/trainer-0": "gpu-node", "default/trainer-1": "gpu-node"}
    devices = sorted(r.device for p in result.placements for c in p.claims for r in c.status.allocation.devices.results)
    assert devices == ["gpu-0-half-0", "gpu-0-half-1"]
    assert result.summary.gangs_complete == 1 and len(result.nodes) == 1
    assert _verified(result) == []


def test_a_gang_that_does_not_fit_whole_is_not_placed_at_all():
    one_by_one = _placed(schedule(_cluster("batch-gang-not-partly-placed.yaml")))
    result = schedule_batch(_cluster("batch-gang-not-partly-placed.yaml"))
    assert set(one_by_one) == {"default/ring-0", "default/ring-1"}  # a partial gang, holding the GPU
    assert _placed(result.placements) == {"default/solo": "gpu-node"}
    assert all("PodGroup default/ring" in p.reason for p in result.placements if p.node is None)
    assert result.summary.gangs == 1 and result.summary.gangs_complete == 0
    assert _verified(result) == []


def test_higher_priority_is_served_first_even_for_fewer_pods():
    one_by_one = _placed(schedule(_cluster("batch-priority-first.yaml")))
    result = schedule_batch(_cluster("batch-priority-first.yaml"))
    assert set(one_by_one) == {"default/small-0", "default/small-1"}
    assert _placed(result.placements) == {"default/important": "gpu-node"}
    assert _verified(result) == []


@pytest.mark.parametrize("name", sorted(p.name for p in Path(OWN).glob("batch-*.yaml")))
def test_the_same_input_gives_the_same_answer(name):
    first, second = schedule_batch(_cluster(name)), schedule_batch(_cluster(name))
    devices = [
        [(c.name, c.status.allocation.devices.to_api() if c.status and c.status.allocation else None) for c in p.claims]
        for p in first.placements
    ]
    assert devices == [
        [(c.name, c.status.allocation.devices.to_api() if c.status and c.status.allocation else None) for c in p.claims]
        for p in second.placements
    ]
    assert _placed(first.placements) == _placed(second.placements)


def test_compare_schedules_reports_both_sides_and_the_pods_that_differ():
    from drasat.solver.report.schedule_comparison import compare_schedules

    result = compare_schedules(_cluster("batch-gang-whole-or-half.yaml"))
    one, batch = result.one_by_one, result.batch
    assert (one.placed, batch.placed, one.gangs_complete, batch.gangs_complete) == (1, 2, 0, 1)
    assert (one.usage.devices_touched, batch.usage.devices_touched) == (1, 2)
    assert one.usage.counter_sets_touched == batch.usage.counter_sets_touched == 1
    assert result.differences == ["default/trainer-1: one-by-one pending, batch gpu-node"]
    assert result.to_data()["batch"]["gangsComplete"] == 1


def test_whole_devices_and_largest_free_partition_follow_the_counters():
    """Before any placement the GPU is whole and its largest free partition is all of it; one half taken
    leaves the other half."""
    from drasat.solver.report.device_usage import usage

    cluster = _cluster("batch-gang-whole-or-half.yaml")
    before = usage(cluster, [])
    assert before.whole_devices_free == 1 and before.devices_touched == 0
    (largest,) = before.largest_free.values()
    assert (largest.size, largest.nodes, largest.of_nodes) == (1, 1, 1)
    half = next(p for p in schedule_batch(cluster).placements if p.label == "default/trainer-0")
    after = usage(cluster, half.claims)
    (largest,) = after.largest_free.values()
    assert after.whole_devices_free == 0 and str(largest.size) == "1/2"


def test_compare_schedule_cli_prints_data_and_refuses_node(tmp_path):
    import json

    from click.testing import CliRunner

    from drasat.cli.main import cli, load_all_commands

    load_all_commands()
    path = str(OWN / "batch-gang-whole-or-half.yaml")
    out = CliRunner().invoke(cli, ["compare", "--schedule", "-o", "json", path])
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["batch"]["placed"] == 2
    table = CliRunner().invoke(cli, ["compare", "--schedule", path])
    assert "default/trainer-1: one-by-one pending, batch gpu-node" in table.stdout
    refused = CliRunner().invoke(cli, ["compare", "--schedule", "--node", "gpu-node", path])
    assert refused.exit_code == 2 and not refused.stdout and "--schedule" in refused.stderr


def test_compare_schedule_words_whole_devices_and_partitions_for_what_they_are():
    """Whole GPUs only (examples/): "largest free device: a whole device", not "partition: 1 of a device", and
    the node type's counts say devices per node; a partitioned node keeps "largest free partition"."""
    from click.testing import CliRunner

    from drasat.cli.main import cli, load_all_commands

    load_all_commands()
    whole = CliRunner().invoke(cli, ["compare", "--schedule", str(Path(__file__).resolve().parents[1] / "examples")])
    assert whole.exit_code == 0, whole.stderr
    lines = whole.stdout.splitlines()
    row = next(line for line in lines if line.startswith("largest"))
    assert [cell.strip() for cell in row.split("   ") if cell.strip()][:2] == [
        "largest free device",
        "a whole device on 2 of 2 nodes",
    ]
    assert "node type: 4 gpu.example.com devices, 2 nic.example.com devices per node (2 nodes)" in lines
    split = CliRunner().invoke(cli, ["compare", "--schedule", str(OWN / "batch-gang-whole-or-half.yaml")]).stdout
    assert "largest free partition" in split and "largest free device" not in split
    assert "node type: 3 gpu.example.com devices; 1 counter set per node (1 node)" in split.splitlines()


def test_a_gang_sharing_its_group_claims_is_placed_one_by_one_and_kept_whole():
    """PodGroup claims are shared by the members: the joint model cannot count such pods, so the gang is
    placed one by one (on a copy first) and kept because every member fits — as the scheduler would."""
    objects = [o.obj for o in load_paths([str(OWN / "podgroup-claims-seed.yaml")]).objects]
    features = Features.from_mapping({"DRAWorkloadResourceClaims": True})
    result = schedule_batch(cluster_from_objects(objects, features))
    one_by_one = schedule(cluster_from_objects(objects, features))
    assert (
        _placed(result.placements)
        == _placed(one_by_one)
        == {"some-ns/training-group-pod-1": "worker-2", "some-ns/training-group-pod-2": "worker-2"}
    )
    # The seed's PodGroup names no gang policy: not a gang, each pod placed on its own (as one by one).
    assert (result.summary.gangs, result.summary.gangs_complete, result.summary.placed_jointly) == (0, 0, 0)
    assert violations(result.placements) == []


def _copies_of_the_gpu_node(count: int, pods: int) -> Cluster:
    """The #138765 node ``count`` times (own pool each) and ``pods`` whole-or-half pods without a group."""
    objects = [o.obj for o in load_paths([str(OWN / "batch-gang-whole-or-half.yaml")]).objects]
    nodes = [o for o in objects if o.kind == "Node"]
    slices = [o for o in objects if o.kind == "ResourceSlice"]
    pod = next(o for o in objects if o.kind == "Pod")
    rest = [o for o in objects if o.kind not in ("Node", "ResourceSlice", "Pod", "PodGroup")]
    out = list(rest)
    for n in range(count):
        name = f"gpu-node-{n}"
        node = nodes[0].model_copy(deep=True)
        node.metadata.name = name
        out.append(node)
        for s in slices:
            copy = s.model_copy(deep=True)
            copy.metadata.name = f"{name}-{s.metadata.name}"
            copy.spec.node_name = copy.spec.pool.name = name
            out.append(copy)
    for i in range(pods):
        copy = pod.model_copy(deep=True)
        copy.metadata.name = f"worker-{i}"
        copy.spec.scheduling_group = None
        out.append(copy)
    return cluster_from_objects(out, Features())


def test_identical_nodes_each_get_their_own_devices_and_each_is_verified():
    """Three identical nodes, six pods: two halves on each node. Each node's devices are read off the counting
    model's answer under its own pool and node names, and the verifier passes each on its own node."""
    result = schedule_batch(_copies_of_the_gpu_node(3, 6))
    assert result.summary.nodes_counted == 3 and result.summary.placed == 6
    assert result.summary.nodes_verified == 3 and result.summary.proven
    pools = {p.node: {r.pool for c in p.claims for r in c.status.allocation.devices.results} for p in result.placements}
    assert pools == {f"gpu-node-{n}": {f"gpu-node-{n}"} for n in range(3)}
    selectors = {
        p.node: [c.status.allocation.node_selector.node_selector_terms[0].match_fields[0].values for c in p.claims]
        for p in result.placements
    }
    assert all(values == [[node]] for node, values in selectors.items())
    assert _verified(result) == [] and violations(result.placements) == []


def test_batch_pack_through_the_command_line_keeps_the_untouched_gpu_whole_and_verifies():
    """``schedule --batch --objective pack``: the new pod takes the second half of node-b's partly used GPU
    (as ``schedule --objective pack`` does), node-a's GPU stays whole; the printed allocation is checked by
    the verifier against the input cluster."""
    import json

    from click.testing import CliRunner

    from drasat.cli.main import cli, load_all_commands
    from drasat.models.resource import AllocationResult, ResourceClaim
    from drasat.solver.report.device_usage import usage
    from drasat.solver.scheduling.cluster_state import ClusterState
    from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

    name = "pack-schedule-prefers-the-partly-used-gpu.yaml"
    load_all_commands()
    out = CliRunner().invoke(cli, ["schedule", "--batch", "--objective", "pack", "-o", "json", str(OWN / name)])
    assert out.exit_code == 0, out.stderr
    items = json.loads(out.stdout)["items"]
    assert {i["metadata"]["name"]: i["spec"]["nodeName"] for i in items if i["kind"] == "Pod"} == {"new": "node-b"}
    (claim,) = [ResourceClaim.model_validate(i) for i in items if i["kind"] == "ResourceClaim"]
    assert claim.status is not None and claim.status.allocation is not None
    problem = ClusterState(_cluster(name)).problem("node-b", [claim.model_copy(update={"status": None})])
    assert verify(problem, {claim_key(claim): AllocationResult.model_validate(claim.status.allocation.to_api())}) == []
    one = schedule(_cluster(name), options=AllocateOptions(objective="pack"))
    packed = schedule_batch(_cluster(name), options=AllocateOptions(objective="pack"))
    assert _placed(packed.placements) == _placed(one) == {"default/new": "node-b"}
    assert usage(_cluster(name), [c for p in packed.placements for c in p.claims]).whole_devices_free == 1
    assert _verified(packed) == []


def test_the_baseline_reserves_no_claim_for_a_gang_member_it_withdraws():
    """g1 and p share a claim; the scheduler places g1 then p, and cannot place g1's gang mate g2, so the
    baseline withdraws g1: p keeps the claim (and its device), reserved for p alone."""
    from drasat.solver.batch.budget import Budget
    from drasat.solver.batch.passes import scheduler_baseline
    from drasat.solver.batch.pod_classes import sort_queue
    from drasat.solver.cel import SelectorEvaluator
    from drasat.solver.scheduling.cluster_state import ClusterState
    from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
    from drasat.solver.scheduling.pods import pending_pods

    from .cluster_factory import claim, device_class, gpu_slice, make_cluster, node, pod

    gang = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g0", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }
    shared = [{"name": "c", "resourceClaimName": "shared"}]
    cluster = make_cluster(
        device_class(),
        claim("shared"),
        gang,
        node("n0", cpu="2"),
        gpu_slice("n0", 1),
        pod("g1", claims=shared, requests={"cpu": "1"}, schedulingGroup={"podGroupName": "g0"}),
        pod("p", claims=shared, requests={"cpu": "1"}),
        pod("g2", requests={"cpu": "2"}, schedulingGroup={"podGroupName": "g0"}),
    )
    state, pending = ClusterState(cluster), pending_pods(cluster)
    baseline, scheduler = scheduler_baseline(
        state,
        sort_queue(cluster, pending, state.book),
        pending,
        AllocateOptions(evaluator=SelectorEvaluator()),
        {},
        Budget.of(60),
    )
    assert [p.node for p in scheduler] == ["n0", "n0", None]
    assert [p.node for p in baseline] == [None, "n0", None]
    (kept,) = baseline[1].claims
    assert [r.name for r in kept.status.reserved_for] == ["p"]
    assert kept.status.allocation is not None and violations(baseline) == []
    assert state.book[("default", "shared")].status is None  # the state is left as it was


def test_the_baseline_keeps_the_schedulers_other_placements_once(monkeypatch):
    """Withdrawing the split gang (g1 placed, g2 not) keeps p and q where the scheduler put them; they are
    not placed a second time on top of their own load (which left q pending: n0's cpu counted p twice)."""
    from drasat.solver.batch import passes
    from drasat.solver.batch.budget import Budget
    from drasat.solver.batch.pod_classes import sort_queue
    from drasat.solver.cel import SelectorEvaluator
    from drasat.solver.scheduling.cluster_state import ClusterState
    from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
    from drasat.solver.scheduling.pods import pending_pods

    from .cluster_factory import make_cluster, node, pod

    gang = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g0", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }
    cluster = make_cluster(
        gang,
        node("n0", cpu="3"),
        pod("g1", requests={"cpu": "1"}, schedulingGroup={"podGroupName": "g0"}),
        pod("p", requests={"cpu": "1"}),
        pod("g2", requests={"cpu": "3"}, schedulingGroup={"podGroupName": "g0"}),
        pod("q", requests={"cpu": "1"}),
    )
    state, pending = ClusterState(cluster), pending_pods(cluster)
    tried = []
    real = passes.schedule_one

    def counting(state: ClusterState, pod, *args, **kwargs):
        tried.append(pod.name)
        return real(state, pod, *args, **kwargs)

    monkeypatch.setattr(passes, "schedule_one", counting)
    baseline, scheduler = passes.scheduler_baseline(
        state,
        sort_queue(cluster, pending, state.book),
        pending,
        AllocateOptions(evaluator=SelectorEvaluator()),
        {},
        Budget.of(60),
    )
    assert [p.node for p in scheduler] == ["n0", "n0", None, "n0"]
    assert [p.node for p in baseline] == [None, "n0", None, "n0"]
    assert tried == ["g1", "p", "g2", "q", "g1", "g2"]  # the scheduler's pass, then the gang whole
