"""Kubernetes' validation of consumable capacity: a device capacity's request policy.

A policy is only allowed on devices with ``allowMultipleAllocations: true``; it
either lists valid values (at most 10, ascending, within the capacity, the default
among them) or gives a range (min required and within the capacity, default
between min and max, default and max on the step grid from min). Arithmetic
follows Kubernetes 1.37 with DRAFractionalCapacityRange on (its default).
"""

from __future__ import annotations

from drasat.models.errors import Location
from drasat.models.quantity import Quantity
from drasat.models.resource import CapacityRequestPolicy, CapacityRequestPolicyRange, DeviceCapacity

from .formats import Findings, check_max_items, index

MAX_VALID_VALUES = 10
INT64_MAX = 2**63 - 1


def check_capacity(out: Findings, at: Location, capacity: DeviceCapacity, multiple: bool) -> None:
    """A device capacity and its request policy, as the API server validates them."""
    policy = capacity.request_policy
    if policy is None:
        return
    if not multiple:
        out.add(at.child("requestPolicy"), "is only allowed on devices with allowMultipleAllocations: true")
        return
    if policy.valid_values and policy.valid_range is not None:
        out.add(at.child("requestPolicy"), "may set `validValues` or `validRange`, not both")
    elif policy.valid_values:
        _check_valid_values(out, at.child("requestPolicy"), capacity.value, policy)
    elif policy.valid_range is not None:
        if policy.default is None:
            out.add(at.child("requestPolicy.default"), "is required when validRange is given")
        else:
            _check_range(out, at.child("requestPolicy"), capacity.value, policy.default, policy.valid_range)


def _check_valid_values(out: Findings, at: Location, total: Quantity, policy: CapacityRequestPolicy) -> None:
    values = policy.valid_values or []
    if policy.default is None:
        out.add(at.child("default"), "is required when validValues is given")
        return
    where = at.child("validValues")
    for i in range(len(values) - 1):
        if values[i] > values[i + 1]:
            out.add(
                index(where, i + 1),
                f"{values[i + 1]} is smaller than {values[i]}: values must be sorted in ascending order",
            )
    if not check_max_items(out, where, values, MAX_VALID_VALUES):
        return
    for i, value in enumerate(values):
        if value > total:
            out.add(index(where, i), f"{value} is larger than the capacity value {total}")
    seen: set[object] = set()
    for i, value in enumerate(values):
        if value.value in seen:
            out.add(index(where, i), f'Duplicate value: "{value}"')
        seen.add(value.value)
    if policy.default not in values:
        out.add(where, f"does not contain the default {policy.default}: the default must be one of the values")


def _check_range(
    out: Findings, at: Location, total: Quantity, default: Quantity, rng: CapacityRequestPolicyRange
) -> None:
    where = at.child("validRange")
    if rng.min is None:
        out.add(where.child("min"), "is required when validRange is given")
        return
    if rng.min > total:
        out.add(where.child("min"), f"{rng.min} is larger than the capacity value {total}")
    if default < rng.min:
        out.add(at.child("default"), f"{default} is less than the minimum {rng.min}")
    if rng.max is not None:
        if rng.min > rng.max:
            out.add(where.child("max"), f"the minimum {rng.min} is larger than the maximum {rng.max}")
        if rng.max > total:
            out.add(where.child("max"), f"{rng.max} is larger than the capacity value {total}")
        if default > rng.max:
            out.add(at.child("default"), f"{default} is more than the maximum {rng.max}")
    if _check_milli(out, at, default, rng):
        _check_step(out, at, total, default, rng)


def _check_step(
    out: Findings, at: Location, total: Quantity, default: Quantity, rng: CapacityRequestPolicyRange
) -> None:
    """Default and max on the step grid from min, counted as Kubernetes 1.37 counts.

    In whole units (``Quantity.Value()``, rounded up), or in thousandths when any
    bound or the default is fractional (DRAFractionalCapacityRange, on by default
    since 1.37); values outside what that arithmetic can hold are refused first.
    """
    step, low = rng.step, rng.min
    if step is None or low is None:
        return
    where = at.child("validRange.step")
    if step <= 0:
        out.add(where, "must be greater than zero")
        return
    if low + step > total:
        out.add(where, f"one step from the minimum ({low + step}) is larger than the capacity value {total}")
    named = [("default", default), ("validRange.min", low), ("validRange.max", rng.max), ("validRange.step", step)]
    if not _uses_milli(default, rng):
        bad = [(n, q) for n, q in named if q is not None and (q < 0 or q > INT64_MAX)]
        for name, quantity in bad:
            out.add(at.child(name), f"{quantity} must be between 0 and {INT64_MAX}")
        if bad:
            return
    units = (lambda q: q.milli_value()) if _uses_milli(default, rng) else (lambda q: q.ceil_int())
    for value in (default, rng.max):
        if value is not None and (units(value) - units(low)) % units(step):
            out.add(where, f"{value} is not the minimum {low} plus a multiple of the step {step}")


def _uses_milli(default: Quantity, rng: CapacityRequestPolicyRange) -> bool:
    return any(q is not None and not q.is_integer() for q in (default, rng.min, rng.max, rng.step))


def _check_milli(out: Findings, at: Location, default: Quantity, rng: CapacityRequestPolicyRange) -> bool:
    """With fractional values, each must be a whole number of thousandths; True when all are."""
    if not _uses_milli(default, rng):
        return True
    named = [
        ("default", default),
        ("validRange.min", rng.min),
        ("validRange.max", rng.max),
        ("validRange.step", rng.step),
    ]
    bad = [(n, q) for n, q in named if q is not None and (q.value * 1000).denominator != 1]
    for name, quantity in bad:
        out.add(at.child(name), f"{quantity} cannot be represented in thousandths (milli units)")
    return not bad
