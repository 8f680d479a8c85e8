"""What the filters before the devices and the node scores say of a node, per class of nodes alike for a pod.

Nodes alike in everything the filters read (labels and taints, load, devices and devices in use)
get the same answer, so each such class of nodes is evaluated once for the pod, on its first node;
what the filters and scores say of a class is kept for later pods of the same spec (``cache``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from drasat.models.core import Node

from .cycle import Cycle
from .plugins import registry
from .plugins.dynamic_resources import DraVerdict, allocated_elsewhere


@dataclass
class Outcome:
    """One node's answer for the pod: why not, or the devices verdict and the raw node scores."""

    reasons: list[str]
    verdict: DraVerdict | None = None
    raw: tuple[
        int, ...
    ] = ()  # per plugin of the profile's ``node_scores``, in its order (normalised over the nodes that pass)

    def with_verdict(self, verdict: DraVerdict) -> Outcome:
        return Outcome(self.reasons, verdict, self.raw)


class ClassKeys:
    """A node's class for one pod, asked node by node (a big cluster's search looks at only part of it)."""

    def __init__(self, cycle: Cycle) -> None:
        pod = cycle.pod
        self.cycle, self.state = cycle, cycle.state
        self.name_matters = (
            bool(pod.spec.node_name)
            or any(t.match_fields for t in pod.required_node_terms())
            or any(t.preference.match_fields for t in pod.preferred_node_terms())
        )

    def of(self, name: str) -> tuple | None:
        """The node's class (None: NodeAffinity's PreFilter pinned the pod away from it)."""
        pinned = self.cycle.pinned
        if pinned is not None and name not in pinned:
            return None
        state = self.state
        elsewhere = tuple(allocated_elsewhere(state, self.cycle.pc, name)) if self.cycle.shares_claims else ()
        return (name if self.name_matters else "", elsewhere, *state.state_key(name))


def class_keys(cycle: Cycle) -> dict[str, tuple | None]:
    """Each node's class for this pod: what the filters and the devices step read of it (None: pinned away)."""
    keys = ClassKeys(cycle)
    return {node.name: keys.of(node.name) for node in cycle.state.cluster.nodes}


def prepared(cycle: Cycle, firsts: dict[tuple, Node], cache: dict[tuple, Any]) -> dict[tuple, Outcome]:
    """Each class's filters and scores (the devices step aside), evaluated on its first node. They read the
    pod's spec and the node's labels, taints and load only, so for a pod without allocated claims they are
    kept (in ``cache``) for every later pod of the same spec."""
    return {key: prepared_one(cycle, key, node, cache) for key, node in firsts.items()}


def prepared_one(cycle: Cycle, key: tuple, node: Node, cache: dict[tuple, Any]) -> Outcome:
    """One class's filters and scores, from ``cache`` when a pod of the same spec saw the class before."""
    if not cycle.spec:
        return scored(cycle, node)
    memo = ("outcome", cycle.spec, key[:4])  # the class key without the devices' signature
    found = cache.get(memo)
    if found is None:
        found = cache[memo] = scored(cycle, node)
    return found


def scored(cycle: Cycle, node: Node) -> Outcome:
    """The filters before the devices, in the registry's order (the first that fails gives the reason),
    then, when they pass, the scores read from the node alone."""
    load = cycle.state.loads[node.name]
    profile = registry.PROFILE
    for plugin in profile.plugins:
        reasons = plugin.filter(cycle, load)
        if reasons:
            return Outcome(reasons)
    return Outcome([], None, tuple(plugin.score(cycle, load) for plugin in profile.node_scores))
