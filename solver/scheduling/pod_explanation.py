"""Why a pod cannot be scheduled: the scheduler's summary over every node, then the devices per node class.

kube-scheduler says "0/12 nodes are available: 3 Insufficient cpu, 9 cannot allocate all claims"
and stops there. This module asks the same question drasat's ``schedule`` asks (the very same
filters, in the same order), keeps its summary line, and then explains the devices: for each
class of nodes that failed on them — nodes whose devices and devices in use look alike
(:mod:`.node_classes`) answer alike — the full explanation (funnel, conflict, fixes) is given
once, on the first node of the class, with the class's other nodes named.

Each pod is judged against the input as it is (a fresh scheduling state per pod): an
explanation must not depend on which other pods were asked about in the same run.
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
from .one_by_one import Placement, schedule_one
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
            found[key_of(pod)] = _one(ClusterState(_on(cluster, node)), pod, options, {}, deadline)
    return [found[key_of(p)] for p in pods]


class _Queue:
    """The pending pods placed one at a time as ``schedule`` places them, each pod asked about explained at its
    turn in the state the pods before it left."""

    def __init__(self, cluster: Cluster, options: AllocateOptions, deadline: float) -> None:
        self.cluster, self.options, self.deadline = cluster, options, deadline
        self.pending = pending_pods(cluster)
        self.state = ClusterState(cluster)
        self.cache: dict[tuple, Any] = {}  # the scheduler's, kept across pods as ``schedule`` keeps it
        self.placed: list[Placement] = []  # pods placed so far, in order

    def place(self, pod: Pod) -> Placement:
        placement = schedule_one(self.state, pod, self.options, self.cache)
        if placement.node is not None:
            self.placed.append(placement)
        return placement

    def explain(self, pod: Pod, node: str | None) -> PodExplanation:
        before = len(self.placed)
        if node is None:
            found = _one(self.state, pod, self.options, self.cache, self.deadline, self.place)
        else:  # one node judged in the state the queue left; the queue itself goes on over every node
            left = ClusterState(_on(self.left_by_queue(), node))
            found = _one(left, pod, self.options, {}, self.deadline)
            self.place(pod)
        found.placed_before = before
        if not found.feasible and before:
            found.queue = self.story(pod, node)
        return found

    def left_by_queue(self) -> Cluster:
        """The input as the pods placed so far leave it: those pods bound, claims allocated and reserved."""
        bound = {key_of(p.pod): p.pod for p in self.placed}
        pods = [bound.get(key_of(p), p) for p in self.cluster.pods]
        return replace(self.cluster, pods=pods, claims=list(self.state.book.values()))

    def story(self, pod: Pod, node: str | None) -> QueueStory:
        """Whether the input as it is holds the pod, and on which nodes the pods placed before it took the room:
        each node with such pods checked alone, as the input has it (the pod fits there: they are why)."""
        alone = _one(ClusterState(_on(self.cluster, node)), pod, self.options, {}, self.deadline)
        story = QueueStory(alone.node)
        if alone.node is None:
            return story
        by_node: dict[str, list[str]] = {}
        for placement in self.placed:
            if placement.node is not None and (node is None or placement.node == node):
                by_node.setdefault(placement.node, []).append(placement.label)
        names = [n.name for n in self.cluster.nodes if n.name in by_node]
        for name in names[:NODES_NAMED]:
            if _one(ClusterState(_on(self.cluster, name)), pod, self.options, {}, self.deadline).feasible:
                story.took_room.append(TookRoom(name, by_node[name]))
        story.nodes_unchecked = max(len(names) - NODES_NAMED, 0)
        return story


def _on(cluster: Cluster, node: str | None) -> Cluster:
    """The cluster with only ``node`` (None: all of them)."""
    return cluster if node is None else replace(cluster, nodes=[n for n in cluster.nodes if n.name == node])


def with_batch(explained: list[PodExplanation], placements: Sequence[Placement], proven: bool, seconds: float) -> None:
    """Note, for each pod left pending only by the pods before it, where the joint placement (``schedule_batch``'s ``placements``, every
    pending pod at once, run for ``seconds``; ``proven``: its answer is optimal) puts it."""
    nodes = {p.label: p.node for p in placements}
    placed = sum(1 for p in placements if p.node is not None)
    for found in explained:
        if found.queue is not None and found.queue.alone is not None and found.pod in nodes:
            found.batch = BatchVerdict(nodes[found.pod], placed, len(placements), proven, seconds)


def _one(
    state: ClusterState,
    pod: Pod,
    options: AllocateOptions,
    cache: dict[tuple, Any],
    deadline: float,
    place: Callable[[Pod], Placement] | None = None,
) -> PodExplanation:
    """The pod judged on ``state`` (``place``: how, committing it where it goes; default: ``schedule_one``)."""
    placement = place(pod) if place is not None else schedule_one(state, pod, options, cache)
    if placement.node is not None:
        labels = {claim_key(c): label_of(c) for c in placement.claims}  # a claim without namespace is in default
        choice = [
            Choice(labels.get(key, key), r.request, f"{r.driver}/{r.pool}/{r.device}")
            for key, result in placement.allocations.items()
            for r in result.devices.results
        ]
        return PodExplanation(
            label_of(pod), placement.node, f"schedulable: node {placement.node} would be chosen", choice=choice
        )
    failing = [node for node, reasons in placement.node_reasons.items() if REASON_DRA in reasons]
    classes: dict[Any, list[str]] = {}
    for node in failing:
        classes.setdefault(state.signature(node), []).append(node)
    found = PodExplanation(label_of(pod), None, placement.reason, node_reasons=dict(placement.node_reasons))
    pc = resolve_pod_claims(pod, state.cluster, state.book)
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
