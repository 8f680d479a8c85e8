"""The library's explain gives the minimal conflict of allocate's Unschedulable; a timeout keeps the funnel;
a conflict of two members is shrunk and stays minimal (review of issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.errors import SolveTimeout, Unschedulable
from drasat.solver import allocate
from drasat.solver.explanation import conflicts as conflicts_module
from drasat.solver.explanation import explain as explanation_module
from drasat.solver.explanation.explain import Explanation, explain

from .explain_inputs import NODE, assert_minimal, claim, gpus, problem

TWO = claim("a", gpus(3)) + claim("b", gpus(2))
OWN = claim("own", gpus(3), "{requests: [gpu], matchAttribute: example.com/numa}")
# x takes the numa-1 GPUs; pair needs two GPUs and the NIC on one numa node: only numa 1 has the NIC.
MULTI = claim(
    "x", gpus(2, extra="selectors: [{cel: {expression: 'device.attributes[\"example.com\"].numa == 1'}}]")
) + claim(
    "pair",
    f"{gpus(2)}, {{name: nic, exactly: {{deviceClassName: nic}}}}",
    "{requests: [gpu, nic], matchAttribute: example.com/numa}",
)


def test_explain_gives_the_minimal_conflict_of_allocate_s_unschedulable() -> None:
    p = problem(TWO)
    with pytest.raises(Unschedulable) as refused:
        allocate(p)
    found = explain(p, proven=refused.value)
    assert isinstance(found, Explanation) and [r.rule for r in found.conflict_rules] == ["exclusivity"]
    assert any("allocated at most once" in line for line in found.summary())
    assert "claim d/b, request gpu: count 1 fits (it asks 2)" in [fix.text for fix in found.fixes]
    assert_minimal(p, found)


def test_a_two_member_conflict_is_shrunk_to_a_minimal_one() -> None:
    p = problem(MULTI)
    found = explain(p)
    assert not found.feasible and not found.short_requests and found.minimal
    assert sorted(r.rule for r in found.conflict_rules) == ["attributes", "exclusivity"], found.conflict
    assert_minimal(p, found)


def test_the_shrinking_drops_members_a_first_core_holds_needlessly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever core CP-SAT names first (here: every rule instance), the deletion loop ends minimal."""
    real = conflicts_module.core
    first = [True]

    def every_assumption_first(model: object, assumptions: list[object], deadline: float) -> list[object] | None:
        core = real(model, assumptions, deadline)  # type: ignore[arg-type]
        if core is not None and first[0]:
            first[0] = False
            return list(assumptions)
        return core

    monkeypatch.setattr(conflicts_module, "core", every_assumption_first)
    p = problem(MULTI)
    found = explain(p)
    assert len(found.conflict_rules) == 2 and found.minimal
    assert_minimal(p, found)


def _out_of_time(*_: object) -> None:
    raise SolveTimeout("the time limit was reached while looking for a minimal conflict (raise --timeout)")


def test_a_timeout_after_the_funnel_keeps_the_funnel_and_says_what_ran_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(explanation_module, "find_conflicts", _out_of_time)
    found = explain(problem(TWO))
    assert not found.feasible and len(found.funnel) == 2 and not found.conflict_rules
    assert found.timed_out == "the search for a minimal conflict ran out of time (raise --timeout)"
    assert found.to_data()["timedOut"] == found.timed_out
    (tmp_path / "input.yaml").write_text(NODE + TWO)
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", str(tmp_path)])
    assert result.exit_code == 1, result.output  # as the help says: no answer within --timeout
    assert "claim d/a, request gpu: needs 3 device(s)" in result.stdout
    assert result.stdout.rstrip().endswith("the search for a minimal conflict ran out of time (raise --timeout)")


def test_time_running_out_while_shrinking_keeps_the_conflict_found_and_says_it_is_not_minimal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = conflicts_module.core
    calls = [0]

    def once(model: object, assumptions: list[object], deadline: float) -> list[object] | None:
        calls[0] += 1
        if calls[0] > 1:
            _out_of_time()
        return real(model, assumptions, deadline)  # type: ignore[arg-type]

    monkeypatch.setattr(conflicts_module, "core", once)
    found = explain(problem(MULTI))
    assert found.conflict_rules and not found.minimal and not found.timed_out
    assert any("time ran out before the set was shrunk" in line for line in found.summary())


def test_a_claim_s_own_constraint_is_said_as_one_rule_not_as_requests_together(tmp_path: Path) -> None:
    (tmp_path / "input.yaml").write_text(NODE + OWN)
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", str(tmp_path)])
    assert result.exit_code == 1
    assert "every request has candidates enough on its own, but this rule cannot hold:" in result.stdout
    assert "these cannot all hold together" not in result.stdout


def test_a_conflict_member_is_worded_by_its_own_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The explanation asks the member's rule (from the registry) for the numbers: a rule's own ``describe``
    is what the operator reads, and a rule that says nothing leaves the meaning alone."""
    from drasat.solver.allocation.rules.exclusivity import Exclusivity

    said = explain(problem(TWO)).conflict_rules[0]
    assert said.detail.startswith("4 devices, wanted by claim d/a request gpu (3 devices)"), said.detail
    monkeypatch.setattr(Exclusivity, "describe", lambda self, inv, plans, member: "")
    quiet = explain(problem(TWO)).conflict_rules[0]
    assert (quiet.rule, quiet.detail, quiet.sentence) == ("exclusivity", "", said.meaning)
