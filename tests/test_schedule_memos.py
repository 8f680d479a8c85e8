"""What one-by-one keeps between pods on a big cluster changes no answer.

On more than 100 nodes the scheduler samples nodes (``percentageOfNodesToScore``), and every pod
looks at hundreds of them; drasat keeps, across pods, each node's state key (until its load or
devices in use change), whole outcomes per pod spec and node class (``Devices.known``), resource
scores per load and requests (``Cycle.resource_score``), and a node's device records across its
inventories (``build_inventory(devices_of=...)``). With all of them off, every pod's node, devices
and reasons are the same.
"""

from __future__ import annotations

import random
from unittest import mock

import pytest

from drasat.solver.allocation.planning.inventory import build_inventory
from drasat.solver.scheduling import cluster_state, cycle, devices_step
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement, schedule
from drasat.solver.scheduling.pods import pending_pods

from .cluster_factory import claim_spec, device_class, gpu_slice, make_cluster, node, pod, violations


def _templates() -> list[dict]:
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": f"gpus-{n}", "namespace": "default"},
            "spec": {"spec": claim_spec(n)},
        }
        for n in (1, 2, 3)
    ]


def _big_cluster(seed: int, nodes: int = 120, pods: int = 160):
    r = random.Random(seed)
    docs = [device_class(), *_templates()]
    for i in range(nodes):
        docs += [node(f"n{i:03}", cpu=str(r.choice([2, 4, 8]))), gpu_slice(f"n{i:03}", r.randint(1, 4))]
    for i in range(pods):
        gpus = r.choice([1, 1, 2, 3])
        requests = {"cpu": r.choice(["500m", "1", "2"])} if r.random() < 0.7 else None
        claims = [{"name": "gpu", "resourceClaimTemplateName": f"gpus-{gpus}"}]
        docs.append(pod(f"p{i:03}", claims=claims, requests=requests))
    return make_cluster(*docs)


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


def _uncached_state_key(self: ClusterState, node: str) -> tuple:
    return (self.filter_key(node), self.loads[node].key, self.signature(node), self.numa_key(node))


@pytest.mark.parametrize("seed", range(2))
def test_what_is_kept_between_pods_changes_no_answer(seed):
    fast = schedule(_big_cluster(seed))
    with (
        mock.patch.object(devices_step.Devices, "known", return_value=None),
        mock.patch.object(cycle.Cycle, "resource_score", lambda self, plugin, load, score: score()),
        mock.patch.object(cluster_state.ClusterState, "state_key", _uncached_state_key),
        mock.patch.object(cluster_state, "build_inventory", lambda problem, devices_of=None: build_inventory(problem)),
    ):
        slow = schedule(_big_cluster(seed))
    assert _outcome(fast) == _outcome(slow)
    placed = [p for p in fast if p.node]
    assert 0 < len(placed) < len(fast)  # the cluster fills: pods placed, and pods refused for their devices
    assert any(p.node_reasons for p in fast)
    assert violations(fast) == []


def test_a_nodes_later_inventory_shares_its_devices_and_equals_a_fresh_one():
    cluster = _big_cluster(0, nodes=3, pods=6)
    state = ClusterState(cluster)
    first = state.inventory("n000")
    for p in pending_pods(cluster):
        placed = schedule(cluster, [p])[0]  # on a fresh state: to get claims allocated on n000
        if placed.node == "n000":
            state.record(placed.claims)
            break
    later = state.inventory("n000")
    assert later is not first and later.devices is first.devices
    fresh = build_inventory(state.problem("n000", []))
    assert later.in_use == fresh.in_use and later.in_use != first.in_use
    assert [(p.key, p.state, p.counters) for p in later.pools] == [(p.key, p.state, p.counters) for p in fresh.pools]
    assert [d.id for d in later.devices] == [d.id for d in fresh.devices]


def test_a_nodes_state_key_changes_when_a_pod_lands_on_it():
    cluster = _big_cluster(0, nodes=2, pods=6)
    state = ClusterState(cluster)
    before = {name: state.state_key(name) for name in ("n000", "n001")}
    assert state.state_key("n000") is before["n000"]  # kept while the node does not change
    placed = next(p for p in (schedule(cluster, [q])[0] for q in pending_pods(cluster)) if p.node)
    assert placed.node is not None
    state.record(placed.claims)
    state.bind(placed.pod, placed.node)
    assert state.state_key(placed.node) != before[placed.node]
    assert state.state_key(placed.node) == _uncached_state_key(state, placed.node)
