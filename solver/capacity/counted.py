"""What fit and scale-up share: the counting model solved anytime for an objective of their own, its counts
decoded into pods on nodes whose devices are allocated and verified, and how an answer stands.

The counting model (``solver.batch.counting``) maximises pods placed; these commands set their own objective
on the same variables and solve it here, within one deadline: CP-SAT's best solution so far is what a time
limit leaves, with its bound, and ``proven`` only when CP-SAT proved it optimal *and* the model is the whole
question (every node counted, exactly). A node counted with a rule relaxed may refuse the mix it was given:
that mix is cut from the model and the model solved again (as ``schedule --batch`` does), a few rounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from drasat.models.resource import AllocationResult
from drasat.solver.allocation.problem import claim_key
from drasat.solver.batch.budget import Budget
from drasat.solver.batch.counting import CountingModel
from drasat.solver.batch.decode import Decoded, allocate_nodes, assign, cut, hint
from drasat.solver.batch.nodes import NodeAllocator, NodeCheck
from drasat.solver.batch.pod_classes import Queue
from drasat.solver.batch.search import SEED, Counts, read
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions, claim_shape
from drasat.solver.scheduling.pods import PodClaims

ROUNDS = 4  # solves at most: the first, then again after nodes refused the mix of a relaxed count
DECODE_SHARE = 0.25  # of the time left, kept for allocating and verifying each node's devices


@dataclass
class Standing:
    """How an answer stands: proven optimal, or CP-SAT's bound beside it; and what the run noticed."""

    proven: bool = False
    objective: float | None = None
    bound: float | None = None  # CP-SAT's bound on the objective (None: no answer found)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass
class Solved:
    """The last solve's counts, the nodes that allocated them (verified), and its standing."""

    counts: Counts | None
    decoded: Decoded
    standing: Standing
    solver: cp_model.CpSolver
    counting_complete: bool  # the model is the whole question: its bound is the cluster's


def solve_counted(
    state: ClusterState,
    queue_for: Callable[[Counts], Queue],
    counting: CountingModel,
    options: AllocateOptions,
    budget: Budget,
) -> Solved:
    """Solve ``counting.model`` (its objective set by the caller) until the budget's share for searching is
    spent or CP-SAT proves the answer; then each node's pods (those of ``queue_for(counts)``: the pods the
    counts place, named) allocated and verified, refusing nodes cut and the model solved again."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = max(1, options.workers)
    solver.parameters.random_seed = SEED
    standing, decoded, counts = Standing(), Decoded(), None
    allocator = NodeAllocator(state, options, budget)
    cuts = 0
    for round_ in range(1, ROUNDS + 1):
        solver.parameters.max_time_in_seconds = max(0.05, budget.left() * (1 - DECODE_SHARE))
        status = solver.solve(counting.model)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            standing.notes.append(
                "the model found no answer in time" if status == cp_model.UNKNOWN else "the model has no answer"
            )
            counts = None
            break
        counts = read(counting, solver.value)
        standing.proven = status == cp_model.OPTIMAL and counting.complete
        standing.objective, standing.bound = solver.objective_value, solver.best_objective_bound
        queue = queue_for(counts)
        decoded = allocate_nodes(state, queue, assign(queue, counts), allocator, counting, solver.value)
        if not decoded.refused or round_ == ROUNDS or budget.over():
            break
        for node, mix in decoded.refused.items():
            cut(counting, node, mix)
            cuts += 1
        hint(counting, counts, decoded.refused)
    if cuts:
        standing.notes.append(f"{cuts} node mix{'es' * (cuts != 1)} refused by the allocator were cut from the model")
    if decoded.refused:
        standing.proven = False
        standing.notes.append(f"{len(decoded.refused)} nodes could not allocate the mix the model gave them")
    describe_model(standing, counting)
    return Solved(counts, decoded, standing, solver, counting.complete)


def describe_model(standing: Standing, counting: CountingModel) -> None:
    """Notes on what the model does not count exactly (then no proof is claimed for the cluster)."""
    relaxed = sorted({r for n in counting.nodes.values() for r in n.relaxed})
    if relaxed:
        standing.notes.append(
            f"some nodes counted with rules relaxed ({'; '.join(relaxed)}): each checked by allocating"
        )
    for skipped in counting.skipped:
        standing.notes.append(f"node {skipped}: not counted")
    undecided = sorted(n.node for n in counting.nodes.values() if n.undecided)
    if undecided:
        standing.notes.append(
            f"{len(undecided)} nodes where Kubernetes decides the claims only mid-search were not counted "
            f"({', '.join(undecided[:3])}{', ...' if len(undecided) > 3 else ''})"
        )


def pod_devices(state: ClusterState, pc: PodClaims, node: str, check: NodeCheck) -> dict[str, AllocationResult]:
    """The pod's claims' allocations on ``node`` in the node's verified answer, by claim key."""
    return {claim_key(c): check.allocation(pc.label, claim_key(c)) for c in claim_shape(state, pc, node).claims}


def devices_text(results: dict[str, AllocationResult]) -> list[str]:
    """``request=pool/device`` for each device allocated, in claim order (what the reports print)."""
    return [f"{r.request}={r.pool}/{r.device}" for result in results.values() for r in result.devices.results]
