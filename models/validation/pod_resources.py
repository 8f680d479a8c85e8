"""A Pod's resource requests and limits, checked as the API server checks them.

Kubernetes' ``ValidateResourceRequirements`` (pkg/apis/core/validation) refuses a
negative quantity, a fraction of a resource counted in whole units (every extended
resource such as ``nvidia.com/gpu``, and ``pods``), a request above its limit, and —
for resources that cannot be overcommitted (extended resources, hugepages) — a
request that differs from its limit or has none. Its words are kept here.

Resource names are checked as ``validateContainerResourceName`` checks them: a
qualified name (``IsQualifiedName``: an optional DNS-subdomain prefix, a name part of
at most 63 characters), a standard resource for a container when there is no domain,
and an extended resource name (``IsExtendedResourceName``) when the domain is not
kubernetes.io's — otherwise ``"bad name/gpu"`` would be scheduled as a resource no
cluster could hold.

One check goes beyond the API server's: a quantity kube-scheduler cannot count.
The scheduler adds requests up in 64-bit integers (``MilliValue()`` for cpu,
``Value()`` for the rest), and Go's quantity silently wraps past that: a pod asking
for ``99999999999999999999`` GPUs would be scheduled as if it asked for some other
number. drasat refuses such a quantity rather than answer for a number nobody wrote.
"""

from __future__ import annotations

from drasat.models.core import Pod, PodSpec
from drasat.models.errors import InputProblem, Location
from drasat.models.quantity import Quantity

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
NEGATIVE = "must be greater than or equal to 0"
NOT_INTEGER = "must be an integer"
NO_LIMIT = "Limit must be set for non overcommitable resources"


def is_native(name: str) -> bool:
    """Kubernetes' ``IsNativeResource``: no domain, or a kubernetes.io one."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    """``IsHugePageResourceName``: ``hugepages-2Mi`` and the like, counted apart and never overcommitted."""
    return name.startswith("hugepages-")


def is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: a domain other than kubernetes.io, and a qualified name even as the quota's
    ``requests.<name>`` (so the domain is at most 244 characters)."""
    return not is_native(name) and not name.startswith("requests.") and not label_key_errors("requests." + name)


def overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: only native resources other than hugepages may request less than their limit."""
    return is_native(name) and not is_hugepages(name)


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
    """``ValidateResourceRequirements`` on each container's and init container's resources, the overhead and the
    pod-level resources of the spec at ``at``."""
    for field, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, container in enumerate(containers):
            if container.resources is not None:
                here, resources = index(at.child(field), i).child("resources"), container.resources
                check_requirements(out, here, resources.limits, resources.requests, container=True)
    if spec.overhead:
        check_requirements(out, at.child("overhead"), spec.overhead, {}, container=False)
    if spec.resources is not None:
        check_requirements(out, at.child("resources"), spec.resources.limits, spec.resources.requests, container=False)


def check_requirements(
    out: Findings, at: Location, limits: dict[str, Quantity], requests: dict[str, Quantity], *, container: bool
) -> None:
    """Kubernetes' ``ValidateResourceRequirements`` on one container's (or the pod's) ``resources``.

    ``container`` adds the rule on a container's resource names (standard or extended)."""
    for name, quantity in limits.items():
        _check_value(out, key(at.child("limits"), name), name, quantity, container)
    for name, quantity in requests.items():
        _check_value(out, key(at.child("requests"), name), name, quantity, container)
        limit = limits.get(name)
        if limit is not None:
            if quantity != limit and not overcommit_allowed(name):
                out.add(at.child("requests"), f'Invalid value: "{quantity}": must be equal to {name} limit of {limit}')
            elif quantity > limit:
                out.add(
                    at.child("requests"),
                    f'Invalid value: "{quantity}": must be less than or equal to {name} limit of {limit}',
                )
        elif not overcommit_allowed(name):
            out.add(at.child("limits"), f"Required value: {NO_LIMIT} ({name} is requested)")


def _check_value(out: Findings, at: Location, name: str, quantity: Quantity, container: bool) -> None:
    _check_name(out, at, name, container)
    if quantity < 0:
        out.add(at, f'Invalid value: "{quantity}": {NEGATIVE}')
        return
    if counted_whole(name) and not quantity.is_integer():
        out.add(at, f'Invalid value: "{quantity}": {NOT_INTEGER}')
        return
    check_countable(out, at, name, quantity)


def _check_name(out: Findings, at: Location, name: str, container: bool) -> None:
    """``validateContainerResourceName`` (``container``), or its qualified-name and extended-name parts."""
    for message in label_key_errors(name):
        out.add(at, f"Invalid value: {show(name)}: {message}")
    if "/" not in name:
        if container and name not in _STANDARD_CONTAINER and not is_hugepages(name):
            out.add(at, f"Invalid value: {show(name)}: must be a standard resource for containers")
    elif not is_native(name) and not is_extended(name):
        out.add(at, f"Invalid value: {show(name)}: doesn't follow extended resource name standard")


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
