"""Pending pods as equivalence classes, gangs and the rest: the joint placement's view of the queue.

Thousands of pending pods are usually a few dozen shapes (replicas of a handful of jobs).
Two pods with the same spec (scheduling group aside), the same claims' specs and the same
priority are interchangeable on every node: the joint model counts them instead of naming
each one. A PodGroup with the gang policy is a gang: all its pending pods or none (the
basic policy places each pod on its own).

Pods whose placement depends on other pods' choices or on their own identity — a claim
already allocated or shared with another pod (or owned by their PodGroup), a pin to node
names, node-allocatable device accounting — are *loose*: the batch places them one by one
after the joint model, on what it left, as kube-scheduler would.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NewType

from drasat.models.core import Pod
from drasat.solver.scheduling.cluster import Cluster, ObjectKey, key_of, namespace_of
from drasat.solver.scheduling.plugins.node_filters import pinned_nodes
from drasat.solver.scheduling.pods import ClaimBook, PodClaims, not_schedulable_now, resolve_pod_claims
from drasat.solver.scheduling.pods import finished as pod_finished

PodKey = NewType("PodKey", tuple[str, str])
"""A pending pod as the batch names it: (namespace, name), unique in a cluster, as AltId names alternatives."""


def pod_key(pod: Pod) -> PodKey:
    """The pod's key: what the batch's maps of pods are keyed by (never the object's identity)."""
    return PodKey(key_of(pod))


def priority_of(pod: Pod) -> int:
    """``spec.priority`` as the admission plugin resolved it from the priority class (0 when absent)."""
    value = (pod.spec.model_extra or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class PodClass:
    """Interchangeable pending pods, in queue order; ``size`` is filled in by the caller's order."""

    index: int
    priority: int
    members: list[PodClaims] = field(default_factory=list)

    @property
    def representative(self) -> PodClaims:
        return self.members[0]

    @property
    def name(self) -> str:
        return f"class-{self.index}({self.representative.label}×{len(self.members)})"


@dataclass
class Gang:
    """A PodGroup's pending pods: at least ``need`` of them placed together, or none."""

    index: int
    group: ObjectKey
    members: list[PodClaims] = field(default_factory=list)
    min_count: int | None = None  # the gang policy's minCount, counting the group's pods already running
    running: int = 0  # the group's pods already bound to nodes

    @property
    def label(self) -> str:
        return f"{self.group[0]}/{self.group[1]}"

    @property
    def need(self) -> int:
        """Pending members that must be placed together: all of them without a minCount."""
        if self.min_count is None:
            return len(self.members)
        return max(0, min(len(self.members), self.min_count - self.running))

    def demand(self, class_of: dict[PodKey, int]) -> Counter[int]:
        """Members per pod class."""
        return Counter(class_of[pod_key(pc.pod)] for pc in self.members)


@dataclass
class Queue:
    """The pending pods sorted out: classes for the joint model, gangs over them, and loose pods."""

    classes: list[PodClass]
    gangs: list[Gang]
    class_of: dict[PodKey, int]  # a pod -> its class index
    loose: list[Pod]  # placed one by one afterwards
    loose_gangs: dict[ObjectKey, str]  # gangs the joint model cannot take, and why

    def need(self, label: str, pending: int) -> int:
        """How many of a gang's ``pending`` members must be placed together (a loose gang: all of them)."""
        for gang in self.gangs:
            if gang.label == label:
                return min(pending, gang.need)
        return pending


def _spec_key(pc: PodClaims) -> str:
    spec: dict[str, Any] = pc.pod.spec.to_api()
    spec.pop("schedulingGroup", None)
    claims = [u.claim.spec.to_api() for u in pc.uses]
    return json.dumps([namespace_of(pc.pod), spec, claims, sorted(pc.extended.items())], sort_keys=True)


def _loose_reason(pc: PodClaims, users: Counter[ObjectKey], node_allocatable: bool) -> str:
    """Why this pod cannot be counted with others ("" when it can)."""
    if pc.unresolvable or not_schedulable_now(pc.pod):
        return "not schedulable now"
    if pinned_nodes(pc.pod) is not None or any(t.match_fields for t in pc.pod.required_node_terms()):
        return "pinned to node names"
    if node_allocatable and pc.uses:
        return "node-allocatable device accounting"
    for use in pc.uses:
        if use.allocated or use.consumer.resource != "pods" or users[key_of(use.claim)] > 1:
            return f"claim {use.claim.name} is shared or already allocated"
    return ""


def sort_queue(cluster: Cluster, pods: Sequence[Pod], book: ClaimBook) -> Queue:
    """Classes, gangs and loose pods of ``pods`` (in queue order). A gang with one loose member is loose."""
    resolved = [resolve_pod_claims(p, cluster, book) for p in pods]
    users: Counter[ObjectKey] = Counter(key_of(u.claim) for pc in resolved for u in pc.uses)
    gated = cluster.features["DRANodeAllocatableResources"]
    groups = [_group_of(pc.pod, cluster) for pc in resolved]
    loose_gangs: dict[ObjectKey, str] = {}
    reasons = [_loose_reason(pc, users, gated) for pc in resolved]
    for pc, group, why in zip(resolved, groups, reasons):
        if why and group is not None:
            loose_gangs.setdefault(group, f"pod {pc.label}: {why}")
    running = Counter(_group_of(p, cluster) for p in cluster.pods if p.spec.node_name and not pod_finished(p))
    by_key: dict[str, PodClass] = {}
    class_of: dict[PodKey, int] = {}
    gangs: dict[ObjectKey, Gang] = {}
    loose: list[Pod] = []
    for pc, group, why in zip(resolved, groups, reasons):
        if why or group in loose_gangs:
            loose.append(pc.pod)
            continue
        cls = by_key.setdefault(_spec_key(pc), PodClass(len(by_key), priority_of(pc.pod)))
        cls.members.append(pc)
        class_of[pod_key(pc.pod)] = cls.index
        if group is not None:
            if group not in gangs:
                gangs[group] = _gang(cluster, len(gangs), group, running)
            gangs[group].members.append(pc)
    return Queue(list(by_key.values()), list(gangs.values()), class_of, loose, loose_gangs)


def _gang(cluster: Cluster, index: int, group: ObjectKey, running: Counter[ObjectKey | None]) -> Gang:
    """A gang with its minCount and how many of its pods already run (they count toward minCount)."""
    policy = cluster.pod_groups_by_key[group].spec.scheduling_policy or {}
    gang = policy.get("gang")
    min_count = gang.get("minCount") if isinstance(gang, dict) else None
    valid = isinstance(min_count, int) and not isinstance(min_count, bool) and min_count > 0
    return Gang(index, group, min_count=min_count if valid else None, running=running[group])


def _group_of(pod: Pod, cluster: Cluster) -> ObjectKey | None:
    """The PodGroup a pod belongs to, when the input has it (a missing one leaves the pod unresolvable)."""
    ref = pod.spec.scheduling_group
    if ref is None or not ref.pod_group_name:
        return None
    key = (namespace_of(pod), ref.pod_group_name)
    group = cluster.pod_groups_by_key.get(key)
    if group is None or "gang" not in (group.spec.scheduling_policy or {}):
        return None  # the basic policy schedules each pod on its own, as one by one does
    return key
