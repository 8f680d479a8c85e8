"""``schedule_batch(cluster)``: every pending pod placed at once, the most pods (by priority) the cluster holds.

kube-scheduler places pods one at a time and never revisits a choice; on partitionable
devices that strands capacity (kubernetes#138765). The joint placement decides all
pending pods together, in four steps:

1. the queue as classes of interchangeable pods, gangs (PodGroups: all or none) and loose
   pods (``pod_classes``);
2. nodes as classes, and per node class the mixes of pods one node holds, asked of the
   per-node allocator itself (``batch_configs``);
3. a CP-SAT master over counts: which configurations on how many nodes of each class, which
   pods and gangs — most pods of the highest priority first (``batch_master``);
4. decoding: pods to nodes (queue order, node name order), then on each node the chosen
   pods' claims allocated together by ``allocate`` and checked by the verifier; a node whose
   answer fails (it cannot for classes that are exact) gives its pods back.

Pods the master leaves out and loose pods then get the one-by-one scheduler's turn on what
is left, so the batch never refuses a pod the remaining capacity can take; every gang the
master did not place (nodes reaching shared pools are outside its model) is placed one by
one and undone unless every member fits. The whole queue is also placed as ``schedule``
places it beforehand, the gangs it splits withdrawn (``batch_passes.scheduler_baseline``):
its mixes seed the configurations and its answer is kept when it places more pods, priority
by priority — so the batch never places fewer pods than the scheduler, bar split gangs.

``options.time_limit`` is one deadline for the whole run (``batch_budget``); the scheduler-order
pass gets at most half of it, so that on large inputs (where it costs as much as ``schedule``)
the joint model still has its turn; the guarantee then covers the pods that pass reached, and
the summary's notes say so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from drasat.models.core import Pod
from drasat.models.errors import SolveTimeout
from drasat.solver.allocation.options import CAPABILITIES, check_options
from drasat.solver.allocation.problem import claim_key
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster import Cluster, label_of
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement, bound_pod, updated_claims
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions, DraVerdict, claim_shape, dra_score
from drasat.solver.scheduling.pods import PodClaims, pending_pods

from .budget import Budget
from .configs import MixFitter, NodeClass, configurations, node_classes
from .master import MasterAnswer, solve_master
from .nodes import NodeAllocator, NodeCheck
from .passes import better, group_of, one_by_one, scheduler_baseline, seed
from .pod_classes import Queue, sort_queue

BASELINE_SHARE = 0.5  # of the run's time, at most, for the pass in the scheduler's order


@dataclass
class BatchSummary:
    """What the joint placement did and what it cost."""

    pods: int = 0
    placed: int = 0
    placed_jointly: int = 0
    gangs: int = 0
    gangs_complete: int = 0
    pod_classes: int = 0
    node_classes: int = 0
    configurations: int = 0
    allocator_calls: int = 0
    master_stages: int = 0
    nodes_verified: int = 0
    nodes_carried: int = 0  # answers carried from a node of the same class and mix (verified all the same)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_data(self) -> dict[str, Any]:
        return {
            "pods": self.pods,
            "placed": self.placed,
            "placedJointly": self.placed_jointly,
            "gangs": self.gangs,
            "gangsComplete": self.gangs_complete,
            "podClasses": self.pod_classes,
            "nodeClasses": self.node_classes,
            "configurations": self.configurations,
            "allocatorCalls": self.allocator_calls,
            "masterStages": self.master_stages,
            "nodesVerified": self.nodes_verified,
            "nodesCarried": self.nodes_carried,
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
        }


@dataclass
class BatchResult:
    placements: list[Placement]  # in queue order, as ``schedule`` returns them
    nodes: list[NodeCheck]
    summary: BatchSummary


def schedule_batch(
    cluster: Cluster, pods: Sequence[Pod] | None = None, *, options: AllocateOptions | None = None
) -> BatchResult:
    """Place ``pods`` (default: every pending pod) jointly; see the module docstring. With the ``pack``
    objective, ties between equally many pods go to the answer using the fewest nodes whose devices are
    all whole, then the fewest nodes. ``options.time_limit`` bounds the whole run (``batch_budget``)."""
    started = time.monotonic()
    options = options or AllocateOptions()
    check_options(options.solver, options.objective, options.time_limit, batch=True)
    if options.evaluator is None:
        options = replace(options, evaluator=SelectorEvaluator())
    state = ClusterState(cluster)
    pending = list(pending_pods(cluster) if pods is None else pods)
    queue = sort_queue(cluster, pending, state.book)
    summary = BatchSummary(pods=len(pending), pod_classes=len(queue.classes), gangs=len(queue.gangs))
    cache: dict[tuple, Any] = {}  # the scheduler's, shared by every one-by-one pass
    budget = Budget.of(options.time_limit)  # one deadline for the whole run
    # The scheduler-order pass is the guarantee but costs as much as ``schedule``: it gets part of the time,
    # so that the joint model always has its turn.
    baseline, scheduler = scheduler_baseline(state, queue, pending, options, cache, budget.part(BASELINE_SHARE))
    classes = _node_classes_with_configurations(state, queue, options, summary, budget)
    for proven in (scheduler, baseline):
        seed(classes, queue, proven)
    summary.configurations = sum(len(nc.configurations) for nc in classes)
    checks, placed = _jointly(state, queue, classes, options, summary, budget)
    placements = one_by_one(state, queue, pending, placed, options, cache, budget=budget)
    if better(baseline, placements):
        summary.notes.append("one by one places more pods by priority than the joint model found: its answer is kept")
        placements, checks, placed = baseline, {}, {}
    summary.notes += [
        f"time ran out (--timeout {options.time_limit:g} s for the whole run): {what}" for what in budget.cut_short
    ]
    summary.placed = sum(1 for p in placements if p.node)
    summary.placed_jointly = len(placed)
    on_node = {p.label for p in placements if p.node}
    summary.gangs_complete = sum(1 for g in queue.gangs if all(pc.label in on_node for pc in g.members))
    summary.gangs += len(queue.loose_gangs)
    summary.gangs_complete += sum(1 for g in queue.loose_gangs if _group_complete(g, pending, on_node))
    summary.nodes_verified = len(checks)
    summary.seconds = time.monotonic() - started
    return BatchResult(placements, list(checks.values()), summary)


def _jointly(
    state: ClusterState,
    queue: Queue,
    classes: list[NodeClass],
    options: AllocateOptions,
    summary: BatchSummary,
    budget: Budget,
) -> tuple[dict[str, NodeCheck], dict[int, Placement]]:
    """The master's answer decoded, allocated node by node, verified and bound: the nodes' checks and the
    pods placed (by ``id`` of the pod)."""
    try:
        answer = solve_master(
            queue, classes, pack=CAPABILITIES[options.objective].packs, budget=budget, workers=options.workers
        )
    except SolveTimeout:
        budget.cut("the joint model found no answer: the pods are placed one by one")
        return {}, {}
    summary.master_stages = answer.stages
    if answer.stopped_early:
        summary.notes.append(
            f"{answer.stopped_early} master stages ran out of time before proving their best "
            "(raise --timeout for a better answer)"
        )
    assignment = _assign(queue, classes, answer)
    checks = _allocate_nodes(state, queue, classes, assignment, options, summary, budget)
    return checks, _commit(state, assignment, checks)


def _node_classes_with_configurations(
    state: ClusterState, queue: Queue, options: AllocateOptions, summary: BatchSummary, budget: Budget
) -> list[NodeClass]:
    """Node classes over the nodes whose devices are their own (shared pools are left to one-by-one)."""
    local = [n.name for n in state.cluster.nodes if all(s.spec.node_name == n.name for s in state.nodes[n.name].slices)]
    if len(local) < len(state.cluster.nodes):
        summary.notes.append(
            f"{len(state.cluster.nodes) - len(local)} nodes reach shared device pools: "
            "only the one-by-one pass places pods there"
        )
    classes = node_classes(state, local, queue.classes)
    demand = [len(c.members) for c in queue.classes]
    for nc in classes:
        if budget.over():
            budget.cut("the configurations: node classes left without any (their nodes take pods one by one)")
            continue
        fitter = MixFitter(state, nc.representative, queue.classes, budget.options(options))
        nc.eligible = [
            c.index
            for c in queue.classes
            if fitter.passes_filters(c) and fitter.fits(tuple(int(i == c.index) for i in range(len(demand))))
        ]
        nc.configurations = configurations(fitter, demand, nc.eligible)
        nc.calls = fitter.calls
        if fitter.undecided:
            summary.notes.append(
                f"node {nc.representative}'s class: {fitter.undecided} mixes undecided in time (counted as not fitting)"
            )
        summary.configurations += len(nc.configurations)
        summary.allocator_calls += fitter.calls
    summary.node_classes = len(classes)
    return classes


def _assign(queue: Queue, classes: list[NodeClass], answer: MasterAnswer) -> dict[str, list[PodClaims]]:
    """Pods to nodes: per pod class, the chosen pods in queue order fill node classes and their nodes in
    order, each node up to its configuration's count."""
    chosen: dict[int, list[PodClaims]] = {}
    gang_pods = {id(pc) for g in queue.gangs for pc in g.members}
    picked_gangs = {id(pc) for g in queue.gangs if answer.gangs[g.index] for pc in g.members}
    for cls in queue.classes:
        singles = [pc for pc in cls.members if id(pc) not in gang_pods][: answer.singles[cls.index]]
        keep = {id(pc) for pc in singles} | picked_gangs
        chosen[cls.index] = [pc for pc in cls.members if id(pc) in keep]
    out: dict[str, list[PodClaims]] = {}
    for nc in classes:
        room = _room(nc, answer)
        for p in nc.eligible:
            left = answer.put.get((nc.index, p), 0)
            for node, capacity in room:
                take = min(left, capacity[p])
                out.setdefault(node, []).extend(chosen[p][:take])
                chosen[p] = chosen[p][take:]
                left -= take
    return {node: sorted(pods, key=lambda pc: queue.class_of[id(pc)]) for node, pods in out.items() if pods}


def _room(nc: NodeClass, answer: MasterAnswer) -> list[tuple[str, list[int]]]:
    """Each node of the class with the configuration it takes (nodes in name order, configurations in order)."""
    mixes = [list(mix) for k, mix in enumerate(nc.configurations) for _ in range(answer.nodes.get((nc.index, k), 0))]
    return list(zip(nc.nodes, mixes))


def _allocate_nodes(
    state: ClusterState,
    queue: Queue,
    classes: list[NodeClass],
    assignment: dict[str, list[PodClaims]],
    options: AllocateOptions,
    summary: BatchSummary,
    budget: Budget,
) -> dict[str, NodeCheck]:
    """Each node's pods allocated together and verified; a gang that loses a member anywhere is withdrawn
    everywhere (and the nodes it left are allocated again)."""
    allocator = NodeAllocator(state, options, budget)
    class_of_node = {node: nc.index for nc in classes for node in nc.nodes}
    checks: dict[str, NodeCheck] = {}
    todo = sorted(assignment)
    gang_of = {id(pc): g for g in queue.gangs for pc in g.members}
    while todo:
        node = todo.pop(0)
        pods = assignment[node]
        key = (class_of_node[node], tuple(queue.class_of[id(pc)] for pc in pods))
        check = allocator.check(node, key, pods) if pods else None
        if check is not None and not check.violations:
            checks[node] = check
            continue
        if pods and not budget.over():  # past the deadline, the budget's note says it once
            summary.notes.append(
                f"node {node}: the joint allocation did not hold "
                f"({'; '.join(check.violations) if check else 'no allocation'}); its pods go back"
            )
        withdrawn = [gang_of[id(pc)] for pc in pods if id(pc) in gang_of]
        assignment[node] = []
        for gang in withdrawn:
            members = {id(pc) for pc in gang.members}
            for other, others in assignment.items():
                if any(id(pc) in members for pc in others):
                    assignment[other] = [pc for pc in others if id(pc) not in members]
                    checks.pop(other, None)
                    todo = sorted(set(todo) | {other})
    summary.nodes_carried = sum(1 for c in checks.values() if c.carried)
    return {node: check for node, check in checks.items() if assignment.get(node)}


def _commit(
    state: ClusterState, assignment: dict[str, list[PodClaims]], checks: dict[str, NodeCheck]
) -> dict[int, Placement]:
    """Bind every jointly placed pod: its claims allocated and reserved, its pod status written."""
    placed: dict[int, Placement] = {}
    for node in sorted(checks):
        check = checks[node]
        for pc in assignment[node]:
            shape = claim_shape(state, pc, node)
            allocations = {claim_key(c): check.allocation(pc.label, claim_key(c)) for c in shape.claims}
            verdict = DraVerdict(
                node,
                pc.label,
                claims=shape.claims,
                allocations=allocations,
                problem=check.problem,
                score=dra_score(shape.claims, allocations),
                mappings=shape.mappings,
            )
            claims = updated_claims(pc, verdict)
            pod = bound_pod(pc, node, verdict, claims)
            state.record(claims)
            state.bind(pod, node)
            placed[id(pc.pod)] = Placement(pod, node, claims, problem=check.problem, allocations=check.allocations)
    return placed


def _group_complete(group: tuple[str, str], pending: list[Pod], on_node: set[str]) -> bool:
    members = [p for p in pending if group_of(p) == f"{group[0]}/{group[1]}"]
    return bool(members) and all(label_of(p) in on_node for p in members)
