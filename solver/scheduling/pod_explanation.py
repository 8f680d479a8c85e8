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
from dataclasses import dataclass, field
from typing import Any

from drasat.models.core import Pod
from drasat.solver.allocation.problem import claim_key
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.explanation.explain import Choice, Explanation, explain

from .cluster import Cluster, label_of
from .cluster_state import ClusterState
from .one_by_one import schedule_one, with_binding_state
from .plugins.binding_conditions import binding_verdict, deallocation_note, recover
from .plugins.dynamic_resources import AllocateOptions, claim_shape
from .plugins.node_filters import REASON_DRA
from .pods import resolve_pod_claims

MAX_CLASSES = 5  # node classes explained per pod; the others are counted
NODES_NAMED = 5  # nodes named per class


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
            "binding": self.binding,
        }


def explain_pods(
    cluster: Cluster,
    pods: Sequence[Pod],
    *,
    evaluator: SelectorEvaluator | None = None,
    time_limit: float = 60.0,
    progress: Callable[[int, int], None] | None = None,
) -> list[PodExplanation]:
    """Each pod's verdict over all nodes and, where it fails on devices, the explanation per node class.
    ``progress(done, total)`` is called after each pod (the command line's progress bar)."""
    deadline = time.monotonic() + time_limit
    options = AllocateOptions(time_limit=time_limit, evaluator=evaluator or SelectorEvaluator())
    found = []
    for pod in pods:
        found.append(_one(cluster, pod, options, deadline))
        if progress is not None:
            progress(len(found), len(pods))
    return found


def _one(cluster: Cluster, pod: Pod, options: AllocateOptions, deadline: float) -> PodExplanation:
    recovery = recover(cluster, [pod])
    state = ClusterState(recovery.cluster)
    placement = with_binding_state(schedule_one(state, pod, options, {}), recovery, recovery.cluster)
    binding = [deallocation_note(label_of(pod), v) for v in placement.deallocated]
    binding += [
        f"pod {label_of(pod)} would wait in PreBind on node {placement.node}: {v.describe()}" for v in placement.waiting
    ]
    if placement.node is not None:
        labels = {claim_key(c): label_of(c) for c in placement.claims}  # a claim without namespace is in default
        choice = [
            Choice(labels.get(key, key), r.request, f"{r.driver}/{r.pool}/{r.device}")
            for key, result in placement.allocations.items()
            for r in result.devices.results
        ]
        return PodExplanation(
            label_of(pod),
            placement.node,
            f"schedulable: node {placement.node} would be chosen",
            choice=choice,
            binding=binding,
        )
    failing = [node for node, reasons in placement.node_reasons.items() if REASON_DRA in reasons]
    classes: dict[Any, list[str]] = {}
    for node in failing:
        classes.setdefault(state.signature(node), []).append(node)
    found = PodExplanation(
        label_of(pod), None, placement.reason, node_reasons=dict(placement.node_reasons), binding=binding
    )
    for use in resolve_pod_claims(pod, recovery.cluster, state.book).uses:
        verdict = binding_verdict(use.claim, cluster.clock, cluster.features)
        if verdict.state.gives_up:  # reserved for others too: PostFilter cannot deallocate it
            found.binding.append(f"{verdict.describe()}; reserved for others, so the scheduler cannot deallocate it")
    pc = resolve_pod_claims(pod, cluster, state.book)
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
