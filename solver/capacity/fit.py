"""``fit_workload``: the most copies of a workload that fit on the cluster now, and how many go on each node.

Karmada's MaxAvailableReplicas and Kueue's feasibility check ask it before any pod exists. The workload's
pod sets (:mod:`drasat.models.workloads`) become pods as their controller would make them — each with
the claims its ResourceClaimTemplates generate — and the counting model counts them: per pod class and
node how many pods, every DRA rule lifted to counts, and ``copies`` whole copies of the workload (each
pod set's count per copy), as many as possible (at most ``replicas``). The answer's pods are then named,
their devices allocated node by node and verified. ``with_pending`` first places the cluster's pending
pods jointly (``schedule_batch``) and fits the workload on what they leave.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from fractions import Fraction
from math import floor
from typing import Any

from drasat.models.collector import collector_paused
from drasat.models.core import Pod
from drasat.models.errors import InputError, Location
from drasat.models.workloads import PodSet, Workload
from drasat.solver.allocation.options import check_options
from drasat.solver.batch.budget import Budget
from drasat.solver.batch.counting import build_counting_model
from drasat.solver.batch.nodes import NodeCheck
from drasat.solver.batch.pod_classes import PodClass, PodKey, Queue, pod_key, sort_queue
from drasat.solver.batch.search import Counts
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster import Cluster, key_of
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import PodClaims, resolve_pod_claims

from .counted import Solved, Standing, devices_text, pod_devices, solve_counted

MAX_COPIES = 100_000  # copies asked for at most (and the model's cap without --replicas)
PENDING_SHARE = 0.4  # of the time, for placing the pending pods first (--with-pending)


@dataclass
class FitPod:
    """One pod of the answer: its pod set, node and devices (``request=pool/device``)."""

    name: str
    pod_set: str
    node: str
    devices: list[str]


@dataclass
class FitResult:
    """How many copies fit (whole, devices verified), where, and how that stands against CP-SAT's bound."""

    workload: str
    wanted: int | None  # --replicas (None: as many as fit)
    copies: int  # whole copies placed, devices verified
    pods_per_copy: int
    bound: int | None  # the most copies that could fit, as CP-SAT bounds it (None: not known for the cluster)
    standing: Standing
    nodes: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> pod set -> pods
    pods: list[FitPod] = field(default_factory=list)
    checks: list[NodeCheck] = field(default_factory=list)
    pending: tuple[int, int] | None = None  # --with-pending: (placed, pending)

    @property
    def proven(self) -> bool:
        return self.standing.proven

    @property
    def fits(self) -> bool:
        """What the exit status says: the copies asked for all fit (without a number: at least one)."""
        return self.copies >= (1 if self.wanted is None else self.wanted)

    def to_data(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "replicas": self.wanted,
            "fit": self.copies,
            "podsPerCopy": self.pods_per_copy,
            "proven": self.proven,
            "bound": self.bound,
            "nodes": [{"node": n, "pods": sum(s.values()), "podSets": s} for n, s in sorted(self.nodes.items())],
            "pods": [{"name": p.name, "podSet": p.pod_set, "node": p.node, "devices": p.devices} for p in self.pods],
            **({"pendingPlaced": self.pending[0], "pending": self.pending[1]} if self.pending else {}),
            "seconds": round(self.standing.seconds, 3),
            "notes": self.standing.notes,
        }


def fit_workload(
    cluster: Cluster,
    workload: Workload,
    *,
    replicas: int | None = None,
    with_pending: bool = False,
    options: AllocateOptions | None = None,
) -> FitResult:
    """The most copies of ``workload`` (at most ``replicas``) that fit now; see the module docstring.
    ``options.time_limit`` bounds the whole run; the answer is the best found, and says whether it is proven."""
    if replicas is not None and not 0 <= replicas <= MAX_COPIES:
        raise InputError(f"--replicas must be from 0 to {MAX_COPIES}, not {replicas}")
    options = options or AllocateOptions()
    check_options(options.solver, options.objective, options.time_limit, batch=True)
    if options.evaluator is None:
        options = replace(options, evaluator=SelectorEvaluator())
    with collector_paused():
        return _fit(cluster, workload, replicas, with_pending, options)


def _fit(
    cluster: Cluster, workload: Workload, replicas: int | None, with_pending: bool, options: AllocateOptions
) -> FitResult:
    started = time.monotonic()
    budget = Budget.of(options.time_limit)
    pending = None
    if with_pending:
        cluster, pending = _pending_placed(cluster, replace(options, time_limit=PENDING_SHARE * budget.left()))
    state = ClusterState(cluster)
    namer = _Namer(cluster, workload)
    reps = [namer.pod(s, 0) for s in workload.pod_sets]
    queue = sort_queue(cluster, reps, state.book)
    _refuse_unfit(workload, reps, queue, cluster, state)
    need: Counter[int] = Counter()
    for pod_set, rep in zip(workload.pod_sets, reps):
        need[queue.class_of[pod_key(rep)]] += pod_set.count
    most = replicas if replicas is not None else _most_copies(state, workload.pods_per_copy)
    if most == 0:  # none asked for, or no node has room for a pod: nothing to count
        why = "no copies asked for" if replicas == 0 else "no node has room for another pod (allocatable pods)"
        result = FitResult(workload.label, replicas, 0, workload.pods_per_copy, 0, Standing(True, notes=[why]))
        result.pending = pending
        return result
    model_queue = Queue(
        [PodClass(c.index, c.priority, c.members[:1] * (need[c.index] * most)) for c in queue.classes],
        [],
        queue.class_of,
        [],
        {},
    )
    assert options.evaluator is not None
    counting = build_counting_model(state, model_queue, options.evaluator, budget)
    model = counting.model
    copies = model.new_int_var(0, most, "copies")
    for index, per_copy in need.items():
        model.add(counting.singles[index] == per_copy * copies)
    model.maximize(copies)
    solved = solve_counted(state, lambda counts: namer.queue(counts, need, queue), counting, options, budget)
    result = _result(workload, replicas, state, namer, need, solved)
    result.pending = pending
    result.standing.seconds = time.monotonic() - started
    return result


class _Namer:
    """The workload's pods as its controller would make them: ``<name>-<i>`` (``<name>-<pod set>-<i>`` with
    several pod sets), each resolved with its own generated claims; names the input uses are avoided."""

    def __init__(self, cluster: Cluster, workload: Workload) -> None:
        self.cluster, self.workload = cluster, workload
        taken = {key_of(p) for p in cluster.pods}
        several = len(workload.pod_sets) > 1
        self.bases = {}
        for s in workload.pod_sets:
            base = f"{workload.name}-{s.name}" if several else workload.name
            while (workload.namespace, f"{base}-0") in taken:
                base += "-fit"
            self.bases[s.name] = base
        self.pod_set_of: dict[PodKey, str] = {}

    def pod(self, pod_set: PodSet, i: int) -> Pod:
        pod = pod_set.pod.model_copy(deep=True)
        pod.metadata.name = f"{self.bases[pod_set.name]}-{i}"
        self.pod_set_of[pod_key(pod)] = pod_set.name
        return pod

    def queue(self, counts: Counts, need: Counter[int], model: Queue) -> Queue:
        """The pods the counts place, named, as a queue of the model's classes (copy by copy, pod sets in order)."""
        copies = min((counts.singles.get(c, 0) // n for c, n in need.items()), default=0)
        book = self.cluster.claims_by_key
        members: dict[int, list[PodClaims]] = {c.index: [] for c in model.classes}
        class_of: dict[PodKey, int] = {}
        reps = {s.name: pod_key(self.pod(s, 0)) for s in self.workload.pod_sets}
        for s in self.workload.pod_sets:
            index = model.class_of[reps[s.name]]
            for i in range(s.count * copies):
                pod = self.pod(s, i)
                members[index].append(resolve_pod_claims(pod, self.cluster, book))
                class_of[pod_key(pod)] = index
        classes = [PodClass(c.index, c.priority, members[c.index]) for c in model.classes]
        return Queue(classes, [], class_of, [], {})


def _refuse_unfit(workload: Workload, reps: list[Pod], queue: Queue, cluster: Cluster, state: ClusterState) -> None:
    """A template whose claims cannot be made, or whose pods cannot be counted apart, is the input's fault."""
    for pod_set, rep in zip(workload.pod_sets, reps):
        pc = resolve_pod_claims(rep, cluster, state.book)
        if pc.unresolvable:
            raise InputError(f"its pods cannot be scheduled: {pc.unresolvable}", _claim_field(pod_set, rep, cluster))
        if any(p is rep for p in queue.loose):
            shared = [e.name for e in rep.spec.resource_claims if e.resource_claim_name]
            why = (
                f"claim {', '.join(shared)} names one ResourceClaim (resourceClaimName) that every replica would share"
                if shared
                else "its pods are pinned to node names, gated, or for another scheduler"
            )
            raise InputError(
                f"fit counts replicas that each get claims of their own: {why}", pod_set.where.child("spec")
            )


def _claim_field(pod_set: PodSet, pod: Pod, cluster: Cluster) -> Location:
    """Where a template's unresolvable claim is: the entry naming a template or claim the input lacks."""
    ns = pod_set.pod.metadata.namespace or "default"
    for i, entry in enumerate(pod.spec.resource_claims):
        if (
            entry.resource_claim_template_name
            and (ns, entry.resource_claim_template_name) not in cluster.templates_by_key
        ):
            return pod_set.where.child(f"spec.resourceClaims[{i}].resourceClaimTemplateName")
        if entry.resource_claim_name and (ns, entry.resource_claim_name) not in cluster.claims_by_key:
            return pod_set.where.child(f"spec.resourceClaims[{i}].resourceClaimName")
    return pod_set.where.child("spec.resourceClaims")


def _most_copies(state: ClusterState, per_copy: int) -> int:
    """An upper bound on copies without ``--replicas``: the pods every node has room for, over the copy's pods."""
    room = 0
    for load in state.loads.values():
        slots = load.allocatable.get("pods", Fraction(MAX_COPIES))
        room += max(0, floor(slots) - load.pods)
    return min(MAX_COPIES, room // max(1, per_copy))


def _pending_placed(cluster: Cluster, options: AllocateOptions) -> tuple[Cluster, tuple[int, int]]:
    """The cluster with its pending pods placed jointly (bound, their claims allocated), and (placed, pending)."""
    from drasat.solver.batch.placement import schedule_batch

    result = schedule_batch(cluster, options=options)
    return committed(cluster, result.placements), (result.summary.placed, result.summary.pods)


def committed(cluster: Cluster, placements: list[Placement]) -> Cluster:
    """``cluster`` with the placed pods bound and their claims as the placements left them."""
    bound = {key_of(p.pod): p.pod for p in placements if p.node}
    claims = {key_of(c): c for c in cluster.claims}
    for p in placements:
        if p.node:
            claims.update({key_of(c): c for c in p.claims})
    pods = [bound.get(key_of(p), p) for p in cluster.pods]
    return replace(cluster, pods=pods, claims=list(claims.values()))


def _result(
    workload: Workload, replicas: int | None, state: ClusterState, namer: _Namer, need: Counter[int], solved: Solved
) -> FitResult:
    """Whole copies verified on their nodes, per node and pod set, with the pods' devices."""
    decoded, standing = solved.decoded, solved.standing
    pods: list[FitPod] = []
    per_set: Counter[str] = Counter()
    for node in sorted(decoded.checks):
        for pc in decoded.assignment[node]:
            name = namer.pod_set_of[pod_key(pc.pod)]
            per_set[name] += 1
            pods.append(FitPod(pc.label, name, node, devices_text(pod_devices(state, pc, node, decoded.checks[node]))))
    copies = min((per_set[s.name] // s.count for s in workload.pod_sets), default=0)
    if solved.counts is not None and copies * workload.pods_per_copy != solved.counts.placed:
        standing.proven = False
        standing.notes.append("some counted pods did not allocate on their node: only whole verified copies count")
    if replicas is not None and copies == replicas:
        standing.proven = True  # as many as asked for: nothing can beat it
    bound = floor(standing.bound + 1e-6) if standing.bound is not None and solved.counting_complete else None
    if replicas is not None and bound is not None:
        bound = min(bound, replicas)
    nodes: dict[str, Counter[str]] = {}
    for p in pods:
        nodes.setdefault(p.node, Counter())[p.pod_set] += 1
    result = FitResult(workload.label, replicas, copies, workload.pods_per_copy, bound, standing)
    result.nodes = {n: dict(c) for n, c in nodes.items()}
    result.pods, result.checks = pods, list(decoded.checks.values())
    return result
