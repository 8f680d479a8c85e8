"""Consumable capacity: how much of a device's capacity one request takes, exactly as Kubernetes rounds it.

A request that names no amount takes the policy default, or the whole capacity
when there is no default; a named amount is rounded up to the policy's grid
(``validRange`` step) or to the next ``validValues`` entry. Integer-ceiling
arithmetic, as upstream (milli-units for fractional ranges with
DRAFractionalCapacityRange).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from drasat.models.quantity import Quantity
from drasat.models.resource import CapacityRequestPolicy, DeviceCapacity


def _ceil(value: Fraction, milli: bool) -> Fraction:
    return Fraction(math.ceil(value * 1000), 1000) if milli else Fraction(math.ceil(value))


def _fractional_range(policy: CapacityRequestPolicy) -> bool:
    rng = policy.valid_range
    return rng is not None and any(q is not None and not q.is_integer() for q in (rng.min, rng.max, rng.step))


def consumed_amount(requested: Fraction | None, capacity: DeviceCapacity, fractional_gate: bool = False) -> Fraction:
    """What a share takes from ``capacity`` when ``requested`` is asked for (None: nothing named)."""
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default.value
        return capacity.value.value
    if policy is None:
        return requested
    rng = policy.valid_range
    if rng is not None and rng.min is not None:
        low = rng.min.value
        if requested < low:
            return low
        if rng.step is None:
            return requested
        milli = fractional_gate and _fractional_range(policy)
        r, m, s = _ceil(requested, milli), _ceil(low, milli), _ceil(rng.step.value, milli)
        steps = (r - m) // s + (1 if (r - m) % s else 0)
        return m + s * steps
    if policy.valid_values is not None:
        for value in policy.valid_values:
            if value.value >= requested:
                return value.value
    return requested


def violates(amount: Fraction, capacity: DeviceCapacity, fractional_gate: bool = False) -> bool:
    """Whether ``amount`` is not allowed by the capacity's request policy."""
    policy = capacity.request_policy
    if policy is None:
        return False
    if policy.default is not None and amount == policy.default.value:
        return False
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and amount > rng.max.value:
            return True
        if rng.step is not None and rng.min is not None:
            milli = fractional_gate and _fractional_range(policy)
            offset = _ceil(amount, milli) - _ceil(rng.min.value, milli)
            return offset % _ceil(rng.step.value, milli) != 0
        return False
    if policy.valid_values:
        return all(amount != v.value for v in policy.valid_values)
    return False


def share_of(
    capacities: Mapping[str, DeviceCapacity], requests: Mapping[str, Quantity], fractional_gate: bool = False
) -> dict[str, Fraction] | None:
    """The amounts one share takes of every capacity, or None when the request cannot be met by policy.

    A request naming a capacity the device does not have makes the device unusable for it.
    """
    if any(name not in capacities for name in requests):
        return None
    share: dict[str, Fraction] = {}
    for name, capacity in capacities.items():
        asked = requests[name].value if name in requests else None
        amount = consumed_amount(asked, capacity, fractional_gate)
        if violates(amount, capacity, fractional_gate):
            return None
        share[name] = amount
    return share


def fits(
    capacities: Mapping[str, DeviceCapacity], share: Mapping[str, Fraction], *taken: Mapping[str, Fraction]
) -> bool:
    """Whether ``share`` plus everything already ``taken`` stays within every capacity value."""
    for name, amount in share.items():
        total = amount
        for t in taken:  # a plain loop: the depth-first search asks this for every shared device it tries
            more = t.get(name)
            if more:
                total += more
        if total > capacities[name].value.value:
            return False
    return True
