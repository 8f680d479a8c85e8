"""The engine's loose ends: one deadline per call, CP-SAT statuses in drasat's terms, no recursion limit,
and the prioritized-list objective failing as first-fit does on a selector error."""

from __future__ import annotations

import sys
import time

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.errors import InternalError, SolveTimeout
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import NodeInfo, Problem, allocate
from drasat.solver.allocation import api
from drasat.solver.allocation.depth_first.search import BudgetExhausted, greedy_search
from drasat.solver.allocation.depth_first.search_state import SearchState
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.inventory import build_inventory
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.verification.verifier import verify

DRIVER = "d.example.com"


def gpu_problem(devices: int, claims: int, selector: str = f'device.driver == "{DRIVER}"') -> Problem:
    slice_ = ResourceSlice.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "node-1",
                "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": f"d{i}", "attributes": {"index": {"int": i}}} for i in range(devices)],
            },
        }
    )
    cls = DeviceClass.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": selector}}]},
        }
    )
    wanted = [
        ResourceClaim.model_validate(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"c{c}"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            }
        )
        for c in range(claims)
    ]
    return Problem(NodeInfo("node-1"), [slice_], [cls], wanted)


class SlowEvaluator(SelectorEvaluator):
    """Selector evaluation that takes its time, as a heavy CEL expression on many devices would."""

    def matches(self, expression, device):  # type: ignore[no-untyped-def]
        time.sleep(0.05)
        return super().matches(expression, device)


def test_selector_evaluation_counts_against_the_time_limit():
    with pytest.raises(SolveTimeout, match="time limit"):
        allocate(gpu_problem(8, 1), solver="greedy", time_limit=0.2, evaluator=SlowEvaluator())


def test_greedy_and_cp_sat_share_one_deadline(monkeypatch):
    """Time the budgeted greedy search used is not given to CP-SAT again."""

    def slow_greedy(state, budget=None, deadline=None):  # type: ignore[no-untyped-def]
        time.sleep(0.4)
        raise BudgetExhausted()

    monkeypatch.setattr(api, "greedy_search", slow_greedy)
    with pytest.raises(SolveTimeout):
        allocate(gpu_problem(4, 2), time_limit=0.3)


def _model_and_stages():
    from drasat.solver.allocation.cp_sat.model import build_model

    problem = gpu_problem(3, 2)
    inv = build_inventory(problem)
    return build_model(inv, plan_claims(problem, inv, SelectorEvaluator()))


def test_an_invalid_model_is_an_internal_error_with_the_validation_message():
    from drasat.solver.allocation.cp_sat.objectives import solve_staged

    m = _model_and_stages()
    bad = m.model.new_int_var(0, 1, "bad")
    domain = m.model.proto.variables[bad.index].domain
    domain[0], domain[1] = 1, 0  # an empty domain: CP-SAT calls the model invalid
    with pytest.raises(InternalError, match="invalid"):
        solve_staged(m, "first-fit", time.monotonic() + 10, 1)


def test_unknown_status_before_the_deadline_is_not_a_timeout(monkeypatch):
    from ortools.sat.python import cp_model

    from drasat.solver.allocation.cp_sat import objectives

    class GivesUp(cp_model.CpSolver):
        def solve(self, model, solution_callback=None):  # type: ignore[no-untyped-def, override]
            super().solve(model)
            return cp_model.UNKNOWN

    monkeypatch.setattr(objectives.cp_model, "CpSolver", GivesUp)
    with pytest.raises(InternalError, match="UNKNOWN"):
        objectives.solve_staged(_model_and_stages(), "first-fit", time.monotonic() + 10, 1)


def test_the_model_can_be_solved_twice():
    from drasat.solver.allocation.cp_sat.objectives import solve_staged

    m = _model_and_stages()
    first_run = solve_staged(m, "first-fit", time.monotonic() + 10, 1)
    first, again = first_run.picks, solve_staged(m, "prioritized-list", time.monotonic() + 10, 1).picks
    assert first_run.exact and first_run.solves >= 1
    assert first is not None and again is not None
    assert [[p.device for p in c] for c in first] == [[p.device for p in c] for c in again] == [[0], [1]]


def test_depth_first_search_never_touches_the_recursion_limit(monkeypatch):
    """Hundreds of claims are as deep a search as any: it runs on its own stack."""

    def refuse(limit: int) -> None:
        raise AssertionError("sys.setrecursionlimit is process-wide: the search must not change it")

    monkeypatch.setattr(sys, "setrecursionlimit", refuse)
    problem = gpu_problem(400, 400)
    inv = build_inventory(problem)
    result = greedy_search(SearchState(inv, plan_claims(problem, inv, SelectorEvaluator())))
    assert result.picks is not None and [p[0].device for p in result.picks] == list(range(400))
    answer = allocate(problem, solver="greedy")
    assert verify(problem, answer.results) == []


@pytest.mark.parametrize("objective", ["first-fit", "prioritized-list"])
def test_a_selector_failing_at_run_time_is_exit_2_for_every_objective(tmp_path, objective):
    import yaml

    problem = gpu_problem(2, 1, selector=f'device.attributes["{DRIVER}"].nosuch == 1')
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        *(
            o.model_dump(by_alias=True, exclude_none=True, exclude_unset=True)
            for o in (*problem.slices, *problem.classes, *problem.claims)
        ),
    ]
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(objects))
    load_all_commands()
    result = CliRunner().invoke(
        cli, ["solve", "--objective", objective, str(tmp_path / "in.yaml")], catch_exceptions=False
    )
    assert result.exit_code == 2 and result.stdout == ""
    assert "class gpu: selector #0 on device d.example.com/p/d0: CEL runtime error" in result.stderr


@pytest.mark.parametrize("limit", [0.0, -1.0, float("nan"), float("inf")])
def test_a_time_limit_that_is_no_number_of_seconds_is_refused(limit):
    from drasat.models.errors import InputError

    with pytest.raises(InputError, match="time limit must be a positive number"):
        allocate(gpu_problem(1, 1), time_limit=limit)


def _time_runs_out_after(solves: int, monkeypatch) -> None:
    """Let CP-SAT answer ``solves`` times, then behave as if the deadline had passed."""
    from drasat.solver.allocation.cp_sat import stages

    real = stages.Stages.solve

    def solve(self, *assume, **options):  # type: ignore[no-untyped-def]
        if self.solves >= solves:
            raise SolveTimeout("the CP-SAT solver ran out of time (raise --timeout)")
        return real(self, *assume, **options)

    monkeypatch.setattr(stages.Stages, "solve", solve)


def test_time_up_after_an_allocation_was_found_returns_it_marked_not_exact(monkeypatch):
    """The first solve finds a complete allocation; the prioritized-list stage after it runs out of
    time: that allocation comes back, valid, and says it may not be the prioritized-list answer."""
    from drasat.solver.verification.verifier import verify

    _time_runs_out_after(1, monkeypatch)
    problem = gpu_problem(3, 2)
    answer = allocate(problem, objective="prioritized-list")
    assert not answer.stats.exact
    assert any("may not be the prioritized-list answer" in n for n in answer.stats.notes)
    assert verify(problem, answer.results) == []
    assert sorted(answer.results) == sorted(c.name for c in problem.claims)


def test_time_up_before_any_allocation_is_a_timeout(monkeypatch):
    _time_runs_out_after(0, monkeypatch)
    with pytest.raises(SolveTimeout):
        allocate(gpu_problem(3, 2), greedy_budget=0)


def test_rank_stage_cut_short_by_time_is_not_reported_exact(monkeypatch):
    """A rank-minimising solve stopped by the time limit (FEASIBLE, not OPTIMAL) proves no least rank: the answer
    must not come back marked exact, even where no later solve is needed to decode it."""
    from ortools.sat.python import cp_model

    from drasat.solver.allocation.cp_sat import objectives

    class StopsAtFirstSolution(cp_model.CpSolver):
        def solve(self, model, solution_callback=None):  # type: ignore[no-untyped-def, override]
            status = super().solve(model)
            return cp_model.FEASIBLE if status == cp_model.OPTIMAL and model.has_objective() else status

    monkeypatch.setattr(objectives.cp_model, "CpSolver", StopsAtFirstSolution)
    try:
        answer = allocate(gpu_problem(3, 2), objective="prioritized-list")
    except SolveTimeout:
        return  # honest too: the rank was never proven least
    assert not answer.stats.exact
    assert verify(gpu_problem(3, 2), answer.results) == []
