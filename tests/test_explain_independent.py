"""Explanations say only what they prove (issue 25, item 7): every independent conflict is named, and each
"dropping this lets the claims fit" is checked here by a solve of the test's own, on a model built anew."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_text
from drasat.solver import Features, allocate
from drasat.solver.allocation.problem import Problem, problem_from_objects
from drasat.solver.allocation.rules.base import Assumption
from drasat.solver.explanation.conflicts import core, find_conflicts
from drasat.solver.explanation.explain import Explanation, explain
from drasat.solver.verification.verifier import verify

from .explain_inputs import NODE, claim, gpus, held, problem
from .test_explain_funnel import SHARED

NIC = "{name: nic, exactly: {deviceClassName: nic}}"
SHARE = "selectors: [{cel: {expression: 'device.allowMultipleAllocations'}}], capacity: {requests: {memory: 6Gi}}"
# Three GPUs with distinct NUMA values (there are two), and two 6Gi shares of a 10Gi device.
DISTINCT_AND_CAPACITY = (
    SHARED
    + claim("three", gpus(3), "{requests: [gpu], distinctAttribute: example.com/numa}")
    + claim("a", gpus(1, extra=SHARE))
    + claim("b", gpus(1, extra=SHARE))
)
# Five GPUs wanted of four, and the one NIC wanted twice.
TWO_DEVICES = claim("a", gpus(3)) + claim("b", gpus(2)) + claim("c", NIC) + claim("e", NIC)
# gpu-2 held: pair's two GPUs and NIC share no NUMA node; and pair's two GPUs with other's two are four of three.
MATCH_AND_EXCLUSIVITY = (
    held("held", "gpu-2")
    + claim("pair", f"{gpus(2)}, {NIC}", "{requests: [gpu, nic], matchAttribute: example.com/numa}")
    + claim("other", gpus(2))
)
NOT_PROVEN = "dropping any one of them would let the claims fit"


def _model(p: Problem) -> Any:
    from drasat.solver.allocation.cp_sat.model import build_model
    from drasat.solver.allocation.planning.claims import plan_claims
    from drasat.solver.allocation.planning.inventory import build_inventory
    from drasat.solver.cel import SelectorEvaluator

    inv = build_inventory(p)
    return build_model(inv, plan_claims(p, inv, SelectorEvaluator()))


def _fits(model: Any, assumptions: list[Assumption]) -> bool:
    return core(model, assumptions, deadline=1e18) is None


def _members(model: Any, meanings: list[str]) -> list[Assumption]:
    found = [a for a in model.assumptions if a.meaning in meanings]
    assert sorted(a.meaning for a in found) == sorted(meanings)  # each meaning names one rule instance
    return found


def _without(model: Any, dropped: list[Assumption]) -> list[Assumption]:
    return [a for a in model.assumptions if all(a is not d for d in dropped)]


def assert_every_claim_holds(p: Problem, found: Explanation) -> None:
    """Each thing the explanation says about its conflicts, solved again on a fresh model."""
    model = _model(p)
    assert not _fits(model, list(model.assumptions))
    conflicts = [_members(model, [rule.meaning for rule in c.rules]) for c in found.conflicts]
    for members in conflicts:
        assert not _fits(model, members)  # it cannot hold even with every other rule instance dropped
        for member in members:  # minimal: without any one of them the others hold
            assert _fits(model, [a for a in members if a is not member]), member.meaning
    everything = [a for members in conflicts for a in members]
    assert found.complete and _fits(model, _without(model, everything))  # every independent conflict named
    for i in range(len(conflicts)):  # all must be resolved: the others dropped, this one still stands
        others = [a for j, ms in enumerate(conflicts) if j != i for a in ms]
        assert not _fits(model, _without(model, others))
    for conflict, members in zip(found.conflicts, conflicts):
        for rule, member in zip(sorted(conflict.rules, key=lambda r: r.meaning), sorted(members, key=_meaning)):
            assert rule.alone is _fits(model, _without(model, [member])), rule.meaning
    if found.together:
        assert _fits(model, _without(model, _members(model, [rule.meaning for rule in found.together])))


def _meaning(a: Assumption) -> str:
    return a.meaning


def _explained(tmp_path: Path, documents: str) -> str:
    (tmp_path / "input.yaml").write_text(NODE + documents)
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", str(tmp_path)])
    assert result.exit_code == 1, result.output
    return result.stdout


def test_a_distinct_attribute_and_a_capacity_overrun_are_two_conflicts(tmp_path: Path) -> None:
    p = problem(DISTINCT_AND_CAPACITY)
    found = explain(p)
    assert not found.feasible and not found.short_requests, found.summary()
    assert sorted(rule.rule for rule in found.conflict_rules) == ["attributes", "capacity"]
    assert len(found.conflicts) == 2 and not any(rule.alone for rule in found.conflict_rules)
    assert_every_claim_holds(p, found)
    text = _explained(tmp_path, DISTINCT_AND_CAPACITY)
    assert "but 2 independent conflicts stand in the way" in text and "all of them must be resolved" in text
    assert "dropping every rule instance listed lets the claims fit (checked by a solve)" in text
    assert NOT_PROVEN not in text


def test_two_exclusivity_conflicts_over_different_devices(tmp_path: Path) -> None:
    p = problem(TWO_DEVICES)
    found = explain(p)
    assert [rule.rule for rule in found.conflict_rules] == ["exclusivity", "exclusivity"]
    assert {rule.meaning.split("/")[0] for rule in found.conflict_rules} == {
        "device gpu.example.com",
        "device nic.example.com",
    }
    assert_every_claim_holds(p, found)
    # Resolving both, as the explanation says must be done (one GPU fewer for b, no second NIC claim), fits.
    resolved = problem(claim("a", gpus(3)), claim("b", gpus(1)), claim("c", NIC))
    assert verify(resolved, allocate(resolved).results) == []
    text = _explained(tmp_path, TWO_DEVICES)
    assert "conflict 1 of 2: this rule cannot hold:" in text and "conflict 2 of 2: this rule cannot hold:" in text
    assert NOT_PROVEN not in text


def test_an_exclusivity_conflict_behind_a_match_attribute_is_named_too(tmp_path: Path) -> None:
    """Dropping the matchAttribute alone leaves four GPUs wanted of three: not enough, and not said to be."""
    p = problem(MATCH_AND_EXCLUSIVITY)
    found = explain(p)
    assert sorted(rule.rule for rule in found.conflict_rules) == ["attributes", "exclusivity", "exclusivity"]
    (match,) = [rule for rule in found.conflict_rules if rule.rule == "attributes"]
    assert match.alone is False and len(found.together) == 2
    assert_every_claim_holds(p, found)
    text = _explained(tmp_path, MATCH_AND_EXCLUSIVITY)
    assert "together lets the claims fit (checked by a solve)" in text and NOT_PROVEN not in text
    data = found.to_data()
    assert data["conflictsComplete"] is True and len(data["conflicts"]) == 2
    assert [r["droppingAloneFits"] for c in data["conflicts"] for r in c["rules"]] == [False, False, False]


def test_one_conflict_whose_members_are_each_enough_still_says_so(tmp_path: Path) -> None:
    p = problem(claim("a", gpus(3)), claim("b", gpus(2)))
    found = explain(p)
    assert len(found.conflicts) == 1 and [rule.alone for rule in found.conflict_rules] == [True]
    assert_every_claim_holds(p, found)


class _Tiny:
    """A model of three rule instances, x = 1 (A), x = 0 (B), x = 0 (C): two conflicts sharing A."""

    def __init__(self) -> None:
        from ortools.sat.python import cp_model

        self.model = cp_model.CpModel()
        x = self.model.new_bool_var("x")
        self.assumptions = []
        for name, value in (("A", 1), ("B", 0), ("C", 0)):
            literal = self.model.new_bool_var(name)
            self.model.add(x == value).only_enforce_if(literal)
            self.assumptions.append(Assumption(literal, "tiny", name))


def test_a_member_whose_dropping_leaves_another_conflict_is_not_said_to_fix_it() -> None:
    """{A, B} and {A, C} both conflict: once one of them is relaxed the rest holds, yet dropping B (or C) alone
    leaves the other; only A is enough alone, and the solve here agrees member by member."""
    model = _Tiny()
    found = find_conflicts(model, deadline=1e18)
    assert found is not None and found.complete and len(found.cores) == 1
    (members,) = found.cores
    said = {a.meaning: found.alone[a.literal.index] for a in members}
    assert said["A"] is True and sorted(said) in (["A", "B"], ["A", "C"]) and sorted(said.values()) == [False, True]
    for a in members:
        assert said[a.meaning] is _fits(model, [b for b in model.assumptions if b is not a])


def test_a_compatibility_group_conflict_names_the_groups_that_do_not_intersect() -> None:
    scenario = Path(__file__).parent / "scenarios" / "compat-groups-mig-and-vgpu-do-not.yaml"
    objects = list(load_text(scenario.read_text().split("\n---\n", 1)[1]))
    gates = {"DRAPartitionableDevices": True, "DRADeviceCompatibilityGroups": True}
    p = problem_from_objects(objects, node="worker-1", features=Features.from_mapping(gates))
    (rule,) = explain(p).conflict_rules
    assert rule.rule == "counters"
    assert "request first {mig}" in rule.detail and "request second {vgpu}" in rule.detail, rule.detail
    assert rule.detail.endswith("{mig} and {vgpu} do not intersect"), rule.detail
