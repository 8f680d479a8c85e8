"""The conflicts of an explanation in words, claiming only what the solves behind them showed.

A minimal conflict proves that its members cannot hold together and that without any one of them the others
do; "dropping one lets the claims fit" is said only where a solve with every other rule instance kept said so
(:mod:`.conflicts`). Several independent conflicts are said as such: each must be resolved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .explain import Conflict, ConflictRule, Explanation

OWN = "every request has candidates enough on its own"
SHRINK_TIMED_OUT = " (time ran out before the set was shrunk to a minimal one; raise --timeout)"


def conflict_intro(found: Explanation) -> str:
    """The line before several conflicts ("" for one)."""
    if len(found.conflicts) < 2:
        return ""
    return (
        f"{OWN}, but {len(found.conflicts)} independent conflicts stand in the way: each cannot hold even with "
        "every other rule instance dropped, so all of them must be resolved"
    )


def conflict_blocks(found: Explanation) -> list[tuple[str, list[str]]]:
    """Each conflict: the words before its members, and its members (each in one sentence)."""
    if len(found.conflicts) == 1:
        (conflict,) = found.conflicts
        return [(_one_head(conflict), _members(conflict, marked=_mixed(conflict)))]
    count = len(found.conflicts)
    return [
        (f"conflict {i} of {count}: " + _inner_head(conflict), _members(conflict, marked=False))
        for i, conflict in enumerate(found.conflicts, 1)
    ]


def conflict_closing(found: Explanation) -> list[str]:
    """What dropping rule instances was shown to do, and whether more conflicts may exist."""
    lines = []
    if found.together and any(len(conflict.rules) > 1 for conflict in found.conflicts):
        lines.append(f"dropping {_positions(found)} together lets the claims fit (checked by a solve)")
    elif len(found.conflicts) > 1 and (found.together or found.complete):
        lines.append("dropping every rule instance listed lets the claims fit (checked by a solve)")
    if not found.complete and found.stopped:
        lines.append(f"other conflicts may stand as well: the search for them ended early ({found.stopped})")
    return lines


def _positions(found: Explanation) -> str:
    """The rule instances of ``found.together`` by their place in the numbered conflicts."""
    places = []
    for i, conflict in enumerate(found.conflicts, 1):
        for j, rule in enumerate(conflict.rules, 1):
            if any(rule is chosen for chosen in found.together):
                places.append(f"rule {j} of conflict {i}" if len(conflict.rules) > 1 else f"conflict {i}'s rule")
    return " and ".join(places)


def _one_head(conflict: Conflict) -> str:
    if len(conflict.rules) == 1:
        return f"{OWN}, but this rule cannot hold" + ("" if conflict.minimal else SHRINK_TIMED_OUT)
    head = f"{OWN}; these cannot all hold together"
    if not conflict.minimal:
        return head + SHRINK_TIMED_OUT
    if all(rule.alone for rule in conflict.rules):
        return head + " (dropping any one of them would let the claims fit)"
    if _mixed(conflict):
        return head + " (without any one of them the others hold; whether that lets the claims fit is said for each)"
    return head + " (without any one of them the others hold)"


def _inner_head(conflict: Conflict) -> str:
    if len(conflict.rules) == 1:
        return "this rule cannot hold" + ("" if conflict.minimal else SHRINK_TIMED_OUT)
    if not conflict.minimal:
        return "these cannot all hold together" + SHRINK_TIMED_OUT
    return "these cannot all hold together (without any one of them the others hold)"


def _mixed(conflict: Conflict) -> bool:
    """Some members were checked, and not every one of them lets the claims fit when dropped alone."""
    checked = [rule.alone for rule in conflict.rules if rule.alone is not None]
    return bool(checked) and not all(checked)


def _members(conflict: Conflict, *, marked: bool) -> list[str]:
    return [rule.sentence + (_mark(rule) if marked else "") for rule in conflict.rules]


def _mark(rule: ConflictRule) -> str:
    if rule.alone is None:
        return ""
    if rule.alone:
        return " [dropping it alone lets the claims fit]"
    return " [dropping it alone is not enough: other rule instances still conflict]"
