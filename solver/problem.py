"""The question drasat answers, as one plain value: what to allocate, where, from what.

Every solver stage takes a :class:`Problem` (or something derived from it); the
command line builds one from files, library users build one from objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from drasat.models.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice

from .features import Features

FIRST_FIT = "first-fit"  # exactly the devices Kubernetes' depth-first search returns
PRIORITIZED = "prioritized-list"  # earliest firstAvailable alternatives first, then first-fit


@dataclass(frozen=True)
class NodeInfo:
    """What allocation needs of a Node: its name and labels (node selectors match these)."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Problem:
    """Claims to allocate together on one node, and everything that constrains them.

    ``claims`` are allocated in the order given (it matters: first-fit gives earlier
    claims the earlier devices). ``allocated`` are claims that already hold devices.
    """

    node: NodeInfo
    slices: Sequence[ResourceSlice]
    classes: Sequence[DeviceClass]
    claims: Sequence[ResourceClaim]
    allocated: Sequence[ResourceClaim] = ()
    taint_rules: Sequence[DeviceTaintRule] = ()
    features: Features = field(default_factory=Features)

    def device_class(self, name: str) -> DeviceClass | None:
        for cls in self.classes:
            if cls.metadata.name == name:
                return cls
        return None


def problem_from_objects(objects: Sequence[object], *, node: str | None = None,
                         claims: Sequence[str] | None = None, features: Features | None = None) -> Problem:
    """Sort loaded objects into a Problem, as ``drasat solve`` does.

    Node objects give labels; ``node`` names the node (default: the only Node). Claims
    without ``status.allocation`` are to be allocated — all of them in input order, or
    those named in ``claims`` in that order; allocated claims count as in use.
    """
    from drasat.models.errors import InputError

    _check_admin_access(objects)
    by_kind: dict[str, list] = {}
    for obj in objects:
        by_kind.setdefault(getattr(obj, "kind", ""), []).append(obj)
    node_info = _pick_node(by_kind.get("Node", []), node)
    all_claims = by_kind.get("ResourceClaim", [])
    pending = [c for c in all_claims if not (c.status and c.status.allocation)]
    allocated = [c for c in all_claims if c.status and c.status.allocation]
    if claims is not None:
        named = {c.name: c for c in all_claims}
        missing = [name for name in claims if name not in named]
        if missing:
            raise InputError(f"no ResourceClaim named {', '.join(missing)} in the input")
        chosen = [named[name] for name in claims]
        already = [c.name for c in chosen if c in allocated]
        if already:
            raise InputError(f"ResourceClaim {', '.join(already)} is already allocated (it has status.allocation)")
        pending = chosen
    return Problem(node=node_info, slices=by_kind.get("ResourceSlice", []),
                   classes=by_kind.get("DeviceClass", []), claims=pending, allocated=allocated,
                   taint_rules=by_kind.get("DeviceTaintRule", []), features=features or Features())


def _check_admin_access(objects: Sequence[object]) -> None:
    """The API server never stores a claim asking for admin access outside an admin namespace."""
    import warnings

    from drasat.models.errors import DrasatWarning, InputError, Location, Problem
    from drasat.models.rules_admin import admin_access_unchecked, admin_access_violations

    violations = admin_access_violations(objects)
    if violations:
        raise InputError([Problem(Location(kind=v.obj.kind, name=v.obj.name, path=v.path), v.message)
                          for v in violations])
    unchecked = admin_access_unchecked(objects)
    if unchecked is not None:
        warnings.warn(unchecked, DrasatWarning, stacklevel=2)


def _pick_node(nodes: Sequence, name: str | None) -> NodeInfo:
    from drasat.models.errors import InputError

    if name is None:
        if len(nodes) != 1:
            found = ", ".join(n.name for n in nodes) or "none"
            raise InputError(f"name the node to allocate for with --node (Node objects in the input: {found})")
        return NodeInfo(nodes[0].name, dict(nodes[0].metadata.labels))
    for n in nodes:
        if n.name == name:
            return NodeInfo(n.name, dict(n.metadata.labels))
    if nodes:
        raise InputError(f"unknown node {name!r}: the input has Node objects {', '.join(n.name for n in nodes)}")
    return NodeInfo(name, {})
