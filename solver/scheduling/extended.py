"""The implicit claim the scheduler writes for extended resources backed by DRA (``DRAExtendedResource``).

A container asking for ``example.com/gpu: 2`` (where a DeviceClass names that
extended resource) or ``deviceclass.resource.kubernetes.io/<class>: 2`` gets an
ExactCount request for two devices of the class in one claim per pod, named
``container-<i>-request-<j>``: ``i`` counts init containers then regular ones,
``j`` is the resource's place among the container's sorted request names. Init
containers that run before the others reuse the devices of the containers that
come after them, and only the largest of their own requests is kept — they never
run at the same time.
"""

from __future__ import annotations

from collections.abc import Mapping

from drasat.models.core import Container, ContainerExtendedResourceRequest, Pod
from drasat.models.meta import ObjectMeta
from drasat.models.resource import DeviceClaim, DeviceRequest, ExactDeviceRequest, ResourceClaim, ResourceClaimSpec

from .cluster import Cluster, namespace_of
from .plugins.node_resources import effective_requests
from .pods import EXTENDED_CLAIM_ANNOTATION, generated_name, generated_uid, object_uid, owner_reference

Mapping_ = ContainerExtendedResourceRequest


def _container_request(
    index: int, container: Container, resource: str, class_name: str, reusable: list[DeviceRequest | None]
) -> tuple[DeviceRequest | None, list[Mapping_]]:
    """The container's own request for ``resource`` after what ``reusable`` requests already provide."""
    wanted = effective_requests(container.resources)
    amount = wanted.get(resource)
    need = int(amount.value) if amount is not None else 0
    if need <= 0:
        return None, []
    mappings, total = [], 0
    for other in reusable:
        if other is not None and other.exactly is not None:
            total += other.exactly.count or 0
            mappings.append(Mapping_(container_name=container.name, resource_name=resource, request_name=other.name))
            if total >= need:
                return None, mappings
    name = f"container-{index}-request-{sorted(wanted).index(resource)}"
    request = DeviceRequest(
        name=name,
        exactly=ExactDeviceRequest(device_class_name=class_name, allocation_mode="ExactCount", count=need - total),
    )
    return request, [*mappings, Mapping_(container_name=container.name, resource_name=resource, request_name=name)]


def _resource_requests(pod: Pod, resource: str, class_name: str) -> tuple[list[DeviceRequest], list[Mapping_]]:
    containers = list(pod.spec.init_containers) + list(pod.spec.containers)
    inits = len(pod.spec.init_containers)
    short = [i for i in range(inits) if containers[i].restart_policy != "Always"]
    long_lived: list[DeviceRequest | None] = [None] * len(containers)
    long_maps: list[Mapping_] = []
    for i in (i for i in range(len(containers)) if i not in short):
        long_lived[i], found = _container_request(i, containers[i], resource, class_name, [])
        long_maps += found
    largest: DeviceRequest | None = None
    short_names: set[str] = set()
    short_maps: list[Mapping_] = []
    for i in short:
        request, found = _container_request(i, containers[i], resource, class_name, long_lived[i:])
        short_maps += found
        if request is not None and request.exactly is not None:
            short_names.add(request.name)
            if largest is None or (largest.exactly and (largest.exactly.count or 0) < (request.exactly.count or 0)):
                largest = request
    if largest is not None:
        short_maps = [
            m
            if m.request_name not in short_names
            else Mapping_(container_name=m.container_name, resource_name=resource, request_name=largest.name)
            for m in short_maps
        ]
    requests = ([largest] if largest else []) + [r for r in long_lived if r is not None]
    return requests, long_maps + short_maps


def extended_claim(
    pod: Pod, resources: Mapping[str, int], cluster: Cluster
) -> tuple[ResourceClaim, list[ContainerExtendedResourceRequest]]:
    """The claim for ``resources`` (those of the pod's extended resources this node lacks as a device plugin),
    owned by the pod and annotated as the scheduler annotates it, with the pod's request mappings."""
    requests: list[DeviceRequest] = []
    mappings: list[Mapping_] = []
    for resource in sorted(resources):
        cls = cluster.class_for_extended_resource(resource)
        if cls is None:  # only resources a class backs are passed in
            continue
        found, maps = _resource_requests(pod, resource, cls.name)
        requests += found
        mappings += maps
    requests.sort(key=lambda r: r.name)
    name = generated_name(f"{pod.name}-extended-resources-", f"{object_uid('Pod', pod)}/extended-resources")
    claim = ResourceClaim(
        api_version="resource.k8s.io/v1",
        kind="ResourceClaim",
        metadata=ObjectMeta(
            name=name,
            namespace=namespace_of(pod),
            uid=generated_uid(f"{object_uid('Pod', pod)}/extended-resources"),
            annotations={EXTENDED_CLAIM_ANNOTATION: "true"},
            owner_references=[owner_reference(pod)],
        ),
        spec=ResourceClaimSpec(devices=DeviceClaim(requests=requests)),
    )
    return claim, mappings
