"""Each rule alone: its depth-first side and its CP-SAT side accept exactly the same picks.

On random small problems, a random choice of alternatives and devices (each request's
count, from its candidates) is offered to one rule at a time: the depth-first side adds
the picks in search order with ``fits``/``apply``; the CP-SAT side fixes the same counts
in a model that holds only that rule (each device a class of its own). Both must say yes,
or both no.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from drasat.models.errors import DrasatError
from drasat.solver.allocation.depth_first.search_state import SearchState
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.inventory import Inventory, build_inventory
from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan
from drasat.solver.allocation.rules.base import Rule
from drasat.solver.allocation.rules.registry import RULES
from drasat.solver.cel import SelectorEvaluator

from .problem_factory import problems

Choice = list[tuple[Alternative, list[int]]]


class EveryDeviceAlone(Rule):
    """Keeps each device a class of its own, so that CP-SAT's counts name devices as the picks do
    (which devices merge is the property test's business: greedy and CP-SAT agree on answers)."""

    name = "every-device-alone"
    searched = False

    def single_device(self, ctx, dev):  # type: ignore[no-untyped-def]
        return True


def _planned(problem) -> tuple[Inventory, list[ClaimPlan]] | None:  # type: ignore[no-untyped-def]
    try:
        inv = build_inventory(problem)
        return inv, plan_claims(problem, inv, SelectorEvaluator())
    except DrasatError:
        return None


def _choose(data: Any, plans: list[ClaimPlan]) -> Choice | None:
    """One alternative per request and its devices, or None when some request has nothing to offer."""
    chosen: Choice = []
    for plan in plans:
        for req in plan.requests:
            usable = [a for a in req.alternatives if not a.blocked and len(a.candidates) >= a.count]
            if not usable:
                return None
            alt = data.draw(st.sampled_from(usable))
            if alt.mode == "All":
                devices = list(alt.candidates)
            else:
                devices = sorted(
                    data.draw(
                        st.lists(st.sampled_from(alt.candidates), min_size=alt.count, max_size=alt.count, unique=True)
                    )
                )
            chosen.append((alt, devices))
    return chosen


def _depth_first_accepts(rule: Rule, inv: Inventory, plans: list[ClaimPlan], chosen: Choice) -> bool:
    state = SearchState(inv, plans, rules=[rule])
    return all(
        state.try_add(alt.claim, alt, device, must=False) is not None for alt, devices in chosen for device in devices
    )


def _cp_sat_accepts(rule: Rule, inv: Inventory, plans: list[ClaimPlan], chosen: Choice) -> bool:
    from ortools.sat.python import cp_model

    from drasat.solver.allocation.cp_sat.model import build_model

    m = build_model(inv, plans, rules=[rule, EveryDeviceAlone()])
    model = m.model.clone()
    for literal in m.literals():
        model.add(literal == 1)
    for alt, devices in chosen:
        model.add(m.use(alt) == 1)
        for k, var in m.takes(alt).items():
            model.add(var == sum(1 for d in devices if m.class_of[d] == k))
    status = cp_model.CpSolver().solve(model)
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE)
    return status != cp_model.INFEASIBLE


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problem=problems(), data=st.data())
def test_depth_first_and_cp_sat_sides_accept_the_same_picks(rule, problem, data):
    planned = _planned(problem)
    assume(planned is not None)
    inv, plans = planned  # type: ignore[misc]
    chosen = _choose(data, plans)
    assume(chosen is not None)
    assert _depth_first_accepts(rule, inv, plans, chosen) == _cp_sat_accepts(rule, inv, plans, chosen)  # type: ignore[arg-type]


def test_assumption_literals_name_the_rule_instances_in_a_conflict():
    """Assumed all true, the literals of an infeasible model form a core that names the conflict in words."""
    from ortools.sat.python import cp_model

    from drasat.solver.allocation.cp_sat.model import build_model

    from .test_engine_deadline import gpu_problem

    problem = gpu_problem(1, 2)  # two claims, one device
    inv = build_inventory(problem)
    m = build_model(inv, plan_claims(problem, inv, SelectorEvaluator()))
    model = m.model.clone()
    model.add_assumptions(m.literals())
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(model) == cp_model.INFEASIBLE
    core = set(solver.sufficient_assumptions_for_infeasibility())
    named = [a for a in m.assumptions if a.literal.index in core]
    assert [(a.rule, a.meaning) for a in named] == [
        ("exclusivity", "device d.example.com/p/d0 is allocated at most once")
    ]
