"""The *pack* objective: touch as few physical devices as possible, and leave the biggest holes.

A partition drawing on a GPU's counter set touches that GPU (the counter set); a device
without counters touches itself. Devices and counter sets other allocations already hold
count as touched, so new claims go onto partly used GPUs first. The stages, each a bound
fixed before the next (as prioritized-list fixes its rank), then first-fit for ties:

1. fewest devices and counter sets newly touched (the footprint);
2. among those, fewest counter sets newly touched (most GPUs left entirely free);
3. the largest free partitions: summed over the counter sets the claims may draw on, the size
   of the biggest partition that could still be allocated there afterwards (a partition's
   size is the share of its set's counters it draws, the set's largest device being 1) —
   the best found within a fixed search effort (:data:`HOLES_EFFORT`), not always proven best.

:func:`minimize_footprint` adds stages 1-3 to the staged CP-SAT solves; :func:`footprint`
scores a finished allocation the same way from its results (the scheduler's tie-break, the
tests and any comparison use it). Compatibility groups are not weighed in stage 3: a hole
counts as free if its counters are, which can only make the preference coarser, never the
answer invalid (the rules still hold).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Protocol

from drasat.models.resource import AllocationResult
from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice, build_inventory
from drasat.solver.allocation.problem import Problem
from drasat.solver.allocation.rules.counters import add_scaled

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from .model import AllocationModel

Unit = tuple[str, str, str, str]  # ("counter set" | "device", driver, pool, name)
SetKey = tuple[str, str, str]  # (driver, pool, counter set)
Draw = dict[tuple[SetKey, str], Fraction]  # (counter set, counter) -> amount
SIZE_SCALE = 1000  # partition sizes in thousandths of the set's largest device, as integers for CP-SAT
#: Stage 3 is a preference searched within this budget (CP-SAT deterministic time, about 2-4 s of wall time
#: per unit here): proving the biggest holes optimal took over 20 s on eight MIG GPUs with ten claims, while
#: 0.1 units already found the optimum there. Stages 1 and 2 are always solved to optimality.
HOLES_EFFORT = 0.2


class StagedSolve(Protocol):
    """What pack needs of the staged solves (``stages.Stages``): the model, a solve, values read back."""

    m: AllocationModel
    model: cp_model.CpModel
    tracked: list[cp_model.IntVar]
    effort: float | None

    def solve(self, *assume: cp_model.IntVar) -> bool: ...

    def value(self, var: cp_model.IntVar) -> int: ...


def device_units(dev: InventoryDevice) -> list[Unit]:
    """What allocating ``dev`` touches: the counter sets it draws on, or the device itself."""
    if dev.device.consumes_counters:
        return [("counter set", *dev.pool_key, use.counter_set) for use in dev.device.consumes_counters]
    return [("device", *dev.id)]


def units_in_use(inv: Inventory) -> set[Unit]:
    """Counter sets and devices that allocated claims already hold: touching them again costs nothing."""
    units: set[Unit] = {("counter set", *pool.key, name) for pool in inv.pools for name in pool.allocated_groups}
    units.update(
        ("device", *dev.id) for dev in inv.devices if not dev.device.consumes_counters and inv.in_use.allocated(dev.id)
    )
    return units


def _draw(dev: InventoryDevice) -> Draw:
    return {
        ((*dev.pool_key, use.counter_set), name): counter.value.value
        for use in dev.device.consumes_counters
        for name, counter in use.counters.items()
    }


@dataclass(frozen=True)
class _Probe:
    """A partition whose staying allocatable stage 3 weighs: what it draws, and its size on each set."""

    device: int
    draw: Draw
    sizes: dict[SetKey, int]


def _probes(inv: Inventory) -> list[_Probe]:
    """Every counter-drawing, exclusive, unallocated device of the node, sized against its sets' largest draw.
    None while DRAPartitionableDevices is off: a device drawing counters is then never allocatable (the
    counters rule), and the inventory keeps no counters to size it against."""
    if not inv.features.partitionable:
        return []
    largest: dict[tuple[SetKey, str], Fraction] = {}
    for dev in inv.devices:
        for counter, amount in _draw(dev).items():
            largest[counter] = max(largest.get(counter, Fraction(0)), amount)
    probes = []
    for dev in inv.devices:
        if (
            not dev.device.consumes_counters
            or dev.shared
            or not dev.on_node
            or inv.in_use.allocated(dev.id)
            or inv.pool(dev.pool_key).overcommitted
        ):
            continue
        draw = _draw(dev)
        sizes: dict[SetKey, Fraction] = {}
        for (cset, name), amount in draw.items():
            if largest[(cset, name)] > 0:
                sizes[cset] = sizes.get(cset, Fraction(0)) + amount / largest[(cset, name)]
        probes.append(_Probe(dev.index, draw, {k: int(s * SIZE_SCALE) for k, s in sizes.items()}))
    return probes


def _left(inv: Inventory, cset: SetKey, name: str) -> Fraction:
    """What the counter has left after what allocated claims hold."""
    return inv.pool(cset[:2]).counters[cset[2]][name]


# --- the CP-SAT side ---------------------------------------------------------------------


def minimize_footprint(stages: StagedSolve) -> None:
    """Pack's stages 1-3 on the staged model: each optimum is fixed as a bound before the next, so
    first-fit decoding afterwards only breaks the remaining ties. New variables go into the stages'
    copy of the model (``stages.model``), never into the built one."""
    m, model = stages.m, stages.model
    usage = _class_usage(m, model)
    busy = units_in_use(m.inv)
    touched: dict[Unit, cp_model.IntVar] = {}
    devices: list[cp_model.IntVar] = []
    for group in m.groups:
        for unit in device_units(m.inv.devices[group.devices[0]]):
            if unit in busy:
                continue
            if unit[0] == "device":
                devices.extend(usage[group.index])
                continue
            if unit not in touched:
                touched[unit] = model.new_bool_var(f"touched[{'/'.join(unit[1:])}]")
            for var in usage[group.index]:
                model.add(var == 0).only_enforce_if(~touched[unit])
    sets = list(touched.values())
    _optimize(stages, sets + devices, maximize=False)
    _optimize(stages, sets, maximize=False)
    stages.effort = HOLES_EFFORT
    try:
        _optimize(stages, _largest_free(m, model, usage), maximize=True)
    finally:
        stages.effort = None


def _class_usage(m: AllocationModel, model: cp_model.CpModel) -> dict[int, list[cp_model.IntVar]]:
    """Per device class, variables whose sum is how many of its devices are allocated (a shared device: 0 or 1),
    admin access left out: its counters are drawn within the call (the rules see to that), but the allocated
    state that later claims meet ignores admin results (allocation-semantics §5.6), so they take no room."""
    takes: dict[int, list[cp_model.IntVar]] = {group.index: [] for group in m.groups}
    for record in m.vars.values():
        if record.alt.admin:
            continue  # admin access holds nothing once allocated (later calls ignore it): as footprint() counts
        for k, var in record.takes.items():
            takes[k].append(var)
    usage: dict[int, list[cp_model.IntVar]] = {}
    for group in m.groups:
        if group.shared and takes[group.index]:
            used = model.new_bool_var(f"used[class{group.index}]")
            model.add_max_equality(used, takes[group.index])
            usage[group.index] = [used]
        else:
            usage[group.index] = takes[group.index]
    return usage


def _largest_free(
    m: AllocationModel, model: cp_model.CpModel, usage: Mapping[int, list[cp_model.IntVar]]
) -> list[cp_model.IntVar]:
    """Per counter set the claims may draw on, a variable for the size of its biggest partition left allocatable
    (none while DRAPartitionableDevices is off: no claim draws counters then, see :func:`_probes`)."""
    inv = m.inv
    if not inv.features.partitionable:
        return []
    draws: dict[tuple[SetKey, str], list[tuple[Fraction, cp_model.IntVar]]] = {}
    for group in m.groups:
        dev = inv.devices[group.devices[0]]
        if group.shared and inv.in_use.allocated(dev.id):
            continue  # later shares draw nothing
        for counter, amount in _draw(dev).items():
            draws.setdefault(counter, []).extend((amount, var) for var in usage[group.index])
    options: dict[SetKey, list[tuple[int, cp_model.IntVar]]] = {cset: [] for cset, _ in draws}
    for probe in _probes(inv):
        if any(amount > _left(inv, *counter) for counter, amount in probe.draw.items()):
            continue
        for cset, size in probe.sizes.items():
            if cset in options:
                keep = model.new_bool_var(f"keep_free[{inv.devices[probe.device].label()}]")
                _stays_allocatable(m, model, usage, draws, probe, keep)
                options[cset].append((size, keep))
    largest = []
    for cset, sizes in sorted(options.items()):
        # One partition per set is chosen to stay allocatable; its size is the set's largest hole. (A sum
        # under "at most one" relaxes far better than a maximum: 3 s instead of over 20 on eight MIG GPUs.)
        var = model.new_int_var(0, max((size for size, _ in sizes), default=0), f"largest_free[{'/'.join(cset)}]")
        model.add_at_most_one(keep for _, keep in sizes)
        model.add(var == sum(size * keep for size, keep in sizes))
        largest.append(var)
    return largest


def _stays_allocatable(
    m: AllocationModel,
    model: cp_model.CpModel,
    usage: Mapping[int, list[cp_model.IntVar]],
    draws: Mapping[tuple[SetKey, str], list[tuple[Fraction, cp_model.IntVar]]],
    probe: _Probe,
    literal: cp_model.IntVar,
) -> None:
    """Under ``literal``: the probe's counters still have room for it, and a device of its class stays untaken."""
    for counter, amount in probe.draw.items():
        add_scaled(model, draws.get(counter, []), _left(m.inv, *counter) - amount, literal)
    k = m.class_of.get(probe.device)
    if k is not None:
        model.add(sum(usage[k]) <= m.groups[k].size - 1).only_enforce_if(literal)


def _optimize(stages: StagedSolve, terms: Sequence[cp_model.IntVar], maximize: bool) -> None:
    """One lexicographic stage: optimise the sum of ``terms``, then keep it at that value for the stages after."""
    if not terms:
        return
    known = {var.index for var in stages.tracked}
    stages.tracked.extend(var for var in terms if var.index not in known)
    model, total = stages.model, sum(terms)
    model.maximize(total) if maximize else model.minimize(total)
    found = stages.solve()
    model.clear_objective()
    if not found:
        return  # a best-effort stage found nothing within its budget: no bound
    best = sum(stages.value(var) for var in terms)
    model.add(total >= best) if maximize else model.add(total <= best)


# --- the same score, read off a finished allocation -----------------------------------------


@dataclass(frozen=True)
class Footprint:
    """What an allocation costs on one node in pack's terms (lower ``key`` is better)."""

    units: int  # devices and counter sets newly touched
    counter_sets: int  # counter sets newly touched
    largest_free: int  # summed over the node's counter sets: the biggest partition still allocatable there
    free_counter_sets: int  # counter sets nothing draws from afterwards (whole GPUs left)
    largest_free_before: int  # ``largest_free`` before the allocation

    @property
    def key(self) -> tuple[int, int, int, int]:
        """Pack's order: fewer units, then fewer counter sets, then less of the biggest holes taken, then the node
        with fewer whole GPUs left. On one node the last two are the stages' order (the holes before and the sets
        are the node's); across nodes (schedule's tie-break) they pack onto the node already more used, where
        the total of the largest holes would favour the emptier one."""
        return self.units, self.counter_sets, self.largest_free_before - self.largest_free, self.free_counter_sets


def footprint(problem: Problem, allocations: Mapping[str, AllocationResult]) -> Footprint:
    """Score ``allocations`` (new ones, for ``problem``'s node) by pack's stages, from the results alone."""
    inv = build_inventory(problem)
    by_id = {dev.id: dev for dev in inv.devices}
    picked = [
        by_id[(r.driver, r.pool, r.device)]
        for result in allocations.values()
        for r in result.devices.results
        if not r.admin_access and (r.driver, r.pool, r.device) in by_id
    ]
    busy = units_in_use(inv)
    new = {unit for dev in picked for unit in device_units(dev)} - busy
    probes = _probes(inv)
    all_sets = {("counter set", *pool.key, name) for pool in inv.pools for name in pool.counters}
    return Footprint(
        units=len(new),
        counter_sets=sum(1 for u in new if u[0] == "counter set"),
        largest_free=_largest_holes(probes, _left_after(inv, picked), {dev.index for dev in picked}),
        free_counter_sets=len(all_sets - busy - new),
        largest_free_before=_largest_holes(probes, _left_after(inv, []), set()),
    )


def _largest_holes(probes: Iterable[_Probe], left: Mapping[tuple[SetKey, str], Fraction], taken: set[int]) -> int:
    """Summed over the counter sets: the size of the biggest partition still allocatable with ``left``."""
    largest: dict[SetKey, int] = {}
    for probe in probes:
        if probe.device in taken or any(amount > left[counter] for counter, amount in probe.draw.items()):
            continue
        for cset, size in probe.sizes.items():
            largest[cset] = max(largest.get(cset, 0), size)
    return sum(largest.values())


def _left_after(inv: Inventory, picked: Iterable[InventoryDevice]) -> dict[tuple[SetKey, str], Fraction]:
    left = {
        ((*pool.key, name), counter): amount
        for pool in inv.pools
        for name, counters in pool.counters.items()
        for counter, amount in counters.items()
    }
    if not inv.features.partitionable:
        return left  # no counters kept, none drawn (a device drawing them is not allocatable then)
    drawn_shared: set[int] = set()
    for dev in picked:
        if dev.shared and (inv.in_use.allocated(dev.id) or dev.index in drawn_shared):
            continue
        drawn_shared.add(dev.index)
        for counter, amount in _draw(dev).items():
            left[counter] -= amount
    return left
