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

from collections import Counter
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ortools.sat.python import cp_model

from drasat.models.errors import SolveTimeout
from drasat.solver.allocation.options import Objective
from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan, Pick, RequestPlan

from .first_fit import decode_first_fit, first_fit_hint
from .merge import SplitMatched
from .model import AllocationModel
from .packing import minimize_footprint
from .stages import Stages


class Staged(NamedTuple):
    """What the staged solves found, and what they cost."""

    picks: list[list[Pick]] | None  # None: no allocation exists
    solves: int
    exact: bool  # False: the time limit cut the stages short; ``picks`` is the last complete allocation found
    branches: int
    conflicts: int


def solve_staged(m: AllocationModel, objective: Objective, deadline: float, workers: int) -> Staged:
    """The chosen picks per claim, whether they are the objective's answer, and the solver's effort.

    ``deadline`` is a ``time.monotonic()`` value shared with the rest of the allocate call. When it
    passes after a first allocation was found but before the objective's answer was decoded, that
    allocation is returned as it stands, marked not exact; before any allocation, SolveTimeout."""
    stages = Stages(m, deadline, workers)
    stages.values = first_fit_hint(m)

    def result(picks: list[list[Pick]] | None, exact: bool = True) -> Staged:
        return Staged(picks, stages.solves, exact, stages.branches, stages.conflicts)

    guessed = _covers_every_request(m, stages.values) and stages.solve(hint_only=True)
    if not guessed and not stages.solve():
        return result(None)
    try:
        return result(_STAGES[objective](m, stages))
    except SplitMatched as split:
        stages.frozen = True  # what stands should time run out before the model built again finds an allocation
        raise SplitMatched(str(split), result(_decode(m, stages), exact=False)) from None
    except SolveTimeout:
        stages.frozen = True
        return result(_decode(m, stages), exact=False)


def _first_fit(m: AllocationModel, stages: Stages) -> list[list[Pick]]:
    return decode_first_fit(m, stages, _Decoder(m, stages))


def _prioritized_list(m: AllocationModel, stages: Stages) -> list[list[Pick]]:
    stages.minimize_rank()
    return _decode(m, stages)


def _pack(m: AllocationModel, stages: Stages) -> list[list[Pick]]:
    _first_available_in_order(m, stages)
    minimize_footprint(stages)
    return _decode(m, stages)


def _first_available_in_order(m: AllocationModel, stages: Stages) -> None:
    """Fix every request's ``firstAvailable`` entry as first-fit decides it (the earliest that still allows
    a complete allocation, request by request), leaving the devices free for pack to choose."""
    decoder = _Decoder(m, stages)
    for plan in m.plans:
        for req in plan.requests:
            decoder.alternative(req.alternatives)


def _decode(m: AllocationModel, stages: Stages) -> list[list[Pick]]:
    decoder = _Decoder(m, stages)
    return [decoder.claim(plan) for plan in m.plans]


def _covers_every_request(m: AllocationModel, values: dict[int, int]) -> bool:
    return all(
        any(values.get(m.use(alt).index) for alt in req.alternatives) for plan in m.plans for req in plan.requests
    )


class _Decoder:
    """Walks claims and requests in order, fixing alternatives and concrete devices first-fit."""

    def __init__(self, m: AllocationModel, stages: Stages) -> None:
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
        shown = [
            (d, self.m.class_of[d])
            for d in alt.candidates
            if self._free(alt, d, held) and self._shown(takes, taken, self.m.class_of[d])
        ]
        label = next(
            by_label[k].index for _, k in shown if self.stages.value(by_label[k]) > self.drawn[by_label[k].index]
        )
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

    def _close_before(
        self,
        order: list[int],
        at: int,
        alt: Alternative,
        held: set[int],
        takes: dict[int, cp_model.IntVar],
        taken: _Drawn,
        closed: set[int],
    ) -> None:
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
        for k in window[: len(window) if first is None else first]:
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


_STAGES: dict[Objective, Callable[[AllocationModel, Stages], list[list[Pick]]]] = {
    Objective.FIRST_FIT: _first_fit,
    Objective.PRIORITIZED_LIST: _prioritized_list,
    Objective.PACK: _pack,
}
"""Each objective's stages after the first allocation, ending with the picks decoded."""
