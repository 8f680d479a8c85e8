"""The joint placement never places fewer pods than one by one, priority by priority (inputs a fuzzer found)."""

from __future__ import annotations

from pathlib import Path

from drasat.models.loader import load_paths
from drasat.solver import Features
from drasat.solver.batch.passes import placed_by_priority
from drasat.solver.batch.placement import schedule_batch
from drasat.solver.scheduling.cluster import Cluster, cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule

from .cluster_factory import violations

DATA = Path(__file__).resolve().parent / "data" / "batch"


def _cluster(name: str) -> Cluster:
    return cluster_from_objects([o.obj for o in load_paths([str(DATA / name)]).objects], Features())


def _placed(placements) -> dict[str, str]:
    return {p.label: p.node for p in placements if p.node}


def test_a_mix_the_greedy_growth_misses_is_still_reached():
    """6 cpu: the greedy growth finds (three 2-cpu pods) and (3-cpu, high), not (two 2-cpu pods, high),
    which one by one reaches: the high-priority pod and two others."""
    one = schedule(_cluster("fewer.yaml"))
    result = schedule_batch(_cluster("fewer.yaml"))
    assert placed_by_priority(result.placements) >= placed_by_priority(one)
    assert placed_by_priority(result.placements) == [(100, 1), (0, 2)]
    assert violations(result.placements) == []


def test_a_high_priority_gang_one_by_one_places_whole_is_placed():
    result = schedule_batch(_cluster("gang-priority-lost.yaml"))
    placed = _placed(result.placements)
    assert {"default/p0", "default/p3", "default/p4", "default/p5"} <= set(placed)
    assert len(placed) == len(_placed(schedule(_cluster("gang-priority-lost.yaml")))) == 6
    assert result.summary.gangs_complete == result.summary.gangs == 1
    assert violations(result.placements) == []


def test_a_gang_on_a_node_reaching_a_shared_pool_is_tried_one_by_one_and_kept_whole():
    """The node reaches an allNodes NIC pool, so the joint model leaves it out; the gang is still placed."""
    result = schedule_batch(_cluster("shared.yaml"))
    assert (
        _placed(result.placements)
        == _placed(schedule(_cluster("shared.yaml")))
        == {"default/ring-0": "node-a", "default/ring-1": "node-a"}
    )
    assert result.summary.gangs_complete == 1
    assert any("shared device pools" in note for note in result.summary.notes)
    assert violations(result.placements) == []


def test_of_two_gangs_that_each_fit_alone_one_is_placed_whole_and_the_other_says_why_not():
    result = schedule_batch(_cluster("two-gangs-either-fits.yaml"))
    placed = _placed(result.placements)
    groups = {p.label: p.pod.spec.scheduling_group.pod_group_name for p in result.placements}
    complete = {groups[label] for label in placed}
    assert len(complete) == 1 and result.summary.gangs_complete == 1
    pending = [p for p in result.placements if p.node is None]
    assert pending and all(
        groups[p.label] not in complete and "not every member fits" in p.reason and "Insufficient cpu" in p.reason
        for p in pending
    )
    assert violations(result.placements) == []


def test_claims_of_one_name_in_two_namespaces_are_allocated_together_and_mapped_back():
    result = schedule_batch(_cluster("samename.yaml"))
    assert _placed(result.placements) == {"team-a/worker": "node-a", "team-b/worker": "node-a"}
    devices = {
        p.label: [(c.namespace, c.name, r.device) for c in p.claims for r in c.status.allocation.devices.results]
        for p in result.placements
    }
    assert sorted(d for _, _, d in devices["team-a/worker"] + devices["team-b/worker"]) == ["gpu-0", "gpu-1"]
    assert [(ns, name) for ns, name, _ in devices["team-a/worker"]] == [("team-a", "gpu")]
    assert result.summary.placed_jointly == 2 and violations(result.placements) == []


def test_a_gang_placed_early_does_not_cost_the_big_pod_one_by_one_places():
    """Trying gang g1 whole at its first member puts it on the 8-cpu node before the 7-cpu pod comes;
    the scheduler's own order places everything: its mixes seed the master, which then finds it too."""
    one = schedule(_cluster("gang-first-strands-big-pod.yaml"))
    result = schedule_batch(_cluster("gang-first-strands-big-pod.yaml"))
    assert len(_placed(one)) == 8
    assert placed_by_priority(result.placements) == placed_by_priority(one) == [(100, 1), (0, 7)]
    assert violations(result.placements) == []


def test_of_two_pods_only_one_fits_the_earlier_in_the_queue_is_placed():
    result = schedule_batch(_cluster("tie.yaml"))
    assert _placed(result.placements) == _placed(schedule(_cluster("tie.yaml"))) == {"default/first": "node-a"}
    assert violations(result.placements) == []


def test_a_podgroup_with_the_basic_policy_is_not_a_gang():
    """3 pods of 1 cpu on a 2-cpu node: one by one places two; so does the batch (no all-or-nothing)."""
    result = schedule_batch(_cluster("basic.yaml"))
    assert len(_placed(result.placements)) == len(_placed(schedule(_cluster("basic.yaml")))) == 2
    assert result.summary.gangs == 0 and violations(result.placements) == []


def test_a_priority_that_is_not_an_integer_is_refused_naming_file_object_and_field():
    from click.testing import CliRunner

    from drasat.cli.main import cli, load_all_commands

    load_all_commands()
    out = CliRunner().invoke(cli, ["schedule", "--batch", str(DATA / "badprio.yaml")])
    assert out.exit_code == 2 and not out.stdout
    assert "badprio.yaml" in out.stderr and "Pod/default/p" in out.stderr and "spec.priority" in out.stderr


def test_a_node_that_cannot_allocate_its_mix_gives_its_pods_back_and_says_so(monkeypatch):
    """Where neither the model's answer nor the allocator gives a node's devices (here: both made to fail),
    the node's pods go back, the model is searched again without that mix, and the answer stays valid."""
    from drasat.models.errors import SolveTimeout
    from drasat.solver.batch import decode, nodes

    from .scenario_runner import OWN

    def out_of_time(*args, **kwargs):
        raise SolveTimeout("out of time")

    monkeypatch.setattr(nodes, "allocate", out_of_time)
    monkeypatch.setattr(decode, "read_devices", lambda *args: None)
    cluster = cluster_from_objects(
        [o.obj for o in load_paths([str(OWN / "batch-gang-whole-or-half.yaml")]).objects], Features()
    )
    result = schedule_batch(cluster)
    assert any("could not allocate the mix" in note for note in result.summary.notes), result.summary.notes
    assert result.summary.rounds > 1 and result.summary.placed_jointly == 0
    assert violations(result.placements) == []
