"""Why a pod cannot be scheduled: the scheduler's summary over every node, then the devices per node class.

kube-scheduler says "0/12 nodes are available: 3 Insufficient cpu, 9 cannot allocate all claims"
and stops there. This module asks the same question drasat's ``schedule`` asks (the very same
filters, in the same order), keeps its summary line, and then explains the devices: for each
class of nodes that failed on them — nodes whose devices and devices in use look alike
(:mod:`.node_classes`) answer alike — the full explanation (funnel, conflict, fixes) is given
once, on the first node of the class, with the class's other nodes named.

Each pending pod is judged in the state the queue leaves it, as ``schedule`` would find it: the
pending pods before it placed first (binding-condition recovery included), whichever pods were
asked about in the same run; a pod outside the queue is judged against the input as it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from drasat.models.core import Pod
from drasat.solver.allocation.problem import claim_key
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.explanation.explain import Choice, Explanation, explain

from .cluster import Cluster, key_of, label_of
from .cluster_state import ClusterState
from .group_placement import constrained_group, in_group
from .one_by_one import Placement, group_placements, schedule_one, with_binding_state
from .plugins.binding_conditions import binding_verdict, deallocation_note, recover
from .plugins.dynamic_resources import AllocateOptions, claim_shape
from .plugins.node_filters import REASON_DRA
from .pods import pending_pods, resolve_pod_claims

MAX_CLASSES = 5  # node classes explained per pod; the others are counted
NODES_NAMED = 5  # nodes named per class, and nodes checked for the pods placed before the pod there


@dataclass
class ExplainedNodes:
    """Nodes whose devices fail the pod alike, and the explanation for the first of them."""

    nodes: list[str]  # the first NODES_NAMED of them
    explanation: Explanation
    more_nodes: int = 0  # nodes of the class beyond those named

    def to_data(self) -> dict[str, Any]:
        """The class as JSON-ready data: its nodes (names only), how many more, and the explanation."""
        return {"nodes": self.nodes, "moreNodes": self.more_nodes, **self.explanation.to_data()}


@dataclass
class PodExplanation:
    """One pod: the node it would go to, or the scheduler's summary and the devices' story per node class."""

    pod: str
    node: str | None
    summary: str
    classes: list[ExplainedNodes] = field(default_factory=list)
    unexplained_nodes: int = 0  # nodes failing on devices in classes beyond MAX_CLASSES
    choice: list[Choice] = field(default_factory=list)  # schedulable: the devices its claims would get
    node_reasons: dict[str, list[str]] = field(default_factory=dict)  # why each node refused the pod
    placed_before: int = 0  # pending pods placed before it in the queue's order
    queue: QueueStory | None = None  # pending in the queue's state: whether the pods before it are why
    batch: BatchVerdict | None = None  # pending in the queue's state: what ``schedule --batch`` does with it
    # Binding conditions: claims the scheduler deallocated first, and those PreBind would wait for.
    binding: list[str] = field(default_factory=list)

    @property
    def feasible(self) -> bool:
        """Whether some node would take the pod."""
        return self.node is not None

    def to_data(self) -> dict[str, Any]:
        """The pod's explanation as JSON-ready data."""
        return {
            "pod": self.pod,
            "node": self.node,
            "feasible": self.feasible,
            "summary": self.summary,
            "nodeClasses": [c.to_data() for c in self.classes],
            "unexplainedNodes": self.unexplained_nodes,
            "nodeReasons": self.node_reasons,
            "choice": [c.to_data() for c in self.choice],
            "placedBefore": self.placed_before,
            **({"queue": self.queue.to_data()} if self.queue else {}),
            **({"batch": self.batch.to_data()} if self.batch else {}),
            "binding": self.binding,
        }


@dataclass
class TookRoom:
    """One node the pod fits as the input has it, and the pods the queue placed there before it."""

    node: str
    pods: list[str]

    def to_data(self) -> dict[str, Any]:
        return {"node": self.node, "pods": self.pods}


@dataclass
class QueueStory:
    """A pod pending in the queue's state, against the input as it is: the node it would get there (None: none
    takes it even so, and the pods before it are not why), and the nodes the pods before it filled."""

    alone: str | None
    took_room: list[TookRoom] = field(default_factory=list)
    nodes_unchecked: int = 0  # nodes with pods placed before it beyond those checked (NODES_NAMED)

    def to_data(self) -> dict[str, Any]:
        return {
            "nodeAsInput": self.alone,
            "tookRoom": [t.to_data() for t in self.took_room],
            "nodesUnchecked": self.nodes_unchecked,
        }


@dataclass
class BatchVerdict:
    """What ``schedule --batch`` does with the pod: the node, or None (pending there too), and how sure."""

    node: str | None
    placed: int  # pods the joint placement places, of
    pods: int
    proven: bool  # the joint answer is optimal (priority by priority)
    seconds: float  # the time it had

    def to_data(self) -> dict[str, Any]:
        return {"node": self.node, "placed": self.placed, "pods": self.pods, "proven": self.proven}


def explain_pods(
    cluster: Cluster,
    pods: Sequence[Pod],
    *,
    evaluator: SelectorEvaluator | None = None,
    time_limit: float = 60.0,
    progress: Callable[[int, int], None] | None = None,
    node: str | None = None,
) -> list[PodExplanation]:
    """Each pod's verdict in the queue's state — over all nodes, or over ``node`` alone — and, where it fails on
    devices, the explanation per node class. ``progress(done, total)`` is called after each pod."""
    deadline = time.monotonic() + time_limit
    options = AllocateOptions(time_limit=time_limit, evaluator=evaluator or SelectorEvaluator())
    walk = _Queue(cluster, options, deadline)
    asked = {key_of(p) for p in pods}
    found: dict[tuple[str, str], PodExplanation] = {}
    for pod in walk.pending:
        if len(found) == len(asked):
            break  # the pods after the last one asked about change nothing for it
        if key_of(pod) not in asked:
            walk.place(pod)
            continue
        found[key_of(pod)] = walk.explain(pod, node)
        if progress is not None:
            progress(len(found), len(pods))
    for pod in pods:  # not in the queue (it waits for nothing the scheduler does): judged as the input is
        if key_of(pod) not in found:
            found[key_of(pod)] = _alone(cluster, pod, node, options, deadline)
    return [found[key_of(p)] for p in pods]


class _Queue:
    """The pending pods placed one at a time as ``schedule`` places them — after the same binding-condition
    recovery over the whole queue (:func:`recover`) — each pod asked about explained at its turn in the state
    the pods before it left."""

    def __init__(self, cluster: Cluster, options: AllocateOptions, deadline: float) -> None:
        self.cluster, self.options, self.deadline = cluster, options, deadline
        self.pending = pending_pods(cluster)
        self.recovery = recover(cluster, self.pending)
        self.state = ClusterState(self.recovery.cluster)
        self.cache: dict[tuple, Any] = {}  # the scheduler's, kept across pods as ``schedule`` keeps it
        self.placed: list[Placement] = []  # pods placed so far, in order
        self.assumed: dict[tuple[str, str], Pod] = {}  # each placed pod on its node, waiting in PreBind or not
        self.done: dict[tuple[str, str], Placement] = {}  # each pod's turn taken, by key

    def place(self, pod: Pod) -> Placement:
        """The pod's turn, as ``schedule`` takes it: alone, or with the pending pods of its topology-constrained
        PodGroup, all placed together (then the turn was taken at the group's first pod)."""
        if key_of(pod) in self.done:
            return self.done[key_of(pod)]
        group = constrained_group(self.cluster, pod)
        if group is None:
            found = [schedule_one(self.state, pod, self.options, self.cache)]
        else:
            members = [p for p in self.pending if key_of(p) not in self.done and in_group(p, group)]
            found = group_placements(self.state, group, members, self.options, self.cache, None)
        for placement in found:
            if placement.node is not None:
                self.assumed[key_of(placement.pod)] = placement.pod  # before PreBind's wait unsets its node name
                self.placed.append(placement)
            self.done[key_of(placement.pod)] = with_binding_state(placement, self.recovery, self.state.cluster)
        return self.done[key_of(pod)]

    def explain(self, pod: Pod, node: str | None) -> PodExplanation:
        before = self.placed_before(pod)
        if node is None:
            found = _one(self.state, pod, self.place(pod), self.options, self.deadline)
            before = self.placed_before(pod)  # its PodGroup's pods placed with it come before it too
        else:  # one node judged in the state the queue left; the queue itself goes on over every node
            left = ClusterState(_on(self.left_by_queue(), node))
            placement = with_binding_state(schedule_one(left, pod, self.options, {}), self.recovery, left.cluster)
            found = _one(left, pod, placement, self.options, self.deadline)
            self.place(pod)
        found.placed_before = before
        if not found.feasible and before:
            found.queue = self.story(pod, node)
        return found

    def placed_before(self, pod: Pod) -> int:
        """How many pods the queue placed before this one (all placed so far, while it is not placed)."""
        key = key_of(pod)
        return next((i for i, p in enumerate(self.placed) if key_of(p.pod) == key), len(self.placed))

    def left_by_queue(self) -> Cluster:
        """The input as the pods placed so far leave it: claims deallocated by the recovery, those pods on their
        nodes (bound, or assumed there while PreBind waits), claims allocated and reserved."""
        base = self.state.cluster
        pods = [self.assumed.get(key_of(p), p) for p in base.pods]
        return replace(base, pods=pods, claims=list(self.state.book.values()))

    def story(self, pod: Pod, node: str | None) -> QueueStory:
        """Whether the input as it is holds the pod, and on which nodes the pods placed before it took the room:
        each node with such pods checked alone, as the input has it (the pod fits there: they are why)."""
        alone = _alone(self.cluster, pod, node, self.options, self.deadline)
        story = QueueStory(alone.node)
        if alone.node is None:
            return story
        by_node: dict[str, list[str]] = {}
        for placement in self.placed:
            if placement.node is not None and (node is None or placement.node == node):
                by_node.setdefault(placement.node, []).append(placement.label)
        names = [n.name for n in self.cluster.nodes if n.name in by_node]
        for name in names[:NODES_NAMED]:
            if _alone(self.cluster, pod, name, self.options, self.deadline).feasible:
                story.took_room.append(TookRoom(name, by_node[name]))
        story.nodes_unchecked = max(len(names) - NODES_NAMED, 0)
        return story


def _on(cluster: Cluster, node: str | None) -> Cluster:
    """The cluster with only ``node`` (None: all of them)."""
    return cluster if node is None else replace(cluster, nodes=[n for n in cluster.nodes if n.name == node])


def with_batch(explained: list[PodExplanation], placements: Sequence[Placement], proven: bool, seconds: float) -> None:
    """Note, for each pod left pending only by the pods before it, where the joint placement (``schedule_batch``'s
    ``placements``, every pending pod at once, run for ``seconds``; ``proven``: its answer is optimal) puts it."""
    nodes = {p.label: p.node for p in placements}
    placed = sum(1 for p in placements if p.node is not None)
    for found in explained:
        if found.queue is not None and found.queue.alone is not None and found.pod in nodes:
            found.batch = BatchVerdict(nodes[found.pod], placed, len(placements), proven, seconds)


def _alone(cluster: Cluster, pod: Pod, node: str | None, options: AllocateOptions, deadline: float) -> PodExplanation:
    """The pod judged against the input as it is (over ``node`` alone, when given), as the scheduler would find
    it for this pod only: its own claims whose binding failed or timed out deallocated first."""
    recovery = recover(cluster, [pod])
    state = ClusterState(_on(recovery.cluster, node))
    placement = with_binding_state(schedule_one(state, pod, options, {}), recovery, state.cluster)
    return _one(state, pod, placement, options, deadline)


def _one(
    state: ClusterState, pod: Pod, placement: Placement, options: AllocateOptions, deadline: float
) -> PodExplanation:
    """The pod's explanation from its ``placement`` on ``state`` (the placement's binding state already applied:
    see :func:`with_binding_state`)."""
    binding = _binding_notes(placement)
    if placement.node is not None:
        labels = {claim_key(c): label_of(c) for c in placement.claims}  # a claim without namespace is in default
        choice = [
            Choice(labels.get(key, key), r.request, f"{r.driver}/{r.pool}/{r.device}")
            for key, result in placement.allocations.items()
            for r in result.devices.results
        ]
        summary = f"schedulable: node {placement.node} would be chosen"
        return PodExplanation(label_of(pod), placement.node, summary, choice=choice, binding=binding)
    failing = [node for node, reasons in placement.node_reasons.items() if REASON_DRA in reasons]
    classes: dict[Any, list[str]] = {}
    for node in failing:
        classes.setdefault(state.signature(node), []).append(node)
    found = PodExplanation(
        label_of(pod), None, placement.reason, node_reasons=dict(placement.node_reasons), binding=binding
    )
    pc = resolve_pod_claims(pod, state.cluster, state.book)
    for use in pc.uses:
        verdict = binding_verdict(use.claim, state.cluster.clock, state.cluster.features)
        if verdict.state.gives_up:  # reserved for others too: PostFilter cannot deallocate it
            found.binding.append(f"{verdict.describe()}; reserved for others, so the scheduler cannot deallocate it")
    for nodes in list(classes.values())[:MAX_CLASSES]:
        problem = state.problem(nodes[0], claim_shape(state, pc, nodes[0]).claims)
        remaining = max(deadline - time.monotonic(), 0.001)
        found.classes.append(
            ExplainedNodes(
                nodes[:NODES_NAMED],
                explain(problem, evaluator=options.evaluator, time_limit=remaining),
                max(len(nodes) - NODES_NAMED, 0),
            )
        )
    found.unexplained_nodes = sum(len(nodes) for nodes in list(classes.values())[MAX_CLASSES:])
    return found


def _binding_notes(placement: Placement) -> list[str]:
    """What binding conditions did to the pod: claims PostFilter deallocated for it, and the claims PreBind would
    wait for on its node."""
    notes = [deallocation_note(placement.label, v) for v in placement.deallocated]
    return notes + [
        f"pod {placement.label} would wait in PreBind on node {placement.node}: {v.describe()}"
        for v in placement.waiting
    ]
