"""Greedy against CP-SAT on the same claims: the comparison drasat promises, as plain data.

Kubernetes' allocator is a depth-first first-fit search; drasat's greedy twin is that
search. ``compare`` runs it and CP-SAT *alone* (no greedy budget in front, so the
comparison measures the constraint solver, not the default path's hand-over) on one
:class:`Problem`, and reports both verdicts, the devices each picked per request, wall
time and search statistics, and whether the choices are identical. Each side gets its
own CEL evaluator, so neither profits from the other's cached verdicts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from drasat.models.errors import AllocationError, DrasatError, EvaluationError, SolveTimeout, Unschedulable
from drasat.models.resource import AllocationResult
from drasat.solver.allocation.api import Allocation, Stats, allocate
from drasat.solver.allocation.options import Objective, Solver, as_objective
from drasat.solver.allocation.problem import Problem, claim_key
from drasat.solver.cel import SelectorEvaluator

ALLOCATED, UNSCHEDULABLE, TIMEOUT, ERROR = "allocated", "unschedulable", "timeout", "error"

Devices = dict[str, dict[str, list[str]]]  # claim (namespace/name) -> request -> devices as driver/pool/device


@dataclass(frozen=True)
class SideResult:
    """One search's answer: verdict, the devices per claim and request, time and statistics."""

    search: Solver
    objective: Objective
    verdict: str
    message: str
    devices: Devices
    seconds: float
    statistics: dict[str, Any] = field(default_factory=dict)
    results: dict[str, AllocationResult] = field(default_factory=dict, repr=False)  # for library users
    error: DrasatError | None = field(default=None, repr=False)  # what the search raised, with its ``about``

    def to_data(self) -> dict[str, Any]:
        return {
            "search": str(self.search),  # plain text: YAML has no way to write a str subclass
            "objective": str(self.objective),
            "verdict": self.verdict,
            "message": self.message,
            "seconds": round(self.seconds, 6),
            "statistics": self.statistics,
            "devices": self.devices,
        }


@dataclass(frozen=True)
class Comparison:
    """Both sides, and where their choices differ (empty when they are identical)."""

    node: str
    claims: list[str]
    greedy: SideResult
    cp_sat: SideResult
    differences: list[str]

    @property
    def identical(self) -> bool:
        return not self.differences

    def to_data(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "claims": self.claims,
            "identical": self.identical,
            "differences": self.differences,
            "greedy": self.greedy.to_data(),
            "cpSat": self.cp_sat.to_data(),
        }


def compare(
    problem: Problem,
    *,
    objective: Objective | str = Objective.FIRST_FIT,
    time_limit: float = 60.0,
    workers: int = 1,
    cel_engine: str | None = None,
) -> Comparison:
    """Run greedy (first-fit, as Kubernetes) and CP-SAT alone (``objective``) on ``problem``.

    Input errors (``InputError``) propagate: both sides would refuse the same input.
    Errors Kubernetes' allocator itself returns become an ``error`` verdict of that side.
    """
    objective = as_objective(objective)
    _warm_up(problem)
    greedy = _run(
        Solver.GREEDY,
        Objective.FIRST_FIT,
        lambda ev: allocate(problem, solver=Solver.GREEDY, time_limit=time_limit, evaluator=ev),
        cel_engine,
    )
    cp_sat = _run(
        Solver.CP_SAT,
        objective,
        lambda ev: allocate(
            problem,
            solver=Solver.CP_SAT,
            objective=objective,
            time_limit=time_limit,
            workers=workers,
            evaluator=ev,
            greedy_budget=0,
        ),
        cel_engine,
    )
    claims = [claim_key(claim) for claim in problem.claims]
    return Comparison(problem.node.name, claims, greedy, cp_sat, _differences(greedy, cp_sat, claims))


def _warm_up(problem: Problem) -> None:
    """Pay the one-off costs before either clock starts: OR-Tools' import (about a quarter of a
    second) and compiling the CEL expressions (programs are cached per process, so whichever side
    ran first would pay for both)."""
    from drasat.models.errors import Location
    from drasat.solver.allocation.cp_sat.model import build_model  # noqa: F401  (imports OR-Tools)
    from drasat.solver.cel.validate import check_cel

    for obj in [*problem.classes, *problem.claims]:
        check_cel(obj, Location("<warm-up>"))


def _run(
    search: Solver, objective: Objective, run: Callable[[SelectorEvaluator], Allocation], cel_engine: str | None
) -> SideResult:
    evaluator = SelectorEvaluator(cel_engine)
    started = time.perf_counter()
    try:
        answer = run(evaluator)
    except (Unschedulable, SolveTimeout, AllocationError, EvaluationError) as exc:
        verdict = {Unschedulable: UNSCHEDULABLE, SolveTimeout: TIMEOUT}.get(type(exc), ERROR)
        stats = getattr(exc, "stats", None)  # the search's statistics, where the solver attached them
        return SideResult(
            search,
            objective,
            verdict,
            str(exc),
            {},
            time.perf_counter() - started,
            _statistics(stats) if isinstance(stats, Stats) else {},
            error=exc,
        )
    seconds = time.perf_counter() - started
    return SideResult(
        search, objective, ALLOCATED, "", _devices(answer), seconds, _statistics(answer.stats), dict(answer.results)
    )


def _statistics(stats: Stats) -> dict[str, Any]:
    statistics: dict[str, Any] = {"path": stats.solver}
    if stats.greedy_steps:
        statistics.update(greedyTries=stats.greedy_tries, greedyBacktracks=stats.greedy_backtracks)
    if stats.cp_sat_solves:
        statistics.update(
            cpSatSolves=stats.cp_sat_solves, cpSatBranches=stats.cp_sat_branches, cpSatConflicts=stats.cp_sat_conflicts
        )
    if stats.notes:
        statistics["notes"] = list(stats.notes)
    return statistics


def _devices(answer: Allocation) -> Devices:
    out: Devices = {}
    for claim, result in answer.results.items():
        per_request = out.setdefault(claim, {})
        for device in result.devices.results if result.devices else []:
            per_request.setdefault(device.request, []).append(f"{device.driver}/{device.pool}/{device.device}")
    return out


def _differences(greedy: SideResult, cp_sat: SideResult, claims: list[str]) -> list[str]:
    """Human-readable differences: the verdict, else each claim/request whose devices differ."""
    if greedy.verdict != cp_sat.verdict:
        return [f"verdict: greedy {greedy.verdict}, cp-sat {cp_sat.verdict}"]
    out = []
    for claim in claims:
        left, right = greedy.devices.get(claim, {}), cp_sat.devices.get(claim, {})
        for request in sorted(set(left) | set(right)):
            if left.get(request) != right.get(request):
                out.append(
                    f"claim {claim}, request {request}: greedy {', '.join(left.get(request, [])) or '-'}; "
                    f"cp-sat {', '.join(right.get(request, [])) or '-'}"
                )
    return out
