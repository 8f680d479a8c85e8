"""Solving the counting model anytime: CP-SAT in a thread of its own, the best counts found so far always held.

CP-SAT runs in C++ without Python's lock, so the scheduler-order pass (pure Python) runs beside it on
the other core. Every solution CP-SAT finds is read off at once (:class:`Counts`), so that the time
limit, a stop asked by the caller, or Ctrl-C leave the best counts so far, with CP-SAT's bound beside
them and whether they are proven optimal. The search is one worker and a fixed seed by default: the
same input gives the same counts, unless the time limit cuts it at another point.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from .counting import CountingModel, tie_weights, weights

Progress = Callable[[int, int | None, float], None]  # pods placed, bound (None: not known yet), seconds left
SEED = 1
HALT_POLL = 0.1  # seconds between looks at the caller's halt
TIE_EFFORT = 1.0  # CP-SAT's deterministic time (about seconds) for breaking ties in the queue's order
FOUND = (cp_model.OPTIMAL, cp_model.FEASIBLE)
GANG_EFFORT = 1.0  # the same, for the most gangs whole, searched first and alone (see ``Search._ties``)


@dataclass
class Counts:
    """One solution of the counting model: pods per node and pod class, gangs placed, and its standing."""

    on_node: dict[str, dict[int, int]] = field(default_factory=dict)  # node -> pod class -> pods (non-zero only)
    singles: dict[int, int] = field(default_factory=dict)
    members: dict[tuple[int, int], int] = field(default_factory=dict)  # (gang, pod class) -> pods placed
    gangs: dict[int, bool] = field(default_factory=dict)
    placed: int = 0
    bound: int | None = None  # CP-SAT's bound on pods placed (None: not known)
    proven: bool = False  # optimal, priority by priority
    solutions: int = 0


class _Reader(cp_model.CpSolverSolutionCallback):
    """Keeps the newest solution's counts (each is at least as good as the one before)."""

    def __init__(self, counting: CountingModel, progress: Progress | None, ends: float) -> None:
        super().__init__()
        self.counting, self.progress, self.ends = counting, progress, ends
        self.best: Counts | None = None
        self.lock = threading.Lock()
        self.bound_of: Callable[[float], int] | None = None  # pods bound from the objective's, while it is known

    def on_solution_callback(self) -> None:
        counts = read(self.counting, self.value)
        with self.lock:
            counts.solutions = (self.best.solutions if self.best else 0) + 1
            self.best = counts
        if self.progress is not None:
            bound = self.bound_of(self.best_objective_bound) if self.bound_of is not None else None
            self.progress(counts.placed, bound, max(0.0, self.ends - time.monotonic()))


def read(counting: CountingModel, value: Callable[[cp_model.IntVar], int]) -> Counts:
    """The counts of a solution, by ``value`` (a callback's or a solver's)."""
    counts = Counts()
    for node, counted in counting.nodes.items():
        here = {p: n for p, var in counted.pods.items() if (n := value(var))}
        if here:
            counts.on_node[node] = here
    counts.singles = {p: value(var) for p, var in counting.singles.items()}
    counts.members = {key: value(var) for key, var in counting.members.items()}
    counts.gangs = {g: bool(value(var)) for g, var in counting.gangs.items()}
    counts.placed = sum(counts.singles.values()) + sum(counts.members.values())
    return counts


class Search:
    """The counting model solved in a background thread until ``ends``, a :meth:`stop`, or a proof."""

    def __init__(
        self,
        counting: CountingModel,
        ends: float,
        *,
        workers: int = 1,
        progress: Progress | None = None,
        halt: threading.Event | None = None,
        tie_effort: float = TIE_EFFORT,
    ):
        self.counting, self.ends, self.halt, self.tie_effort = counting, ends, halt, tie_effort
        self.solver = cp_model.CpSolver()
        self.solver.parameters.num_workers = max(1, workers)
        self.solver.parameters.random_seed = SEED
        self.solver.parameters.catch_sigint_signal = False  # Ctrl-C belongs to the caller (see ``halt``)
        # CP-SAT's default linearization (level 1): level 2 proved 100 over-subscribed nodes twice as fast but
        # found no full answer for 500 nodes whose pods all fit in 40 s, where level 1 proves it in ~10 s.
        self._reader = _Reader(counting, progress, ends)
        self._done = threading.Event()
        self._proven = False
        self._bound: int | None = None
        # The values of the last solve that found a solution: the one the best counts come from (a later solve
        # cut short by time, the tie-break's or a priority level's, leaves the solver without values).
        self._solution: list[int] = []
        self._thread = threading.Thread(target=self._run, name="drasat-batch-search", daemon=True)

    def start(self) -> Search:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.solver.stop_search()

    @property
    def proven(self) -> bool:
        """Whether the search has finished with a proof of optimality (safe to ask while it runs)."""
        return self._done.is_set() and self._proven

    def value(self, var: cp_model.IntVar) -> int:
        """A variable's value in the best solution found (once the search has ended)."""
        index = var.index
        return self._solution[index] if index >= 0 else 1 - self._solution[-index - 1]

    def wait(self) -> None:
        """Until the search ends."""
        self._thread.join()

    def result(self) -> Counts | None:
        """The best counts found (waits for the search to end)."""
        self._thread.join()
        best = self._reader.best
        if best is not None:
            best.proven, best.bound = self._proven, self._bound
        return best

    def _run(self) -> None:
        if self.halt is not None:
            threading.Thread(target=self._watch, name="drasat-batch-halt", daemon=True).start()
        try:
            if self._most_pods():
                self._ties()
        finally:
            self._done.set()

    def _watch(self) -> None:
        """Stops CP-SAT once ``halt`` is set (CP-SAT hears no Python signal): polled, as an Event has no callback."""
        assert self.halt is not None
        while not self._done.wait(HALT_POLL):
            if self.halt.is_set():
                self.stop()
                return

    def _left(self) -> float:
        """Seconds the next solve may take (the least CP-SAT accepts, once halted)."""
        halted = self.halt is not None and self.halt.is_set()
        return 0.01 if halted else max(0.01, self.ends - time.monotonic())

    def _solve(
        self, model: cp_model.CpModel, effort: float | None = None, goal: cp_model.LinearExprT | None = None
    ) -> cp_model.CpSolverStatus:
        """``model`` solved (maximizing ``goal`` when given) within the time left and ``effort``; the values kept
        when it found a solution."""
        if goal is not None:
            model.maximize(goal)
        parameters = self.solver.parameters
        parameters.max_time_in_seconds = self._left()
        parameters.max_deterministic_time = effort if effort is not None else float("inf")
        status = self.solver.solve(model, self._reader)
        if status in FOUND:
            self._solution = list(self.solver.response_proto.solution)
        return status

    def _most_pods(self) -> bool:
        """The most pods, priority by priority: one weighted solve, or one per level where weights would not
        fit. Returns whether that is proven optimal."""
        counting, scale = self.counting, weights(self.counting)
        if scale is None:
            self._proven = self._staged()
            return self._proven
        counting.model.maximize(sum(w * expr for w, (_, expr, _) in zip(scale, counting.levels)))
        if counting.levels:
            self._reader.bound_of = lambda objective: _pods_bound(objective, scale, counting)
        status = self._solve(counting.model)
        self._reader.bound_of = None
        self._proven = status == cp_model.OPTIMAL
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) and counting.levels:
            self._bound = _pods_bound(self.solver.best_objective_bound, scale, counting)
        return self._proven

    def _staged(self) -> bool:
        """One solve per priority level, highest first, each keeping the level's best (on a copy of the model:
        the caller may search it again after adding cuts)."""
        model, proven = self.counting.model.clone(), True
        for _, expr, _ in self.counting.levels:
            model.maximize(expr)
            status = self._solve(model)
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                return False
            proven &= status == cp_model.OPTIMAL
            model.add(expr >= round(self.solver.objective_value))
            if time.monotonic() >= self.ends:
                return False
        return proven

    def _ties(self) -> None:
        """Among the answers with the proven most pods, the one running more gangs whole, then the one the
        queue's order prefers (earlier classes), searched with a fixed effort: deterministic, and never fewer
        pods. With one priority level the gangs are searched first, alone, as pods times (gangs + 1) plus gangs
        whole from the best answer: in one weighted sum with the queue's order their few terms were lost among
        the many (100 nodes, 10 gangs, seed 2: 1 of 10 gangs whole where 10 fit, 10 now), and the same goal
        with the pods fixed by a constraint found none better in twice the effort."""
        counting, best = self.counting, self._reader.best
        if not counting.tie_breaks or best is None:
            return
        model = counting.model.clone()
        levels = [(expr, round(self.solver.value(expr))) for _, expr, _ in counting.levels]
        _hint(model, self._solution)
        gangs = counting.gangs_whole
        if gangs is not None and len(levels) == 1:
            self._gangs_first(model, levels, gangs)
        for expr, value in levels:
            model.add(expr >= value)
        scale = tie_weights(counting)
        order = sum(w * expr for w, (expr, _) in zip(scale, counting.tie_breaks))
        self._solve(model, effort=self.tie_effort, goal=order)

    def _gangs_first(self, model: cp_model.CpModel, levels: list[tuple[Any, int]], gangs: cp_model.LinearExpr) -> None:
        """The most gangs whole among answers with the most pods (``levels``: the one level, pods and their best),
        appended to ``levels`` when found. Pods outweigh gangs in the goal and the best answer is a complete hint,
        so CP-SAT starts from it; should an answer with fewer pods come back all the same, the best is kept."""
        (pods, most), unit = levels[0], len(self.counting.gangs) + 1
        solution, best = self._solution, self._reader.best
        if self._solve(model, effort=GANG_EFFORT * self.tie_effort, goal=unit * pods + gangs) not in FOUND:
            return
        if round(self.solver.value(pods)) < most:
            self._solution, self._reader.best = solution, best
            return
        levels.append((gangs, round(self.solver.value(gangs))))
        _hint(model, self._solution)


def _hint(model: cp_model.CpModel, solution: list[int]) -> None:
    """The whole best solution as a complete hint, so the first answer is at hand at once."""
    model.clear_hints()
    for i, value in enumerate(solution):
        model.add_hint(model.get_int_var_from_proto_index(i), value)


def _pods_bound(objective_bound: float, scale: list[int], counting: CountingModel) -> int:
    """An upper bound on pods placed, from the weighted objective's bound: the top level's pods are at most the
    bound divided by its weight; every level below, at most its pending pods (exact for one level)."""
    levels = counting.levels
    top = min(levels[0][2], int(objective_bound) // scale[0])
    return top + sum(pending for _, _, pending in levels[1:])
