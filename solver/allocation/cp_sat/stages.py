"""The staged CP-SAT solves every objective is read through (:mod:`.objectives`, :mod:`.first_fit`,
:mod:`.packing`): one copy of the built model in which every rule instance holds, asked question after
question — feasibility, an optimum, the first possible option — with the last solution kept, so that a
stage whose answer the last solution already shows costs no solve. Kept apart from the objectives so
that each objective's module reads as what it decides, not how CP-SAT is driven."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ortools.sat.python import cp_model

from drasat.models.errors import InternalError, SolveTimeout

from .model import AllocationModel

_BLANK = cp_model.CpModel()
_EMPTY = _BLANK.proto.constraints.add()  # a constraint of no kind: what ``scratch`` leaves behind


class Stages:
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
        solver.parameters.catch_sigint_signal = False  # Ctrl-C belongs to the caller (drasat exits 130)
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
            raise InternalError(
                f"drasat built a CP-SAT model the solver calls invalid: "
                f"{self.model.validate() or 'no validation message'}"
            )
        if status == cp_model.UNKNOWN and time.monotonic() >= self.deadline - 0.05:
            raise SolveTimeout("the CP-SAT solver ran out of time before it decided (raise --timeout)")
        if status == cp_model.UNKNOWN and self.effort is not None:
            return False  # nothing found within a best-effort stage's budget
        raise InternalError(
            f"the CP-SAT solver stopped with status {solver.status_name(status)} "
            f"before its time was up: {solver.solution_info() or 'no reason given'}"
        )

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

    def solve_best(
        self, objective: cp_model.LinearExprT, *assume: cp_model.IntVar, hint: dict[int, int] | None = None
    ) -> bool:
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
