"""The DynamicResources step for one pod on one node: allocate its claims there, or say why not.

The per-node question is handed to the existing ``allocate`` (so greedy, CP-SAT and
the verifier all apply). Its answer for a node is also the answer for every node
of the same equivalence class (``node_classes``), so verdicts are cached under the
claims' shape and the node's signature; a cached verdict names the node it was
computed on, and the scheduling loop recomputes the devices for the node it picks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cache

from drasat.models.core import ContainerExtendedResourceRequest, NodeAllocatableResourceClaimStatus
from drasat.models.errors import AllocationError, EvaluationError, InputError, SelectorParseError, Unschedulable
from drasat.models.resource import AllocationResult, ResourceClaim
from drasat.solver.allocation.api import allocate
from drasat.solver.allocation.options import CAPABILITIES, Objective, Solver, check_options
from drasat.solver.allocation.planning.inventory import Inventory
from drasat.solver.allocation.planning.node_selectors import selector_matches
from drasat.solver.allocation.problem import Problem, claim_key
from drasat.solver.allocation.rules.node_operations import FEATURE as OPTIONAL_NODE_OPERATIONS
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.extended import extended_claim
from drasat.solver.scheduling.pods import PodClaims

from .binding_conditions import binding_verdict
from .node_filters import REASON_DRA, REASON_NOT_ON_NODE, node_info
from .node_resources import claim_statuses, pod_level_violation

FIRST_AVAILABLE_MAX = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize: the DRA score of alternative i is 8 - i
REASON_UNDECLARED = "node(s) didn't declare DRAOptionalNodeOperations, which a claim skipping node operations needs"


@dataclass(frozen=True)
class AllocateOptions:
    """How each per-node allocation is searched (``allocate``'s own options)."""

    solver: Solver = Solver.CP_SAT  # or its text ("greedy"): made a Solver when the options are made
    objective: Objective = Objective.FIRST_FIT  # the same
    time_limit: float = 60.0
    workers: int = 1
    evaluator: SelectorEvaluator | None = None
    engine: str | None = None  # the CEL engine's name, for processes that make their own evaluator
    # kube-scheduler's percentageOfNodesToScore for one-by-one placement: 0 adaptive (its default), 100 all nodes
    percentage_of_nodes_to_score: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.percentage_of_nodes_to_score <= 100:
            raise InputError(
                f"percentageOfNodesToScore must be between 0 (adaptive) and 100, not {self.percentage_of_nodes_to_score}"
            )
        solver, objective = check_options(self.solver, self.objective, self.time_limit)  # once, not per worker
        object.__setattr__(self, "solver", solver)  # frozen: the types replace the text a caller gave
        object.__setattr__(self, "objective", objective)


@dataclass
class DraVerdict:
    """The devices step on one node: reasons it fails, or the allocations, DRA score and DRA amounts."""

    node: str
    pod: str  # the verdict is reused for other pods of the same shape: its claims are this pod's
    reasons: list[str] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)  # newly allocated (the extended one included)
    allocations: dict[str, AllocationResult] = field(default_factory=dict)  # by claim_key, as allocate's results
    problem: Problem | None = None
    score: int = 0
    statuses: list[NodeAllocatableResourceClaimStatus] = field(default_factory=list)
    mappings: list[ContainerExtendedResourceRequest] = field(default_factory=list)
    footprint: tuple[int, ...] = ()  # with the pack objective: its score of the allocations (lower is better)
    exact: bool = True  # False: time ran out before the objective's answer; the allocations are valid


def claims_to_allocate(
    state: ClusterState, pc: PodClaims, node: str
) -> tuple[list[ResourceClaim], list[ContainerExtendedResourceRequest]]:
    """The pod's unallocated claims, plus its extended-resource claim for what this node lacks as a device plugin."""
    claims = [u.claim for u in pc.uses if not u.allocated]
    allocatable = state.loads[node].allocatable
    on_dra = {name: n for name, n in pc.extended.items() if not allocatable.get(name)}
    if not on_dra:
        return claims, []
    claim, mappings = extended_claim(pc.pod, on_dra, state.cluster)
    return claims + [claim], mappings


def skips_node_operations(claim: ResourceClaim) -> bool:
    """Whether the claim's allocation copied a slice's skipNodeOperations into some result."""
    allocation = claim.status.allocation if claim.status else None
    return allocation is not None and any(r.skip_node_operations for r in allocation.devices.results)


def allocated_elsewhere(state: ClusterState, pc: PodClaims, node: str) -> list[str]:
    """An allocated claim can only be used where its allocation's node selector allows, and nowhere once its
    binding conditions failed or timed out (Filter; PostFilter deallocates it when it can)."""
    info = node_info(state.loads[node].node)
    cluster = state.cluster
    for use in pc.uses:
        if use.allocated and binding_verdict(use.claim, cluster.clock, cluster.features).state.gives_up:
            return [REASON_NOT_ON_NODE]
        if use.allocated and skips_node_operations(use.claim) and cluster.features[OPTIONAL_NODE_OPERATIONS]:
            if not info.declares(OPTIONAL_NODE_OPERATIONS):
                return [REASON_UNDECLARED]
        selector = (
            use.claim.status.allocation.node_selector
            if use.allocated and use.claim.status and use.claim.status.allocation
            else None
        )
        try:
            if selector is not None and not selector_matches(info, selector):
                return [REASON_NOT_ON_NODE]
        except SelectorParseError as exc:
            return [f"resourceclaim {use.claim.name}: {exc}"]
    return []


@dataclass(frozen=True)
class ClaimShape:
    """What a pod asks of a node's devices, the same on every node that lacks the same device-plugin resources."""

    claims: list[ResourceClaim]
    mappings: list[ContainerExtendedResourceRequest]
    key: str  # the claims' specs (names aside) and the allocated claims the pod shares


def claim_shape(state: ClusterState, pc: PodClaims, node: str) -> ClaimShape:
    """The claims the pod needs allocated on ``node``, and a key saying when two pods' needs are alike."""
    claims, mappings = claims_to_allocate(state, pc, node)
    shapes = [c.spec.to_api() for c in claims]
    shared = sorted(f"{u.claim.namespace}/{u.claim.name}" for u in pc.uses if u.allocated)
    # Node-allocatable amounts depend on which containers use which claim and on pod-level resources:
    # with that gate on, a verdict is only shared between nodes, not between pods.
    owner = pc.label if state.cluster.features["DRANodeAllocatableResources"] else ""
    return ClaimShape(claims, mappings, json.dumps([shapes, shared, owner], sort_keys=True))


@dataclass(frozen=True)
class NodeTask:
    """One per-node allocation to run, anywhere: the question and how to search it (no CEL engine object:
    a worker process uses its own, of the same kind)."""

    problem: Problem
    options: AllocateOptions
    inventory: Inventory | None = None  # the node's, built already (never shipped: a worker builds its own)

    def shippable(self) -> NodeTask:
        engine = self.options.evaluator.engine_name if self.options.evaluator else None
        return NodeTask(self.problem, replace(self.options, evaluator=None, engine=engine))


@dataclass(frozen=True)
class NodeAnswer:
    """``allocate``'s outcome on one node as a plain value (it crosses process boundaries): the allocations,
    or why the devices step fails there."""

    results: dict[str, AllocationResult] = field(default_factory=dict)
    reason: str = ""
    footprint: tuple[int, ...] = ()  # pack's score of ``results`` (the pack objective only)
    exact: bool = True  # ``allocate``'s stats.exact


def answer_on_node(task: NodeTask) -> NodeAnswer:
    """Allocate ``task.problem``; unschedulable and Kubernetes' own allocation errors become the node's reason.
    A top-level function of a picklable task, so that :mod:`parallel` can run it in another process."""
    options = task.options
    evaluator = options.evaluator or _process_evaluator(options.engine)
    try:
        answer = allocate(
            task.problem,
            solver=options.solver,
            objective=options.objective,
            time_limit=options.time_limit,
            workers=options.workers,
            evaluator=evaluator,
            inventory=task.inventory,
        )
    except Unschedulable:
        return NodeAnswer(reason=REASON_DRA)
    except (AllocationError, EvaluationError) as exc:
        return NodeAnswer(reason=str(exc))
    score = _pack_score(task.problem, answer.results) if CAPABILITIES[options.objective].packs else ()
    return NodeAnswer(answer.results, footprint=score, exact=answer.stats.exact)


def _pack_score(problem: Problem, results: dict[str, AllocationResult]) -> tuple[int, ...]:
    """The pack objective's score of a node's allocations (lower is better).

    Its module is imported here, for that objective only: the other objectives' runs (every ``solve`` and
    ``schedule`` by default) need none of it at start-up.
    """
    from drasat.solver.allocation.cp_sat.packing import footprint

    return footprint(problem, results).key


@cache
def _process_evaluator(engine: str | None) -> SelectorEvaluator:
    """One CEL engine per worker process and engine kind, kept across tasks (compiled selectors are reused)."""
    return SelectorEvaluator(engine)


def dra_verdict(
    state: ClusterState,
    pc: PodClaims,
    node: str,
    options: AllocateOptions,
    shape: ClaimShape | None = None,
    solved: tuple[Problem, NodeAnswer] | None = None,
) -> DraVerdict:
    """Allocate the pod's pending claims on ``node`` and work out the DRA score and node-allocatable amounts.
    ``solved``: the per-node problem and its answer, when they were computed elsewhere (in parallel)."""
    shape = shape or claim_shape(state, pc, node)
    claims = shape.claims
    verdict = DraVerdict(node, pc.label, claims=claims, mappings=shape.mappings)
    if claims:
        verdict.problem, answer = solved or (state.problem(node, claims), None)
        answer = answer or answer_on_node(NodeTask(verdict.problem, options, state.inventory(node)))
        if answer.reason:
            verdict.reasons = [answer.reason]
            return verdict
        verdict.allocations, verdict.footprint, verdict.exact = answer.results, answer.footprint, answer.exact
        verdict.score = dra_score(claims, answer.results)
    if state.cluster.features["DRANodeAllocatableResources"]:
        _node_allocatable(state, pc, verdict)
    return verdict


def mapped_claim_shared(state: ClusterState, pc: PodClaims) -> str:
    """A claim whose devices map to node resources (cpu, memory) belongs to one pod: it cannot be shared."""
    for use in pc.uses:
        status = use.claim.status
        if not use.allocated or use.reserved or status is None or not status.reserved_for or not status.allocation:
            continue
        for r in status.allocation.devices.results:
            device = state.device(r.driver, r.pool, r.device)
            if device and any(spec.mapping for spec in device.node_allocatable_resources.values()):
                return (
                    f"node allocatable resource claim {use.claim.name} has a mapped device and cannot be "
                    "shared across pods"
                )
    return ""


def _node_allocatable(state: ClusterState, pc: PodClaims, verdict: DraVerdict) -> None:
    shared = mapped_claim_shared(state, pc)
    if shared:
        verdict.reasons = [shared]
        return
    by_pod_claim: dict[str, tuple[str, AllocationResult]] = {}  # pod claim -> (claim name, allocation)
    for use in pc.uses:
        allocation = verdict.allocations.get(claim_key(use.claim)) or (
            use.claim.status.allocation if use.claim.status else None
        )
        if allocation is not None:
            by_pod_claim[use.pod_claim] = (use.claim.name, allocation)
    for claim in verdict.claims:  # the pod's own claims are in its namespace: their names tell them apart
        if claim.name not in {n for n, _ in by_pod_claim.values()}:
            by_pod_claim[f"<extended:{claim.name}>"] = (claim.name, verdict.allocations[claim_key(claim)])
    statuses, problem = claim_statuses(pc.pod, by_pod_claim, state.device)
    verdict.reasons = [problem] if problem else []
    violation = (
        "" if problem else pod_level_violation(pc.pod, statuses, enabled=state.cluster.features["PodLevelResources"])
    )
    if violation:
        verdict.reasons = [violation]
    verdict.statuses = statuses


def dra_score(claims: list[ResourceClaim], allocations: dict[str, AllocationResult]) -> int:
    """DynamicResources' score: for each firstAvailable request, 8 minus the index of the alternative picked."""
    score = 0
    for claim in claims:
        picked = {r.request for r in allocations[claim_key(claim)].devices.results}
        for request in claim.spec.devices.requests:
            for i, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in picked:
                    score += FIRST_AVAILABLE_MAX - i
    return score
