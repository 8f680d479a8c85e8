"""KEP-5304 device metadata: the files a DRA driver writes for each prepared request, derived offline.

For every allocated claim, one file per (request, driver) at the protocol's path:
``resourceclaims/<claim>/<request>/<driver>-metadata.json`` for a claim the pod names
directly, ``resourceclaimtemplates/<podClaimName>/<request>/<driver>-metadata.json``
for one generated from a template (only the top-level request name is a path
segment; ``requests[].name`` keeps ``request/subrequest``).

Those paths are what ONE container sees, so two pods made from one template (both with
``resourceclaimtemplates/gpu/...``) or same-named claims in two namespaces only clash
when flattened into one folder. Each consuming pod therefore gets its own tree,
``<namespace>/pods/<pod>/<protocol path>``; a pod consumes a claim when it names it in
``spec.resourceClaims``/``status.resourceClaimStatuses``, when the claim's
``status.reservedFor`` lists it, or when it owns the claim (``ownerReferences``). A claim
no pod consumes yet gets ``<namespace>/claims/<claim>/<protocol path>``. Each file is a stream of
the same ``DeviceMetadata`` in every version, newest first (v1beta1, then v1alpha1),
at ``metadata.generation`` 1, listing each device's driver, pool and name and the
attributes its ResourceSlice publishes (capacities are not metadata).

A claim comes from a template when it carries the ``resource.kubernetes.io/pod-claim-name``
annotation (set by the claim controller) or a pod's ``status.resourceClaimStatuses``
names it; this module only builds the data, the command line writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drasat.models.core import Pod
from drasat.models.errors import InputError
from drasat.models.resource import Device, DeviceRequestAllocationResult, ResourceClaim, ResourceSlice

from .pool_usage import gather_pools

VERSIONS = ("metadata.resource.k8s.io/v1beta1", "metadata.resource.k8s.io/v1alpha1")
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


@dataclass(frozen=True)
class MetadataFile:
    """One file: its path below the metadata root, and the objects of its stream (one per version)."""

    path: str  # <namespace>/pods/<pod>/<protocol path> or <namespace>/claims/<claim>/<protocol path>
    claim: str  # namespace/name, for messages
    objects: tuple[dict[str, Any], ...]


def metadata_files(
    claims: Sequence[ResourceClaim], slices: Sequence[ResourceSlice], pods: Sequence[Pod] = ()
) -> list[MetadataFile]:
    """Every file for the allocated ``claims``, in each consuming pod's tree; a clash is an InputError."""
    devices = {(p.driver, p.name, d.name): d for p in gather_pools(slices) for _, d in p.devices}
    from_templates = _template_claims(pods)
    files: dict[str, MetadataFile] = {}
    for claim in claims:
        if claim.status is None or claim.status.allocation is None:
            continue
        pod_claim = claim.metadata.annotations.get(POD_CLAIM_NAME_ANNOTATION) or from_templates.get(
            (claim.namespace, claim.name)
        )
        trees = _trees(claim, pods)
        for (request, driver), results in _by_request_and_driver(claim.status.allocation.devices.results).items():
            made = _file(claim, pod_claim, request, driver, results, devices)
            for tree in trees:
                placed = MetadataFile(f"{tree}/{made.path}", made.claim, made.objects)
                if placed.path in files:
                    raise InputError(
                        f"ResourceClaim {placed.claim} and ResourceClaim {files[placed.path].claim} "
                        f"would both write {placed.path}: choose one with --claim NAMESPACE/NAME"
                    )
                files[placed.path] = placed
    return [files[path] for path in sorted(files)]


def _trees(claim: ResourceClaim, pods: Sequence[Pod]) -> list[str]:
    """The folders (one per consuming pod, else one for the claim) whose containers see this claim."""
    namespace = claim.namespace or "default"
    consumers = {
        pod.metadata.name
        for pod in pods
        if (pod.namespace or "default") == namespace and pod.metadata.name and _names(pod, claim.name)
    }
    assert claim.status is not None
    consumers.update(ref.name for ref in claim.status.reserved_for if ref.resource == "pods" and not ref.api_group)
    consumers.update(ref.name for ref in claim.metadata.owner_references if ref.kind == "Pod" and ref.controller)
    if not consumers:
        return [f"{namespace}/claims/{claim.name}"]
    return [f"{namespace}/pods/{pod}" for pod in sorted(consumers)]


def _names(pod: Pod, claim_name: str | None) -> bool:
    """Whether the pod uses the claim by name or through its generated-claim status."""
    direct = any(c.resource_claim_name == claim_name for c in pod.spec.resource_claims)
    generated = (
        any(s.resource_claim_name == claim_name for s in pod.status.resource_claim_statuses) if pod.status else False
    )
    return direct or generated


def _template_claims(pods: Sequence[Pod]) -> dict[tuple[str, str], str]:
    """(namespace, generated claim name) -> the pod's claim name, from pods' status."""
    found = {}
    for pod in pods:
        for status in pod.status.resource_claim_statuses if pod.status else []:
            if status.resource_claim_name:
                found[(pod.namespace, status.resource_claim_name)] = status.name
    return found


def _by_request_and_driver(
    results: Sequence[DeviceRequestAllocationResult],
) -> dict[tuple[str, str], list[DeviceRequestAllocationResult]]:
    grouped: dict[tuple[str, str], list[DeviceRequestAllocationResult]] = {}
    for result in results:
        grouped.setdefault((result.request.split("/")[0], result.driver), []).append(result)
    return grouped


def _file(
    claim: ResourceClaim,
    pod_claim: str | None,
    request: str,
    driver: str,
    results: list[DeviceRequestAllocationResult],
    devices: dict[tuple[str, str, str], Device],
) -> MetadataFile:
    owner = f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name
    root = f"resourceclaimtemplates/{pod_claim}" if pod_claim else f"resourceclaims/{claim.name}"
    requests: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        requests.setdefault(result.request, []).append(_device(claim, owner, result, devices))
    meta: dict[str, Any] = {
        "name": claim.name,
        "namespace": claim.namespace or None,
        "uid": claim.metadata.uid,
        "generation": 1,
    }
    body: dict[str, Any] = {"metadata": {k: v for k, v in meta.items() if v is not None}}
    if pod_claim:
        body["podClaimName"] = pod_claim
    body["requests"] = [{"name": name, "devices": entries} for name, entries in requests.items()]
    objects = tuple({"kind": "DeviceMetadata", "apiVersion": version, **body} for version in VERSIONS)
    return MetadataFile(f"{root}/{request}/{driver}-metadata.json", owner, objects)


def _device(
    claim: ResourceClaim, owner: str, result: DeviceRequestAllocationResult, devices: dict[tuple[str, str, str], Device]
) -> dict[str, Any]:
    published = devices.get((result.driver, result.pool, result.device))
    if published is None:
        raise InputError(
            f"ResourceClaim {owner}: status.allocation.devices.results: device "
            f"{result.driver}/{result.pool}/{result.device} is in no ResourceSlice of the input, "
            "so its attributes are unknown"
        )
    entry: dict[str, Any] = {"driver": result.driver, "pool": result.pool, "name": result.device}
    if published.attributes:
        entry["attributes"] = {name: value.raw() for name, value in published.attributes.items()}
    network = _network_data(claim, result)
    if network:
        entry["networkData"] = network
    return entry


def _network_data(claim: ResourceClaim, result: DeviceRequestAllocationResult) -> dict[str, Any] | None:
    """Interface name, IPs and hardware address the driver reported in the claim's status, if any."""
    assert claim.status is not None
    for status in claim.status.devices:
        if (status.driver, status.pool, status.device) == (
            result.driver,
            result.pool,
            result.device,
        ) and status.network_data is not None:
            return status.network_data.to_api() or None
    return None
