"""Topology-aware workload scheduling (KEP-5732), one by one: a PodGroup's pods in one topology domain.

A PodGroup whose ``spec.schedulingConstraints.topology[0].key`` names a node label is scheduled as
kube-scheduler's PodGroup cycle does it with the TopologyPlacement plugin: its PlacementGenerate step
makes one candidate placement per value of that label (only the domain its already-bound pods run
in, when some are); each placement is tried by scheduling the group's pending pods one by one on
its nodes alone; the PlacementScore plugins rank the tries — PodGroupPodsCount (how many of the
group's pods fit) and NodeResourcesFit with the MostAllocated strategy over the placement's nodes,
equal weights (1 and 1, the default), each scored 0-100 here — and the best placement is committed
(ties: the domain's name). The scores' exact normalisation upstream is not modelled beyond that.
Gated by TopologyAwareWorkloadScheduling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from drasat.models.core import Node, Pod, PodGroup

from .cluster import Cluster, label_of, namespace_of
from .cluster_state import ClusterState
from .parallel import Executor
from .plugins.dynamic_resources import AllocateOptions
from .pods import finished

GATE = "TopologyAwareWorkloadScheduling"
WEIGHT_PODS_COUNT = 1  # PodGroupPodsCount's default placementScore weight
WEIGHT_RESOURCES_FIT = 1  # NodeResourcesFit's (MostAllocated over the placement)


def topology_key(group: PodGroup) -> str | None:
    """The first topology constraint's node label key (the API allows one), or None."""
    constraints = group.spec.scheduling_constraints
    topology = constraints.get("topology") if isinstance(constraints, dict) else None
    if isinstance(topology, list) and topology and isinstance(topology[0], dict):
        key = topology[0].get("key")
        return key if isinstance(key, str) and key else None
    return None


def constrained_group(cluster: Cluster, pod: Pod) -> PodGroup | None:
    """The pod's PodGroup when it has a topology constraint and the gate is on."""
    ref = pod.spec.scheduling_group
    if not cluster.features[GATE] or ref is None or not ref.pod_group_name:
        return None
    group = cluster.pod_groups_by_key.get((namespace_of(pod), ref.pod_group_name))
    return group if group is not None and topology_key(group) else None


def in_group(pod: Pod, group: PodGroup) -> bool:
    """Whether the pod names this PodGroup (in its own namespace) in ``spec.schedulingGroup``."""
    ref = pod.spec.scheduling_group
    return ref is not None and ref.pod_group_name == group.name and namespace_of(pod) == namespace_of(group)


@dataclass(frozen=True)
class Trial:
    """One candidate placement tried: its domain, how many pods fit, and its placement score."""

    domain: str
    placed: int
    score: Fraction


ScheduleOne = Callable[[ClusterState, Pod, AllocateOptions, dict, Executor | None], Any]


def place_group(
    state: ClusterState,
    group: PodGroup,
    members: Sequence[Pod],
    options: AllocateOptions,
    cache: dict[tuple, Any],
    executor: Executor | None,
    schedule_one: ScheduleOne,
) -> tuple[list[Any], list[Trial], str]:
    """The group's pending ``members`` placed in the best topology domain and every placement tried; or no
    placements and why no placement can be generated."""
    key = topology_key(group) or ""
    domains, why = _domains(state.cluster, group, key)
    if why:
        return [], [], why
    trials = []
    for domain in sorted(domains):
        before = state.snapshot()
        tried = _simulate(state, domains[domain], members, options, cache, executor, schedule_one)
        placed = sum(1 for p in tried if p.node is not None)
        trials.append(Trial(domain, placed, _score(state, domains[domain], placed, len(members))))
        state.restore(before)
    best = max(trials, key=lambda t: (t.score, -sorted(domains).index(t.domain)))
    return _simulate(state, domains[best.domain], members, options, cache, executor, schedule_one), trials, ""


def _domains(cluster: Cluster, group: PodGroup, key: str) -> tuple[dict[str, list[Node]], str]:
    """Nodes per value of ``key``; only the domain of the group's bound pods when it has some."""
    bound = {n.name: n for n in cluster.nodes}
    running = {
        bound[p.spec.node_name].metadata.labels.get(key, "")
        for p in cluster.pods
        if in_group(p, group) and p.spec.node_name in bound and not finished(p)
    }
    if len(running) > 1 or "" in running:
        return {}, f"cannot determine domain for already scheduled pods of PodGroup {label_of(group)}"
    out: dict[str, list[Node]] = {}
    for node in cluster.nodes:
        value = node.metadata.labels.get(key)
        if value is not None and (not running or value in running):
            out.setdefault(value, []).append(node)
    return out, "" if out else f"no node has the topology key {key}"


def _simulate(
    state: ClusterState,
    nodes: list[Node],
    members: Sequence[Pod],
    options: AllocateOptions,
    cache: dict[tuple, Any],
    executor: Executor | None,
    schedule_one: ScheduleOne,
) -> list[Any]:
    """Each member scheduled one by one on the placement's nodes alone (every one of them looked at)."""
    whole = state.cluster
    state.cluster = replace(whole, nodes=nodes)
    everywhere = replace(options, percentage_of_nodes_to_score=100)
    try:
        return [schedule_one(state, pod, everywhere, cache, executor) for pod in members]
    finally:
        state.cluster = whole


def _score(state: ClusterState, nodes: list[Node], placed: int, wanted: int) -> Fraction:
    """PodGroupPodsCount (share of the group placed) plus NodeResourcesFit MostAllocated (share of the
    placement's cpu and memory requested), each 0-100, with their weights."""
    ratios = []
    for resource in ("cpu", "memory"):
        total = sum((state.loads[n.name].allocatable.get(resource, Fraction(0)) for n in nodes), Fraction(0))
        used = sum((state.loads[n.name].used.get(resource, Fraction(0)) for n in nodes), Fraction(0))
        if total:
            ratios.append(min(used / total, Fraction(1)))
    fit = 100 * sum(ratios, Fraction(0)) / len(ratios) if ratios else Fraction(0)
    pods = Fraction(100 * placed, wanted) if wanted else Fraction(0)
    return WEIGHT_PODS_COUNT * pods + WEIGHT_RESOURCES_FIT * fit
