"""``scale_up``: the fewest, cheapest nodes to add from templates so that every pending pod fits (gangs whole).

cluster-autoscaler's estimator packs pods onto template nodes first-fit, one node at a time, and on
partitionable devices it over-provisions. Here the decision is the counting model's, with every copy
a template may add (up to its maximum count) present as a node whose pods count only once the copy is
*opened*: most pods placed first (all of them when they can fit), then the least total cost, then the
fewest nodes; copies of one template open in order (no two answers differ only by which copy is
used). The answer is decoded and verified as ``schedule --batch``'s is. Beside it, ``ffd`` says what
the first-fit-decreasing estimator would add on the same input; it runs first, and its answer is the
search's starting point (a hint), so that the model starts where cluster-autoscaler ends.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from math import ceil, lcm
from typing import Any

from ortools.sat.python import cp_model

from drasat.models.collector import collector_paused
from drasat.solver.allocation.options import check_options
from drasat.solver.batch.budget import Budget
from drasat.solver.batch.counting import CountingModel, build_counting_model
from drasat.solver.batch.nodes import NodeCheck
from drasat.solver.batch.pod_classes import Queue, sort_queue
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster import Cluster, label_of
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import pending_pods

from .counted import Solved, Standing, devices_text, pod_devices, solve_counted
from .ffd import Estimate, estimate
from .templates import NodeTemplate

FFD_SHARE = 0.5  # of the time, for the first-fit-decreasing estimate (run first: its answer seeds the model)


@dataclass
class Added:
    """One new node of the answer: its template and the pods it takes."""

    node: str
    template: str
    pods: list[str] = field(default_factory=list)


@dataclass
class ScaleUpResult:
    """The nodes to add, where each pending pod goes, what stays pending, the cost and its bound, and
    first-fit-decreasing's estimate beside it."""

    added: list[Added]
    cost: float
    cost_bound: float | None  # no answer costs less than this (CP-SAT's bound; None: not known)
    placed: dict[str, tuple[str, list[str]]]  # pod -> (node, devices): every pod the answer places
    pending: list[str]  # pods the answer leaves pending (with ``proven``: they fit nowhere, even with every copy)
    ffd: Estimate | None
    standing: Standing
    checks: list[NodeCheck | Placement] = field(default_factory=list)  # each answer's problem and allocations

    @property
    def proven(self) -> bool:
        return self.standing.proven

    def per_template(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for a in self.added:
            out[a.template] = out.get(a.template, 0) + 1
        return out

    def to_data(self) -> dict[str, Any]:
        return {
            "nodesAdded": len(self.added),
            "cost": self.cost,
            "proven": self.proven,
            "costBound": self.cost_bound,
            "templates": self.per_template(),
            "nodes": [{"node": a.node, "template": a.template, "pods": a.pods} for a in self.added],
            "pods": [{"pod": p, "node": n, "devices": d} for p, (n, d) in sorted(self.placed.items())],
            "pending": self.pending,
            "firstFitDecreasing": self.ffd.to_data() if self.ffd else None,
            "seconds": round(self.standing.seconds, 3),
            "notes": self.standing.notes,
        }


def scale_up(
    cluster: Cluster,
    templates: Sequence[NodeTemplate],
    *,
    max_nodes: int = 100,
    options: AllocateOptions | None = None,
    compare: bool = True,
) -> ScaleUpResult:
    """The nodes to add (see the module docstring); ``compare``: also first-fit-decreasing's estimate."""
    options = options or AllocateOptions()
    check_options(options.solver, options.objective, options.time_limit, batch=True)
    if options.evaluator is None:
        options = replace(options, evaluator=SelectorEvaluator())
    with collector_paused():
        started = time.monotonic()
        ffd = None
        if compare:
            ffd = estimate(cluster, templates, max_nodes, replace(options, time_limit=FFD_SHARE * options.time_limit))
        budget = Budget.of(max(0.1, options.time_limit - (time.monotonic() - started)))
        result = _scale_up(cluster, templates, max_nodes, options, budget, ffd)
        result.ffd = ffd
        if ffd is not None and not ffd.cut and not ffd.pending and _better(ffd, result):
            result = _from_estimate(ffd, result)
        if not result.pending and not result.added:
            result.standing.proven = True  # every pod placed without a new node: nothing is cheaper
        result.standing.seconds = time.monotonic() - started
        return result


def _scale_up(
    cluster: Cluster,
    templates: Sequence[NodeTemplate],
    max_nodes: int,
    options: AllocateOptions,
    budget: Budget,
    ffd: Estimate | None,
) -> ScaleUpResult:
    pending = pending_pods(cluster)
    grown, copy_of = with_copies(cluster, templates)
    state = ClusterState(grown)
    queue = sort_queue(grown, pending, state.book)
    assert options.evaluator is not None
    counting = build_counting_model(state, queue, options.evaluator, budget)
    costs = _objective(counting, templates, copy_of, max_nodes, sum(len(c.members) for c in queue.classes))
    if ffd is not None:
        _hint(counting, queue, ffd, costs)
    solved = solve_counted(state, lambda counts: queue, counting, options, budget)
    if queue.loose:
        solved.standing.proven = False
        solved.standing.notes.append(
            f"{len(queue.loose)} pods not counted (claims shared or allocated, pinned, gated): left pending here"
        )
    return _result(state, solved, copy_of, costs, pending)


def with_copies(cluster: Cluster, templates: Sequence[NodeTemplate]) -> tuple[Cluster, dict[str, NodeTemplate]]:
    """The cluster with every copy each template may add, and which template each copy is of."""
    nodes, slices, copy_of = list(cluster.nodes), list(cluster.slices), {}
    for t in templates:
        new_nodes, new_slices = t.copies(t.max_count)
        nodes += new_nodes
        slices += new_slices
        copy_of.update({n.name: t for n in new_nodes})
    return replace(cluster, nodes=nodes, slices=slices), copy_of


@dataclass
class _Costs:
    scale: int  # costs times this are whole numbers
    opened: dict[str, cp_model.IntVar]
    weight: int  # of the total cost in the objective (nodes weigh 1)
    pods_weight: int


def _objective(
    counting: CountingModel,
    templates: Sequence[NodeTemplate],
    copy_of: dict[str, NodeTemplate],
    max_nodes: int,
    pods: int,
) -> _Costs:
    """Copies count pods only once opened; at most ``max_nodes`` opened; most pods, then least cost, then nodes."""
    model = counting.model
    scale = lcm(*(t.cost.denominator for t in templates)) if templates else 1
    opened: dict[str, cp_model.IntVar] = {}
    for t in templates:
        previous = None
        for i in range(t.max_count):
            name = t.copy_name(i)
            var = opened[name] = model.new_bool_var(f"opened[{name}]")
            counted = counting.nodes.get(name)
            if counted is not None and counted.pods:
                model.add(sum(counted.pods.values()) <= counted.most * var)
            if previous is not None:
                model.add(previous >= var)
            previous = var
    model.add(sum(opened.values()) <= max_nodes)
    cost = sum(int(copy_of[n].cost * scale) * v for n, v in opened.items())
    most_cost = sum(int(copy_of[n].cost * scale) for n in opened)
    weight = len(opened) + 1
    pods_weight = weight * (most_cost + 1)
    model.maximize(pods_weight * counting.placed_expr() - weight * cost - sum(opened.values()))
    del pods
    return _Costs(scale, opened, weight, pods_weight)


def _better(ffd: Estimate, result: ScaleUpResult) -> bool:
    """Whether first-fit-decreasing's answer beats the model's (more pods placed, then less cost, then nodes):
    the model's search was cut short before it found as good an answer. Asked only of an estimate placing
    every pending pod (it ignores gangs: a partial one may split one)."""
    return (len(ffd.placed), -ffd.cost, -ffd.added) > (len(result.placed), -result.cost, -len(result.added))


def _from_estimate(ffd: Estimate, model: ScaleUpResult) -> ScaleUpResult:
    """First-fit-decreasing's answer as the result, each placement verified; the model's bound kept."""
    added: dict[str, Added] = {}
    template_of = {node: t for t, nodes in ffd.nodes.items() for node in nodes}
    placed = {}
    for pod, p in ffd.placed.items():
        node = p.node or ""
        placed[pod] = (node, devices_text(p.allocations))
        if node in template_of:
            added.setdefault(node, Added(node, template_of[node])).pods.append(pod)
    standing = model.standing
    standing.proven = False
    standing.notes.append(
        "the model found no answer as good as first-fit-decreasing's within --timeout: that answer is kept"
    )
    checks: list[NodeCheck | Placement] = [p for p in ffd.placed.values() if p.problem is not None]
    return ScaleUpResult(
        sorted(added.values(), key=_node_order), ffd.cost, model.cost_bound, placed, ffd.pending, ffd, standing, checks
    )


def _node_order(a: Added) -> tuple[str, int]:
    return (a.template, int(a.node.rsplit("-", 1)[1]))


def _hint(counting: CountingModel, queue: Queue, ffd: Estimate, costs: _Costs) -> None:
    """Start the search from first-fit-decreasing's answer (its pods per node and class, its nodes opened): the
    model then begins where cluster-autoscaler ends, and only improves on it."""
    class_of = {pc.label: cls.index for cls in queue.classes for pc in cls.members}
    per_node: dict[str, dict[int, int]] = {}
    for pod, placement in ffd.placed.items():
        node = placement.node or ""
        index = class_of.get(pod)
        if index is not None:
            per_node.setdefault(node, {}).setdefault(index, 0)
            per_node[node][index] += 1
    model = counting.model
    model.clear_hints()
    for node, counted in counting.nodes.items():
        for p, var in counted.pods.items():
            model.add_hint(var, per_node.get(node, {}).get(p, 0))
    opened = {n for nodes in ffd.nodes.values() for n in nodes}
    for name, var in costs.opened.items():
        model.add_hint(var, name in opened)


def _result(
    state: ClusterState, solved: Solved, copy_of: dict[str, NodeTemplate], costs: _Costs, pending: list
) -> ScaleUpResult:
    decoded, standing = solved.decoded, solved.standing
    placed: dict[str, tuple[str, list[str]]] = {}
    added: dict[str, Added] = {}
    for node in sorted(decoded.checks):
        for pc in decoded.assignment[node]:
            placed[pc.label] = (node, devices_text(pod_devices(state, pc, node, decoded.checks[node])))
            if node in copy_of:
                added.setdefault(node, Added(node, copy_of[node].name)).pods.append(pc.label)
    cost = float(sum(copy_of[n].cost for n in added))
    bound = None
    if standing.bound is not None and solved.counting_complete and len(placed) == len(pending):
        # every pod placed: the objective's bound, less the most the pods term can give, bounds the cost
        most = costs.pods_weight * len(pending) - standing.bound - len(costs.opened)
        bound = max(0.0, ceil(most / costs.weight - 1e-9) / costs.scale)
    if standing.proven and len(placed) < len(pending) and solved.counts and solved.counts.placed != len(placed):
        standing.proven = False
    ordered = sorted(added.values(), key=_node_order)
    left = [label_of(p) for p in pending if label_of(p) not in placed]
    return ScaleUpResult(ordered, cost, bound, placed, left, None, standing, list(decoded.checks.values()))
