"""Admin access to devices is granted per namespace: a rule across objects.

The API server stores a ResourceClaim (or ResourceClaimTemplate) that asks for
``adminAccess: true`` only when its namespace carries the label
``resource.kubernetes.io/admin-access: "true"`` (``AuthorizedForAdmin`` in
``pkg/registry/resource``); otherwise it answers "Forbidden: admin access to devices
requires the ... label on the containing namespace". The rule needs the Namespace
objects, so it cannot live among the one-object rules of :mod:`.validation`: the
commands call it with everything they loaded. Without any Namespace in the input the
rule cannot be applied, and :func:`admin_access_unchecked` says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from drasat.models.core import Namespace
from drasat.models.resource import DeviceClaim, ResourceClaim, ResourceClaimTemplate

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
FORBIDDEN = (
    f"Forbidden: admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the containing namespace"
)


@dataclass(frozen=True)
class AdminAccessViolation:
    """One request asking for admin access outside an admin namespace: which object, which field, why."""

    obj: ResourceClaim | ResourceClaimTemplate
    path: str
    message: str


def _admin_requests(obj: object) -> Iterator[str]:
    """Field paths (from the object's root) of the requests that ask for admin access."""
    if isinstance(obj, ResourceClaim):
        root, claim = "spec.devices", obj.spec.devices
    elif isinstance(obj, ResourceClaimTemplate):
        root, claim = "spec.spec.devices", obj.spec.spec.devices
    else:
        return
    yield from (f"{root}.{path}" for path in _requests(claim))


def _requests(claim: DeviceClaim) -> Iterator[str]:
    for i, request in enumerate(claim.requests):
        if request.exactly is not None and request.exactly.admin_access is True:
            yield f"requests[{i}].exactly.adminAccess"


def admin_access_violations(objects: Iterable[object]) -> list[AdminAccessViolation]:
    """Every admin-access request whose namespace is not labelled for it (none without Namespaces)."""
    objects = list(objects)
    namespaces = {ns.name: ns for ns in objects if isinstance(ns, Namespace)}
    if not namespaces:
        return []
    found = []
    for obj in objects:
        if not isinstance(obj, (ResourceClaim, ResourceClaimTemplate)):
            continue
        for path in _admin_requests(obj):
            namespace_name = obj.metadata.namespace or "default"
            namespace = namespaces.get(namespace_name)
            if namespace is None:
                message = f"{FORBIDDEN} (namespace {namespace_name!r} is not in the input)"
            elif namespace.metadata.labels.get(ADMIN_ACCESS_LABEL) != "true":
                message = f"{FORBIDDEN} (namespace {namespace_name!r} does not have it)"
            else:
                continue
            found.append(AdminAccessViolation(obj, path, message))
    return found


def admin_access_unchecked(objects: Iterable[object]) -> str | None:
    """A warning when claims ask for admin access but no Namespace says whether they may (one pass: a fleet's
    28,000 claims were gone over three times)."""
    asking: set[str] = set()
    for o in objects:
        if isinstance(o, Namespace):
            return None
        if isinstance(o, (ResourceClaim, ResourceClaimTemplate)) and next(_admin_requests(o), None) is not None:
            asking.add(f"{o.metadata.namespace or 'default'}/{o.name}")
    if not asking:
        return None
    return (
        f"no Namespace objects in the input: admin access of {', '.join(sorted(asking))} is not checked against "
        f"the namespace label {ADMIN_ACCESS_LABEL}"
    )
