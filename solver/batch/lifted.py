"""One node's part of the counting model: the per-node encoding of every DRA rule, lifted to counts of pods.

The per-node allocator's model decides how many devices of each equivalence class every claim's
alternative takes (``allocation/cp_sat/model.py``). Here one claim stands for the claims of every pod
of a pod class that lands on the node: the alternative's takes count devices over all of them, and a
variable says how many pods take it. Planning is the allocator's own (inventory, candidates,
equivalence classes), run once per node on one representative claim set per pod class, and each rule
posts its constraints through :meth:`~drasat.solver.allocation.rules.base.Rule.encode_counts`: rules
that only sum devices per class (exclusivity, counters, capacity) count exactly; a rule that must see
each claim alone says so, and the node's counts are then a relaxation, checked by allocating.

Pod classes whose claims Kubernetes can only decide mid-search (a selector error on some device) are
not counted on that node: the one-by-one pass after the joint model handles them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from drasat.models.errors import AllocationError, EvaluationError, InputError, InternalError
from drasat.models.resource import ResourceClaim
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.equivalence import class_counts, equivalence_classes
from drasat.solver.allocation.planning.inventory import build_inventory
from drasat.solver.allocation.planning.plan import MAX_RESULTS, Alternative, AltVars, ClaimPlan
from drasat.solver.allocation.planning.plan import alternatives as plan_alternatives
from drasat.solver.allocation.rules.base import Encoding, RuleContext
from drasat.solver.allocation.rules.registry import RULES
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.plugins.node_resources import Resources


@dataclass
class CountedNode:
    """A node's variables in the counting model: pods of each pod class it takes; whether the counts are exact."""

    node: str
    pods: dict[int, cp_model.IntVar] = field(default_factory=dict)  # pod class index -> pods on this node
    most: int = 0  # the most pods the node can take, all classes together (the counts' bounds summed)
    exact: bool = True  # False: some rule was relaxed here; the node's answer is checked by allocating it
    relaxed: list[str] = field(default_factory=list)  # what was relaxed, in words
    undecided: set[int] = field(default_factory=set)  # pod classes whose claims Kubernetes decides mid-search here
    enc: Encoding | None = None  # the node's variables, kept for decoding devices straight from a solution
    plans_of: dict[int, list[ClaimPlan]] = field(default_factory=dict)  # pod class -> its claims' plans, in order


@dataclass(frozen=True)
class Demand:
    """What one pod class asks of this node's devices: its claims, and how many of its pods may come."""

    index: int
    claims: Sequence[ResourceClaim]
    most: int  # an upper bound on its pods here (members, cpu, memory, pods)
    requests: Resources  # what NodeResourcesFit checks of each of its pods here


def counted_node(
    model: cp_model.CpModel,
    state: ClusterState,
    node: str,
    demands: Sequence[Demand],
    evaluator: SelectorEvaluator,
) -> CountedNode:
    """The node's part of ``model``: per pod class a count of pods, and every DRA rule over their claims."""
    counted = CountedNode(node)
    owned = [(d, claim) for d in demands for claim in d.claims]
    plans = _plans(state, node, owned, evaluator)
    if plans is None:  # planning refused the claims together: find which classes it refuses alone
        usable = [d for d in demands if _plans(state, node, [(d, c) for c in d.claims], evaluator) is not None]
        if len(usable) == len(demands):
            raise InternalError(f"node {node}: claims planned alone but not together")
        return counted_node(model, state, node, usable, evaluator) if usable else counted
    inv, plan_list, owner = plans
    decided = {d.index for d in demands if not any(_mid_search(p) for p in plan_list if owner[p.index] == d.index)}
    ctx = RuleContext(inv, plan_list)
    groups, class_of = equivalence_classes(ctx)
    enc = Encoding(model, ctx, groups, class_of)
    counts = class_counts(plan_alternatives(plan_list), class_of)
    most = {d.index: d.most if d.index in decided else 0 for d in demands}
    counted.undecided = {d.index for d in demands} - decided
    counted.most = sum(most.values())
    for d in demands:
        counted.pods[d.index] = model.new_int_var(0, most[d.index], f"pods[{node}/class{d.index}]")
    for plan in plan_list:
        p = owner[plan.index]
        if not _claim_counted(enc, plan, counted.pods[p], most[p], counts):
            counted.exact = False
            counted.relaxed.append(f"claim {plan.label}: more than {MAX_RESULTS} devices in some choice")
    for rule in RULES:
        if not rule.encode_counts(enc):
            counted.exact = False
            counted.relaxed.append(f"rule {rule.name}")
    for assumption in enc.assumptions:  # the per-node model's assumptions are facts here
        model.add(assumption.literal == 1)
    counted.enc = enc
    for plan in plan_list:
        counted.plans_of.setdefault(owner[plan.index], []).append(plan)
    return counted


def _plans(
    state: ClusterState, node: str, owned: list[tuple[Demand, ResourceClaim]], evaluator: SelectorEvaluator
) -> tuple | None:
    """The node's inventory and the claims' plans, with each plan's pod class; None when Kubernetes would refuse
    some claim there (its error aborts the whole allocation, as upstream)."""
    claims = _distinct([claim for _, claim in owned])
    problem = state.problem(node, claims)
    try:
        inv = build_inventory(problem)
        plans = plan_claims(problem, inv, evaluator)
    except (AllocationError, EvaluationError, InputError):
        return None
    return inv, plans, {i: d.index for i, (d, _) in enumerate(owned)}


def _distinct(claims: list[ResourceClaim]) -> list[ResourceClaim]:
    """The claims under names of their own (the planner names results by claim): a copy only where two share one."""
    seen: set[str] = set()
    out: list[ResourceClaim] = []
    for claim in claims:
        if claim.name in seen:
            claim = claim.model_copy(deep=True)
            claim.metadata.name = f"{claim.name}-{len(out)}"
        seen.add(claim.name)
        out.append(claim)
    return out


def _mid_search(plan: ClaimPlan) -> bool:
    """Whether Kubernetes decides this claim only as its depth-first search reaches some device: a selector
    error there, or an ``allocationMode: All`` list under a constraint (the same test ``allocate`` makes)."""
    return any(
        alt.errors or (alt.mode == "All" and any(c.applies(alt) for c in plan.constraints))
        for req in plan.requests
        for alt in req.alternatives
    )


def _claim_counted(enc: Encoding, plan: ClaimPlan, pods: cp_model.IntVar, most: int, counts: dict) -> bool:
    """Each request of the counted claim: its alternatives share the pods; each takes its count per pod.
    Returns whether that is exact (no choice of alternatives passes the 32 results of one claim)."""
    model = enc.model
    for req in plan.requests:
        takers = []
        for alt in req.alternatives:
            taking = enc.int_var(0, most, f"pods[{plan.label}/{alt.result_name}]")
            takers.append(taking)
            takes = _takes(enc, plan, alt, taking, most, counts[alt.id])
            enc.vars[alt.id] = AltVars(alt, taking, takes, {k: enc.top(v) for k, v in takes.items()})
            enc.multiplicity[alt.id] = taking
            if alt.mode == "All" and alt.blocked:
                model.add(taking == 0)
            elif alt.mode != "All":
                model.add(sum(takes.values()) == alt.count * taking)
        model.add(sum(takers) == pods)
    largest = sum(max(alt.count for alt in req.alternatives) for req in plan.requests)
    return largest <= MAX_RESULTS and not _shares_twice(enc, plan)


def _takes(
    enc: Encoding, plan: ClaimPlan, alt: Alternative, taking: cp_model.IntVar, most: int, per_class: dict[int, int]
) -> dict[int, cp_model.IntVar]:
    """Devices of each class the alternative takes over all its pods (a shared device: once per pod)."""
    takes = {}
    for k, available in per_class.items():
        if enc.groups[k].shared:
            top = alt.count * most
        else:
            top = available if alt.mode == "All" else min(available, alt.count * most)
        take = takes[k] = enc.int_var(0, top, f"take[{plan.label}/{alt.result_name}/class{k}]")
        enc.by_class.setdefault(k, []).append((alt, take))
        if alt.mode == "All":
            enc.model.add(take == available * taking)
    return takes


def _shares_twice(enc: Encoding, plan: ClaimPlan) -> bool:
    """Whether a request asking for several devices may take shares of a shared device: counted, one pod's
    several shares could fall on one device, which a single claim's request never does."""
    for req in plan.requests:
        for alt in req.alternatives:
            if alt.count > 1 and any(enc.groups[k].shared for k in enc.vars[alt.id].takes):
                return True
    return False
