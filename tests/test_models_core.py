"""Node, Namespace, Pod, PodGroup and ResourcePoolStatusRequest: what kubectl prints loads, dumps back, matches the client."""

from __future__ import annotations

from typing import Any

import pytest

from drasat.models.core import Namespace, Node, Pod, PodGroup
from drasat.models.loader import load_text
from drasat.models.pool_status_request import ResourcePoolStatusRequest
from drasat.models.yaml_io import parse_documents

from .helpers_models import client_view, differences

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer-0
  namespace: ml
  uid: 6a1f0e2d-3c4b-4a59-8e7d-9b0c1d2e3f40
spec:
  nodeName: node-1
  nodeSelector:
    example.com/accelerator: gx-80
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: topology.kubernetes.io/zone
            operator: In
            values: [zone-a, zone-b]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        preference:
          matchExpressions:
          - key: example.com/fast
            operator: Exists
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels: {app: trainer}
        topologyKey: kubernetes.io/hostname
  tolerations:
  - key: example.com/gpu
    operator: Exists
    effect: NoSchedule
  schedulingGroup:
    podGroupName: training
  resourceClaims:
  - name: gpus
    resourceClaimTemplateName: two-gpus
  - name: shared-nic
    resourceClaimName: fabric
  resources:
    requests: {cpu: "4"}
    limits: {cpu: "8"}
  initContainers:
  - name: fetch
    image: busybox:1.36
    command: [sh, -c, "true"]
    resources: {}
  containers:
  - name: main
    image: registry.example.com/trainer:1.0
    args: [--epochs, "3"]
    ports:
    - containerPort: 8080
      protocol: TCP
    resources:
      claims:
      - name: gpus
      - name: shared-nic
        request: nic
      requests:
        cpu: 500m
        memory: 2Gi
      limits:
        memory: 4Gi
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    emptyDir: {}
  restartPolicy: Never
  schedulerName: default-scheduler
status:
  phase: Pending
  conditions:
  - type: PodScheduled
    status: "False"
    reason: Unschedulable
  resourceClaimStatuses:
  - name: gpus
    resourceClaimName: trainer-0-gpus-x7k2p
"""

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {kubernetes.io/hostname: node-1}
spec:
  taints:
  - key: example.com/gpu
    effect: NoSchedule
  unschedulable: false
  podCIDR: 10.244.1.0/24
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  capacity: {cpu: "8", memory: 32920048Ki, pods: "110"}
  addresses:
  - type: InternalIP
    address: 172.18.0.2
  nodeInfo:
    architecture: amd64
    bootID: 5d2f1c9e-7a3b-4e8d-9c1f-2b6a4e8d0c31
    containerRuntimeVersion: containerd://2.1.0
    kernelVersion: 6.8.0-45-generic
    kubeProxyVersion: v1.37.0
    kubeletVersion: v1.37.0
    machineID: 1f2e3d4c5b6a79880a1b2c3d4e5f6071
    operatingSystem: linux
    osImage: Ubuntu 24.04.1 LTS
    systemUUID: 4c4c4544-0042-3510-8052-b4c04f4e5a31
"""

NAMESPACE = """\
apiVersion: v1
kind: Namespace
metadata:
  name: ml
  labels:
    resource.kubernetes.io/admin-access: "true"
spec:
  finalizers: [kubernetes]
status:
  phase: Active
"""

POD_GROUP = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: training
  namespace: ml
spec:
  resourceClaims:
  - name: fabric
    resourceClaimTemplateName: fabric-link
  schedulingPolicy:
    gang:
      minCount: 4
  priorityClassName: high
status:
  resourceClaimStatuses:
  - name: fabric
    resourceClaimName: training-fabric-4k2x9
"""

POOL_STATUS = """\
apiVersion: resource.k8s.io/v1alpha3
kind: ResourcePoolStatusRequest
metadata:
  name: check-gpus
spec:
  driver: gpu.example.com
  limit: 10
  defaultPartitionTypeAttribute: gpu.example.com/profile
status:
  poolCount: 1
  conditions:
  - type: Complete
    status: "True"
    reason: Processed
    message: 1 pool matched
    lastTransitionTime: "2026-03-01T10:00:00Z"
  pools:
  - driver: gpu.example.com
    poolName: node-1
    nodeName: node-1
    generation: 1
    resourceSliceCount: 1
    totalDevices: 4
    allocatedDevices: 1
    availableDevices: 3
    unavailableDevices: 0
    partitionSummary:
    - attribute: gpu.example.com/profile
      type: Full
      total: 1
      allocatable: 0
    shareableSummary:
      fullyAvailableDevices: 1
      partiallyAvailableDevices: 0
      capacity:
      - name: memory
        total: 80Gi
        consumed: "0"
        available: 80Gi
"""

CASES = {
    "pod": (POD, Pod),
    "node": (NODE, Node),
    "namespace": (NAMESPACE, Namespace),
    "podgroup": (POD_GROUP, PodGroup),
    "pool-status": (POOL_STATUS, ResourcePoolStatusRequest),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_loads_without_problems_and_dumps_back_what_was_read(name: str) -> None:
    text, model = CASES[name]
    bundle = load_text(text, f"{name}.yaml")
    assert [str(p) for p in bundle.problems] == []
    (obj,) = list(bundle)
    assert isinstance(obj, model)
    ((_, data),) = list(documents_of(text))
    assert differences(obj.to_api(), data) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_the_clients_reading(name: str) -> None:
    text, _ = CASES[name]
    ((_, data),) = list(documents_of(text))
    (obj,) = list(load_text(text))
    theirs = client_view(data)
    assert differences(obj.to_api(), theirs) == []


def documents_of(text: str) -> list[tuple[int, Any]]:
    return [(d.index, d.data) for d in parse_documents(text, "inline.yaml")]


def test_pod_scheduling_view() -> None:
    (pod,) = list(load_text(POD))
    assert isinstance(pod, Pod)
    assert pod.spec.node_name == "node-1" and pod.spec.node_selector == {"example.com/accelerator": "gx-80"}
    (term,) = pod.required_node_terms()
    assert term.match_expressions[0].values == ["zone-a", "zone-b"]
    assert [c.name for c in pod.spec.resource_claims] == ["gpus", "shared-nic"]
    claims = pod.spec.containers[0].resources.claims  # type: ignore[union-attr]
    assert [(c.name, c.request) for c in claims] == [("gpus", None), ("shared-nic", "nic")]
    assert str(pod.spec.containers[0].resources.requests["cpu"]) == "500m"  # type: ignore[union-attr]
    assert pod.spec.scheduling_group is not None and pod.spec.scheduling_group.pod_group_name == "training"
    assert pod.status is not None and pod.status.resource_claim_statuses[0].resource_claim_name.endswith("x7k2p")


def test_pod_without_node_affinity_has_no_required_terms() -> None:
    (pod,) = list(load_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"))
    assert isinstance(pod, Pod) and pod.required_node_terms() == []


def test_typed_parts_of_large_kinds_stay_strict() -> None:
    text = POD.replace("      - name: gpus\n      - name: shared-nic", "      - nme: gpus\n      - name: shared-nic")
    problems = [str(p) for p in load_text(text, "pod.yaml").problems]
    assert any(
        "spec.containers[0].resources.claims[0].nme: is not a field Kubernetes knows here" in p for p in problems
    )


def test_node_allocatable_quantities() -> None:
    (node,) = list(load_text(NODE))
    assert isinstance(node, Node) and node.status is not None
    assert node.status.capacity["memory"].value == 32920048 * 1024
    assert [t.effect for t in node.spec.taints] == ["NoSchedule"]  # type: ignore[union-attr]


def test_pod_group_in_both_versions() -> None:
    older = POD_GROUP.replace("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3")
    (group,) = list(load_text(older))
    assert isinstance(group, PodGroup) and group.api_version == "scheduling.k8s.io/v1alpha3"
    assert group.spec.resource_claims[0].resource_claim_template_name == "fabric-link"
