"""Kubernetes' own validation of the objects drasat reads: one entry point, extensible by checkers.

:func:`validate_object` answers "would the API server accept this object?" with a
list of problems (empty when valid), each naming the field path
(``spec.devices[3].attributes["x/y"]``) and saying in plain words what is wrong.
The loader does not call it: an object Kubernetes would reject can still be
loaded, so that the solver can reproduce what Kubernetes' allocator does with it
(some conformance scenarios feed such objects on purpose). ``drasat validate``
calls it for every loaded object.

Other parts of drasat add checks of their own (the CEL layer compiles selector
expressions) with :func:`register_checker`; every registered checker runs after
the built-in rules, for every object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from drasat.models.errors import InputProblem, Location
from drasat.models.kinds import kind_of
from drasat.models.meta import TypedObject

from .claims import (
    check_device_class,
    check_device_taint_rule,
    check_resource_claim,
    check_resource_claim_template,
)
from .core_kinds import check_namespace, check_node, check_pod, check_pod_group, check_pool_status_request
from .formats import Findings
from .slices import check_resource_slice
from .topology_kinds import check_kubelet_configuration, check_node_resource_topology

Checker = Callable[[TypedObject, Location], list[InputProblem]]
"""An extra check: looks at one object (whose fields start at the location) and returns its problems."""

# Callable[..., None]: each rule takes its own kind's model, which a common parameter type cannot say.
_RULES: dict[str, Callable[..., None]] = {
    "DeviceClass": check_device_class,
    "ResourceClaim": check_resource_claim,
    "ResourceClaimTemplate": check_resource_claim_template,
    "ResourceSlice": check_resource_slice,
    "DeviceTaintRule": check_device_taint_rule,
    "ResourcePoolStatusRequest": check_pool_status_request,
    "Node": check_node,
    "Namespace": check_namespace,
    "Pod": check_pod,
    "PodGroup": check_pod_group,
    "KubeletConfiguration": check_kubelet_configuration,
    "NodeResourceTopology": check_node_resource_topology,
}
"""Each kind's rules, by the name of its model class (:mod:`drasat.models.kinds`: the models of kinds an input
does not hold are not imported, so the table names them rather than holding them)."""
_CHECKERS: list[Checker] = []

C = TypeVar("C", bound=Checker)


def register_checker(checker: C) -> C:
    """Run ``checker`` on every object :func:`validate_object` sees; usable as a decorator.

    Registering the same function twice has no effect, so a module may register at
    import time without caring how often it is imported.
    """
    if checker not in _CHECKERS:
        _CHECKERS.append(checker)
    return checker


def unregister_checker(checker: Checker) -> None:
    """Undo :func:`register_checker` (tests use this to stay independent of each other)."""
    if checker in _CHECKERS:
        _CHECKERS.remove(checker)


def registered_checkers() -> tuple[Checker, ...]:
    """The checkers added with :func:`register_checker`, in the order they run after the built-in rules."""
    return tuple(_CHECKERS)


def rule_problems(obj: TypedObject, location: Location | None = None) -> list[InputProblem]:
    """The built-in API rules alone (no registered checker): what :mod:`drasat.models.storable` holds the objects
    an allocation uses to."""
    location = location or Location(kind=obj.kind, name=obj.name or None)
    out = Findings()
    rule = _RULES.get(type(obj).__name__)
    if rule is not None and kind_of(type(obj)) is not None:
        rule(out, location, obj)
    return out.problems


def validate_object(
    obj: TypedObject, location: Location | None = None, *, checkers: Iterable[Checker] = ()
) -> list[InputProblem]:
    """Every way ``obj`` breaks Kubernetes' rules, as problems at field paths under ``location``.

    Built-in rules run first, then the registered checkers, then ``checkers``. A
    checker that fails with an exception becomes a problem that says so, rather
    than aborting the validation of everything else.
    """
    location = location or Location(kind=obj.kind, name=obj.name or None)
    out = Findings()
    out.extend(rule_problems(obj, location))
    for checker in (*_CHECKERS, *checkers):
        try:
            out.extend(checker(obj, location))
        except Exception as exc:  # noqa: BLE001  (a broken plug-in must not hide the other problems)
            name = getattr(checker, "__qualname__", repr(checker))
            out.add(location, f"internal error in check {name}: {type(exc).__name__}: {exc}")
    return out.problems
