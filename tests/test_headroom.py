"""Exact partition headroom: CP-SAT's maximum against brute force, and its witness through the verifier."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

from drasat.models.resource import AllocationResult, DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.problem import NodeInfo, Problem
from drasat.solver.report.headroom import Candidate, CounterState, fits_alone, max_allocatable
from drasat.solver.report.pool_status import partition_summary
from drasat.solver.report.pool_usage import candidate_of, counter_state, gather_pools, usage_from_claims
from drasat.solver.verification.verifier import verify

DRIVER = "gpu.example.com"
NODE = "worker-1"
MODES = [None, ["mig"], ["vgpu"], ["mig", "vgpu"]]


def _slices(counter_sets: dict[str, dict[str, int]], devices: list[dict]) -> list[ResourceSlice]:
    """A two-slice pool (counters apart from devices, as the API requires) on one node."""
    pool = {"name": NODE, "generation": 1, "resourceSliceCount": 2}
    counters = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "counters"},
        "spec": {
            "driver": DRIVER,
            "nodeName": NODE,
            "pool": pool,
            "sharedCounters": [
                {"name": name, "counters": {c: {"value": str(v)} for c, v in cs.items()}}
                for name, cs in counter_sets.items()
            ],
        },
    }
    devs = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "devices"},
        "spec": {
            "driver": DRIVER,
            "nodeName": NODE,
            "pool": pool,
            "partitionTypeAttribute": f"{DRIVER}/profile",
            "devices": devices,
        },
    }
    return [ResourceSlice.model_validate(counters), ResourceSlice.model_validate(devs)]


def _device(name: str, profile: str, costs: dict[str, dict[str, int]], groups: dict[str, list[str] | None]) -> dict:
    consumes = []
    for set_name, counters in costs.items():
        entry: dict = {"counterSet": set_name, "counters": {c: {"value": str(v)} for c, v in counters.items()}}
        if groups.get(set_name):
            entry["compatibilityGroups"] = groups[set_name]
        consumes.append(entry)
    return {"name": name, "attributes": {"profile": {"string": profile}}, "consumesCounters": consumes}


def _claim(name: str, devices: list[str], allocated: bool) -> ResourceClaim:
    body: dict = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {"name": "parts", "exactly": {"deviceClassName": "partitions", "count": max(1, len(devices))}}
                ]
            }
        },
    }
    if allocated:
        body["status"] = {"allocation": _allocation(devices)}
    return ResourceClaim.model_validate(body)


def _allocation(devices: list[str]) -> dict:
    return {
        "devices": {"results": [{"request": "parts", "driver": DRIVER, "pool": NODE, "device": d} for d in devices]},
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}]
        },
    }


def _witness_is_valid(slices: list[ResourceSlice], in_use: list[str], witness: tuple[str, ...]) -> list[str]:
    """Allocate the witness as one claim beside the allocated devices and ask the verifier."""
    if not witness:
        return []
    cls = DeviceClass.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "partitions"}}
    )
    allocated = [_claim("in-use", in_use, allocated=True)] if in_use else []
    problem = Problem(
        NodeInfo(NODE),
        slices,
        [cls],
        [_claim("more", list(witness), allocated=False)],
        allocated,
        features=Features().with_gates(DRADeviceCompatibilityGroups=True),
    )
    return verify(problem, {"default/more": AllocationResult.model_validate(_allocation(list(witness)))})


# --- the MIG-like pool: counting devices, counting greedily and maximising give three numbers ------------

SLOTS = {"gpu-0": {f"s{i}": 1 for i in range(7)}}
TWO_G = [_device(f"2g-at-{i}", "2g", {"gpu-0": {f"s{i}": 1, f"s{i + 1}": 1}}, {}) for i in (1, 3, 0, 2, 4)]
ONE_G = [_device(f"1g-at-{i}", "1g", {"gpu-0": {f"s{i}": 1}}, {}) for i in range(7)]


def test_mig_like_pool_exact_maximum_beats_per_device_counting():
    slices = _slices(SLOTS, TWO_G + ONE_G)
    pool = gather_pools(slices)[0]
    state = counter_state(pool, ["1g-at-6"])
    free_2g = [candidate_of(d) for _, d in pool.devices if d.name.startswith("2g")]
    # Per device: all 5 placements are free and each fits alone.
    assert sum(1 for c in free_2g if fits_alone(c, state)) == 5
    # Greedy in slice order (what a device-by-device count does) takes 1-2 and 3-4, then nothing fits: 2.
    assert _greedy(free_2g, state) == 2
    # Exact: 0-1, 2-3 and 4-5 together: 3.
    headroom = max_allocatable(free_2g, state)
    assert headroom.count == 3
    assert set(headroom.witness) == {"2g-at-0", "2g-at-2", "2g-at-4"}
    assert _witness_is_valid(slices, ["1g-at-6"], headroom.witness) == []


def test_allocated_device_takes_its_slots_away():
    slices = _slices(SLOTS, TWO_G)
    pool = gather_pools(slices)[0]
    state = counter_state(pool, ["2g-at-3"])  # s3, s4 taken: only 0-1 (or 1-2) remain, and 5-6 has no placement
    free = [candidate_of(d) for _, d in pool.devices if d.name != "2g-at-3"]
    assert max_allocatable(free, state).count == 1


def test_compatibility_groups_make_modes_exclusive():
    devices = [
        _device("mig-0", "half", {"gpu-0": {"mem": 4}}, {"gpu-0": ["mig"]}),
        _device("mig-1", "half", {"gpu-0": {"mem": 4}}, {"gpu-0": ["mig"]}),
        _device("vgpu-0", "half", {"gpu-0": {"mem": 4}}, {"gpu-0": ["vgpu"]}),
        _device("plain", "half", {"gpu-0": {"mem": 4}}, {}),
    ]
    slices = _slices({"gpu-0": {"mem": 8}}, devices)
    pool = gather_pools(slices)[0]
    fresh = counter_state(pool, [])
    everything = [candidate_of(d) for _, d in pool.devices]
    assert max_allocatable(everything, fresh).count == 2  # two mig, never mig beside vgpu or plain
    with_vgpu = counter_state(pool, ["vgpu-0"])
    rest = [c for c in everything if c.name != "vgpu-0"]
    assert max_allocatable(rest, with_vgpu).count == 0  # 4 of 8 left, but only vgpu may join vgpu-0
    assert _witness_is_valid(slices, [], max_allocatable(everything, fresh).witness) == []


def test_missing_counter_set_and_overcommitted_counter_never_fit():
    state = CounterState({"gpu-0": {"mem": Fraction(-1)}})
    assert max_allocatable([Candidate("a", {"gpu-0": {"mem": Fraction(0)}})], state).count == 0
    assert max_allocatable([Candidate("b", {"gpu-9": {"mem": Fraction(1)}})], state).count == 0
    assert max_allocatable([Candidate("c", {})], state).count == 1  # draws on nothing: always fits


def test_fractional_and_huge_counters_are_scaled_exactly():
    state = CounterState({"gpu-0": {"memory": Fraction(80 * 2**30), "sm": Fraction(1)}})
    parts = [Candidate(f"p{i}", {"gpu-0": {"memory": Fraction(10 * 2**30), "sm": Fraction(1, 7)}}) for i in range(9)]
    assert max_allocatable(parts, state).count == 7  # sm: 7 × 1/7 = 1 binds before memory (8)


def _greedy(candidates: list[Candidate], state: CounterState) -> int:
    left = {s: dict(c) for s, c in state.available.items()}
    taken = 0
    for candidate in candidates:
        if all(left[s][k] >= v for s, cs in candidate.costs.items() for k, v in cs.items()):
            for s, cs in candidate.costs.items():
                for k, v in cs.items():
                    left[s][k] -= v
            taken += 1
    return taken


# --- 200 random small pools against brute force --------------------------------------------------------------


def _random_pool(rng: random.Random) -> tuple[dict[str, dict[str, int]], list[dict], list[str]]:
    sets = {
        f"set-{i}": {f"c{j}": rng.randint(1, 6) for j in range(rng.randint(1, 2))} for i in range(rng.randint(1, 2))
    }
    devices = []
    for i in range(rng.randint(2, 8)):
        chosen = rng.sample(sorted(sets), rng.randint(1, len(sets)))
        costs = {s: {c: rng.randint(0, 3) for c in sets[s] if rng.random() < 0.8} for s in chosen}
        groups = {s: rng.choice(MODES) for s in chosen} if rng.random() < 0.4 else {}
        devices.append(_device(f"d{i}", rng.choice(["a", "b"]), costs, groups))
    in_use = _fitting_in_use(rng, sets, devices)
    return sets, devices, in_use


def _fitting_in_use(rng: random.Random, sets: dict[str, dict[str, int]], devices: list[dict]) -> list[str]:
    """Some devices already allocated, chosen so that together they are a valid allocation."""
    in_use: list[str] = []
    for device in rng.sample(devices, rng.randint(0, 2)):
        if _brute_valid(sets, [*(d for d in devices if d["name"] in in_use), device]):
            in_use.append(device["name"])
    return in_use


def _brute_valid(sets: dict[str, dict[str, int]], chosen: list[dict]) -> bool:
    """Counters and compatibility groups checked directly on the manifests, independently of drasat."""
    for set_name, counters in sets.items():
        on_set = [c for d in chosen for c in d["consumesCounters"] if c["counterSet"] == set_name]
        for counter, capacity in counters.items():
            if sum(int(c["counters"].get(counter, {"value": "0"})["value"]) for c in on_set) > capacity:
                return False
        modes = [frozenset(c.get("compatibilityGroups") or [""]) for c in on_set]
        if modes and not frozenset.intersection(*modes):
            return False
    return True


def _brute_max(sets: dict[str, dict[str, int]], devices: list[dict], in_use: list[str], profile: str) -> int:
    used = [d for d in devices if d["name"] in in_use]
    free = [d for d in devices if d["name"] not in in_use and d["attributes"]["profile"]["string"] == profile]
    for size in range(len(free), 0, -1):
        if any(_brute_valid(sets, used + list(combo)) for combo in itertools.combinations(free, size)):
            return size
    return 0


def test_exact_headroom_agrees_with_brute_force_on_200_random_pools():
    rng = random.Random(5304)
    for case in range(200):
        sets, devices, in_use = _random_pool(rng)
        slices = _slices(sets, devices)
        pool = gather_pools(slices)[0]
        usage = usage_from_claims([_claim("in-use", in_use, allocated=True)] if in_use else [])
        summary, error = partition_summary(pool, usage.in_pool(pool.key), None)
        assert error is None
        for entry in summary:
            expected = _brute_max(sets, devices, in_use, entry.type)
            assert entry.allocatable == expected, f"case {case}, type {entry.type}: {sets} {devices} {in_use}"
        if case % 10 == 0:  # the witness of one type in every tenth pool goes through the verifier
            state = counter_state(pool, in_use)
            free = [candidate_of(d) for _, d in pool.devices if d.name not in in_use]
            witness = max_allocatable(free, state).witness
            assert _witness_is_valid(slices, in_use, witness) == [], f"case {case}"
