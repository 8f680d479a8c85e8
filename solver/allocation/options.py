"""The choices an allocation is asked with — which search, which objective — as types, and what each can do.

Both are ``StrEnum`` members spelled as the command line spells them, so ``click.Choice``, JSON and messages
keep the words users type. What an objective can be asked of lives in one table, :data:`CAPABILITIES`:
:func:`check_options` reads it to refuse a combination before any work, and each place that behaves
differently per objective reads its row instead of comparing names, so a new objective is one new row.
Only the standard library is imported here: the command line declares its options from these types
without loading the solver.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from drasat.models.errors import InputError


class Solver(StrEnum):
    """Which search answers: ``cp-sat`` (Kubernetes' depth-first search within a budget, CP-SAT beyond it)
    or ``greedy`` (the depth-first search alone, exponential on hard inputs)."""

    CP_SAT = "cp-sat"
    GREEDY = "greedy"


class Objective(StrEnum):
    """Which of the valid allocations is the answer."""

    FIRST_FIT = "first-fit"  # exactly the devices Kubernetes' depth-first search returns
    PRIORITIZED_LIST = "prioritized-list"  # earliest firstAvailable alternatives first, then first-fit
    PACK = "pack"  # fewest devices and counter sets touched, then the biggest free partitions, then first-fit


@dataclass(frozen=True)
class Capability:
    """What drasat does with one objective.

    ``depth_first``: Kubernetes' depth-first search returns this objective's answer, so the greedy solver
    may be asked for it and the default path tries that search first. ``merges_alike``: the CP-SAT model
    may count alike claims as one (first-fit's decoding takes them apart again; the other objectives'
    stages need each claim's own variables). ``packs``: the schedulers break ties between nodes by the
    allocation's footprint (``schedule``'s node order, ``schedule_batch``'s master). ``batch``:
    ``schedule_batch`` takes it (its per-node allocations use the objective as ``schedule``'s do)."""

    depth_first: bool
    merges_alike: bool
    packs: bool
    batch: bool = True


CAPABILITIES: Mapping[Objective, Capability] = MappingProxyType(
    {
        Objective.FIRST_FIT: Capability(depth_first=True, merges_alike=True, packs=False),
        Objective.PRIORITIZED_LIST: Capability(depth_first=False, merges_alike=False, packs=False),
        Objective.PACK: Capability(depth_first=False, merges_alike=False, packs=True),
    }
)


DECIDES: Mapping[Solver, tuple[Objective, ...]] = MappingProxyType(
    {
        Solver.CP_SAT: tuple(Objective),
        Solver.GREEDY: tuple(o for o in Objective if CAPABILITIES[o].depth_first),
    }
)
"""The objectives each search answers, in the order they are listed: CP-SAT decides every one, the
depth-first search alone only those whose answer it returns."""


def as_solver(value: Solver | str) -> Solver:
    """``value`` as a :class:`Solver` (library callers may pass its text), or InputError naming the choices."""
    if type(value) is Solver:  # asked on every allocate call: the member itself costs no lookup
        return value
    try:
        return Solver(value)
    except ValueError:
        raise InputError(f"unknown solver {value!r} (choose from {_listed(Solver)})") from None


def as_objective(value: Objective | str) -> Objective:
    """``value`` as an :class:`Objective` (library callers may pass its text), or InputError naming the choices."""
    if type(value) is Objective:
        return value
    try:
        return Objective(value)
    except ValueError:
        raise InputError(f"unknown objective {value!r} (choose from {_listed(Objective)})") from None


def check_options(
    solver: Solver | str, objective: Objective | str, time_limit: float, *, batch: bool = False
) -> tuple[Solver, Objective]:
    """The options as types, or InputError for options no allocation can run with: callers that fan out many
    allocations (schedule, on worker processes too) check once, before any work, rather than fail inside
    each. ``batch``: for ``schedule_batch``, which also needs the objective's ``batch`` capability."""
    chosen, goal = as_solver(solver), as_objective(objective)
    if not (0 < time_limit < math.inf):  # also false for NaN
        raise InputError(f"the time limit must be a positive number of seconds, not {time_limit}")
    if goal not in DECIDES[chosen]:
        other = next(s for s in Solver if goal in DECIDES[s])
        raise InputError(
            f"the {chosen} solver only knows the {_listed(DECIDES[chosen])} objective; use --solver {other}"
        )
    if batch and not CAPABILITIES[goal].batch:
        raise InputError(f"schedule --batch does not know the {goal} objective")
    return chosen, goal


def _listed(choices: Iterable[StrEnum]) -> str:
    return ", ".join(choices)
