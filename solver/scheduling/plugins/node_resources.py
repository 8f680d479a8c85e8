"""cpu, memory, hugepages and pods: what a pod asks of a node, with what its DRA devices add.

Sums follow Kubernetes' resource helpers: regular containers add up, init
containers count at their peak (sidecars stay for the pod's life), pod-level
requests replace the containers' sum for cpu, memory and hugepages, and the pod
overhead is added last. With ``DRANodeAllocatableResources`` a claim's devices add
their ``nodeAllocatableResources``: mapped amounts and per-pod overhead for the
whole pod, per-container overhead for each container that uses the claim.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.core import (
    Container,
    Node,
    NodeAllocatableMappedResources,
    NodeAllocatableOverheadResources,
    NodeAllocatableResourceClaimStatus,
    Pod,
    ResourceRequirements,
)
from drasat.models.quantity import Quantity
from drasat.models.resource import (
    AllocationResult,
    Device,
    DeviceRequestAllocationResult,
    NodeAllocatableMapping,
    NodeAllocatableOverhead,
)

from ..cluster import EXTENDED_CLASS_PREFIX

Resources = dict[str, Fraction]
DeviceLookup = Callable[[str, str, str], Device | None]  # (driver, pool, device) -> the device on the chosen node

DEFAULT_CPU_REQUEST = Fraction(1, 10)  # what scoring assumes for a container without a cpu request
DEFAULT_MEMORY_REQUEST = Fraction(200 * 1024 * 1024)


def pod_level_resource(name: str) -> bool:
    """Whether pod-level resources (PodLevelResources) may set this resource: cpu, memory, hugepages."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


@dataclass(frozen=True)
class DraFootprint:
    """What a pod's node-allocatable claims add: for the pod's whole life, and per referencing container."""

    pod_fixed: Resources = field(default_factory=dict)
    per_container: Mapping[str, Resources] = field(default_factory=dict)


def allocatable_of(node: Node) -> Resources:
    """A Node's ``status.allocatable`` as exact amounts (none given: nothing)."""
    values = node.status.allocatable if node.status else {}
    return {name: Fraction(q.value) for name, q in values.items()}


def _add(into: Resources, more: Mapping[str, Fraction | Quantity]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, Fraction(0)) + Fraction(amount.value if isinstance(amount, Quantity) else amount)


def _peak(into: Resources, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        if amount > into.get(name, Fraction(0)):
            into[name] = amount


def effective_requests(resources: ResourceRequirements | None) -> dict[str, Quantity]:
    """Requests as the API server stores them: a resource with a limit and no request is requested at
    its limit (defaulting, for containers and pod-level resources alike)."""
    if resources is None:
        return {}
    return {**resources.limits, **resources.requests}


def pod_level_requests(pod: Pod) -> dict[str, Quantity]:
    """Pod-level requests as the API server defaults them (defaultPodRequests): a resource with a pod-level
    limit and no request is requested at the containers' aggregate for cpu and memory when some container
    requests it, otherwise (hugepages always) at the pod-level limit."""
    level = pod.spec.resources
    if level is None:
        return {}
    out = dict(level.requests)
    containers = aggregate_requests(pod, include_pod_level=False, overhead=False) if level.limits else {}
    for name, limit in level.limits.items():
        if name in out or not pod_level_resource(name):
            continue
        summed = containers.get(name)
        out[name] = Quantity(summed) if summed is not None and not name.startswith("hugepages-") else limit
    return out


def _container_resources(container: Container, limits: bool, defaults: bool) -> Resources:
    res = container.resources
    out: Resources = {}
    _add(out, (res.limits if res else {}) if limits else effective_requests(res))
    if defaults:
        out.setdefault("cpu", DEFAULT_CPU_REQUEST)
        out.setdefault("memory", DEFAULT_MEMORY_REQUEST)
    return out


def aggregate_requests(
    pod: Pod,
    *,
    include_pod_level: bool = True,
    dra: DraFootprint | None = None,
    limits: bool = False,
    defaults: bool = False,
    overhead: bool = True,
) -> Resources:
    """The pod's requests (or limits) as the scheduler sums them, with ``dra`` added.

    Every DRA amount — per-container overhead of init containers included — is added after the container
    sum and the init peak, as upstream's addDRANodeAllocatableClaimResources does ("any DRA allocation is
    always added into the pod footprint"): an init container's devices stay allocated for the pod's life."""
    dra = dra or DraFootprint()
    total: Resources = {}
    for container in pod.spec.containers:
        _add(total, _container_resources(container, limits, defaults))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for container in pod.spec.init_containers:
        own = _container_resources(container, limits, defaults)  # upstream applyNonMissing: init containers too
        if container.restart_policy == "Always":
            _add(total, own)
            _add(sidecars, own)
            _peak(init_peak, sidecars)
        else:
            _add(own, sidecars)
            _peak(init_peak, own)
    _peak(total, init_peak)
    _add(total, dra.pod_fixed)
    for amounts in dra.per_container.values():
        _add(total, amounts)
    pod_level = pod.spec.resources
    if include_pod_level and pod_level is not None:
        for name, amount in (pod_level.limits if limits else pod_level_requests(pod)).items():
            if pod_level_resource(name):
                total[name] = Fraction(amount.value)
    if overhead and not limits:
        _add(total, pod.spec.overhead)
    return total


def pod_requests(
    pod: Pod,
    statuses: Iterable[NodeAllocatableResourceClaimStatus] = (),
    *,
    pod_level: bool = True,
    defaults: bool = False,
) -> Resources:
    """What ``pod`` takes from its node, given its node-allocatable claim statuses."""
    return aggregate_requests(pod, include_pod_level=pod_level, dra=footprint(pod, statuses), defaults=defaults)


def footprint(pod: Pod, statuses: Iterable[NodeAllocatableResourceClaimStatus]) -> DraFootprint:
    """Mapped amounts and per-pod overhead count for the pod; per-container overhead for each listed container."""
    fixed: Resources = {}
    per_container: dict[str, Resources] = {}
    names = {c.name for c in list(pod.spec.containers) + list(pod.spec.init_containers)}
    for status in statuses:
        _add(fixed, _fixed_amounts(status))
        each = _per_container_amounts(status)
        for container in status.containers:
            _add(per_container.setdefault(container, {}) if container in names else fixed, each)
    return DraFootprint(fixed, per_container)


def _fixed_amounts(status: NodeAllocatableResourceClaimStatus) -> Resources:
    """Mapped amounts and per-pod overhead: charged once for the pod."""
    out: Resources = {}
    _add(out, {m.name: m.quantity for m in status.mapping if m.quantity is not None})
    _add(out, {o.name: o.per_pod for o in status.overhead if o.per_pod is not None})
    return out


def _per_container_amounts(status: NodeAllocatableResourceClaimStatus) -> Resources:
    out: Resources = {}
    _add(out, {o.name: o.per_container for o in status.overhead if o.per_container is not None})
    return out


def claim_statuses(
    pod: Pod, allocations: Mapping[str, tuple[str, AllocationResult]], lookup: DeviceLookup
) -> tuple[list[NodeAllocatableResourceClaimStatus], str]:
    """``status.nodeAllocatableResourceClaimStatuses`` for a pod whose pod claims (by pod-claim name) are
    allocated as given (claim name, allocation); with an error text when a mapping cannot be computed."""
    out = []
    for pod_claim, (claim_name, allocation) in allocations.items():
        mapped: Resources = {}
        overhead: dict[str, NodeAllocatableOverheadResources] = {}
        for result in allocation.devices.results:
            device = lookup(result.driver, result.pool, result.device)
            for resource, spec in (device.node_allocatable_resources if device else {}).items():
                if spec.mapping is not None:
                    problem = _add_mapping(mapped, resource, spec.mapping, result, claim_name)
                    if problem:
                        return [], problem
                if spec.overhead is not None and (spec.overhead.per_pod or spec.overhead.per_container):
                    _add_overhead(overhead, resource, spec.overhead)
        if mapped or overhead:
            out.append(
                NodeAllocatableResourceClaimStatus(
                    resource_claim_name=claim_name,
                    containers=_containers_using(pod, pod_claim),
                    mapping=[
                        NodeAllocatableMappedResources(name=n, quantity=Quantity(v)) for n, v in sorted(mapped.items())
                    ],
                    overhead=[overhead[n] for n in sorted(overhead)],
                )
            )
    return sorted(out, key=lambda s: s.resource_claim_name), ""


def _containers_using(pod: Pod, pod_claim: str) -> list[str]:
    return [
        c.name
        for c in list(pod.spec.init_containers) + list(pod.spec.containers)
        for ref in (c.resources.claims if c.resources else [])
        if ref.name == pod_claim
    ]


def _add_mapping(
    mapped: Resources,
    resource: str,
    mapping: NodeAllocatableMapping,
    result: DeviceRequestAllocationResult,
    claim_name: str,
) -> str:
    if mapping.capacity_key:
        if not result.consumed_capacity:
            return (
                f"claim {claim_name}, device {result.device}: ConsumedCapacity is nil, but Capacity key "
                f"'{mapping.capacity_key}' is set in NodeAllocatableResources for resource {resource}"
            )
        key = mapping.capacity_key
        short = key.split("/", 1)[1] if key.startswith(result.driver + "/") else key
        consumed = result.consumed_capacity.get(key) or result.consumed_capacity.get(short)
        if consumed is not None:
            factor = Fraction(mapping.capacity_multiplier.value) if mapping.capacity_multiplier else Fraction(1)
            mapped[resource] = mapped.get(resource, Fraction(0)) + Fraction(consumed.value) * factor
    elif mapping.device_multiplier is not None:
        mapped[resource] = mapped.get(resource, Fraction(0)) + Fraction(mapping.device_multiplier.value)
    return ""


def _add_overhead(
    overhead: dict[str, NodeAllocatableOverheadResources], resource: str, spec: NodeAllocatableOverhead
) -> None:
    current = overhead.setdefault(resource, NodeAllocatableOverheadResources(name=resource))
    if spec.per_pod is not None:
        current.per_pod = spec.per_pod if current.per_pod is None else current.per_pod + spec.per_pod
    if spec.per_container is not None:
        current.per_container = (
            spec.per_container if current.per_container is None else current.per_container + spec.per_container
        )


def pod_level_violation(pod: Pod, statuses: list[NodeAllocatableResourceClaimStatus], *, enabled: bool) -> str:
    """With pod-level resources (``enabled``: the PodLevelResources gate), the containers' sum plus DRA
    amounts must fit the pod-level requests, the containers' hugepages limits plus DRA amounts the pod-level
    hugepages limits, and each container's other limits plus its DRA amounts the pod-level limit
    (upstream validatePodLevelResourcesCoverDRA, with its wording)."""
    level = pod.spec.resources
    if not enabled or level is None or not statuses:
        return ""
    dra = footprint(pod, statuses)
    uncovered = _requests_uncovered(pod, dra) or _hugepages_uncovered(pod, dra, level.limits)
    for container in pod.spec.containers:
        uncovered = uncovered or _container_uncovered(container, statuses, level.limits)
    return uncovered


def _requests_uncovered(pod: Pod, dra: DraFootprint) -> str:
    summed = aggregate_requests(pod, include_pod_level=False, dra=dra, overhead=False)  # upstream: no overhead
    for name, budget in pod_level_requests(pod).items():
        if pod_level_resource(name) and name in summed and summed[name] > Fraction(budget.value):
            return (
                f"pod level request for {name} is insufficient to cover the aggregated container "
                "and node-allocatable DRA requests"
            )
    return ""


def _hugepages_uncovered(pod: Pod, dra: DraFootprint, level_limits: Mapping[str, Quantity]) -> str:
    limits = aggregate_requests(pod, include_pod_level=False, dra=dra, limits=True)
    for name, total in sorted(limits.items()):
        if name.startswith("hugepages-") and name in level_limits and total > Fraction(level_limits[name].value):
            return (
                f"pod level limit for {name} is insufficient to cover the aggregated container "
                "and node-allocatable DRA limits"
            )
    return ""


def _container_uncovered(
    container: Container, statuses: list[NodeAllocatableResourceClaimStatus], level_limits: Mapping[str, Quantity]
) -> str:
    """A limit of the container (hugepages aside) that, with the DRA amounts it gets, passes the pod's."""
    extra: Resources = {}
    for status in statuses:
        if container.name in status.containers:
            _add(extra, _fixed_amounts(status))
            _add(extra, _per_container_amounts(status))
    for name, limit in (container.resources.limits if container.resources else {}).items():
        if name.startswith("hugepages-") or name not in level_limits:
            continue
        if Fraction(limit.value) + extra.get(name, Fraction(0)) > Fraction(level_limits[name].value):
            return (
                f"pod level limit for {name} is insufficient to cover the limit and DRA overhead "
                f"for container {container.name}"
            )
    return ""


def insufficient(
    allocatable: Mapping[str, Fraction], used: Mapping[str, Fraction], request: Mapping[str, Fraction], pods_used: int
) -> list[str]:
    """NodeResourcesFit's reasons: ``Too many pods`` and ``Insufficient <resource>``."""
    reasons = []
    if "pods" in allocatable and pods_used + 1 > allocatable["pods"]:
        reasons.append("Too many pods")
    for name in sorted(request):
        want = request[name]
        if want <= 0 or name == "pods":
            continue
        if want > allocatable.get(name, Fraction(0)) - used.get(name, Fraction(0)):
            reasons.append(f"Insufficient {name}")
    return reasons


def least_allocated(
    allocatable: Mapping[str, Fraction], used: Mapping[str, Fraction], request: Mapping[str, Fraction]
) -> int:
    """NodeResourcesFit's default score: the mean free share of cpu and memory after placing the pod, 0..100
    (a resource the node does not offer is left out of the mean; one it cannot hold scores 0)."""
    total = weights = 0
    for name in ("cpu", "memory"):
        capacity = allocatable.get(name, Fraction(0))
        if capacity <= 0:
            continue
        wanted = used.get(name, Fraction(0)) + request.get(name, Fraction(0))
        total += int((capacity - wanted) * 100 / capacity) if wanted <= capacity else 0
        weights += 1
    return total // weights if weights else 0


def is_extended_resource(name: str) -> bool:
    """Extended resources carry a domain (``example.com/gpu``) that is not Kubernetes' own; the
    ``deviceclass.resource.kubernetes.io/`` names are the one exception inside that domain."""
    if name.startswith(EXTENDED_CLASS_PREFIX):
        return True
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return domain != "kubernetes.io" and not domain.endswith(".kubernetes.io")


def checked_requests(request: Resources, on_dra: set[str], allocatable: Resources) -> Resources:
    """What NodeResourcesFit checks of ``request`` on a node: cpu, memory, ephemeral storage, hugepages and
    extended resources, but not an extended resource a DeviceClass backs (``on_dra``) where the node offers
    none as a device plugin's (the devices' business, DRAExtendedResource)."""
    return {
        name: amount
        for name, amount in request.items()
        if not (name in on_dra and not allocatable.get(name))
        and (
            name in ("cpu", "memory", "ephemeral-storage")
            or name.startswith("hugepages-")
            or is_extended_resource(name)
        )
    }
