"""Stage 4: the answer the user asked for, read off the CP-SAT model in stages.

*first-fit* is the allocation Kubernetes' depth-first search returns: for each
request in order, the earliest alternative that still allows a complete allocation,
then, device by device in inventory order, each device that still allows one. It is
solved lexicographically in stages; a stage only calls CP-SAT when the current
solution does not already show the next device is possible, so an easy input costs
a single solve. *prioritized-list* first minimises the total rank of the chosen
``firstAvailable`` entries (what the scheduler scores), then applies first-fit.
"""

from __future__ import annotations

import time
from collections import Counter

from ortools.sat.python import cp_model

from drasat.models.errors import SolveTimeout

from .candidates import Alternative
from .model import AllocationModel
from .problem import PRIORITIZED
from .state import Pick, SearchState



class _Stages:
    """Feasibility checks on one model that only ever gains constraints; the last solution is kept."""

    def __init__(self, m: AllocationModel, deadline: float, workers: int) -> None:
        self.m, self.deadline, self.workers = m, deadline, workers
        self.tracked = [*m.use.values(), *m.take.values()]
        self.values: dict[int, int] = {}
        self.solves = 0

    def solve(self, assume: cp_model.IntVar | None = None) -> bool:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise SolveTimeout("the CP-SAT solver ran out of time (raise --timeout)")
        model = self.m.model
        model.clear_hints()
        for var in self.tracked:
            if var.index in self.values:
                model.add_hint(var, self.values[var.index])
        model.clear_assumptions()
        if assume is not None:
            model.add_assumptions([assume])
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = remaining
        solver.parameters.num_workers = self.workers
        solver.parameters.catch_sigint_signal = False   # Ctrl-C belongs to the caller (drasat exits 130)
        # The first solve decides feasibility and may need presolve on a hard model; the
        # stages after it are small variations of a model just solved, where presolve is
        # most of the cost (measured: 3-5x faster stages on partitioned GPUs).
        solver.parameters.cp_model_presolve = self.solves == 0
        status = solver.solve(model)
        self.solves += 1
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            self.values = {var.index: solver.value(var) for var in self.tracked}
            return True
        if status == cp_model.INFEASIBLE:
            return False
        raise SolveTimeout("the CP-SAT solver ran out of time before it decided (raise --timeout)")

    def value(self, var: cp_model.IntVar) -> int:
        return self.values[var.index]

    def at_least(self, var: cp_model.IntVar, bound: int) -> bool:
        """Fix ``var >= bound`` if some complete allocation allows it; return whether it did."""
        model = self.m.model
        if self.value(var) < bound:
            trial = model.new_bool_var(f"try[{var.name}>={bound}]")
            model.add(var >= bound).only_enforce_if(trial)
            if not self.solve(trial):
                return False
        model.add(var >= bound)
        return True

    def minimize_rank(self) -> None:
        model = self.m.model
        rank = sum(alt.rank * self.m.use[key] for key, alt in self.m.alts.items())
        model.minimize(rank)
        self.solve()
        best = sum(alt.rank * self.value(self.m.use[key]) for key, alt in self.m.alts.items())
        model.clear_objective()
        model.add(rank <= best)


def solve_staged(m: AllocationModel, objective: str, time_limit: float, workers: int) -> tuple[list[list[Pick]] | None, int]:
    """The chosen picks per claim (None: no allocation exists) and the number of CP-SAT solves."""
    stages = _Stages(m, time.monotonic() + time_limit, workers)
    stages.values = first_fit_hint(m)
    if not stages.solve():
        return None, stages.solves
    if objective == PRIORITIZED:
        stages.minimize_rank()
    decoder = _Decoder(m, stages)
    picks = [decoder.claim(plan) for plan in m.plans]
    return picks, stages.solves


def first_fit_hint(m: AllocationModel) -> dict[int, int]:
    """A first-fit guess without backtracking, as CP-SAT's starting point.

    Each request takes the first devices that fit given the requests before it; a request
    that does not fit is left out. Where the guess is right — usually for most claims —
    the staged decoding needs no further solve.
    """
    state = SearchState(m.inv, m.plans)
    values: dict[int, int] = {}
    for plan in m.plans:
        for req in plan.requests:
            for alt in req.alternatives:
                picks = _fill(state, plan.index, alt)
                if picks is not None:
                    values[m.use[id(alt)].index] = 1
                    for k, var in m.takes(alt).items():
                        values[var.index] = sum(1 for p in picks if m.class_of[p.device] == k)
                    break
    return values


def _fill(state: SearchState, claim: int, alt: Alternative) -> list[Pick] | None:
    picks: list[Pick] = []
    for device in alt.candidates:
        if len(picks) == alt.count:
            break
        pick = state.try_add(claim, alt, device, must=False) if not alt.errors else None
        if pick is not None:
            picks.append(pick)
        elif alt.mode == "All":
            break
    if len(picks) == alt.count:
        return picks
    for pick in reversed(picks):
        state.remove(claim, pick)
    return None


class _Decoder:
    """Walks claims and requests in order, fixing alternatives and concrete devices first-fit."""

    def __init__(self, m: AllocationModel, stages: _Stages) -> None:
        self.m, self.stages = m, stages
        self.used: set[int] = set()

    def claim(self, plan) -> list[Pick]:
        held: set[int] = set()
        picks: list[Pick] = []
        for req in plan.requests:
            alt = self._alternative(req.alternatives)
            picks.extend(self._devices(alt, held))
        return picks

    def _alternative(self, alternatives: list[Alternative]) -> Alternative:
        for alt in alternatives[:-1]:
            if self.stages.at_least(self.m.use[id(alt)], 1):
                return alt
            self.m.model.add(self.m.use[id(alt)] == 0)
        last = alternatives[-1]
        self.m.model.add(self.m.use[id(last)] == 1)
        return last

    def _devices(self, alt: Alternative, held: set[int]) -> list[Pick]:
        takes, picks = self.m.takes(alt), list[Pick]()
        taken: Counter[int] = Counter()
        closed: set[int] = set()
        for device in alt.candidates:
            if len(picks) == alt.count:
                break
            k = self.m.class_of[device]
            if k in closed or not self._free(alt, device, held):
                continue
            if alt.mode == "All" or self.stages.at_least(takes[k], taken[k] + 1):
                taken[k] += 1
                picks.append(self._take(alt, device, held))
            else:
                self.m.model.add(takes[k] <= taken[k])
                closed.add(k)
        for k, var in takes.items():
            self.m.model.add(var == taken[k])
        return picks

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
