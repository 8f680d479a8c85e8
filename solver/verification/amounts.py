"""Verifier rules about amounts: consumable capacity (§6.5), counters (§6.6), compatibility groups.

Part of :mod:`drasat.solver.verification.verifier`. Checked as Kubernetes *means* them rather than as
its [bug-compatible] code does: counters are kept per (driver, pool), a rejected device
never leaks counters, and a multi-allocatable device consumes its counters once however
many shares it has. Compatibility groups follow the seed document (no allocator code
exists upstream): per counter set, every device drawn from it shares a group name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from drasat.models.quantity import Quantity
from drasat.models.resource import DeviceCapacity
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.problem import DeviceId

from .claim_rules import RequestSpec, ResultEntry
from .pools import AllocatedState, PoolId, SeenDevice, SeenPool, device_text

# --- consumable capacity (§6.5) --------------------------------------------------------------


def _scale(cap: DeviceCapacity, features: Features) -> int:
    """Integer arithmetic (§6.5.2), or milli-units for a fractional range under DRAFractionalCapacityRange."""
    policy = cap.request_policy
    rng = policy.valid_range if policy else None
    if rng is None or not features.gates.get("DRAFractionalCapacityRange", False):
        return 1
    parts = [q for q in (rng.min, rng.max, rng.step) if q is not None]
    return 1000 if any(not q.is_integer() for q in parts) else 1


def _ceil_units(value: Fraction, scale: int) -> int:
    """Kubernetes' ``Value()`` (scale 1) or ``MilliValue()`` (scale 1000): rounded up."""
    return math.ceil(value * scale)


def _q(value: Fraction | int) -> str:
    """An amount as Kubernetes prints quantities (``500m``, ``2147483648``)."""
    return str(Quantity(value))


def consumed(requested: Quantity | None, cap: DeviceCapacity, features: Features) -> Fraction:
    """§6.5.2 ``consumed``: what one allocation takes of a capacity, after policy defaults and rounding."""
    policy = cap.request_policy
    if requested is None:
        default = policy.default if policy is not None else None
        return cap.value.value if default is None else default.value
    if policy is None:
        return requested.value
    rng = policy.valid_range
    if rng is not None and rng.min is not None:
        step = rng.step.value if rng.step is not None else None
        return _round_up_to_grid(requested.value, rng.min.value, step, _scale(cap, features))
    if policy.valid_values is not None:
        at_least = [v.value for v in policy.valid_values if v.value >= requested.value]  # list order
        return at_least[0] if at_least else requested.value
    return requested.value


def _round_up_to_grid(amount: Fraction, low: Fraction, step: Fraction | None, scale: int) -> Fraction:
    """Range rounding: below the minimum gives the minimum; without a step the amount stands; else the
    first grid point ``M + S·n`` at or above ``R``, all three ceiled to whole units of ``1/scale``."""
    if amount < low:
        return low
    if step is None:
        return amount
    r, m, s = _ceil_units(amount, scale), _ceil_units(low, scale), _ceil_units(step, scale)
    return Fraction(m + s * math.ceil(Fraction(r - m, s)), scale)


def violates_policy(amount: Fraction, cap: DeviceCapacity, features: Features) -> bool:
    """§6.5.2 ``violates``: an amount the device's request policy does not allow (the default always is)."""
    policy = cap.request_policy
    if policy is None or (policy.default is not None and amount == policy.default.value):
        return False
    rng = policy.valid_range
    if rng is None:
        values = {v.value for v in policy.valid_values or ()}
        return bool(values) and amount not in values
    above_max = rng.max is not None and amount > rng.max.value
    return above_max or (rng.step is not None and not _on_grid(amount, rng.min, rng.step, _scale(cap, features)))


def _on_grid(amount: Fraction, low: Quantity | None, step: Quantity, scale: int) -> bool:
    """Whether the amount, ceiled to units, lies a whole number of steps above the (ceiled) minimum."""
    base = _ceil_units(low.value, scale) if low is not None else 0
    return (_ceil_units(amount, scale) - base) % _ceil_units(step.value, scale) == 0


def requested_capacity(spec: RequestSpec) -> Mapping[str, Quantity]:
    """The (sub)request's capacity requests; absent means "the policy default or everything"."""
    return spec.capacity.requests if spec.capacity is not None else {}


def consumption(seen: SeenDevice, spec: RequestSpec, features: Features) -> dict[str, Fraction]:
    """The amount of every capacity of the device one allocation for this request consumes."""
    req = requested_capacity(spec)
    return {n: consumed(req.get(n), cap, features) for n, cap in seen.device.capacity.items()}


def capacity_fits(seen: SeenDevice, spec: RequestSpec, already: Mapping[str, Fraction], features: Features) -> bool:
    """§6.5.1 against the allocated state alone: the All-mode prefilter of §4.3."""
    caps = seen.device.capacity
    if any(n not in caps for n in requested_capacity(spec)):
        return False
    for name, amount in consumption(seen, spec, features).items():
        if violates_policy(amount, caps[name], features):
            return False
        if already.get(name, 0) + amount > caps[name].value.value:
            return False
    return True


def pick_capacity_violations(pick: ResultEntry, state: AllocatedState, features: Features) -> list[str]:
    """Per allocation: known capacity names, allowed amounts, exclusive fit, recorded consumption."""
    caps = pick.seen.device.capacity
    out = [
        f"{pick.where()} has no capacity {n!r} that the request asks for"
        for n in requested_capacity(pick.spec)
        if n not in caps
    ]
    amounts = consumption(pick.seen, pick.spec, features)
    already = state.capacity.get(pick.id, {})
    for name, amount in amounts.items():
        if violates_policy(amount, caps[name], features):
            out.append(f"{pick.where()}: consuming {_q(amount)} of capacity {name} violates its request policy")
        elif not pick.multi and already.get(name, 0) + amount > caps[name].value.value:
            out.append(
                f"{pick.where()}: capacity {name} needs {_q(amount)} but only "
                f"{_q(caps[name].value.value - already.get(name, 0))} is free"
            )
    recorded = {n: q.value for n, q in pick.result.consumed_capacity.items()}
    if pick.multi and recorded != amounts:
        out.append(f"{pick.where()}: consumedCapacity is {_fmt(recorded)} but must be {_fmt(amounts)}")
    return out


def _fmt(amounts: Mapping[str, Fraction]) -> str:
    """A consumed-capacity map for messages."""
    return "{" + ", ".join(f"{n}: {_q(v)}" for n, v in sorted(amounts.items())) + "}" if amounts else "absent"


def shared_capacity_violations(picks: Sequence[ResultEntry], state: AllocatedState, features: Features) -> list[str]:
    """All shares of a multi-allocatable device, old and new, must fit in each capacity."""
    totals: dict[DeviceId, dict[str, Fraction]] = {}
    seen: dict[DeviceId, SeenDevice] = {}
    for pick in picks:
        if not pick.multi:
            continue
        seen[pick.id] = pick.seen
        sums = totals.setdefault(pick.id, dict(state.capacity.get(pick.id, {})))
        for name, amount in consumption(pick.seen, pick.spec, features).items():
            sums[name] = sums.get(name, Fraction(0)) + amount
    out = []
    for device_id, sums in totals.items():
        for name, cap in seen[device_id].device.capacity.items():
            if sums.get(name, 0) > cap.value.value:
                out.append(
                    f"device {device_text(device_id)}: its shares consume {_q(sums[name])} of capacity "
                    f"{name}, more than its {_q(cap.value.value)}"
                )
    return out


# --- counters (§6.6) and compatibility groups --------------------------------------------------


def _new_consumers(picks: Sequence[ResultEntry], state: AllocatedState) -> list[ResultEntry]:
    """Picks that consume counters now: every exclusive pick; a multi device once, if not yet in use."""
    out, counted = [], set()
    for pick in picks:
        if not pick.seen.device.consumes_counters:
            continue
        if pick.multi:
            if state.is_allocated(pick.id) or pick.id in counted:
                continue
            counted.add(pick.id)
        out.append(pick)
    return out


def counter_violations(
    picks: Sequence[ResultEntry], pools: Mapping[PoolId, SeenPool], state: AllocatedState
) -> list[str]:
    """Per (driver, pool, set, counter): old allocations plus new ones within the budget."""
    by_pool: dict[PoolId, list[ResultEntry]] = {}
    for pick in _new_consumers(picks, state):
        by_pool.setdefault(pick.id[:2], []).append(pick)
    out = []
    for pid, consumers in sorted(by_pool.items()):
        pool = pools[pid]
        left = {(cs.name, c): v.value.value for cs in pool.counter_sets.values() for c, v in cs.counters.items()}
        users = [s for s in pool.accounting if state.is_allocated(s.id)]
        for dev in [s.device for s in users] + [p.seen.device for p in consumers]:
            for use in dev.consumes_counters:
                for name, amount in use.counters.items():
                    if (use.counter_set, name) in left:
                        left[(use.counter_set, name)] -= amount.value.value
        for (set_name, name), value in sorted(left.items()):
            if value < 0:
                who = ", ".join(device_text(p.id) for p in consumers)
                out.append(
                    f"pool {pool.text()}: counter {set_name}/{name} is over budget by {_q(-value)} with {who} allocated"
                )
    return out


def _groups(seen: SeenDevice, counter_set: str) -> frozenset[str] | None:
    """The device's groups on a counter set; None when it does not draw from that set."""
    for use in seen.device.consumes_counters:
        if use.counter_set == counter_set:
            return frozenset(use.compatibility_groups or ())
    return None


def compatibility_violations(
    picks: Sequence[ResultEntry], pools: Mapping[PoolId, SeenPool], state: AllocatedState
) -> list[str]:
    """Per counter set this allocation draws from, every device drawn from it (new and already
    allocated) shares a group name; devices without groups only go with devices without groups.

    Only picks that draw counters count (a later share of a device already in use draws none), and a
    set this allocation does not draw from is not its concern, however its old users mix."""
    members: dict[tuple[PoolId, str], dict[DeviceId, frozenset[str]]] = {}
    for pick in _new_consumers(picks, state):
        for use in pick.seen.device.consumes_counters:
            members.setdefault((pick.id[:2], use.counter_set), {})[pick.id] = frozenset(use.compatibility_groups or ())
    out = []
    for (pid, set_name), devices in sorted(members.items()):
        for seen in pools[pid].accounting:
            groups = _groups(seen, set_name)
            if groups is not None and state.is_allocated(seen.id):
                devices.setdefault(seen.id, groups)
        group_sets = list(devices.values())
        names = ", ".join(device_text(d) for d in sorted(devices))
        if any(group_sets) and not all(group_sets):
            out.append(
                f"counter set {'/'.join(pid)}/{set_name}: devices with and without compatibility "
                f"groups are allocated together ({names})"
            )
        elif all(group_sets) and not frozenset.intersection(*group_sets):
            out.append(f"counter set {'/'.join(pid)}/{set_name}: devices {names} share no compatibility group")
    return out
