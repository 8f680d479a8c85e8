"""The allocation's choices as types: the library takes the members or their text alike, refuses an unknown
one in the words it always used, and every check reads the capability table, not the names."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.errors import InputError
from drasat.solver import AllocateOptions, allocate, compare
from drasat.solver.allocation import options
from drasat.solver.allocation.options import CAPABILITIES, Capability, Objective, Solver, check_options
from drasat.solver.verification.verifier import verify

from .explain_inputs import NODE, claim, gpus, problem
from .printed import printed_allocations


def test_the_text_and_the_member_ask_the_same_allocation() -> None:
    p = problem(claim("a", gpus(1)) + claim("b", gpus(2)))
    for solver, objective in ((Solver.CP_SAT, Objective.PACK), (Solver.GREEDY, Objective.FIRST_FIT)):
        by_member = allocate(p, solver=solver, objective=objective)
        by_text = allocate(p, solver=str(solver), objective=str(objective))
        assert by_member.results == by_text.results
        assert verify(p, by_member.results) == []


@pytest.mark.parametrize(
    "solver, objective, message",
    [
        ("dfs", "first-fit", "unknown solver 'dfs' (choose from cp-sat, greedy)"),
        ("cp-sat", "tightest", "unknown objective 'tightest' (choose from first-fit, prioritized-list, pack)"),
        ("greedy", "pack", "the greedy solver only knows the first-fit objective; use --solver cp-sat"),
        (Solver.GREEDY, Objective.PRIORITIZED_LIST, "the greedy solver only knows the first-fit objective"),
    ],
)
def test_options_no_allocation_can_run_with_are_refused_in_the_same_words(solver, objective, message) -> None:
    with pytest.raises(InputError, match="^" + re.escape(message)):
        allocate(problem(claim("a", gpus(1))), solver=solver, objective=objective)
    with pytest.raises(InputError, match="^" + re.escape(message)):
        AllocateOptions(solver, objective)


def test_the_options_hold_the_types_whatever_they_were_given() -> None:
    made = AllocateOptions("greedy", "first-fit")
    assert made.solver is Solver.GREEDY and made.objective is Objective.FIRST_FIT


def test_every_objective_has_a_row_and_the_checks_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(CAPABILITIES) == set(Objective)
    assert check_options("cp-sat", "pack", 1.0, batch=True) == (Solver.CP_SAT, Objective.PACK)
    refused = {
        **CAPABILITIES,
        Objective.PACK: Capability(depth_first=False, merges_alike=False, packs=True, batch=False),
    }
    monkeypatch.setattr(options, "CAPABILITIES", refused)
    assert check_options("cp-sat", "pack", 1.0) == (Solver.CP_SAT, Objective.PACK)
    with pytest.raises(InputError, match="^schedule --batch does not know the pack objective$"):
        check_options("cp-sat", "pack", 1.0, batch=True)


def test_a_comparison_as_data_is_plain_text_for_json_and_yaml() -> None:
    p = problem(claim("a", gpus(1)))
    found = compare(p, objective="pack")
    assert verify(p, found.cp_sat.results) == [] and verify(p, found.greedy.results) == []
    data = found.to_data()
    assert (data["cpSat"]["objective"], data["greedy"]["search"]) == ("pack", "greedy")
    assert yaml.safe_load(yaml.safe_dump(data)) == json.loads(json.dumps(data))


def test_the_command_line_s_words_reach_the_library_as_members(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from drasat.solver.allocation import api

    (tmp_path / "input.yaml").write_text(NODE + claim("a", gpus(1)))
    seen = []
    real = api.allocate
    monkeypatch.setattr(api, "allocate", lambda p, **kw: seen.append(kw) or real(p, **kw))
    load_all_commands()
    result = CliRunner().invoke(cli, ["solve", "--objective", "pack", "-o", "yaml", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert seen and seen[0]["objective"] is Objective.PACK and seen[0]["solver"] is Solver.CP_SAT
    answer = printed_allocations(yaml.safe_load(result.stdout)["items"])
    assert list(answer) == ["d/a"] and verify(problem(claim("a", gpus(1))), answer) == []
