"""The cluster-wide counting model: every pending pod placed at once, as integer counts in one CP-SAT model.

Variables are counts, never pod × device booleans: ``pods[node/class]`` pods of a pod class on a
node (and, inside each node's part, devices of each equivalence class per claim alternative,
``lifted``); ``single[class]`` pods of a class placed outside any gang; ``gang[g]`` whether a gang
PodGroup is placed and ``members[g/class]`` how many of its pods. Per node, cpu, memory, pods and
the other resources NodeResourcesFit checks bound the counts; node filters (selectors, affinity,
taints) decide which counts exist. The objective is lexicographic by priority, highest first, as the
scheduler's queue is: the pods of each priority placed, weighted so that one more pod of a priority
outweighs any number of pods below it (stages instead, where such weights would not fit 62 bits).

Nodes that reach device pools shared with other nodes are outside the model (their devices are not
theirs alone to count): the one-by-one pass after it places pods there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from math import floor, lcm

from ortools.sat.python import cp_model

from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.plugins.dynamic_resources import claim_shape
from drasat.solver.scheduling.plugins.node_filters import filter_reasons
from drasat.solver.scheduling.plugins.node_resources import Resources, checked_requests, pod_requests

from .budget import Budget
from .lifted import CountedNode, Demand, counted_node
from .pod_classes import PodClass, Queue

WEIGHT_BITS = 62  # a weighted objective must fit CP-SAT's 64-bit integers, with room for the bound


@dataclass
class CountingModel:
    """The model, its variables by meaning, and the priority levels its objective is read in."""

    model: cp_model.CpModel
    nodes: dict[str, CountedNode]  # the nodes the model counts, in name order
    singles: dict[int, cp_model.IntVar]  # pod class -> pods placed outside gangs
    gangs: dict[int, cp_model.IntVar]  # gang index -> placed
    members: dict[tuple[int, int], cp_model.IntVar]  # (gang, pod class) -> its pods placed
    levels: list[tuple[int, cp_model.LinearExpr, int]]  # priority, pods placed at it, pods pending at it
    skipped: list[str] = field(default_factory=list)  # nodes left out, and why (for the summary)
    unbuilt: int = 0  # of them, the nodes the time (or Ctrl-C) left no room to count: nothing is proven then
    # Below the levels, lexicographically: with pack, nodes kept whole; then gangs whole (earlier ones first),
    # then pods of classes earlier in the queue (ties go where the scheduler's queue would put them); each with
    # the most it can be.
    tie_breaks: list[tuple[cp_model.LinearExpr, int]] = field(default_factory=list)
    gangs_whole: cp_model.LinearExpr | None = None  # gangs running whole, the first tie-break searched alone

    @property
    def exact(self) -> bool:
        """Whether every node counts exactly (else a node's answer may not allocate, and is checked)."""
        return all(n.exact for n in self.nodes.values())

    @property
    def complete(self) -> bool:
        """Whether the model is the whole question: every node counted, exactly, every pod class decided on
        every node (then its proven optimum is the cluster's: no placement one by one can beat it)."""
        return not self.skipped and all(n.exact and not n.undecided for n in self.nodes.values())

    def placed_expr(self) -> cp_model.LinearExpr:
        return cp_model.LinearExpr.sum([expr for _, expr, _ in self.levels])


def build_counting_model(
    state: ClusterState,
    queue: Queue,
    evaluator: SelectorEvaluator,
    budget: Budget,
    *,
    pack: bool = False,
    nodes: Sequence[str] | None = None,
) -> CountingModel:
    """The counting model of ``queue`` over the cluster's nodes (or ``nodes`` only) whose devices are their own.
    With ``pack``, ties between equally many pods go first to the answer using the fewest untouched nodes (no
    pod, no device in use yet: they stay whole for what comes next), then the fewest nodes."""
    model = cp_model.CpModel()
    counting = CountingModel(model, {}, {}, {}, {}, [])
    level = state.cluster.features["PodLevelResources"]
    requests = {c.index: pod_requests(c.representative.pod, pod_level=level) for c in queue.classes}
    for node in sorted(n.name for n in state.cluster.nodes) if nodes is None else sorted(nodes):
        if not budget.searching():
            counting.skipped.append(f"{node}: the time ran out while the model was built")
            counting.unbuilt += 1
            continue
        if not all(s.spec.node_name == node for s in state.nodes[node].slices):
            counting.skipped.append(f"{node}: reaches device pools shared with other nodes")
            continue
        demands = _demands(state, node, queue.classes, requests)
        counted = counted_node(model, state, node, demands, evaluator)
        _node_resources(model, state, node, counted, {d.index: d.requests for d in demands})
        counting.nodes[node] = counted
    if pack:
        _pack(counting, state)
    _totals(counting, queue)
    return counting


def _pack(counting: CountingModel, state: ClusterState) -> None:
    """Tie-breaks that keep nodes whole: untouched nodes left unused, then any node left unused."""
    model, used, untouched = counting.model, [], []
    for node, counted in counting.nodes.items():
        if not counted.pods:
            continue
        var = model.new_bool_var(f"used[{node}]")
        model.add(sum(counted.pods.values()) <= counted.most * var)
        used.append(var)
        if state.nodes[node].in_use == "[]" and state.loads[node].pods == 0:
            untouched.append(var)
    counting.tie_breaks.append((len(untouched) - cp_model.LinearExpr.sum(untouched), len(untouched)))
    counting.tie_breaks.append((len(used) - cp_model.LinearExpr.sum(used), len(used)))


def _demands(
    state: ClusterState, node: str, classes: Sequence[PodClass], requests: dict[int, Resources]
) -> list[Demand]:
    """The pod classes the node's filters and free resources admit, each with the most of its pods it could take."""
    load = state.loads[node]
    free_pods = int(load.allocatable.get("pods", Fraction(10**6))) - load.pods
    out = []
    for cls in classes:
        if free_pods <= 0 or filter_reasons(cls.representative.pod, load.node):
            continue
        checked = checked_requests(requests[cls.index], set(cls.representative.extended), load.allocatable)
        most = min(len(cls.members), free_pods)
        for name, amount in checked.items():
            if amount > 0:
                free = load.allocatable.get(name, Fraction(0)) - load.used.get(name, Fraction(0))
                most = min(most, max(floor(free / amount), 0))
        if most > 0:
            out.append(Demand(cls.index, claim_shape(state, cls.representative, node).claims, most, checked))
    return out


def _node_resources(
    model: cp_model.CpModel, state: ClusterState, node: str, counted: CountedNode, requests: dict[int, Resources]
) -> None:
    """cpu, memory, pods and the other resources NodeResourcesFit checks, summed over the counted pods."""
    load = state.loads[node]
    if "pods" in load.allocatable and counted.pods:
        model.add(sum(counted.pods.values()) <= int(load.allocatable["pods"]) - load.pods)
    names = sorted({name for p in counted.pods for name, amount in requests[p].items() if amount > 0})
    for name in names:
        terms = [(requests[p].get(name, Fraction(0)), var) for p, var in counted.pods.items()]
        terms = [(amount, var) for amount, var in terms if amount > 0]
        free = load.allocatable.get(name, Fraction(0)) - load.used.get(name, Fraction(0))
        scale = lcm(*(a.denominator for a, _ in terms), free.denominator)
        model.add(sum(int(a * scale) * v for a, v in terms) <= max(floor(free * scale), 0))


def _totals(counting: CountingModel, queue: Queue) -> None:
    """Each pod class's pods on nodes are its singles plus its gangs' members; gangs all (or minCount) or none."""
    model = counting.model
    in_gangs: dict[int, int] = {}
    for g in queue.gangs:
        placed = counting.gangs[g.index] = model.new_bool_var(f"gang[{g.label}]")
        demand = g.demand(queue.class_of)
        for p, count in demand.items():
            var = counting.members[g.index, p] = model.new_int_var(0, count, f"members[{g.label}/class{p}]")
            model.add(var <= count * placed)
            in_gangs[p] = in_gangs.get(p, 0) + count
        model.add(sum(counting.members[g.index, p] for p in demand) >= g.need * placed)
    by_priority: dict[int, list[tuple[cp_model.LinearExpr, int]]] = {}
    for cls in queue.classes:
        p = cls.index
        single = counting.singles[p] = model.new_int_var(0, len(cls.members) - in_gangs.get(p, 0), f"single[{p}]")
        members = [var for (_, q), var in counting.members.items() if q == p]
        on_nodes = [n.pods[p] for n in counting.nodes.values() if p in n.pods]
        model.add(sum(on_nodes) == single + sum(members))
        by_priority.setdefault(cls.priority, []).append((cp_model.LinearExpr.sum([single, *members]), len(cls.members)))
    counting.levels = [
        (priority, cp_model.LinearExpr.sum([e for e, _ in parts]), sum(n for _, n in parts))
        for priority, parts in sorted(by_priority.items(), reverse=True)
    ]
    _tie_breaks(counting, queue)


def _tie_breaks(counting: CountingModel, queue: Queue) -> None:
    """More gangs whole (earlier ones weigh more: a gang runs only whole, so among answers with as many pods, the
    one running more of them), then earlier classes (by their first pod's place in the queue)."""
    classes, gangs = queue.classes, queue.gangs
    if gangs:
        gang_vars = [counting.gangs[g.index] for g in gangs]
        counting.gangs_whole = cp_model.LinearExpr.sum(gang_vars)
        by_gang = cp_model.LinearExpr.weighted_sum(gang_vars, [len(gangs) - r for r in range(len(gangs))])
        counting.tie_breaks.append((by_gang, len(gangs) * (len(gangs) + 1) // 2))
    placed = {
        cls.index: counting.singles[cls.index] + sum(var for (_, p), var in counting.members.items() if p == cls.index)
        for cls in classes
    }
    by_class = cp_model.LinearExpr.weighted_sum(
        [placed[c.index] for c in classes], [len(classes) - r for r in range(len(classes))]
    )
    most = sum((len(classes) - rank) * len(cls.members) for rank, cls in enumerate(classes))
    counting.tie_breaks.append((by_class, most))


def weights(counting: CountingModel) -> list[int] | None:
    """Per priority level, a weight such that one more pod of it outweighs every pod below; None when the
    weights would not fit 62 bits."""
    return _lexicographic([pending for _, _, pending in counting.levels])


def tie_weights(counting: CountingModel) -> list[int]:
    """Weights for the tie-breaks, each outweighing those after it (the last ones dropped where they would not fit)."""
    tops = [most for _, most in counting.tie_breaks]
    while tops and _lexicographic(tops) is None:
        tops.pop()
    return _lexicographic(tops) or []


def _lexicographic(tops: list[int]) -> list[int] | None:
    """Weights for terms of the given most values, each outweighing all after it; None past 62 bits."""
    out, weight = [], 1
    for top in reversed(tops):
        out.append(weight)
        weight *= top + 1
    return list(reversed(out)) if weight < 2**WEIGHT_BITS else None
