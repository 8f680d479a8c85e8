"""Stage 4: the answer the user asked for, read off the CP-SAT model in stages.

*first-fit* is the allocation Kubernetes' depth-first search returns: for each
request in order, the earliest alternative that still allows a complete allocation,
then, device by device in inventory order, each device that still allows one. It is
solved lexicographically in stages; a stage only calls CP-SAT when the current
solution does not already show the next device is possible, so an easy input costs
a single solve. Whole runs of requests are taken from the guess without backtracking
where CP-SAT shows them extendable (:mod:`.first_fit`), and the devices a request passes
over are ruled out in one solve that minimises the position of its next device, so a big input
costs a handful of solves, not one per claim;
alike claims are one count in the model (:mod:`.merge`). *prioritized-list* first
minimises the total rank of the chosen ``firstAvailable`` entries (what the scheduler
scores), then applies first-fit. *pack*
keeps Kubernetes' ``firstAvailable`` semantics — request by request, in order, the
earliest entry with which a complete allocation exists, as first-fit decides them —
and only then, among the devices those entries allow, touches as few devices and
counter sets as it can and leaves the biggest free partitions (:mod:`packing`), then
applies first-fit. (Its entries are never later than first-fit's, compared request by
request: first-fit also keeps its earlier requests' devices fixed when it decides the
next request's entry, pack only their entries. "Best total rank, then pack" is not an
objective: a lower rank bought with a later entry for an earlier request is not what
the API's order says.)

The stages work on a copy of the built model, so the same :class:`AllocationModel` can
be solved again (another objective, or an explanation under other assumptions).
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from typing import Iterator, NamedTuple, Sequence

from ortools.sat.python import cp_model

from drasat.models.errors import InternalError, SolveTimeout

from .model import AllocationModel
from .first_fit import decode_first_fit, first_fit_hint
from .packing import minimize_footprint
from .plan import Alternative, ClaimPlan, Pick, RequestPlan
from .problem import PACK, PRIORITIZED
from .merge import SplitMatched


_BLANK = cp_model.CpModel()
_EMPTY = _BLANK.proto.constraints.add()  # a constraint of no kind: what ``scratch`` leaves behind


class _Stages:
    """Feasibility checks on a copy of the model that only ever gains constraints; the last solution is kept."""

    def __init__(self, m: AllocationModel, deadline: float, workers: int) -> None:
        self.m, self.deadline, self.workers = m, deadline, workers
        self.model = _assuming_all(m)
        self.tracked = [var for v in m.vars.values() for var in (v.use, *v.takes.values())]
        self.tracked += list({var.index: var for counts in m.per_label.values() for var in counts.values()}.values())
        self.values: dict[int, int] = {}
        self.solves = self.branches = self.conflicts = 0
        self.found = False  # whether some solve found an allocation yet (see solve)
        self.optimal = False  # whether the last solution found was proven optimal (for a solve with an objective)
        # Once time is up, the last complete allocation found is decoded as it stands: every question
        # is then answered from ``values`` instead of by another solve.
        self.frozen = False
        # A best-effort stage's budget in CP-SAT's deterministic time (machine-independent, so answers stay
        # reproducible): the best solution found within it is kept; None: solve to optimality.
        self.effort: float | None = None

    def solve(self, *assume: cp_model.IntVar, hint: dict[int, int] | None = None, hint_only: bool = False) -> bool:
        """Whether the model has a solution under the assumptions ``assume``; if so, it becomes ``values``.
        The hint is ``hint`` when given, else the last solution; ``hint_only`` fixes the hinted variables
        (a check of a complete guess by propagation alone: "no" then says nothing about the model)."""
        if self.frozen:
            raise SolveTimeout("the CP-SAT solver ran out of time (raise --timeout)")
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise SolveTimeout("the CP-SAT solver ran out of time (raise --timeout)")
        model = self.model
        model.proto.clear_solution_hint()  # the last solution as the hint, in bulk (not one call per variable)
        hint = self.values if hint is None else hint
        model.proto.solution_hint.vars.extend(hint.keys())
        model.proto.solution_hint.values.extend(hint.values())
        model.clear_assumptions()
        model.add_assumptions(assume)
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = remaining
        solver.parameters.num_workers = self.workers
        solver.parameters.catch_sigint_signal = False   # Ctrl-C belongs to the caller (drasat exits 130)
        # The first solve decides feasibility and may need presolve on a hard model; the
        # stages after it are small variations of a model just solved, where presolve is
        # most of the cost (measured: 3-5x faster stages on partitioned GPUs). Checking a
        # complete guess needs neither presolve nor the linear relaxation (3,072 devices and
        # 768 claims: 3 s, where a presolved first solve did not finish in 20 s).
        solver.parameters.cp_model_presolve = not self.found and not hint_only
        if self.found:
            # Decoding's solves are small variations of one just solved: neither cuts nor symmetry detection
            # earn their set-up there (tight packing, 100 such solves: a quarter less CPU without them).
            solver.parameters.cut_level = 0
            solver.parameters.symmetry_level = 0
        if hint_only:
            solver.parameters.fix_variables_to_their_hinted_value = True
            solver.parameters.linearization_level = 0
        if self.effort is not None:
            solver.parameters.max_deterministic_time = self.effort
        status = solver.solve(model)
        self.solves += 1
        self.branches += solver.num_branches
        self.conflicts += solver.num_conflicts
        return self._read(solver, status)

    def _read(self, solver: cp_model.CpSolver, status: cp_model.CpSolverStatus) -> bool:
        """CP-SAT's status in drasat's terms: an answer, none, out of time, or a bug of ours."""
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            self.found = True
            self.optimal = status == cp_model.OPTIMAL
            solution = list(solver.response_proto.solution)
            self.values = {var.index: solution[var.index] for var in self.tracked}
            return True
        if status == cp_model.INFEASIBLE:
            return False
        if status == cp_model.MODEL_INVALID:
            raise InternalError(f"drasat built a CP-SAT model the solver calls invalid: "
                                f"{self.model.validate() or 'no validation message'}")
        if status == cp_model.UNKNOWN and time.monotonic() >= self.deadline - 0.05:
            raise SolveTimeout("the CP-SAT solver ran out of time before it decided (raise --timeout)")
        if status == cp_model.UNKNOWN and self.effort is not None:
            return False  # nothing found within a best-effort stage's budget
        raise InternalError(f"the CP-SAT solver stopped with status {solver.status_name(status)} "
                            f"before its time was up: {solver.solution_info() or 'no reason given'}")

    def value(self, var: cp_model.IntVar) -> int:
        return self.values[var.index]

    def at_least(self, var: cp_model.IntVar, bound: int) -> bool:
        """Fix ``var >= bound`` if some complete allocation allows it; return whether it did."""
        if self.frozen:
            return self.value(var) >= bound
        if self.value(var) < bound:
            with self.scratch():
                trial = self.model.new_bool_var(f"try[{var.name}>={bound}]")
                self.model.add(var >= bound).only_enforce_if(trial)
                if not self.solve(trial):
                    return False
        self.model.add(var >= bound)
        return True

    @contextmanager
    def scratch(self) -> Iterator[None]:
        """Variables and constraints added within are gone afterwards: the constraints emptied, the variables
        fixed to 0 (the proto cannot shrink). A question's trial literals, enforced constraints and choices
        would otherwise pile up, and every later solve loads them again (tight packing, 98 solves: thousands
        of dead constraints by the end, and a quarter of the CPU time)."""
        proto = self.model.proto
        constraints, variables = len(proto.constraints), len(proto.variables)
        try:
            yield
        finally:
            for index in range(constraints, len(proto.constraints)):
                proto.constraints[index].copy_from(_EMPTY)
            for index in range(variables, len(proto.variables)):
                proto.variables[index].domain.clear()
                proto.variables[index].domain.extend([0, 0])

    def solve_best(self, objective: cp_model.LinearExprT, *assume: cp_model.IntVar,
                   hint: dict[int, int] | None = None) -> bool:
        """Like :meth:`solve`, minimising ``objective``; a solution found is proven optimal (else SolveTimeout:
        only the time limit stops a solve short of the proof here)."""
        self.model.minimize(objective)
        try:
            if not self.solve(*assume, hint=hint):
                return False
        finally:
            self.model.clear_objective()
        if not self.optimal:
            raise SolveTimeout("the CP-SAT solver ran out of time (raise --timeout)")
        return True

    def first_possible(self, options: Sequence[tuple[cp_model.IntVar, int]]) -> int | None:
        """The index of the first option ``var >= bound`` that some complete allocation allows (None: none
        does), in one solve that minimises the index: asking option by option, or by halves, costs a solve
        per question, and each solve sets up the linear relaxation again (most of a small solve's time)."""
        if self.frozen:
            return next((i for i, (var, bound) in enumerate(options) if self.value(var) >= bound), None)
        with self.scratch():
            chosen = [self.model.new_bool_var(f"try[{var.name}>={bound}]") for var, bound in options]
            self.model.add_exactly_one(chosen)
            for choice, (var, bound) in zip(chosen, options):
                self.model.add(var >= bound).only_enforce_if(choice)
            if not self.solve_best(sum(i * choice for i, choice in enumerate(chosen))):
                return None
        # Optimal: no earlier option holds in this solution, or choosing it would have been better.
        return next(i for i, (var, bound) in enumerate(options) if self.value(var) >= bound)

    def minimize_rank(self) -> None:
        pairs = [(v.alt.rank, v.use) for v in self.m.vars.values()]
        rank = sum(r * use for r, use in pairs)
        self.solve_best(rank)  # proven least, else SolveTimeout (the allocation found stands, not exact)
        self.model.add(rank <= sum(r * self.value(use) for r, use in pairs))


def _assuming_all(m: AllocationModel) -> cp_model.CpModel:
    """A copy of the model in which every rule instance holds: its assumption literals are fixed true
    and dropped from the constraints they enforce. (Enforced constraints stay out of CP-SAT's linear
    relaxation, and the stages after the first solve run without the presolve that would drop them.)
    The built model keeps its literals free for explanations."""
    model = m.model.clone()
    assumed = {a.literal.index for a in m.assumptions}
    for constraint in model.proto.constraints:
        if any(literal in assumed for literal in constraint.enforcement_literal):
            kept = [literal for literal in constraint.enforcement_literal if literal not in assumed]
            constraint.enforcement_literal.clear()
            constraint.enforcement_literal.extend(kept)
    for literal in m.literals():
        model.add(literal == 1)
    return model


class Staged(NamedTuple):
    """What the staged solves found, and what they cost."""

    picks: list[list[Pick]] | None  # None: no allocation exists
    solves: int
    exact: bool  # False: the time limit cut the stages short; ``picks`` is the last complete allocation found
    branches: int
    conflicts: int


def solve_staged(m: AllocationModel, objective: str, deadline: float, workers: int) -> Staged:
    """The chosen picks per claim, whether they are the objective's answer, and the solver's effort.

    ``deadline`` is a ``time.monotonic()`` value shared with the rest of the allocate call. When it
    passes after a first allocation was found but before the objective's answer was decoded, that
    allocation is returned as it stands, marked not exact; before any allocation, SolveTimeout."""
    stages = _Stages(m, deadline, workers)
    stages.values = first_fit_hint(m)

    def result(picks: list[list[Pick]] | None, exact: bool = True) -> Staged:
        return Staged(picks, stages.solves, exact, stages.branches, stages.conflicts)

    guessed = _covers_every_request(m, stages.values) and stages.solve(hint_only=True)
    if not guessed and not stages.solve():
        return result(None)
    try:
        if objective == PRIORITIZED:
            stages.minimize_rank()
            return result(_decode(m, stages))
        if objective == PACK:
            _first_available_in_order(m, stages)
            minimize_footprint(stages)
            return result(_decode(m, stages))
        return result(decode_first_fit(m, stages, _Decoder(m, stages)))
    except SplitMatched as split:
        stages.frozen = True  # what stands should time run out before the model built again finds an allocation
        raise SplitMatched(str(split), result(_decode(m, stages), exact=False)) from None
    except SolveTimeout:
        stages.frozen = True
        return result(_decode(m, stages), exact=False)


def _first_available_in_order(m: AllocationModel, stages: _Stages) -> None:
    """Fix every request's ``firstAvailable`` entry as first-fit decides it (the earliest that still allows
    a complete allocation, request by request), leaving the devices free for pack to choose."""
    decoder = _Decoder(m, stages)
    for plan in m.plans:
        for req in plan.requests:
            decoder.alternative(req.alternatives)


def _decode(m: AllocationModel, stages: _Stages) -> list[list[Pick]]:
    decoder = _Decoder(m, stages)
    return [decoder.claim(plan) for plan in m.plans]


def _covers_every_request(m: AllocationModel, values: dict[int, int]) -> bool:
    return all(any(values.get(m.use(alt).index) for alt in req.alternatives) for plan in m.plans for req in plan.requests)


class _Decoder:
    """Walks claims and requests in order, fixing alternatives and concrete devices first-fit."""

    def __init__(self, m: AllocationModel, stages: _Stages) -> None:
        self.m, self.stages, self.model = m, stages, stages.model
        self.used: set[int] = set()
        self.held: dict[int, set[int]] = {}  # claim -> the devices it holds
        # Devices drawn so far per take variable: a claim's own count, or a merged group's running total.
        self.drawn: Counter[int] = Counter()

    def claim(self, plan: ClaimPlan) -> list[Pick]:
        return [pick for req in plan.requests for pick in self.request(plan, req)]

    def request(self, plan: ClaimPlan, req: RequestPlan) -> list[Pick]:
        """One request's alternative and devices, each the first that still allows a complete allocation."""
        alt = self.alternative(req.alternatives)
        if self.m.label_counts(alt):
            if self.stages.frozen:
                return self._under_one_label(alt, self.held.setdefault(plan.index, set()))
            raise SplitMatched(f"claim {plan.label} is merged under a match constraint")
        return self._devices(alt, self.held.setdefault(plan.index, set()))

    def _under_one_label(self, alt: Alternative, held: set[int]) -> list[Pick]:
        """A claim merged under a match constraint, decoded from the last solution as it stands (time is up):
        its devices all under the first label, in device order, that still has a claim of the group there
        (class counts by themselves could split a claim across labels)."""
        takes, by_label = self.m.takes(alt), self.m.label_counts(alt)
        taken = _Drawn(takes, self.drawn)
        shown = [(d, self.m.class_of[d]) for d in alt.candidates
                 if self._free(alt, d, held) and self._shown(takes, taken, self.m.class_of[d])]
        label = next(by_label[k].index for _, k in shown if self.stages.value(by_label[k]) > self.drawn[by_label[k].index])
        self.drawn[label] += 1
        picks: list[Pick] = []
        for device, k in shown:
            if len(picks) < alt.count and by_label[k].index == label and self._shown(takes, taken, k):
                taken.add(k)
                picks.append(self._take(alt, device, held))
        return picks

    def accept(self, plan: ClaimPlan, req: RequestPlan, alt: Alternative, picks: Sequence[Pick]) -> None:
        """Take picks known to be first-fit's own (the caller proved them so) as if decoded here. Only the
        chosen alternative and the classes it takes are fixed: the request's own constraints (one
        alternative, its count) fix the rest."""
        self.model.add(self.m.use(alt) == 1)
        takes = self.m.takes(alt)
        for k, count in Counter(self.m.class_of[p.device] for p in picks).items():
            self.drawn[takes[k].index] += count
            if self.m.is_merged(alt):
                self.model.add(takes[k] >= self.drawn[takes[k].index])
            else:
                self.model.add(takes[k] == count)
        by_label = self.m.label_counts(alt)
        if by_label and picks:
            claims = by_label[self.m.class_of[picks[0].device]]
            self.drawn[claims.index] += 1
            self.model.add(claims >= self.drawn[claims.index])
        held = self.held.setdefault(plan.index, set())
        for pick in picks:
            self._take(alt, pick.device, held)

    def alternative(self, alternatives: Sequence[Alternative]) -> Alternative:
        """The earliest alternative that still allows a complete allocation, fixed in the model."""
        for alt in alternatives[:-1]:
            if self.stages.at_least(self.m.use(alt), 1):
                return alt
            self.model.add(self.m.use(alt) == 0)
        last = alternatives[-1]
        self.model.add(self.m.use(last) == 1)
        return last

    def _devices(self, alt: Alternative, held: set[int]) -> list[Pick]:
        takes, picks = self.m.takes(alt), list[Pick]()
        taken = _Drawn(takes, self.drawn)
        closed: set[int] = set()
        order = list(alt.candidates)
        at = 0
        while at < len(order) and len(picks) < alt.count:
            device = order[at]
            k = self.m.class_of[device]
            if k in closed or not self._free(alt, device, held):
                at += 1
                continue
            if alt.mode != "All" and not self._shown(takes, taken, k):
                self._close_before(order, at, alt, held, takes, taken, closed)
                continue  # either this device is shown possible now, or its class is closed
            if alt.mode == "All" or self.stages.at_least(takes[k], taken[k] + 1):
                taken.add(k)
                picks.append(self._take(alt, device, held))
            at += 1
        if not self.m.is_merged(alt):  # a merged group's count also holds the claims still to come
            for k, var in takes.items():
                self.model.add(var == taken[k])
        return picks

    def _shown(self, takes: dict[int, cp_model.IntVar], taken: _Drawn, k: int) -> bool:
        return self.stages.value(takes[k]) > taken[k]

    def _close_before(self, order: list[int], at: int, alt: Alternative, held: set[int],
                      takes: dict[int, cp_model.IntVar], taken: _Drawn, closed: set[int]) -> None:
        """The next device is not shown possible by the last solution: find the first open class, in device
        order, that can give one more device, up to the first one the last solution shows (or to the end),
        in one solve, and close the classes before it. Each pick takes at most one solve, not one per class
        passed over."""
        window: list[int] = []
        for device in order[at:]:
            k = self.m.class_of[device]
            if k in closed or k in window or not self._free(alt, device, held):
                continue
            window.append(k)
            if self._shown(takes, taken, k):
                break
        first = self.stages.first_possible([(takes[k], taken[k] + 1) for k in window])
        for k in window[:len(window) if first is None else first]:
            self.model.add(takes[k] <= taken[k])
            closed.add(k)

    def _free(self, alt: Alternative, device: int, held: set[int]) -> bool:
        if self.m.inv.devices[device].shared:
            return True
        return device not in held and (alt.admin or device not in self.used)

    def _take(self, alt: Alternative, device: int, held: set[int]) -> Pick:
        if self.m.inv.devices[device].shared:
            return Pick(alt, device, alt.share.get(device))
        held.add(device)
        if not alt.admin:
            self.used.add(device)
        return Pick(alt, device)


class _Drawn:
    """How many devices of each class the alternative's variables have drawn: the request's own picks,
    or for a merged group (merge.py) every pick of its claims decided so far."""

    def __init__(self, takes: dict[int, cp_model.IntVar], drawn: Counter[int]) -> None:
        self.takes, self.drawn = takes, drawn

    def __getitem__(self, k: int) -> int:
        return self.drawn[self.takes[k].index]

    def add(self, k: int) -> None:
        self.drawn[self.takes[k].index] += 1
