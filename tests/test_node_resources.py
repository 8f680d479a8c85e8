"""What a pod takes from its node: container sums, init peaks, pod-level resources, and DRA node-allocatable amounts."""

from __future__ import annotations

from fractions import Fraction

from drasat.models.core import Pod
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins.node_resources import aggregate_requests, least_allocated

from .cluster_factory import device_class, make_cluster, node, violations

GATE = {"DRANodeAllocatableResources": True}
GI = 1024**3


def _pod(spec: dict) -> Pod:
    return Pod.model_validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})


def _container(name: str, cpu: str, **extra) -> dict:
    return {"name": name, "resources": {"requests": {"cpu": cpu}}, **extra}


def test_containers_add_up_init_containers_peak_sidecars_stay_and_overhead_is_added():
    pod = _pod(
        {
            "containers": [_container("a", "1"), _container("b", "2")],
            "initContainers": [_container("init", "5"), _container("side", "1", restartPolicy="Always")],
            "overhead": {"cpu": "250m"},
        }
    )
    assert aggregate_requests(pod)["cpu"] == Fraction(5) + Fraction(1, 4)  # max(1+2+1 sidecar, 5 init) + overhead
    light = _pod({"containers": [_container("a", "1")], "initContainers": [_container("i", "500m")]})
    assert aggregate_requests(light)["cpu"] == 1


def test_pod_level_requests_replace_the_container_sum():
    pod = _pod({"containers": [_container("a", "1")], "resources": {"requests": {"cpu": "3"}}})
    assert aggregate_requests(pod)["cpu"] == 3 and aggregate_requests(pod, include_pod_level=False)["cpu"] == 1


def test_least_allocated_is_the_mean_free_share():
    assert (
        least_allocated(
            {"cpu": Fraction(10), "memory": Fraction(100)},
            {"cpu": Fraction(5)},
            {"cpu": Fraction(1), "memory": Fraction(50)},
        )
        == (40 + 50) // 2
    )
    assert least_allocated({"cpu": Fraction(10)}, {}, {"cpu": Fraction(1)}) == 90  # no memory: cpu alone counts
    assert least_allocated({"cpu": Fraction(1), "memory": Fraction(100)}, {}, {"cpu": Fraction(2)}) == 50


def _cpu_slice(node_name: str) -> dict:
    device = {
        "allowMultipleAllocations": True,
        "capacity": {"cpu.example.com/cpu": {"value": "128"}},
        "nodeAllocatableResources": {
            "cpu": {"mapping": {"capacityKey": "cpu.example.com/cpu", "capacityMultiplier": "1"}}
        },
    }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-cpus"},
        "spec": {
            "driver": "cpu.example.com",
            "nodeName": node_name,
            "pool": {"name": "socket-cpus", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "socket0cpus", **device}],
        },
    }


def _xpu_slice(node_name: str, resources: dict) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-xpus"},
        "spec": {
            "driver": "xpu.example.com",
            "nodeName": node_name,
            "pool": {"name": "xpu-pool", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"xpu-{i}", "nodeAllocatableResources": resources} for i in range(4)],
        },
    }


def _pod_with_claim(name: str, request: dict, containers: list[dict], **spec) -> list[dict]:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": containers,
            "resourceClaims": [{"name": "dev", "resourceClaimName": f"{name}-c"}],
            **spec,
        },
    }
    made = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"{name}-c", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "dev", "exactly": request}]}},
    }
    return [made, body]


def _user(name: str, cpu: str = "1", memory: str | None = None, limits: dict | None = None) -> dict:
    requests = {"cpu": cpu, **({"memory": memory} if memory else {})}
    resources = {"requests": requests, "claims": [{"name": "dev"}], **({"limits": limits} if limits else {})}
    return {"name": name, "image": "busybox", "resources": resources}


CPU_REQUEST = {"deviceClassName": "cpu.example.com", "capacity": {"requests": {"cpu.example.com/cpu": "4"}}}


def test_mapped_cpu_counts_against_the_node_and_is_reported():
    docs = [
        device_class("cpu.example.com", "cpu.example.com"),
        node("my-node", cpu="8"),
        _cpu_slice("my-node"),
        *_pod_with_claim("a", CPU_REQUEST, [_user("main")]),
        *_pod_with_claim("b", CPU_REQUEST, [_user("main")]),
    ]
    placements = schedule(make_cluster(*docs, gates=GATE))
    assert placements[0].node == "my-node" and violations(placements) == []
    (status,) = placements[0].pod.status.node_allocatable_resource_claim_statuses
    assert (status.resource_claim_name, status.containers) == ("a-c", ["main"])
    assert [(m.name, m.quantity.value) for m in status.mapping] == [("cpu", 4)]
    assert placements[1].reason == "0/1 nodes are available: 1 Insufficient cpu."  # 5 + 5 > 8


def test_without_the_gate_mapped_amounts_are_not_counted():
    docs = [
        device_class("cpu.example.com", "cpu.example.com"),
        node("my-node", cpu="8"),
        _cpu_slice("my-node"),
        *_pod_with_claim("a", CPU_REQUEST, [_user("main")]),
        *_pod_with_claim("b", CPU_REQUEST, [_user("main")]),
    ]
    placements = schedule(make_cluster(*docs))
    assert [p.node for p in placements] == ["my-node", "my-node"]
    assert placements[0].pod.status.node_allocatable_resource_claim_statuses == []


XPU = {"deviceClassName": "xpu.example.com"}


def test_device_multiplier_counts_per_device():
    resources = {"memory": {"mapping": {"deviceMultiplier": "1Gi"}}}
    docs = [
        device_class("xpu.example.com", "xpu.example.com"),
        node("my-node", memory="4Gi"),
        _xpu_slice("my-node", resources),
        *_pod_with_claim("a", {**XPU, "allocationMode": "ExactCount", "count": 3}, [_user("main", memory="2Gi")]),
    ]
    (placement,) = schedule(make_cluster(*docs, gates=GATE))
    assert placement.reason == "0/1 nodes are available: 1 Insufficient memory."  # 2Gi + 3 x 1Gi > 4Gi


def test_overhead_per_pod_and_per_container():
    resources = {"memory": {"overhead": {"perPod": "8Gi", "perContainer": "1Gi"}}}
    containers = [_user("a", memory="1Gi"), _user("b", memory="1Gi")]
    docs = [
        device_class("xpu.example.com", "xpu.example.com"),
        node("my-node", memory="23Gi"),
        _xpu_slice("my-node", resources),
        *_pod_with_claim("p", XPU, containers),
        *_pod_with_claim("q", XPU, containers),
    ]
    placements = schedule(make_cluster(*docs, gates=GATE))
    (status,) = placements[0].pod.status.node_allocatable_resource_claim_statuses
    assert status.containers == ["a", "b"]
    assert [(o.name, o.per_pod.value, o.per_container.value) for o in status.overhead] == [("memory", 8 * GI, GI)]
    # each pod: 2 x 1Gi containers + 8Gi per pod + 2 x 1Gi per container = 12Gi; the second does not fit in 23Gi
    assert [p.node for p in placements] == ["my-node", None] and violations(placements) == []
    assert placements[1].reason == "0/1 nodes are available: 1 Insufficient memory."


def test_pod_level_requests_must_cover_containers_plus_dra():
    docs = [
        device_class("cpu.example.com", "cpu.example.com"),
        node("my-node", cpu="16"),
        _cpu_slice("my-node"),
        *_pod_with_claim("a", CPU_REQUEST, [_user("main")], resources={"requests": {"cpu": "2"}}),
    ]
    (placement,) = schedule(make_cluster(*docs, gates=GATE))
    assert placement.reason == (
        "0/1 nodes are available: 1 pod level request for cpu is insufficient to cover "
        "the aggregated container and node-allocatable DRA requests."
    )


def test_pod_level_limits_must_cover_each_container_limit_plus_its_dra_amounts():
    resources = {"memory": {"overhead": {"perPod": "8Gi"}}}
    user = _user("main", memory="1Gi", limits={"memory": "4Gi"})
    docs = [
        device_class("xpu.example.com", "xpu.example.com"),
        node("my-node", memory="64Gi"),
        _xpu_slice("my-node", resources),
        *_pod_with_claim("a", XPU, [user], resources={"requests": {"memory": "16Gi"}, "limits": {"memory": "10Gi"}}),
    ]
    (placement,) = schedule(make_cluster(*docs, gates=GATE))
    assert placement.reason == (
        "0/1 nodes are available: 1 pod level limit for memory is insufficient to cover "
        "the limit and DRA overhead for container main."
    )


def test_a_claim_with_mapped_devices_is_not_shared_but_one_with_overhead_is():
    cpu_docs = [device_class("cpu.example.com", "cpu.example.com"), node("my-node", cpu="64"), _cpu_slice("my-node")]
    shared = {"name": "dev", "resourceClaimName": "a-c"}
    second = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"containers": [_user("main")], "resourceClaims": [shared]},
    }
    placements = schedule(
        make_cluster(*cpu_docs, *_pod_with_claim("a", CPU_REQUEST, [_user("main")]), second, gates=GATE)
    )
    assert placements[0].node == "my-node" and placements[1].reason == (
        "0/1 nodes are available: 1 node allocatable resource claim a-c has a mapped device and cannot be shared "
        "across pods."
    )
    xpu_docs = [
        device_class("xpu.example.com", "xpu.example.com"),
        node("my-node", memory="64Gi"),
        _xpu_slice("my-node", {"memory": {"overhead": {"perPod": "8Gi"}}}),
    ]
    placements = schedule(make_cluster(*xpu_docs, *_pod_with_claim("a", XPU, [_user("main")]), second, gates=GATE))
    assert [p.node for p in placements] == ["my-node", "my-node"] and violations(placements) == []
