"""The library entry point: ``allocate(problem)`` returns one AllocationResult per claim.

The stages run in one straight line — inventory, claims and candidates, then a search,
then results — and only the search differs between solvers. The default ``cp-sat``
solver first lets the greedy twin try with a budget of device tries: when it finishes, its
answer *is* the first-fit answer (or the proof that none exists); only inputs where
depth-first search would explode go to CP-SAT.

The budget scales with the input (:func:`greedy_budget`): twice as many tries as the CP-SAT model would
have count variables, and never fewer than a floor. A device try costs about what
building one variable costs (tens of microseconds each, measured in benchmarks/solve_bench.py),
so where depth-first search explodes it gives up after about the time CP-SAT would spend just
building its model — the default path stays within about 2x of CP-SAT alone — while a search
that barely backtracks (a few tries per pick; hundreds of claims on thousands of devices) finishes
within it, as fast as greedy alone. A fixed budget cannot do both: 3,000 tries gave up on
100 MIG claims that need 7,000, and a budget of millions would let a pigeonhole input run for
minutes. The equivalence classes the budget is counted on are kept for the model.

The floor is what handing over costs beyond the model: ``GREEDY_BUDGET`` tries while OR-Tools is not
loaded yet (loading it takes most of a second), ``LOADED_BUDGET`` once it is — then CP-SAT answers a
small pigeonhole input in 3-5 ms, and 3,000 tries (8-23 ms) made the default path 2.5-4.7x slower than
CP-SAT alone (perf/pigeon-*, slow-*). The answer is first-fit's either way.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from drasat.models.collector import pause_collector, resume_collector
from drasat.models.errors import AllocationError, DrasatError, InputError, SolveTimeout, Unschedulable
from drasat.models.resource import AllocationResult
from drasat.solver.cel import SelectorEvaluator

from .depth_first.search import BudgetExhausted, GreedyResult, greedy_search
from .depth_first.search_state import SearchState
from .options import CAPABILITIES, Objective, Solver, check_options
from .planning.claims import plan_claims
from .planning.equivalence import Classes, class_counts, equivalence_classes
from .planning.inventory import Inventory, build_inventory
from .planning.plan import ClaimPlan, Pick, alternatives
from .planning.results import allocation_results
from .problem import Problem, claim_key
from .rules.base import RuleContext

if TYPE_CHECKING:
    from .cp_sat.objectives import Staged

GREEDY_BUDGET = 3_000  # device tries the greedy twin may make on the default path at least (see greedy_budget)
LOADED_BUDGET = 300  # the same, once OR-Tools is loaded (the module's docstring says why)


@dataclass
class Stats:
    """How the answer was found: which search, how many greedy steps and CP-SAT solves, how long."""

    solver: str = ""
    greedy_steps: int = 0
    greedy_tries: int = 0  # devices the depth-first search tried
    greedy_backtracks: int = 0  # devices it took back after what followed them failed
    cp_sat_solves: int = 0
    cp_sat_branches: int = 0
    cp_sat_conflicts: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    exact: bool = True  # False: time ran out, and this is a valid allocation, not surely the objective's answer


@dataclass
class Allocation:
    """The answer: one AllocationResult per claim, in claim order, keyed by ``namespace/name``
    (:func:`~.problem.claim_key`; the bare name for a claim written without a namespace), so that claims of
    one name in two namespaces are allocated together and told apart, as the verifier keys them too."""

    results: dict[str, AllocationResult]
    stats: Stats


#: Request alternatives x devices on the node that one allocation may weigh. Candidates, device
#: classes and the CP-SAT model all grow with it, at about 100 bytes a pair (measured in
#: benchmarks/size_bench.py), so this bounds memory near 1 GiB.
MAX_REQUEST_DEVICE_PAIRS = 10_000_000


def _too_large(problem: Problem, alternatives: int, devices: int) -> InputError:
    """The refusal of a problem whose memory would grow past the bound (``alternatives``: the claims' requests
    and subrequests, counted by :func:`_count_alternatives`). The bound is asked inline by :func:`allocate`,
    before any work; this only words the error."""
    return InputError(
        f"too large to allocate in bounded memory: {len(problem.claims):,} claims with "
        f"{alternatives:,} requests and alternatives against {devices:,} devices on node "
        f"{problem.node.name} make {alternatives * devices:,} request-device pairs, more than "
        f"drasat's limit of {MAX_REQUEST_DEVICE_PAIRS:,} (about 1 GiB); allocate fewer claims at a time"
    )


def allocate(
    problem: Problem,
    *,
    solver: Solver | str = Solver.CP_SAT,
    objective: Objective | str = Objective.FIRST_FIT,
    time_limit: float = 60.0,
    workers: int = 1,
    evaluator: SelectorEvaluator | None = None,
    greedy_budget: int | None = None,
    inventory: Inventory | None = None,
) -> Allocation:
    """Allocate all of ``problem.claims`` together, or raise :class:`Unschedulable`.

    ``solver`` and ``objective`` are :class:`~.options.Solver` and :class:`~.options.Objective` members or
    their text (``"greedy"``, ``"pack"``): the library takes what the command line's options spell, and an
    unknown one is an InputError. ``greedy_budget`` bounds the default path's depth-first search in device
    tries (None: scaled with the input, see the module's docstring; 0: CP-SAT alone). ``inventory``: the node's
    devices as :func:`~.planning.inventory.build_inventory` built them for a problem that differs from this one
    in its claims at most (the inventory reads everything but the claims): the scheduler asks one node about
    several pods between two changes of it.

    Raises InputError / AllocationError / EvaluationError for inputs Kubernetes would
    refuse, and SolveTimeout when ``time_limit`` seconds were not enough. The limit is one
    deadline for the whole call: selector evaluation and both searches share it.

    Python's automatic garbage collection is paused for the call and as the caller had it after the last call
    running in any thread (see :func:`_allocate`).
    """
    pause_collector()  # see _allocate; counted, so that threads calling at once never end another's pause
    try:
        return _allocate(problem, solver, objective, time_limit, workers, evaluator, greedy_budget, inventory)
    finally:
        resume_collector()


def _allocate(
    problem: Problem,
    solver: Solver | str,
    objective: Objective | str,
    time_limit: float,
    workers: int,
    evaluator: SelectorEvaluator | None,
    greedy_budget: int | None,
    inventory: Inventory | None = None,
) -> Allocation:
    """:func:`allocate`, with Python's cyclic garbage collector paused by the caller.

    A call builds many small containers (candidates, plans, search state, results) that reference
    counting frees or the answer keeps, and no cycles worth collecting; yet the collector, run every
    700 new objects, walks every object the process holds -- the caller's whole input among them --
    each time the survivors grow by a quarter. On 4,096 devices and 1,024 claims that was 40 % of a
    greedy call and 45 % of the default path's (whose equivalence classes add survivors, so more
    passes). Paused, the collector runs after the call and sees only what it kept. The pause is
    :mod:`drasat.models.collector`'s, counted across threads, and leaves the host's own
    ``gc.disable``/``gc.enable`` alone: threads only ever delay a collection.
    """
    solver, objective = check_options(solver, objective, time_limit)
    alternatives = _count_alternatives(problem)
    started = time.monotonic()
    deadline = started + time_limit
    stats = Stats(str(solver))
    inv = inventory or build_inventory(problem)
    if alternatives * len(inv.devices) > MAX_REQUEST_DEVICE_PAIRS:
        raise _too_large(problem, alternatives, len(inv.devices))
    plans = plan_claims(problem, inv, evaluator or SelectorEvaluator(), deadline=deadline)
    try:
        picks = _search(inv, plans, solver, objective, deadline, workers, greedy_budget, stats)
    except SolveTimeout as exc:
        exc.stats = _finished(stats, started)  # how far the searches got
        raise
    if picks is None:
        raise _no_allocation(problem, inv, plans, _finished(stats, started))
    results = allocation_results(inv, plans, picks)
    stats.seconds = time.monotonic() - started
    return Allocation(results, stats)


def _no_allocation(problem: Problem, inv: Inventory, plans: list[ClaimPlan], stats: Stats) -> DrasatError:
    """The error for "no allocation": Kubernetes' invalid-pool error, else Unschedulable carrying the question
    and what proving it took. Made here and raised by the caller. No explanation is worked out: a caller
    that wants one asks ``explain(problem, proven=error)`` (the scheduler asks many nodes, most say no)."""
    invalid = [f"{pool.label()} ({pool.problem})" for pool in inv.pools if pool.state == "invalid"]
    if invalid:
        return AllocationError("invalid resource pools were encountered: " + "; ".join(invalid))
    names = ", ".join(plan.label for plan in plans)
    return Unschedulable(
        f"no allocation exists for claims {names} together on node {problem.node.name}", problem=problem, stats=stats
    )


def _finished(stats: Stats, started: float) -> Stats:
    stats.seconds = time.monotonic() - started
    return stats


def _count_alternatives(problem: Problem) -> int:
    """The claims' requests and alternatives, counted (for :func:`_too_large`); the same pass also refuses
    a claim given twice (one key, ``namespace/name``, twice): it would be allocated twice, under one result."""
    alternatives = 0
    seen: set[str] = set()
    for claim in problem.claims:  # plain loops: every call asks, and a small one has a claim or two
        key = claim_key(claim)
        if key in seen:
            raise InputError(f"claim {key} is given twice among the claims to allocate: allocate it once")
        seen.add(key)
        for r in claim.spec.devices.requests:
            alternatives += len(r.first_available) or 1
    return alternatives


def _search_decides_errors(plans: list[ClaimPlan]) -> bool:
    """Whether Kubernetes' answer may be an error raised mid-search: a selector that failed on
    some device, or an ``allocationMode: All`` request under a constraint (a device of the
    fixed list that breaks it is a fatal error, not a reason to backtrack)."""
    for plan in plans:
        for req in plan.requests:
            for alt in req.alternatives:
                if alt.errors or (alt.mode == "All" and any(c.applies(alt) for c in plan.constraints)):
                    return True
    return False


def _greedy_stats(stats: Stats, result: GreedyResult, path: str) -> None:
    stats.solver, stats.greedy_steps = path, result.steps
    stats.greedy_tries, stats.greedy_backtracks = result.tries, result.backtracks


def greedy_budget(plans: list[ClaimPlan], class_of: dict[int, int], floor: int = GREEDY_BUDGET) -> int:
    """The default path's budget of device tries: twice the CP-SAT model's count variables (one per
    alternative and class of its candidates; each comes with a constraint or two), at least ``floor``."""
    counts = class_counts(alternatives(plans), class_of)
    return max(floor, 2 * sum(len(per_class) for per_class in counts.values()))


def _pairs_until(plans: list[ClaimPlan], bound: int) -> int:
    """The alternatives' request-device pairs, counted only until they pass ``bound`` (exact up to it)."""
    pairs = 0
    for plan in plans:
        for req in plan.requests:
            for alt in req.alternatives:
                pairs += len(alt.candidates)
                if pairs > bound:
                    return pairs
    return pairs


def _solve_staged(
    inv: Inventory,
    plans: list[ClaimPlan],
    classes: Classes | None,
    objective: Objective,
    deadline: float,
    workers: int,
    stats: Stats,
) -> Staged:
    """CP-SAT's answer, from a model with alike claims merged (first-fit), or built again with the claims under
    a match constraint apart where decoding needs them so; the solves of both are counted."""
    from .cp_sat.merge import SplitMatched
    from .cp_sat.model import build_model  # OR-Tools loads only when CP-SAT is needed (it takes a second)
    from .cp_sat.objectives import solve_staged

    model = build_model(inv, plans, classes=classes, deadline=deadline, merge=CAPABILITIES[objective].merges_alike)
    try:
        return solve_staged(model, objective, deadline, workers)
    except SplitMatched as split:
        # Claims merged under a match constraint decode only where the guess holds for them: else each
        # claim gets its own variables again (a model as big as claims x classes, but decodable).
        stats.notes.append(f"{split}: decoded again with such claims apart")
        found = split.found
    try:
        model = build_model(inv, plans, classes=classes, deadline=deadline, merge=True, matched=False)
        staged = solve_staged(model, objective, deadline, workers)
    except SolveTimeout:
        if found is None:
            raise
        return found  # time ran out before the model built again found any allocation
    if found is None:
        return staged
    return staged._replace(
        solves=staged.solves + found.solves,
        branches=staged.branches + found.branches,
        conflicts=staged.conflicts + found.conflicts,
    )


class _GaveUp(Exception):
    def __init__(self, classes: Classes | None) -> None:
        self.classes = classes  # counted for the scaled budget: the model reuses them


def _greedy_within_budget(
    inv: Inventory, plans: list[ClaimPlan], budget: int | None, deadline: float, stats: Stats
) -> tuple[GreedyResult, Classes | None]:
    """Depth-first search within ``budget`` tries, or (None) within the scaled budget. Counting that needs
    the equivalence classes; an input with too few request-device pairs to reach past the floor
    (the model has at most one variable per pair) never pays for them."""
    classes: Classes | None = None
    if budget is None:
        floor = LOADED_BUDGET if "ortools.sat.python.cp_model" in sys.modules else GREEDY_BUDGET
        pairs = 2 * _pairs_until(plans, GREEDY_BUDGET // 2)
        budget = max(floor, min(pairs, GREEDY_BUDGET))  # the scaled budget is at most ``pairs``
        if pairs > GREEDY_BUDGET:
            classes = equivalence_classes(RuleContext(inv, plans))
            budget = greedy_budget(plans, classes[1], floor)
    try:
        return greedy_search(SearchState(inv, plans), budget, deadline), classes
    except BudgetExhausted:
        stats.greedy_steps = stats.greedy_tries = budget
        raise _GaveUp(classes) from None


def _search(
    inv: Inventory,
    plans: list[ClaimPlan],
    solver: Solver,
    objective: Objective,
    deadline: float,
    workers: int,
    budget: int | None,
    stats: Stats,
) -> list[list[Pick]] | None:
    if time.monotonic() > deadline:
        raise SolveTimeout("the time limit was reached while evaluating selectors (raise --timeout)")
    classes: Classes | None = None
    depth_first = CAPABILITIES[objective].depth_first  # its answer is the objective's
    if solver is Solver.GREEDY or _search_decides_errors(plans):
        # These errors only count where the depth-first search reaches them: only it can tell.
        # Another objective still fails as Kubernetes' search does, then looks for its own answer.
        result = greedy_search(SearchState(inv, plans), deadline=deadline)
        _greedy_stats(stats, result, "greedy")
        if depth_first or result.picks is None:
            return result.picks
    elif depth_first and budget != 0:
        try:
            result, classes = _greedy_within_budget(inv, plans, budget, deadline, stats)
            _greedy_stats(stats, result, "greedy (within budget)")
            return result.picks
        except _GaveUp as gave_up:
            classes = gave_up.classes
            stats.notes.append(f"greedy search gave up after {stats.greedy_tries} device tries; CP-SAT took over")
    staged = _solve_staged(inv, plans, classes, objective, deadline, workers, stats)
    stats.cp_sat_solves, stats.exact = staged.solves, staged.exact
    stats.cp_sat_branches, stats.cp_sat_conflicts = staged.branches, staged.conflicts
    stats.solver = "cp-sat"
    picks = staged.picks
    if not stats.exact:
        stats.notes.append(
            f"the time limit was reached: this is the last complete allocation CP-SAT found, "
            f"which may not be the {objective} answer"
        )
    return picks
