"""Stage 3: one CP-SAT model for all claims together, over equivalence-class counts.

Variables: ``use[claim/request]`` — which alternative each request takes — and
``take[claim/request/class]`` — how many devices of a class it takes. Constraints:
counts and ``allocationMode: All``, exclusivity (admin-access picks do not count as
use), the 32-device claim limit, shared-device capacity, counters, compatibility
groups, matchAttribute and distinctAttribute. Every variable has a readable name so
that a model dump reads like the input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable

from ortools.sat.python import cp_model

from .candidates import Alternative
from .claims import MAX_RESULTS, ClaimPlan
from .classes import DeviceClassGroup, equivalence_classes
from .inventory import Inventory
from .state import SearchState

Term = tuple[Fraction, cp_model.LinearExprT]


@dataclass
class AllocationModel:
    """The CP-SAT model and the maps from its variables back to claims, requests and devices."""

    model: cp_model.CpModel
    inv: Inventory
    plans: list[ClaimPlan]
    groups: list[DeviceClassGroup]
    class_of: dict[int, int]
    use: dict[int, cp_model.IntVar] = field(default_factory=dict)               # id(alt) -> bool
    take: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)  # (id(alt), class) -> count
    alts: dict[int, Alternative] = field(default_factory=dict)
    by_alt: dict[int, dict[int, cp_model.IntVar]] = field(default_factory=dict)  # id(alt) -> class -> count
    by_class: dict[int, list[tuple[int, cp_model.IntVar]]] = field(default_factory=dict)  # class -> (id(alt), count)

    def takes(self, alt: Alternative) -> dict[int, cp_model.IntVar]:
        return self.by_alt.get(id(alt), {})


def build_model(inv: Inventory, plans: list[ClaimPlan]) -> AllocationModel:
    """Compile the planned claims into CP-SAT, in a fixed order: variables, then each rule."""
    labels = SearchState(inv, plans)
    groups, class_of = equivalence_classes(inv, plans, labels)
    m = AllocationModel(cp_model.CpModel(), inv, plans, groups, class_of)
    for plan in plans:
        _requests(m, plan)
    _exclusivity(m)
    _shared_capacity(m)
    _counters(m)
    for plan in plans:
        for ci, constraint in enumerate(plan.constraints):
            _attribute_constraint(m, labels, plan, ci, constraint.kind)
    return m


def _requests(m: AllocationModel, plan: ClaimPlan) -> None:
    sizes = []
    for req in plan.requests:
        uses = []
        for alt in req.alternatives:
            use = m.model.new_bool_var(f"use[{plan.label}/{alt.result_name}]")
            m.use[id(alt)], m.alts[id(alt)] = use, alt
            uses.append(use)
            sizes.append(alt.count * use)
            per_class: dict[int, int] = {}
            for device in alt.candidates:
                per_class[m.class_of[device]] = per_class.get(m.class_of[device], 0) + 1
            for k, available in per_class.items():
                top = available if alt.mode == "All" else min(available, alt.count)
                take = m.model.new_int_var(0, top, f"take[{plan.label}/{alt.result_name}/class{k}]")
                m.take[(id(alt), k)] = take
                m.by_alt.setdefault(id(alt), {})[k] = take
                m.by_class.setdefault(k, []).append((id(alt), take))
                if alt.mode == "All":
                    m.model.add(take == available * use)
            if alt.mode == "All" and alt.blocked:
                m.model.add(use == 0)
            elif alt.mode != "All":
                m.model.add(sum(m.takes(alt).values()) == alt.count * use)
        m.model.add_exactly_one(uses)
    m.model.add(sum(sizes) <= MAX_RESULTS)


def _exclusivity(m: AllocationModel) -> None:
    """Exclusive devices: one non-admin pick overall; never twice within one claim."""
    for group in m.groups:
        if group.shared:
            continue
        takes = m.by_class.get(group.index, [])
        overall = [v for a, v in takes if not m.alts[a].admin]
        if len(overall) > 1:
            m.model.add(sum(overall) <= group.size)
        if any(m.alts[a].admin for a, _ in takes):
            for plan in m.plans:
                mine = [m.take[(id(alt), group.index)] for alt in plan.alternatives()
                        if (id(alt), group.index) in m.take]
                if len(mine) > 1:
                    m.model.add(sum(mine) <= group.size)


def _used(m: AllocationModel, group: DeviceClassGroup) -> cp_model.IntVar:
    """How many devices of the class are allocated (a shared device counts once, however many shares)."""
    takes = [v for _, v in m.by_class.get(group.index, [])]
    if not group.shared:
        # Not capped at the class size: admin-access picks of other claims may repeat a device.
        top = sum(_upper(m.model, v) for v in takes)
        used = m.model.new_int_var(0, top, f"used[class{group.index}]")
        m.model.add(used == sum(takes))
        return used
    used = m.model.new_bool_var(f"used[class{group.index}]")
    m.model.add_max_equality(used, takes) if takes else m.model.add(used == 0)
    return used


def _shared_capacity(m: AllocationModel) -> None:
    for group in m.groups:
        if not group.shared:
            continue
        dev = m.inv.devices[group.devices[0]]
        already = m.inv.in_use.capacity.get(dev.id, {})
        for name, capacity in dev.device.capacity.items():
            terms = [(m.alts[a].share[dev.index][name], v) for a, v in m.by_class.get(group.index, [])]
            _add_scaled(m.model, terms, capacity.value.value - already.get(name, Fraction(0)))


def _counters(m: AllocationModel) -> None:
    if not m.inv.features.partitionable:
        return
    terms: dict[tuple, list[Term]] = {}
    members: dict[tuple, list[tuple[frozenset[str], cp_model.IntVar]]] = {}
    for group in m.groups:
        dev = m.inv.devices[group.devices[0]]
        if not dev.device.consumes_counters or (group.shared and m.inv.in_use.allocated(dev.id)):
            continue
        used = _used(m, group)
        for use in dev.device.consumes_counters:
            for name, counter in use.counters.items():
                terms.setdefault((*dev.pool_key, use.counter_set, name), []).append((counter.value.value, used))
            members.setdefault((*dev.pool_key, use.counter_set), []).append(
                (frozenset(use.compatibility_groups or ()), used))
    for (driver, pool, counter_set, name), counter_terms in terms.items():
        _add_scaled(m.model, counter_terms, m.inv.pool((driver, pool)).counters[counter_set][name])
    if m.inv.features.compatibility_groups:
        for key, users in members.items():
            _compatibility(m, key, users)


def _compatibility(m: AllocationModel, key: tuple, users: list[tuple[frozenset[str], cp_model.IntVar]]) -> None:
    """All devices drawing on one counter set share a group name (one chosen per set), or none has any."""
    driver, pool, counter_set = key
    allocated = m.inv.pool((driver, pool)).allocated_groups.get(counter_set, [])
    names = sorted({g for groups, _ in users for g in groups} | {""})
    choice = {g: m.model.new_bool_var(f"group[{driver}/{pool}/{counter_set}/{g or '-'}]") for g in names}
    m.model.add(sum(choice.values()) <= 1)
    for g, var in choice.items():
        if any((g not in groups) if g else bool(groups) for groups in allocated):
            m.model.add(var == 0)
    for groups, used in users:
        allowed = [choice[g] for g in groups] if groups else [choice[""]]
        m.model.add(used <= _upper(m.model, used) * sum(allowed))


def _attribute_constraint(m: AllocationModel, state: SearchState, plan: ClaimPlan, ci: int, kind: str) -> None:
    constraint = plan.constraints[ci]
    takes: list[tuple[frozenset | None, cp_model.IntVar]] = []
    for alt in plan.alternatives():
        if not constraint.applies(alt):
            continue
        for k, var in m.takes(alt).items():
            takes.append((state.labels_of(plan.index, ci, alt, m.groups[k].devices[0]), var))
    for labels, var in takes:
        if labels is None:
            m.model.add(var == 0)
    usable: list[tuple[frozenset, cp_model.IntVar]] = [(labels, var) for labels, var in takes if labels is not None]
    every = sorted({label for labels, _ in usable for label in labels}, key=repr)
    if kind == "distinct":
        for label in every:
            m.model.add(sum(var for labels, var in usable if label in labels) <= 1)
        return
    single = m.model.new_bool_var(f"single[{plan.label}/constraint{ci}]")
    chosen = {label: m.model.new_bool_var(f"match[{plan.label}/constraint{ci}/{label!r}]") for label in every}
    m.model.add(sum(chosen.values()) + single <= 1)
    m.model.add(sum(var for _, var in usable) <= 1).only_enforce_if(single)
    for labels, var in usable:
        m.model.add(var <= _upper(m.model, var) * (single + sum(chosen[label] for label in labels)))


def _upper(model: cp_model.CpModel, var: cp_model.IntVar) -> int:
    domain = model.proto.variables[var.index].domain
    return domain[len(domain) - 1]  # protobuf containers do not all support negative indices


def _add_scaled(model: cp_model.CpModel, terms: Iterable[Term], bound: Fraction) -> None:
    """``sum(coef * var) <= bound`` with exact rational coefficients, scaled to integers."""
    terms = [(c, v) for c, v in terms if c != 0]
    if not terms:
        return  # nothing drawn from it: whatever was left (even an overdrawn budget) does not matter
    scale = math.lcm(*(c.denominator for c, _ in terms), bound.denominator)
    ints = [int(c * scale) for c, _ in terms]
    # An overdrawn budget (in use beyond it already) admits no new draw, but it is no reason to
    # refuse devices that draw nothing from it.
    limit = max(math.floor(bound * scale), 0)
    g = math.gcd(*ints)
    model.add(sum((i // g) * v for i, (_, v) in zip(ints, terms)) <= limit // g)
