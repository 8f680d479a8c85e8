"""Exact partition headroom: how many more devices of one kind still fit beside what is allocated.

Partitions of one physical device draw on shared counters, and compatibility groups
forbid some partitions from living side by side on a counter set. "How many more 2g
partitions fit?" is therefore a packing question, not a count of free devices: a
free 2g placement may overlap another free one, and taking the wrong one first loses
room (Kubernetes' pool status controller counts greedily per device). This module
answers it exactly with CP-SAT: maximise the number of chosen candidates subject to
the counters left and the compatibility groups of the devices already allocated.

The inputs are plain values (no models), so that pool status, the inventory's
fragmentation line and the brute-force tests all ask the same function.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ortools.sat.python import cp_model

from drasat.models.errors import SolveTimeout

CounterAmounts = Mapping[str, Mapping[str, Fraction]]  # counter set -> counter -> amount
NO_GROUP = ""  # the "mode" of a counter set whose devices declare no compatibility groups


@dataclass(frozen=True)
class Candidate:
    """A free device that could be allocated: what it consumes and its groups per counter set."""

    name: str
    costs: CounterAmounts
    groups: Mapping[str, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class CounterState:
    """What is left after the allocated devices: counters, and the groups already living on each set."""

    available: CounterAmounts
    allocated_groups: Mapping[str, Sequence[frozenset[str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Headroom:
    """The maximum, and one set of candidates that reaches it (so that it can be checked)."""

    count: int
    witness: tuple[str, ...]


def max_allocatable(candidates: Sequence[Candidate], state: CounterState, *, time_limit: float = 10.0) -> Headroom:
    """The largest number of ``candidates`` that can be allocated together, and which ones.

    A candidate that names a counter set or counter the pool does not have never fits
    (as in Kubernetes). A counter already over-committed blocks every candidate that
    draws on it.
    """
    fitting = [c for c in candidates if fits_alone(c, state)]
    if not fitting:
        return Headroom(0, ())
    model = cp_model.CpModel()
    pick = {c.name: model.new_bool_var(f"pick[{c.name}]") for c in fitting}
    _post_counters(model, fitting, pick, state)
    _post_compatibility(model, fitting, pick, state)
    model.maximize(sum(pick.values()))
    solver = cp_model.CpSolver()
    solver.parameters.catch_sigint_signal = False  # Ctrl-C belongs to the caller (drasat exits 130)
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 1
    status = solver.solve(model)
    if status != cp_model.OPTIMAL:
        raise SolveTimeout(
            f"the exact partition headroom was not proven within {time_limit:g} s ({len(fitting)} candidate devices)"
        )
    witness = tuple(name for name, var in pick.items() if solver.boolean_value(var))
    return Headroom(len(witness), witness)


def fits_alone(candidate: Candidate, state: CounterState) -> bool:
    """Whether this device alone could still be allocated (counters left, groups already allocated)."""
    for set_name, counters in candidate.costs.items():
        left = state.available.get(set_name)
        if left is None:
            return False
        for counter, amount in counters.items():
            if counter not in left or left[counter] < amount:
                return False
    for set_name in candidate.costs:
        modes = _modes_left(set_name, state)
        if modes is not None and not (_modes_of(candidate, set_name) & modes):
            return False
    return True


def _modes_of(candidate: Candidate, set_name: str) -> frozenset[str]:
    groups = candidate.groups.get(set_name, frozenset())
    return groups if groups else frozenset({NO_GROUP})


def _modes_left(set_name: str, state: CounterState) -> frozenset[str] | None:
    """The modes still open on a set given its allocated devices; None when nothing is allocated there."""
    allocated = state.allocated_groups.get(set_name, ())
    if not allocated:
        return None
    modes = None
    for groups in allocated:
        these = groups if groups else frozenset({NO_GROUP})
        modes = these if modes is None else modes & these
    return modes or frozenset()


def _post_counters(
    model: cp_model.CpModel, fitting: Sequence[Candidate], pick: Mapping[str, cp_model.IntVar], state: CounterState
) -> None:
    """Per counter: the picked candidates' amounts sum to at most what is left (scaled to integers)."""
    users: dict[tuple[str, str], list[tuple[Fraction, cp_model.IntVar]]] = {}
    for candidate in fitting:
        for set_name, counters in candidate.costs.items():
            for counter, amount in counters.items():
                if amount > 0:
                    users.setdefault((set_name, counter), []).append((amount, pick[candidate.name]))
    for (set_name, counter), terms in users.items():
        left = state.available[set_name][counter]
        if sum(amount for amount, _ in terms) <= left:
            continue  # every candidate fits together on this counter: no constraint needed
        scale = _integer_scale([left, *(amount for amount, _ in terms)])
        model.add(sum(int(amount * scale) * var for amount, var in terms) <= int(left * scale))


def _integer_scale(values: Sequence[Fraction]) -> Fraction:
    """A factor that turns every value into an integer and keeps the integers small (divides by their gcd)."""
    denominator = math.lcm(*(v.denominator for v in values))
    integers = [int(v * denominator) for v in values]
    divisor = math.gcd(*integers) or 1
    return Fraction(denominator, divisor)


def _post_compatibility(
    model: cp_model.CpModel, fitting: Sequence[Candidate], pick: Mapping[str, cp_model.IntVar], state: CounterState
) -> None:
    """Per counter set, one common mode (a group name, or "no groups") that every picked device has."""
    sets = {name for c in fitting for name in c.costs}
    for set_name in sorted(sets):
        left = _modes_left(set_name, state)
        on_set = {
            c.name: _modes_of(c, set_name) if left is None else _modes_of(c, set_name) & left
            for c in fitting
            if set_name in c.costs
        }
        modes = sorted(set().union(*on_set.values()))
        if len(modes) <= 1:
            continue  # one mode for all (fits_alone kept only candidates that have it): nothing to choose
        chosen = {m: model.new_bool_var(f"mode[{set_name}/{m or '-'}]") for m in modes}
        model.add_at_most_one(chosen.values())
        for name, its_modes in on_set.items():
            model.add(pick[name] <= sum(chosen[m] for m in its_modes))
