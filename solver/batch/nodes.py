"""The joint placement's per-node step: the pods chosen for a node allocated together, then verified there.

Nodes of one class given the same mix of pod classes get the same devices up to pool and
node names (that is what makes them a class), so the allocator runs once per (node class,
mix) and its answer is carried to the other nodes by renaming pools (by rank, as the class
signature does) and the node in the allocation's node selector. Every node's answer —
computed or carried — then goes through the verifier against that node's own problem; an
answer the verifier rejects is computed afresh on the node, and a node where that fails too
gives its pods back. Answers holding share IDs (derived from claim and device names) are
never carried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from drasat.models.errors import AllocationError, EvaluationError, SolveTimeout, Unschedulable
from drasat.models.resource import AllocationResult, ResourceClaim
from drasat.solver.allocation.api import allocate
from drasat.solver.allocation.problem import Problem, claim_key
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.node_classes import PoolKey
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions, claim_shape
from drasat.solver.scheduling.pods import PodClaims
from drasat.solver.verification.verifier import verify

from .budget import Budget


@dataclass
class NodeCheck:
    """One node's joint allocation and the verifier's verdict on it."""

    node: str
    pods: list[str]
    problem: Problem
    allocations: dict[str, AllocationResult]
    violations: list[str] = field(default_factory=list)
    carried: bool = False  # renamed from another node of its class, not computed here
    renamed: dict[tuple[str, str], str] = field(default_factory=dict)  # (pod, claim key) -> key allocated under

    def allocation(self, pod: str, claim: str) -> AllocationResult:
        """The pod's claim's allocation (``claim``: its key; a claim two pods bring is allocated under a new name)."""
        return self.allocations[self.renamed.get((pod, claim), claim)]


@dataclass
class _Solved:
    node: str
    claims: list[str]  # keys, in order
    results: dict[str, AllocationResult]


class NodeAllocator:
    """Allocates a node's chosen pods, once per (node class, mix) and carried to the rest of the class."""

    def __init__(self, state: ClusterState, options: AllocateOptions, budget: Budget) -> None:
        self.state, self.options, self.budget = state, options, budget
        self._solved: dict[tuple, _Solved] = {}

    def check(self, node: str, key: tuple, pods: list[PodClaims], direct: Direct | None = None) -> NodeCheck | None:
        """The node's verified joint allocation, or None when the pods do not fit there together. ``direct``
        reads the allocations off elsewhere (the counting model's solution), given each pod's claims under
        the names they are allocated by; its answer is taken when the verifier accepts it."""
        claims, renamed, sizes = node_claims(self.state, node, pods)
        problem = self.state.problem(node, claims)
        labels = [pc.label for pc in pods]
        if direct is not None:
            found = _direct(direct, problem, claims, sizes, self.options)
            if found is not None:
                return NodeCheck(node, labels, problem, found, renamed=renamed)
        known = self._solved.get(key)
        if known is not None and known.node != node:
            carried = _carry(known, node, claims, self.state)
            if carried is not None:
                violations = verify(problem, carried, evaluator=self.options.evaluator)
                if not violations:
                    return NodeCheck(node, labels, problem, carried, carried=True, renamed=renamed)
        results = self._allocate(problem)
        if results is None:
            return None
        self._solved.setdefault(key, _Solved(node, [claim_key(c) for c in claims], results))
        violations = verify(problem, results, evaluator=self.options.evaluator) if claims else []
        return NodeCheck(node, labels, problem, results, violations, renamed=renamed)

    def _allocate(self, problem: Problem) -> dict[str, AllocationResult] | None:
        if not problem.claims:
            return {}
        if self.budget.over():
            self.budget.cut("the per-node allocations: nodes left unallocated gave their pods back")
            return None
        o = self.budget.options(self.options)
        try:
            return dict(
                allocate(
                    problem,
                    solver=o.solver,
                    objective=o.objective,
                    time_limit=o.time_limit,
                    workers=o.workers,
                    evaluator=o.evaluator,
                ).results
            )
        except (Unschedulable, SolveTimeout, AllocationError, EvaluationError):
            return None


def node_claims(
    state: ClusterState, node: str, pods: list[PodClaims]
) -> tuple[list[ResourceClaim], dict[tuple[str, str], str], list[int]]:
    """The claims ``pods`` bring to ``node``, each under a name of its own (see ``_distinct_names``), the
    renaming, and how many claims each pod brings: what a node's joint allocation is asked (and, for an answer
    found in another process, what its problem is rebuilt from)."""
    owned = [[(pc.label, c) for c in claim_shape(state, pc, node).claims] for pc in pods]
    claims, renamed = _distinct_names([pair for pairs in owned for pair in pairs])
    return claims, renamed, [len(pairs) for pairs in owned]


Direct = Callable[[list[list[ResourceClaim]]], "dict[str, AllocationResult] | None"]


def _direct(
    direct: Direct, problem: Problem, claims: list[ResourceClaim], sizes: list[int], options: AllocateOptions
) -> dict[str, AllocationResult] | None:
    """``direct``'s allocations for the pods' claims (split back per pod), if it has them and the verifier agrees."""
    per_pod, at = [], 0
    for size in sizes:
        per_pod.append(claims[at : at + size])
        at += size
    found = direct(per_pod)
    if found is None or set(found) != {claim_key(c) for c in claims}:
        return None
    return found if not verify(problem, found, evaluator=options.evaluator) else None


def _distinct_names(owned: list[tuple[str, ResourceClaim]]) -> tuple[list[ResourceClaim], dict[tuple[str, str], str]]:
    """The claims, one allocated under a name of its own where another pod brought the same claim already
    (allocate refuses a claim given twice); and which (pod, claim key) got which new key, to map the answer
    back. Claims of one name in two namespaces keep their names: their keys differ."""
    seen: set[str] = set()
    claims: list[ResourceClaim] = []
    renamed: dict[tuple[str, str], str] = {}
    for pod, claim in owned:
        key = claim_key(claim)
        if key in seen:
            claim = claim.model_copy(deep=True)
            claim.metadata.name = f"{claim.name}-{len(claims)}"
            renamed[(pod, key)] = claim_key(claim)
        seen.add(claim_key(claim))
        claims.append(claim)
    return claims, renamed


def _carry(
    known: _Solved, node: str, claims: list[ResourceClaim], state: ClusterState
) -> dict[str, AllocationResult] | None:
    """``known``'s answer with its pools and node renamed for ``node`` (claims matched by position)."""
    pools: dict[PoolKey, PoolKey] = dict(zip(state.nodes[known.node].pools, state.nodes[node].pools))
    if len(claims) != len(known.claims):
        return None
    out = {}
    for claim, name in zip(claims, known.claims):
        result = known.results[name].model_copy(deep=True)
        for r in result.devices.results:
            if r.share_id or (r.driver, r.pool) not in pools:
                return None
            r.pool = pools[(r.driver, r.pool)][1]
        for term in result.node_selector.node_selector_terms if result.node_selector else []:
            for requirement in term.match_fields:
                requirement.values = [node if v == known.node else v for v in requirement.values]
        out[claim_key(claim)] = result
    return out
