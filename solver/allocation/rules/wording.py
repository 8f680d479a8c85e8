"""Words the rules share when they describe a member of a conflict (:meth:`~.base.Rule.describe`).

Several rules say who competes for the devices they guard ("2 devices, wanted by claim a request gpu
(1 device), ..."): one wording keeps those sentences alike whichever rule is in the conflict.
"""

from __future__ import annotations

from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan

SHOWN_VALUES = 6  # attribute values, or devices taking a counter, listed per sentence


def count_text(alt: Alternative) -> str:
    """How many devices the alternative asks for, in words."""
    return "all devices" if alt.mode == "All" else f"{alt.count} device{'s' if alt.count != 1 else ''}"


def wanted_by(plans: list[ClaimPlan], devices: tuple[int, ...]) -> str:
    """Which requests may take these devices, with how many each needs: the rivals for them ("; ..." or "")."""
    among = set(devices)
    rivals = [
        f"claim {plan.label} request {alt.result_name} ({count_text(alt)})"
        for plan in plans
        for alt in plan.alternatives()
        if among.intersection(alt.candidates)
    ]
    if not rivals:
        return ""
    size = f"{len(devices)} device{'s' if len(devices) != 1 else ''}" if len(devices) > 1 else "one device"
    return f"; {size}, wanted by " + ", ".join(rivals)
