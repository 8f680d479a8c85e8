"""``preempt``: which running pods to evict so that a pending pod fits — kube-scheduler's choice, and the fewest.

kube-scheduler's DefaultPreemption (``pkg/scheduler/framework/preemption`` and ``plugins/defaultpreemption``)
looks at each node where the pod fails: it removes every pod of lower priority, checks that the pod then
fits, and *reprieves* the removed pods one by one, most important first (higher priority, then started
earlier), those whose eviction would break a PodDisruptionBudget before the others: a pod the preemptor
still fits beside goes back, the rest are victims. Of the candidate nodes it keeps the one with the fewest
budget violations, then the lowest highest-priority victim, then the least sum of priorities, then the
fewest victims, then the latest start among the most important victims, then the first node.

Greedy reprieving keeps the most important pods, not the fewest evictions: on partitionable devices it
often evicts two small pods where one larger one frees the same devices. drasat's own answer enumerates
the victim sets of each node by size (within the time limit, said when cut): the fewest budget
violations, then the fewest victims, then the least priority lost.

A victim's claims are released as the resourceclaim controller releases them once the pod is gone: its
reservation removed, and the allocation too when nobody else holds the claim (KEP-5690's point that a
simulated preemption must free devices; upstream's simulation before it freed none).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

from drasat.models.core import Pod
from drasat.models.resource import ResourceClaim
from drasat.solver.batch.pod_classes import priority_of
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster import Cluster, key_of, label_of
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import schedule_one
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.plugins.node_filters import filter_reasons
from drasat.solver.scheduling.pods import finished, object_uid

from .budgets import Budgets


@dataclass
class Victims:
    """One node's victims, most important first, and how many PodDisruptionBudgets their eviction breaks."""

    node: str
    pods: list[Pod]
    violations: int = 0

    def labels(self) -> list[str]:
        return [label_of(p) for p in self.pods]

    def priorities(self) -> list[int]:
        return [priority_of(p) for p in self.pods]

    def to_data(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "victims": [{"pod": label_of(p), "priority": priority_of(p)} for p in self.pods],
            "budgetsBroken": self.violations,
        }


@dataclass
class PreemptResult:
    """kube-scheduler's victims and the fewest, side by side, and why they differ."""

    pod: str
    priority: int
    fits_now: str | None = None  # a node where the pod fits without evicting anything
    kubernetes: Victims | None = None
    fewest: Victims | None = None
    proven: bool = True  # the fewest is proven (every victim set small enough was tried)
    why: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def helps(self) -> bool:
        return self.fits_now is not None or self.kubernetes is not None or self.fewest is not None

    def to_data(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "priority": self.priority,
            "fitsWithoutPreemption": self.fits_now,
            "kubeScheduler": self.kubernetes.to_data() if self.kubernetes else None,
            "fewest": self.fewest.to_data() if self.fewest else None,
            "proven": self.proven,
            "why": self.why,
            "notes": self.notes,
        }


def preempt(cluster: Cluster, pod: Pod, *, options: AllocateOptions | None = None) -> PreemptResult:
    """Victims for ``pod`` (pending): kube-scheduler's and the fewest; see the module docstring."""
    options = options or AllocateOptions()
    if options.evaluator is None:
        options = replace(options, evaluator=SelectorEvaluator())
    ends = time.monotonic() + options.time_limit
    result = PreemptResult(label_of(pod), priority_of(pod))
    if (pod.spec.model_extra or {}).get("preemptionPolicy") == "Never":
        result.notes.append("the pod's preemptionPolicy is Never: kube-scheduler evicts nothing for it")
    sim = _Simulation(cluster, pod, options)
    placed = schedule_one(ClusterState(cluster), pod, options, sim.cache)
    if placed.node:
        result.fits_now = placed.node
        return result
    candidates = []
    for node in cluster.nodes:
        lower = sim.lower(node.name)
        if lower and not filter_reasons(pod, node) and sim.fits(node.name, lower):
            candidates.append((node.name, lower))
    if not candidates:
        result.notes.append("no node takes the pod even with every pod of lower priority evicted")
        return result
    if not result.notes:
        result.kubernetes = _pick([sim.reprieved(n, lower) for n, lower in candidates])
    result.fewest, result.proven = _fewest(sim, candidates, result.kubernetes, ends)
    result.why = _why(result.kubernetes, result.fewest)
    return result


class _Simulation:
    """Checks whether the pod fits on one node with some pods evicted (their claims released)."""

    def __init__(self, cluster: Cluster, pod: Pod, options: AllocateOptions) -> None:
        self.cluster, self.pod, self.options = cluster, pod, options
        self.cache: dict[tuple, Any] = {}
        self.budgets = Budgets(cluster)
        self.priority = priority_of(pod)
        self._memo: dict[tuple[str, frozenset], bool] = {}

    def lower(self, node: str) -> list[Pod]:
        """The node's running pods of lower priority, most important first (MoreImportantPod)."""
        pods = [
            p
            for p in self.cluster.pods
            if p.spec.node_name == node and not finished(p) and not p.metadata.deletion_timestamp
            if priority_of(p) < self.priority
        ]
        return sorted(pods, key=lambda p: (-priority_of(p), _start(p)))

    def fits(self, node: str, evicted: Sequence[Pod]) -> bool:
        key = (node, frozenset(key_of(p) for p in evicted))
        if key not in self._memo:
            self._memo[key] = self._fits(node, key[1])
        return self._memo[key]

    def _fits(self, node: str, evicted: frozenset) -> bool:
        gone = {object_uid("Pod", p) for p in self.cluster.pods if key_of(p) in evicted}
        view = replace(
            self.cluster,
            nodes=[n for n in self.cluster.nodes if n.name == node],
            pods=[p for p in self.cluster.pods if p.spec.node_name == node and key_of(p) not in evicted],
            claims=[released(c, gone) for c in self.cluster.claims],
        )
        return schedule_one(ClusterState(view), self.pod, self.options, {}).node is not None

    def reprieved(self, node: str, lower: list[Pod]) -> Victims:
        """SelectVictimsOnNode: every lower pod removed, then reprieved most important first (budget breakers
        first); those that cannot come back are the victims."""
        violating, keeping = self.budgets.split(lower)
        evicted = list(lower)
        victims, violations = [], 0
        for pod in violating + keeping:
            evicted.remove(pod)
            if not self.fits(node, evicted):
                evicted.append(pod)
                victims.append(pod)
                violations += pod in violating
        return Victims(node, sorted(victims, key=lambda p: (-priority_of(p), _start(p))), violations)


def released(claim: ResourceClaim, gone: set[str]) -> ResourceClaim:
    """The claim once the evicted pods are gone: their reservations dropped; deallocated when nobody is left."""
    status = claim.status
    if status is None or not any(r.uid in gone for r in status.reserved_for):
        return claim
    claim = claim.model_copy(deep=True)
    assert claim.status is not None
    claim.status.reserved_for = [r for r in claim.status.reserved_for if r.uid not in gone]
    if not claim.status.reserved_for:
        claim.status.allocation = None
    return claim


def _start(pod: Pod) -> str:
    value = (pod.status.model_extra or {}).get("startTime") if pod.status else None
    return str(value or "")


def _pick(candidates: list[Victims]) -> Victims:
    """pickOneNodeForPreemption: fewest budget violations, lowest highest-priority victim, least sum of
    priorities, fewest victims, latest start of the most important victims, then the first node."""

    def key(v: Victims) -> tuple:
        top = priority_of(v.pods[0]) if v.pods else -(2**31)
        total = sum(priority_of(p) + 2**31 for p in v.pods)
        latest = max((_start(p) for p in v.pods if priority_of(p) == top), default="")
        return (v.violations, top, total, len(v.pods), _negated(latest))

    return min(candidates, key=key)


def _negated(text: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in text)


def _fewest(
    sim: _Simulation, candidates: list[tuple[str, list[Pod]]], kubernetes: Victims | None, ends: float
) -> tuple[Victims | None, bool]:
    """The fewest budget violations, then victims, then priority lost, over every node: victim sets tried by
    size, none larger than the best so far. Returns it and whether every set that could beat it was tried."""
    best: Victims | None = kubernetes
    for node, lower in candidates:
        most = len(lower) if best is None else len(best.pods)
        for size in range(1, most + 1):
            found = []
            for chosen in combinations(lower, size):
                if time.monotonic() > ends:
                    return best, False
                if sim.fits(node, chosen):
                    found.append(Victims(node, list(chosen), sim.budgets.broken(list(chosen))))
            if found:
                mine = min(found, key=_own_key)
                if best is None or _own_key(mine) < _own_key(best):
                    best = mine
                break
    return best, True


def _own_key(v: Victims) -> tuple[int, int, int]:
    return (v.violations, len(v.pods), sum(priority_of(p) for p in v.pods))


def _why(kubernetes: Victims | None, fewest: Victims | None) -> str:
    """In words, why kube-scheduler's victims differ from the fewest (or that they do not)."""
    if kubernetes is None or fewest is None:
        return ""
    if (kubernetes.node, sorted(kubernetes.labels())) == (fewest.node, sorted(fewest.labels())):
        return "kube-scheduler's victims are the fewest"
    k, f = len(kubernetes.pods), len(fewest.pods)
    if f < k:
        kept = [label_of(p) for p in fewest.pods if p not in kubernetes.pods]
        return (
            f"kube-scheduler reprieves the most important pods first, so it keeps {', '.join(kept)} (priority "
            f"{max(priority_of(p) for p in fewest.pods)}) and evicts {k} pods of lower priority instead; evicting "
            f"{', '.join(fewest.labels())} alone frees enough"
        )
    if fewest.violations < kubernetes.violations:
        return "kube-scheduler's greedy reprieve breaks more PodDisruptionBudgets than needed"
    return (
        f"as few victims ({f}): kube-scheduler prefers node {kubernetes.node}, whose most important victim has the "
        "lower priority"
    )
