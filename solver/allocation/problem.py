"""The question drasat answers, as one plain value: what to allocate, where, from what.

Every solver stage takes a :class:`Problem` (or something derived from it); the
command line builds one from files, library users build one from objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drasat.models.core import Node
from drasat.models.defaults import apply_defaults, status_defaults
from drasat.models.errors import InputError, Location
from drasat.models.loader import typed_objects
from drasat.models.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from drasat.models.storable import unstorable_problems

from .features import Features

DeviceId = tuple[str, str, str]
"""(driver, pool, device): how Kubernetes names a device everywhere. Defined here, with the question, so that
the solver's inventory and the independent verifier speak of devices alike without sharing any of their logic."""


def claim_key(claim: ResourceClaim) -> str:
    """``namespace/name`` (the bare name for a claim written without a namespace): how results, messages and
    ``--claims`` name a claim. Two namespaces may each hold a claim of one name; their keys differ. Defined
    here, with the question, so that the solver and the independent verifier key answers alike."""
    meta = claim.metadata  # read directly: every call names every claim
    return f"{meta.namespace}/{meta.name or ''}" if meta.namespace else meta.name or ""


@dataclass(frozen=True)
class NodeInfo:
    """What allocation needs of a Node: its name and labels (node selectors match these)."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    # The Node's status.declaredFeatures; None when the input has no Node object (nothing is known).
    declared_features: frozenset[str] | None = None

    @classmethod
    def of(cls, node: Node) -> NodeInfo:
        """A Node object's name, labels and declared features."""
        declared = node.status.declared_features if node.status else []
        return cls(node.name, dict(node.metadata.labels), frozenset(declared))

    def declares(self, feature: str) -> bool:
        """Whether the node declares ``feature``; True when no Node object says otherwise."""
        return self.declared_features is None or feature in self.declared_features


@dataclass(frozen=True)
class Problem:
    """Claims to allocate together on one node, and everything that constrains them.

    ``claims`` are allocated in the order given (it matters: first-fit gives earlier
    claims the earlier devices). ``allocated`` are claims that already hold devices.

    Claims are held as the API server stores them: constructing a Problem replaces
    ``claims`` with defaulted copies, and ``allocated`` with defaulted statuses (:func:`apply_defaults`: a
    missing or zero ``count`` is 1, a missing toleration operator is ``Equal``). Every
    way into the solver — ``drasat solve``, :func:`problem_from_objects`, a Problem
    built by hand — passes here, so no stage ever sees a claim the server would have
    filled in differently; the caller's objects are left as they were written.
    """

    node: NodeInfo
    slices: Sequence[ResourceSlice]
    classes: Sequence[DeviceClass]
    claims: Sequence[ResourceClaim]
    allocated: Sequence[ResourceClaim] = ()
    taint_rules: Sequence[DeviceTaintRule] = ()
    features: Features = field(default_factory=Features)

    def __post_init__(self) -> None:
        object.__setattr__(self, "claims", tuple(apply_defaults(c) for c in self.claims))
        object.__setattr__(self, "allocated", tuple(status_defaults(c) for c in self.allocated))

    def device_class(self, name: str) -> DeviceClass | None:
        for cls in self.classes:
            if cls.metadata.name == name:
                return cls
        return None


def problem_from_objects(
    objects: Sequence[object],
    *,
    node: str | None = None,
    claims: Sequence[str] | None = None,
    features: Features | None = None,
    locate: Callable[[Any], Location | None] | None = None,
) -> Problem:
    """Sort loaded objects into a Problem, as ``drasat solve`` does.

    Node objects give labels; ``node`` names the node (default: the only Node). Claims
    without ``status.allocation`` are to be allocated — all of them in input order, or
    those named in ``claims`` in that order; allocated claims count as in use, those
    that hold a device this node can see (:func:`held_here`).

    Raises InputError when an object the Problem uses (slices: those of pools this node can see) is one the
    API server would never have stored (:mod:`drasat.models.storable`), with ``drasat validate``'s messages;
    ``locate`` gives each object's place in the input for them (file, document).
    """

    objects = typed_objects(objects)  # client objects and API JSON are read as files are
    _check_admin_access(objects)
    by_kind: dict[str, list] = {}
    for obj in objects:
        by_kind.setdefault(getattr(obj, "kind", ""), []).append(obj)
    node_info = _pick_node(by_kind.get("Node", []), node)
    all_claims = by_kind.get("ResourceClaim", [])
    pending = [c for c in all_claims if not (c.status and c.status.allocation)]
    slices = by_kind.get("ResourceSlice", [])
    elsewhere = pools_elsewhere(slices, node_info.name)
    allocated = held_here([c for c in all_claims if c.status and c.status.allocation], slices, node_info.name)
    if claims is not None:
        pending = chosen_claims(all_claims, claims)
    used_nodes = [n for n in by_kind.get("Node", []) if n.name == node_info.name]
    refuse_unstorable(
        [
            *pending,
            *allocated,
            *(s for s in slices if (s.spec.driver, s.spec.pool.name) not in elsewhere),  # what this node can see
            *by_kind.get("DeviceClass", []),
            *by_kind.get("DeviceTaintRule", []),
            *used_nodes,
        ],
        locate,
    )
    return Problem(
        node=node_info,
        slices=by_kind.get("ResourceSlice", []),
        classes=by_kind.get("DeviceClass", []),
        claims=pending,
        allocated=allocated,
        taint_rules=by_kind.get("DeviceTaintRule", []),
        features=features or Features(),
    )


def held_here(allocated: Sequence[ResourceClaim], slices: Sequence[ResourceSlice], node: str) -> list[ResourceClaim]:
    """The allocated claims that may hold a device of ``node``: all but those whose every device is in a pool
    only other nodes' slices publish (``spec.nodeName`` another node), which Kubernetes' allocator for this
    node never looks at. In a fleet nearly every allocated claim is such: defaulting and checking each of
    them for the one node asked about was most of a 1,000-node ``solve``."""
    elsewhere = pools_elsewhere(slices, node)
    if not elsewhere:
        return list(allocated)
    return [claim for claim in allocated if not _only_in(claim, elsewhere)]


def pools_elsewhere(slices: Sequence[ResourceSlice], node: str) -> set[tuple[str, str]]:
    """(driver, pool) of the pools only other nodes' slices publish (``spec.nodeName`` another node): Kubernetes'
    allocator for ``node`` never looks at them, so they are not checked for it either (validate checks them:
    4,000 slices of a 1,000-node fleet took 6 s to check for the one node asked about)."""
    elsewhere = {(s.spec.driver, s.spec.pool.name) for s in slices if s.spec.node_name and s.spec.node_name != node}
    elsewhere -= {(s.spec.driver, s.spec.pool.name) for s in slices if not s.spec.node_name or s.spec.node_name == node}
    return elsewhere


def _only_in(claim: ResourceClaim, pools: set[tuple[str, str]]) -> bool:
    results = claim.status.allocation.devices.results if claim.status and claim.status.allocation else []
    return bool(results) and all((r.driver, r.pool) in pools for r in results)


def _label(claim: ResourceClaim) -> str:
    return f"{claim.namespace or ''}/{claim.name}"


def chosen_claims(all_claims: Sequence[ResourceClaim], names: Sequence[str]) -> list[ResourceClaim]:
    """The claims ``names`` asks for, in its order, each once; a name is ``name`` (unambiguous) or
    ``namespace/name``."""
    chosen: list[ResourceClaim] = []
    for name in names:
        found = [c for c in all_claims if name in (c.name, _label(c))]
        if not found:
            raise InputError(f"no ResourceClaim named {name} in the input")
        if len(found) > 1:
            raise InputError(
                f"ResourceClaim name {name} is ambiguous: give one of {', '.join(_label(c) for c in found)}"
            )
        if found[0].status and found[0].status.allocation:
            raise InputError(f"ResourceClaim {name} is already allocated (it has status.allocation)")
        if not any(c is found[0] for c in chosen):
            chosen.append(found[0])
    return chosen


def _check_admin_access(objects: Sequence[object]) -> None:
    """The API server never stores a claim asking for admin access outside an admin namespace."""
    import warnings

    from drasat.models.errors import DrasatWarning, InputError, InputProblem, Location
    from drasat.models.validation.admin_access import admin_access_unchecked, admin_access_violations

    violations = admin_access_violations(objects)
    if violations:
        raise InputError(
            [InputProblem(Location(kind=v.obj.kind, name=v.obj.name, path=v.path), v.message) for v in violations]
        )
    unchecked = admin_access_unchecked(objects)
    if unchecked is not None:
        warnings.warn(unchecked, DrasatWarning, stacklevel=2)


def refuse_unstorable(used: Sequence[Any], locate: Callable[[Any], Location | None] | None = None) -> None:
    """InputError naming every object of ``used`` the API server would never have stored.

    Public for every other way of choosing the claims of a Problem: each object it uses
    must pass here, or ``drasat solve`` would allocate what ``validate`` refuses.
    """
    problems = [
        problem for obj in used for problem in unstorable_problems(obj, locate(obj) if locate is not None else None)
    ]
    if problems:
        raise InputError(problems)


def _pick_node(nodes: Sequence, name: str | None) -> NodeInfo:
    if name is None:
        if len(nodes) != 1:
            found = ", ".join(n.name for n in nodes) or "none"
            raise InputError(f"name the node to allocate for with --node (Node objects in the input: {found})")
        return NodeInfo.of(nodes[0])
    for n in nodes:
        if n.name == name:
            return NodeInfo.of(n)
    if nodes:
        raise InputError(f"unknown node {name!r}: the input has Node objects {', '.join(n.name for n in nodes)}")
    return NodeInfo(name, {})
