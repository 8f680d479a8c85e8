"""One member of a minimal conflict, said with the numbers that make it fail.

A rule instance's own words ("constraint #0 (matchAttribute example.com/numa) holds") say
*what* cannot hold; the operator also wants to see *why*: for a matchAttribute, how many
candidates each request has per attribute value; for a distinctAttribute, how few values the
candidates carry; for a counter set, how much of each counter is left; for a shared device,
how much of its capacity. Counts are of candidates — devices free and admitted by every
static check — so they are what the allocation could still choose from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from fractions import Fraction
from itertools import product

from drasat.models.quantity import DECIMAL_SI, Quantity
from drasat.solver.allocation.planning.constraints import labels
from drasat.solver.allocation.planning.inventory import Inventory
from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan, ConstraintPlan
from drasat.solver.allocation.rules.base import Assumption
from drasat.solver.allocation.rules.matching import constraint_attribute

SHOWN_VALUES = 6  # attribute values listed per sentence


def detail(inv: Inventory, plans: list[ClaimPlan], member: Assumption) -> str:
    """The numbers behind one rule instance of a conflict, in words ("" when there is nothing to add)."""
    if member.rule == "attributes" and member.claim is not None and member.constraint is not None:
        plan = plans[member.claim]
        constraint = next(c for c in plan.constraints if c.index == member.constraint)
        return _attribute_detail(inv, plan, constraint)
    if member.rule == "counters" and member.counter_set is not None:
        driver, pool, counter_set = member.counter_set
        drawing = tuple(
            d.index
            for d in inv.devices
            if d.pool_key == (driver, pool)
            and any(use.counter_set == counter_set for use in d.device.consumes_counters)
        )
        return _counters_left(inv, member.counter_set) + _wanted(plans, drawing)
    if member.rule == "capacity" and member.devices:
        return _capacity_left(inv, member.devices[0]) + _shares_asked(inv, plans, member.devices[0])
    if member.rule == "exclusivity" and member.devices:
        return _wanted(plans, member.devices).removeprefix("; ")
    return ""


def _wanted(plans: list[ClaimPlan], devices: tuple[int, ...]) -> str:
    """Which requests may take these devices, with how many each needs: the rivals for them."""
    among = set(devices)
    rivals = [
        f"claim {plan.label} request {alt.result_name} ({_count(alt)})"
        for plan in plans
        for alt in plan.alternatives()
        if among.intersection(alt.candidates)
    ]
    if not rivals:
        return ""
    size = f"{len(devices)} device{'s' if len(devices) != 1 else ''}" if len(devices) > 1 else "one device"
    return f"; {size}, wanted by " + ", ".join(rivals)


def _count(alt: Alternative) -> str:
    return "all devices" if alt.mode == "All" else f"{alt.count} device{'s' if alt.count != 1 else ''}"


def _attribute_detail(inv: Inventory, plan: ClaimPlan, constraint: ConstraintPlan) -> str:
    covered = [alt for alt in plan.alternatives() if constraint.applies(alt)]
    per_value: dict[Hashable, dict[int, set[int]]] = {}  # value -> alternative (position) -> devices carrying it
    lacking: Counter[str] = Counter()
    for position, alt in enumerate(covered):
        for device in alt.candidates:
            attr = constraint_attribute(inv, alt, device, constraint.attribute)
            found = labels(attr, constraint.kind, inv.features.list_attributes)
            if not found:
                lacking[alt.result_name] += 1
            for label in found or ():
                per_value.setdefault(label, {}).setdefault(position, set()).add(device)
    missing = "; ".join(f"{n} of request {name}'s candidates lack it" for name, n in lacking.items())
    if not inv.features.list_attributes and _any_list(inv, covered, constraint.attribute):
        missing += ("; " if missing else "") + (
            "some candidates' values are lists, which constraints compare only with DRAListTypeAttributes (disabled)"
        )
    values = sorted(per_value, key=repr)
    groups = _by_request(covered)
    if constraint.kind == "distinct":
        totals = sorted({sum(alt.count for alt in combo if alt.mode != "All") for combo in product(*groups)})
        needed = " or ".join(str(total) for total in totals)
        shown = ", ".join(_value(v) for v in values[:SHOWN_VALUES]) + (", ..." if len(values) > SHOWN_VALUES else "")
        text = (
            f"the candidates carry {len(values)} distinct value{'s' if len(values) != 1 else ''} of "
            f"{constraint.attribute} ({shown or 'none'}) for {needed} device{'s' if totals[-1] != 1 else ''}"
        )
        return text + (f"; {missing}" if missing else "")
    either = [" or ".join(f"{_count(alt)} for {alt.result_name}" for alt in group) for group in groups]
    wanted = " and ".join(
        f"({text})" if len(group) > 1 and len(groups) > 1 else text for text, group in zip(either, groups)
    )
    rows = [_match_row(v, per_value[v], covered) for v in values[:SHOWN_VALUES]]
    more = "; ..." if len(values) > SHOWN_VALUES else ""
    text = f"no {constraint.attribute} value has {wanted} free ({'; '.join(rows) + more or 'no candidate has it'})"
    return text + (f"; {missing}" if missing else "")


def _by_request(covered: list[Alternative]) -> list[list[Alternative]]:
    """The alternatives grouped by request: a request's firstAvailable alternatives are one or the
    other, never all of them; the requests themselves are all needed."""
    groups: dict[int, list[Alternative]] = {}
    for alt in covered:
        groups.setdefault(alt.request, []).append(alt)
    return list(groups.values())


def _any_list(inv: Inventory, covered: list[Alternative], attribute: str) -> bool:
    for alt in covered:
        for device in alt.candidates:
            attr = constraint_attribute(inv, alt, device, attribute)
            if attr is not None and (attr.ints or attr.bools or attr.strings or attr.versions):
                return True
    return False


def _match_row(value: Hashable, carriers: dict[int, set[int]], covered: list[Alternative]) -> str:
    """One value: how many candidates of each request carry it (and how many devices that is in all,
    when requests could share them)."""
    row = f"{_value(value)}: " + ", ".join(
        f"{len(carriers.get(i, ()))} {alt.result_name}" for i, alt in enumerate(covered)
    )
    devices = set().union(*carriers.values())
    if len(covered) > 1 and len(devices) < sum(len(d) for d in carriers.values()):
        row += f" ({len(devices)} device{'s' if len(devices) != 1 else ''} in all)"
    return row


def _value(label: Hashable) -> str:
    """A constraint label as the user wrote the value (labels are (type, value) pairs)."""
    if isinstance(label, tuple) and len(label) == 2:
        return str(label[1]).lower() if isinstance(label[1], bool) else str(label[1])
    return str(label)


def _counters_left(inv: Inventory, key: tuple[str, str, str]) -> str:
    """What is left of each counter of the set, and what its devices on this node take of it."""
    driver, pool_name, counter_set = key
    left = inv.pool((driver, pool_name)).counters.get(counter_set, {})
    takes: dict[str, list[str]] = {}
    formats: dict[str, str] = {}
    for dev in inv.devices:
        if dev.pool_key != (driver, pool_name):
            continue
        for use in dev.device.consumes_counters:
            if use.counter_set == counter_set:
                for name, counter in use.counters.items():
                    takes.setdefault(name, []).append(f"{dev.name} {counter.value}")
                    formats[name] = counter.value.format
    parts = []
    for name, value in sorted(left.items()):
        amount = Quantity(max(value, Fraction(0)), formats.get(name, DECIMAL_SI))
        shown = takes.get(name, [])[:SHOWN_VALUES]
        parts.append(f"{amount} of {name} left" + (f", taken by {', '.join(shown)}" if shown else ""))
    return "; ".join(parts) or "nothing left"


def _shares_asked(inv: Inventory, plans: list[ClaimPlan], device: int) -> str:
    """The share of the device each request that may take it would consume."""
    capacities = inv.devices[device].device.capacity
    asked = []
    for plan in plans:
        for alt in plan.alternatives():
            share = alt.share.get(device)
            if share:
                amounts = ", ".join(
                    f"{name} {Quantity(amount, capacities[name].value.format)}"
                    for name, amount in sorted(share.items())
                )
                asked.append(f"claim {plan.label} request {alt.result_name} {amounts}")
    return "; shares asked: " + ", ".join(asked) if asked else ""


def _capacity_left(inv: Inventory, device: int) -> str:
    dev = inv.devices[device]
    used = inv.in_use.capacity.get(dev.id, {})
    parts = [
        f"{name} {Quantity(c.value.value - used.get(name, Fraction(0)), c.value.format)} of {c.value} free"
        for name, c in sorted(dev.device.capacity.items())
    ]
    return f"device {dev.name} has " + ", ".join(parts)
