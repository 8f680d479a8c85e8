"""One member of a minimal conflict, said with the numbers that make it fail.

A rule instance's own words ("constraint #0 (matchAttribute example.com/numa) holds") say *what* cannot
hold; the numbers that say *why* — candidates per attribute value, counters left, capacity free, the
rivals for a device — are each rule's own business (:meth:`~drasat.solver.allocation.rules.base.Rule.describe`).
This module only finds the member's rule in the registry, so an explanation knows no rule by name and a
new rule brings its own words.
"""

from __future__ import annotations

from drasat.solver.allocation.planning.inventory import Inventory
from drasat.solver.allocation.planning.plan import ClaimPlan
from drasat.solver.allocation.rules.base import Assumption
from drasat.solver.allocation.rules.registry import RULES

_BY_NAME = {rule.name: rule for rule in RULES}


def detail(inv: Inventory, plans: list[ClaimPlan], member: Assumption) -> str:
    """The numbers behind one rule instance of a conflict, in words ("" when there is nothing to add)."""
    rule = _BY_NAME.get(member.rule)
    return rule.describe(inv, plans, member) if rule is not None else ""
