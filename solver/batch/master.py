"""The joint placement's master problem: how many nodes of each class take each configuration.

Variables are counts, not pod × node booleans: ``nodes[c/k]`` nodes of class ``c`` take
configuration ``k``; ``put[c/p]`` pods of class ``p`` go to nodes of class ``c`` (at most
what those configurations hold); ``single[p]`` pods of class ``p`` outside any gang are
placed; ``gang[g]`` says the whole PodGroup ``g`` is. The model is tiny — node classes ×
configurations + node classes × pod classes + gangs — whatever the numbers of nodes and pods.

Stages, each fixing the optimum of the previous one (lexicographic, as the scheduler's
queue takes higher priorities first): for each priority, highest first, the pods of that
priority placed; then gangs earlier in the queue before later ones; then pods of classes
earlier in the queue (ties go where one by one would put them); then, with ``pack``,
the fewest nodes used whose devices are all whole yet, and the fewest nodes used (whole
nodes left free); last, pods on node classes whose first node
comes first by name (within a class, nodes are filled in name order when decoding).
"""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from drasat.models.errors import SolveTimeout

from .budget import LEAST_SECONDS, Budget
from .configs import NodeClass
from .pod_classes import Queue


@dataclass
class MasterAnswer:
    """Configuration counts per node class, pods per (node class, pod class), singles and gangs placed."""

    nodes: dict[tuple[int, int], int]
    put: dict[tuple[int, int], int]
    singles: list[int]
    gangs: list[bool]
    stages: int
    stopped_early: int = 0  # stages whose time ran out before optimality was proven (kept as found)


def solve_master(
    queue: Queue, node_classes: list[NodeClass], *, pack: bool, budget: Budget, workers: int = 1
) -> MasterAnswer:
    """How many pods of each class go to each node class: CP-SAT over counts, in lexicographic stages
    (pods placed per priority, highest first; then gangs in queue order; then the objective; then queue order)."""
    model = cp_model.CpModel()
    n_classes = len(queue.classes)
    in_gangs = [0] * n_classes
    for g in queue.gangs:
        for p, count in g.demand(queue.class_of).items():
            in_gangs[p] += count
    single = [model.new_int_var(0, len(c.members) - in_gangs[c.index], f"single[{c.index}]") for c in queue.classes]
    gang = [model.new_bool_var(f"gang[{g.label}]") for g in queue.gangs]
    nodes: dict[tuple[int, int], cp_model.IntVar] = {}
    put: dict[tuple[int, int], cp_model.IntVar] = {}
    for nc in node_classes:
        for k in range(len(nc.configurations)):
            nodes[nc.index, k] = model.new_int_var(0, len(nc.nodes), f"nodes[{nc.index}/{k}]")
        model.add(sum(nodes[nc.index, k] for k in range(len(nc.configurations))) <= len(nc.nodes))
        for p in nc.eligible:
            put[nc.index, p] = model.new_int_var(0, len(queue.classes[p].members), f"put[{nc.index}/{p}]")
            model.add(put[nc.index, p] <= sum(mix[p] * nodes[nc.index, k] for k, mix in enumerate(nc.configurations)))
    placed = []
    for cls in queue.classes:
        members = single[cls.index] + sum(
            g.demand(queue.class_of).get(cls.index, 0) * gang[g.index] for g in queue.gangs
        )
        model.add(sum(put[key] for key in put if key[1] == cls.index) == members)
        placed.append(members)
    stages = []
    for priority in sorted({c.priority for c in queue.classes}, reverse=True):
        stages.append(sum(placed[c.index] for c in queue.classes if c.priority == priority))
    if gang:  # earlier gangs first: a weight that halves is lexicographic but overflows; ranks suffice
        stages.append(sum((len(gang) - g) * var for g, var in enumerate(gang)))
    # Ties go to pods earlier in the queue, as one by one would (classes are numbered by their first pod).
    stages.append(sum((n_classes - c.index) * placed[c.index] for c in queue.classes))
    if pack:  # nodes with every device whole kept so first, then the fewest nodes touched
        stages.append(-sum(var for (c, _), var in nodes.items() if node_classes[c].untouched))
        stages.append(-sum(nodes.values()))
    # Last, reproducible and readable: pods on the node classes that come first (by their first node's name).
    stages.append(-sum(c * var for (c, _), var in put.items()))
    solver, early = _solve_stages(model, stages, budget, workers)
    return MasterAnswer(
        {key: solver.value(var) for key, var in nodes.items()},
        {key: solver.value(var) for key, var in put.items()},
        [solver.value(v) for v in single],
        [bool(solver.value(v)) for v in gang],
        len(stages),
        early,
    )


def _solve_stages(model: cp_model.CpModel, stages: list, budget: Budget, workers: int) -> tuple[cp_model.CpSolver, int]:
    """Maximise each stage in turn, keeping the optimum of the earlier ones, until the budget is spent (the
    stages left then keep the last answer); also how many stages stopped early or were not run."""
    solver = cp_model.CpSolver()
    early = 0
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = 0
    for done, stage in enumerate(stages):
        if done and budget.over():
            return solver, early + len(stages) - done
        solver.parameters.max_time_in_seconds = max(LEAST_SECONDS, budget.left())
        model.maximize(stage)
        status = solver.solve(model)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            raise SolveTimeout("the joint placement found no answer in time (raise --timeout)")
        early += status == cp_model.FEASIBLE
        model.add(stage >= round(solver.objective_value))
        model.clear_hints()
        for i in range(len(model.proto.variables)):
            model.add_hint(model.get_int_var_from_proto_index(i), solver.value(model.get_int_var_from_proto_index(i)))
    if not stages:
        solver.parameters.max_time_in_seconds = max(LEAST_SECONDS, budget.left())
        solver.solve(model)
    return solver, early
