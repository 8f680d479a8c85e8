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

Every name that becomes a path segment (namespace, pod, claim, pod claim, request, driver) is
checked first as the API server checks it (DNS label or subdomain, driver name): none of those
formats admits ``/``, ``..`` or an empty segment, so no file can land outside the metadata root,
whatever the input says. A name the API server would refuse is an InputError naming the object and
field, raised before the command line writes anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from drasat.models.core import Pod
from drasat.models.errors import InputError, Location
from drasat.models.meta import TypedObject
from drasat.models.resource import Device, DeviceRequestAllocationResult, ResourceClaim, ResourceSlice
from drasat.models.validation.formats import (
    Findings,
    check_dns_label,
    check_dns_subdomain,
    check_driver_name,
    index,
    key,
)

from .pool_usage import gather_pools

VERSIONS = ("metadata.resource.k8s.io/v1beta1", "metadata.resource.k8s.io/v1alpha1")
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


@dataclass(frozen=True)
class MetadataFile:
    """One file: its path below the metadata root, and the objects of its stream (one per version)."""

    path: str  # <namespace>/pods/<pod>/<protocol path> or <namespace>/claims/<claim>/<protocol path>
    claim: str  # namespace/name, for messages
    objects: tuple[dict[str, Any], ...]


Locate = Callable[[TypedObject], Location | None]


def metadata_files(
    claims: Sequence[ResourceClaim],
    slices: Sequence[ResourceSlice],
    pods: Sequence[Pod] = (),
    locate: Locate | None = None,
) -> list[MetadataFile]:
    """Every file for the allocated ``claims``, in each consuming pod's tree; a clash, or a name no path may be
    made of, is an InputError (``locate`` gives each object's place in the input for the messages)."""
    allocated = [c for c in claims if c.status is not None and c.status.allocation is not None]
    refuse_unsafe_names(allocated, pods, locate)
    devices = {(p.driver, p.name, d.name): d for p in gather_pools(slices) for _, d in p.devices}
    from_templates = {found: name for found, (name, _, _) in _template_claims(pods).items()}
    files: dict[str, MetadataFile] = {}
    for claim in allocated:
        assert claim.status is not None and claim.status.allocation is not None
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


def _template_claims(pods: Sequence[Pod]) -> dict[tuple[str, str], tuple[str, Pod, int]]:
    """(namespace, generated claim name) -> the pod's claim name, the pod and the status entry saying so."""
    found = {}
    for pod in pods:
        for i, status in enumerate(pod.status.resource_claim_statuses if pod.status else []):
            if status.resource_claim_name:
                found[(pod.namespace, status.resource_claim_name)] = (status.name, pod, i)
    return found


def refuse_unsafe_names(claims: Sequence[ResourceClaim], pods: Sequence[Pod], locate: Locate | None = None) -> None:
    """InputError naming object and field for every name that would become a path segment and that the API
    server would refuse: ``..``, ``/``, ``a/../../b`` are none of a DNS label, a DNS subdomain or a driver name."""
    out = Findings()

    def where(obj: TypedObject) -> Location:
        found = locate(obj) if locate is not None else None
        label = "/".join(filter(None, (obj.namespace, obj.name)))
        return found or Location(kind=obj.kind, name=label or None)

    templates = _template_claims(pods)
    for claim in claims:
        at = where(claim)
        if claim.namespace:
            check_dns_label(out, at.child("metadata.namespace"), claim.namespace)
        check_dns_subdomain(out, at.child("metadata.name"), claim.name)
        annotation = claim.metadata.annotations.get(POD_CLAIM_NAME_ANNOTATION)
        if annotation is not None:
            check_dns_label(out, key(at.child("metadata.annotations"), POD_CLAIM_NAME_ANNOTATION), annotation)
        elif (claim.namespace, claim.name) in templates:
            name, pod, i = templates[(claim.namespace, claim.name)]
            check_dns_label(out, index(where(pod).child("status.resourceClaimStatuses"), i).child("name"), name)
        _check_consumers(out, at, claim, pods, where)
    if out.problems:
        raise InputError(out.problems)


def _check_consumers(
    out: Findings, at: Location, claim: ResourceClaim, pods: Sequence[Pod], where: Callable[[TypedObject], Location]
) -> None:
    """The pod names of the claim's trees, and the request and driver names of its files."""
    assert claim.status is not None and claim.status.allocation is not None
    namespace = claim.namespace or "default"
    for pod in pods:
        if (pod.namespace or "default") == namespace and pod.metadata.name and _names(pod, claim.name):
            check_dns_subdomain(out, where(pod).child("metadata.name"), pod.metadata.name)
    for i, ref in enumerate(claim.status.reserved_for):
        if ref.resource == "pods" and not ref.api_group:
            check_dns_subdomain(out, index(at.child("status.reservedFor"), i).child("name"), ref.name)
    for i, owner in enumerate(claim.metadata.owner_references):
        if owner.kind == "Pod" and owner.controller:
            check_dns_subdomain(out, index(at.child("metadata.ownerReferences"), i).child("name"), owner.name)
    for i, result in enumerate(claim.status.allocation.devices.results):
        result_at = index(at.child("status.allocation.devices.results"), i)
        check_dns_label(out, result_at.child("request"), result.request.split("/")[0])
        check_driver_name(out, result_at.child("driver"), result.driver)


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
