"""A Pod's resource requests and limits, checked as the API server checks them.

Kubernetes' ``ValidateResourceRequirements`` (pkg/apis/core/validation) refuses a
negative quantity, a fraction of a resource counted in whole units (every extended
resource such as ``nvidia.com/gpu``, and ``pods``), a request above its limit, and —
for resources that cannot be overcommitted (extended resources, hugepages) — a
request that differs from its limit or has none. Its words are kept here.

Resource names are checked as ``validateResourceName`` checks them — a qualified name
(``IsQualifiedName``: an optional DNS-subdomain prefix, a name part of at most 63
characters) and, without a domain, a standard resource — and then by where they are
written. A container's, an init container's and the overhead's
(``validateContainerResourceName``) must be a standard resource for a container when
there is no domain, and an extended resource name (``IsExtendedResourceName``) when the
domain is not kubernetes.io's — otherwise ``"bad name/gpu"`` would be scheduled as a
resource no cluster could hold. The pod-level ``spec.resources``
(``validatePodResourceName``) takes only what pod-level resources support: cpu, memory
and hugepages. Hugepages come in whole pages, and only beside cpu or memory.

One check goes beyond the API server's: a quantity kube-scheduler cannot count.
The scheduler adds requests up in 64-bit integers (``MilliValue()`` for cpu,
``Value()`` for the rest), and Go's quantity silently wraps past that: a pod asking
for ``99999999999999999999`` GPUs would be scheduled as if it asked for some other
number. drasat refuses such a quantity rather than answer for a number nobody wrote.
"""

from __future__ import annotations

from enum import Enum
from functools import lru_cache

from drasat.models.core import Pod, PodSpec
from drasat.models.errors import InputProblem, Location
from drasat.models.quantity import Quantity, QuantityError

from .formats import Findings, index, key, label_key_errors, show

INT64_MAX = 2**63 - 1
_STANDARD_CONTAINER = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_INTEGER = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_STANDARD = frozenset(  # IsStandardResourceName, besides hugepages
    {
        *_STANDARD_CONTAINER,
        *_STANDARD_INTEGER,
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "storage",
        "requests.storage",
    }
)
_CPU_OR_MEMORY = ("cpu", "memory")
HUGEPAGES = "hugepages-"
NEGATIVE = "must be greater than or equal to 0"
NOT_INTEGER = "must be an integer"
NO_LIMIT = "Limit must be set for non overcommitable resources"
NOT_STANDARD = "must be a standard resource type or fully qualified"
NOT_FOR_CONTAINERS = "must be a standard resource for containers"
NOT_EXTENDED = "doesn't follow extended resource name standard"
POD_LEVEL_SUPPORTED = 'supported values: "cpu", "hugepages-", "memory"'  # sets.List(SupportedPodLevelResources())
HUGEPAGES_ALONE = "Forbidden: HugePages require cpu or memory"


class ResourceNames(Enum):
    """Which of Kubernetes' name rules a ``resources`` map follows: where it is written decides."""

    CONTAINER = "validateContainerResourceName"  # a container's, an init container's, the pod's overhead
    POD = "validatePodResourceName"  # the pod-level spec.resources


def is_native(name: str) -> bool:
    """Kubernetes' ``IsNativeResource``: no domain, or a kubernetes.io one."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    """``IsHugePageResourceName``: ``hugepages-2Mi`` and the like, counted apart and never overcommitted."""
    return name.startswith(HUGEPAGES)


def is_standard(name: str) -> bool:
    """``IsStandardResourceName``: a resource Kubernetes itself knows (quota's names and hugepages included)."""
    return name in _STANDARD or name.startswith((HUGEPAGES, "requests." + HUGEPAGES))


def supported_at_pod_level(name: str) -> bool:
    """``IsSupportedPodLevelResource``: what the pod-level ``spec.resources`` may hold."""
    return name in _CPU_OR_MEMORY or is_hugepages(name)


def whole_pages(name: str, quantity: Quantity) -> bool:
    """``IsHugePageResourceValueDivisible``: ``quantity`` is a whole number of the pages ``name`` sizes (a
    page size that is no positive whole quantity divides nothing)."""
    try:
        page = Quantity.parse(name[len(HUGEPAGES) :])
    except QuantityError:
        return False
    if page <= 0 or page.milli_value() % 1000:
        return False
    return quantity.ceil_int() % page.ceil_int() == 0


def is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: a domain other than kubernetes.io, and a qualified name even as the quota's
    ``requests.<name>`` (so the domain is at most 244 characters)."""
    return not is_native(name) and not name.startswith("requests.") and not label_key_errors("requests." + name)


def overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: only native resources other than hugepages may request less than their limit."""
    return is_native(name) and not is_hugepages(name)


@lru_cache(maxsize=4096)
def counted_whole(name: str) -> bool:
    """``IsIntegerResourceName``: resources counted in whole units."""
    return name in _STANDARD_INTEGER or is_extended(name)


def pod_requirement_problems(pod: Pod, where: Location | None = None) -> list[InputProblem]:
    """Every ``resources`` of ``pod`` (whose fields start at ``where``, or that name the pod) checked: what every
    command that reads a Pod refuses, whatever else it makes of the pod."""
    out = Findings()
    where = where or Location(kind=pod.kind, name="/".join(filter(None, (pod.namespace, pod.name))) or None)
    check_pod_requirements(out, where.child("spec"), pod.spec)
    return out.problems


def check_pod_requirements(out: Findings, at: Location, spec: PodSpec) -> None:
    """``ValidateResourceRequirements`` on each container's and init container's resources, the overhead (as a
    container's limits, at ``overhead.limits`` as upstream's ``validateOverhead`` names them) and the pod-level
    resources of the spec at ``at``."""
    for field, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, container in enumerate(containers):
            if container.resources is not None:
                here, resources = index(at.child(field), i).child("resources"), container.resources
                check_requirements(out, here, resources.limits, resources.requests, ResourceNames.CONTAINER)
    if spec.overhead:
        check_requirements(out, at.child("overhead"), spec.overhead, {}, ResourceNames.CONTAINER)
    if spec.resources is not None:
        check_requirements(
            out, at.child("resources"), spec.resources.limits, spec.resources.requests, ResourceNames.POD
        )


def check_requirements(
    out: Findings, at: Location, limits: dict[str, Quantity], requests: dict[str, Quantity], names: ResourceNames
) -> None:
    """Kubernetes' ``validateResourceRequirements`` on one container's (or the pod's) ``resources``, in its
    order: each limit, each request against its limit, then hugepages without cpu or memory."""
    limits_at, requests_at = at.child("limits"), at.child("requests")
    for name, quantity in limits.items():
        here = key(limits_at, name)
        _check_value(out, here, name, quantity, names)
        _check_pages(out, here, name, quantity)
    for name, quantity in requests.items():
        here = key(requests_at, name)
        _check_value(out, here, name, quantity, names)
        limit = limits.get(name)
        if limit is not None:
            if quantity != limit and not overcommit_allowed(name):
                out.add(requests_at, f'Invalid value: "{quantity}": must be equal to {name} limit of {limit}')
            elif quantity > limit:
                out.add(
                    requests_at, f'Invalid value: "{quantity}": must be less than or equal to {name} limit of {limit}'
                )
        elif not overcommit_allowed(name):
            out.add(limits_at, f"Required value: {NO_LIMIT} ({name} is requested)")
        _check_pages(out, here, name, quantity)
    if _hugepages_alone(limits, requests):
        out.add(at, HUGEPAGES_ALONE)


def _check_value(out: Findings, at: Location, name: str, quantity: Quantity, names: ResourceNames) -> None:
    for message in _name_messages(name, names):
        out.add(at, message)
    if quantity < 0:
        out.add(at, f'Invalid value: "{quantity}": {NEGATIVE}')
        return
    if counted_whole(name) and not quantity.is_integer():
        out.add(at, f'Invalid value: "{quantity}": {NOT_INTEGER}')
        return
    check_countable(out, at, name, quantity)


@lru_cache(maxsize=4096)
def _name_messages(name: str, names: ResourceNames) -> tuple[str, ...]:
    """``validateResourceName``'s words, then those of the rule for where the name is written (``names``).
    Cached: a fleet's pods ask for a handful of names, and every pod of it is checked when read."""
    errors = _resource_name_errors(name)
    out = [f"Invalid value: {show(name)}: {message}" for message in errors]
    if names is ResourceNames.POD:
        if not errors and not supported_at_pod_level(name):
            out.append(f"Unsupported value: {show(name)}: {POD_LEVEL_SUPPORTED}")
    elif "/" not in name:
        if name not in _STANDARD_CONTAINER and not is_hugepages(name):
            out.append(f"Invalid value: {show(name)}: {NOT_FOR_CONTAINERS}")
    elif not is_native(name) and not is_extended(name):
        out.append(f"Invalid value: {show(name)}: {NOT_EXTENDED}")
    return tuple(out)


def _resource_name_errors(name: str) -> list[str]:
    """``validateResourceName``: a qualified name and, without a domain, a standard resource."""
    errors = label_key_errors(name)
    if not errors and "/" not in name and not is_standard(name):
        errors.append(NOT_STANDARD)
    return errors


def _check_pages(out: Findings, at: Location, name: str, quantity: Quantity) -> None:
    """``validateResourceQuantityHugePageValue``, always on for a pod being created (only an update may keep
    the indivisible values the old pod had)."""
    if is_hugepages(name) and not whole_pages(name, quantity):
        out.add(at, f'Invalid value: "{quantity}": {quantity} is not positive integer multiple of {name}')


def _hugepages_alone(limits: dict[str, Quantity], requests: dict[str, Quantity]) -> bool:
    """Hugepages asked for with neither cpu nor memory in the limits or the requests."""
    if any(name in limits or name in requests for name in _CPU_OR_MEMORY):
        return False
    return any(is_hugepages(name) for name in limits) or any(is_hugepages(name) for name in requests)


def check_countable(out: Findings, at: Location, name: str, quantity: Quantity) -> None:
    """A quantity kube-scheduler can add up: at most int64's largest in its unit (thousandths for cpu)."""
    milli = name == "cpu"
    units = quantity.milli_value() if milli else quantity.ceil_int()
    if units > INT64_MAX:
        largest = f"{INT64_MAX}m" if milli else str(INT64_MAX)
        out.add(
            at,
            f'Invalid value: "{quantity}": must be at most {largest} (kube-scheduler counts {name} in 64-bit integers)',
        )
