"""``schedule``: every node filtered as kube-scheduler filters it, the best one chosen, each pod shaping the next."""

from __future__ import annotations

import pytest

from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins import dynamic_resources
from drasat.solver.scheduling.plugins.node_filters import summary

from .cluster_factory import (
    claim,
    device_class,
    gpu_slice,
    make_cluster,
    node,
    pod,
    template,
    violations,
)

TEMPLATED = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]


def gpu_nodes(n: int, gpus: int = 2, **node_fields) -> list[dict]:
    return [doc for i in range(n) for doc in (node(f"n{i}", **node_fields), gpu_slice(f"n{i}", gpus))]


def test_summary_line_counts_each_reason_largest_first():
    nodes = (
        [node(f"empty-{i}") for i in range(8)]
        + [d for i in range(3) for d in (node(f"small-{i}", cpu="1"), gpu_slice(f"small-{i}"))]
        + [node("tainted", taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]), gpu_slice("tainted")]
    )
    cluster = make_cluster(
        device_class(), template("one-gpu"), *nodes, pod("p", claims=TEMPLATED, requests={"cpu": "2"})
    )
    (placement,) = schedule(cluster)
    assert placement.node is None
    assert placement.reason == (
        "0/12 nodes are available: 1 node(s) had untolerated taint {dedicated: ml}, "
        "3 Insufficient cpu, 8 cannot allocate all claims."
    )


def test_summary_of_a_prefilter_failure_names_it_once():
    assert summary(3, [], 'resourceclaim.resource.k8s.io "x" not found') == (
        '0/3 nodes are available: resourceclaim.resource.k8s.io "x" not found.'
    )


def test_missing_claim_leaves_the_pod_pending_with_the_reason():
    cluster = make_cluster(device_class(), *gpu_nodes(2), pod("p", claims=[{"name": "c", "resourceClaimName": "x"}]))
    (placement,) = schedule(cluster)
    assert placement.node is None and placement.reason.endswith('resourceclaim.resource.k8s.io "x" not found.')


@pytest.mark.parametrize(
    "spec, reason",
    [
        ({"nodeSelector": {"zone": "b"}}, "node(s) didn't match Pod's node affinity/selector"),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["c"]}]}
                            ]
                        }
                    }
                }
            },
            "node(s) didn't match Pod's node affinity/selector",
        ),
    ],
)
def test_node_selector_and_affinity(spec, reason):
    cluster = make_cluster(device_class(), node("a", labels={"zone": "a"}), gpu_slice("a"), pod("p", **spec))
    (placement,) = schedule(cluster)
    assert placement.reason == f"0/1 nodes are available: 1 {reason}."


def test_tolerated_taint_and_unschedulable_node():
    taint = {"key": "gpu", "effect": "NoSchedule"}
    cordoned = node("b")
    cordoned["spec"] = {"unschedulable": True}
    cluster = make_cluster(
        device_class(),
        node("a", taints=[taint]),
        cordoned,
        pod("p", tolerations=[{"key": "gpu", "operator": "Exists"}]),
    )
    (placement,) = schedule(cluster)
    assert placement.node == "a"
    again = make_cluster(device_class(), cordoned, pod("p"))
    assert schedule(again)[0].reason == "0/1 nodes are available: 1 node(s) were unschedulable."


def test_each_placement_reduces_what_the_next_pod_finds():
    pods = [pod(f"p{i}", claims=TEMPLATED) for i in range(5)]
    cluster = make_cluster(device_class(), template("one-gpu", count=2), *gpu_nodes(2), *pods)
    placements = schedule(cluster)
    assert [p.node for p in placements] == ["n0", "n1", None, None, None]
    assert placements[2].reason == "0/2 nodes are available: 2 cannot allocate all claims."
    assert violations(placements) == []
    devices = {r.device for p in placements[:2] for c in p.claims for r in c.status.allocation.devices.results}
    assert devices == {"gpu-0", "gpu-1"}
    # the second pod reuses the first one's verdict for its node class, but gets claims of its own
    assert [p.claims[0].name.split("-gpu-")[0] for p in placements[:2]] == ["p0", "p1"]


def test_cpu_and_pods_are_counted_with_pods_already_bound():
    bound = pod("running", requests={"cpu": "6"}, nodeName="n0")
    done = pod("done", requests={"cpu": "6"}, nodeName="n1")
    done["status"] = {"phase": "Succeeded"}  # holds nothing any more
    cluster = make_cluster(
        device_class(), *gpu_nodes(2, cpu="8", pods="1"), bound, done, pod("new", requests={"cpu": "4"}), pod("third")
    )
    placements = schedule(cluster)
    assert placements[0].node == "n1"
    assert placements[1].reason == "0/2 nodes are available: 2 Too many pods."


def test_least_allocated_prefers_the_emptier_node_and_ties_go_by_name():
    busy = pod("running", requests={"cpu": "4"}, nodeName="n0")
    cluster = make_cluster(
        device_class(), *gpu_nodes(3), busy, pod("a", requests={"cpu": "1"}), pod("b", requests={"cpu": "1"})
    )
    assert [p.node for p in schedule(cluster)] == ["n1", "n2"]


def test_template_claim_is_allocated_reserved_and_reported_in_the_pod_status():
    cluster = make_cluster(device_class(), template("one-gpu"), *gpu_nodes(1), pod("p", claims=TEMPLATED))
    (placement,) = schedule(cluster)
    (made,) = placement.claims
    assert placement.pod.spec.node_name == "n0"
    assert [(s.name, s.resource_claim_name) for s in placement.pod.status.resource_claim_statuses] == [
        ("gpu", made.name)
    ]
    assert [(r.resource, r.name) for r in made.status.reserved_for] == [("pods", "p")]
    assert violations([placement]) == []


def test_a_claim_already_allocated_is_shared_where_it_is_not_allocated_again():
    first = pod("first", claims=[{"name": "c", "resourceClaimName": "shared"}], requests={"cpu": "2"})
    second = pod("second", claims=[{"name": "c", "resourceClaimName": "shared"}], requests={"cpu": "7"})
    cluster = make_cluster(device_class(), claim("shared"), *gpu_nodes(2), first, second)
    placements = schedule(cluster)
    assert placements[0].node == "n0" and placements[0].allocations
    assert placements[1].node is None  # the claim lives on n0, and n0 has no cpu left for 7
    assert placements[1].reason == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 resourceclaim not available on the node."
    )
    lighter = make_cluster(
        device_class(),
        claim("shared"),
        *gpu_nodes(2),
        first,
        pod("second", claims=[{"name": "c", "resourceClaimName": "shared"}]),
    )
    placements = schedule(lighter)
    assert [p.node for p in placements] == ["n0", "n0"] and placements[1].allocations == {}
    assert [r.name for r in placements[1].claims[0].status.reserved_for] == ["first", "second"]
    assert violations(placements) == []


def test_group_claim_is_shared_by_more_than_256_pods_and_reserved_once():
    entry = {"name": "shared-gpu", "resourceClaimTemplateName": "one-gpu"}
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "training", "namespace": "default"},
        "spec": {"resourceClaims": [entry]},
    }
    members = [pod(f"w-{i}", claims=[entry], schedulingGroup={"podGroupName": "training"}) for i in range(300)]
    cluster = make_cluster(
        device_class(),
        template("one-gpu"),
        group,
        *gpu_nodes(1, pods="400"),
        *members,
        gates={"DRAWorkloadResourceClaims": True},
    )
    placements = schedule(cluster)
    assert all(p.node == "n0" for p in placements)
    final = placements[-1].claims[0]
    assert {p.claims[0].name for p in placements} == {final.name}
    assert [(r.resource, r.name) for r in final.status.reserved_for] == [("podgroups", "training")]
    assert sum(1 for p in placements if p.allocations) == 1 and violations(placements) == []


def test_extended_resource_is_allocated_through_dra_unless_a_device_plugin_offers_it():
    plugin_node = node("plugin", **{"example.com/gpu": "4"})
    cluster = make_cluster(
        device_class(extended="example.com/gpu"),
        plugin_node,
        *gpu_nodes(1),
        pod("p", requests={"example.com/gpu": "2"}),
        pod("q", requests={"example.com/gpu": "2"}),
        pod("r", requests={"example.com/gpu": "2"}),
    )
    placements = schedule(cluster)
    by_node = {p.pod.name: p.node for p in placements}
    assert by_node == {"p": "n0", "q": "plugin", "r": "plugin"}
    dra = placements[0]
    (made,) = dra.claims
    assert dra.pod.status.extended_resource_claim_status.resource_claim_name == made.name
    assert len(made.status.allocation.devices.results) == 2 and placements[1].claims == []
    assert violations(placements) == []


def test_one_allocation_per_class_of_identical_nodes(monkeypatch):
    calls = []
    real = dynamic_resources.allocate

    def counting(problem, **kwargs):
        calls.append(problem.node.name)
        return real(problem, **kwargs)

    monkeypatch.setattr(dynamic_resources, "allocate", counting)
    cluster = make_cluster(device_class(), template("one-gpu"), *gpu_nodes(20), pod("p", claims=TEMPLATED))
    (placement,) = schedule(cluster)
    assert placement.node == "n0" and calls == ["n0"]


def test_a_pool_reaching_all_nodes_is_used_up_once_for_all_of_them(monkeypatch):
    calls = []
    real = dynamic_resources.allocate
    monkeypatch.setattr(
        dynamic_resources, "allocate", lambda problem, **kw: calls.append(problem.node.name) or real(problem, **kw)
    )
    shared = gpu_slice("x", 2)
    shared["metadata"]["name"] = "network-gpus"
    del shared["spec"]["nodeName"]
    shared["spec"]["allNodes"] = True
    shared["spec"]["pool"]["name"] = "network"
    pods = [pod(f"p{i}", claims=TEMPLATED) for i in range(3)]
    cluster = make_cluster(device_class(), template("one-gpu"), *(node(f"n{i}") for i in range(4)), shared, *pods)
    placements = schedule(cluster)
    assert [p.node for p in placements] == ["n0", "n1", None] and violations(placements) == []
    assert placements[2].reason == "0/4 nodes are available: 4 cannot allocate all claims."
    # one verdict per pod for the four alike nodes, each computed on the best-scored node (the emptiest),
    # so binding p1 on n1 needs no recount
    assert calls == ["n0", "n1", "n2"], calls


def test_the_dra_score_prefers_the_node_where_an_earlier_alternative_fits():
    prioritized = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "big-or-small", "namespace": "default"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "firstAvailable": [
                                {"name": "big", "deviceClassName": "big"},
                                {"name": "small", "deviceClassName": "small"},
                            ],
                        }
                    ]
                }
            }
        },
    }
    cluster = make_cluster(
        device_class("big", "big.example.com"),
        device_class("small", "small.example.com"),
        prioritized,
        node("a"),
        gpu_slice("a", driver="small.example.com"),
        node("b"),
        gpu_slice("b", driver="big.example.com"),
        pod("p", claims=[{"name": "gpu", "resourceClaimTemplateName": "big-or-small"}]),
    )
    (placement,) = schedule(cluster)
    assert placement.node == "b" and placement.claims[0].status.allocation.devices.results[0].request == "gpu/big"
    assert violations([placement]) == []


@pytest.mark.parametrize(
    "edit, reason",
    [
        ({"deviceClassName": "nope"}, 'deviceclass.resource.k8s.io "nope" not found'),
        (
            {"selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].missing == 1'}}]},
            "CEL runtime error: no such key: missing",
        ),
    ],
)
def test_errors_of_the_allocator_leave_the_pod_pending_with_them(edit, reason):
    broken = template("one-gpu")
    broken["spec"]["spec"]["devices"]["requests"][0]["exactly"].update(edit)
    cluster = make_cluster(device_class(), broken, *gpu_nodes(2), pod("p", claims=TEMPLATED))
    (placement,) = schedule(cluster)
    assert placement.node is None and placement.reason.startswith("0/2 nodes are available: 2 claim default/p-gpu-")
    assert reason in placement.reason
