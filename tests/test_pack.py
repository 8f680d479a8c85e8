"""The pack objective: valid (the verifier), never a bigger footprint than first fit, optimal where brute force can tell."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasat.models.errors import Unschedulable
from drasat.models.loader import load_paths
from drasat.models.quantity import Quantity
from drasat.models.resource import AllocationResult, DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import Features, Problem, allocate
from drasat.solver.allocation.cp_sat.packing import footprint
from drasat.solver.scheduling.cluster import cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import select_pods
from drasat.solver.verification.verifier import verify

from .cluster_factory import violations
from .problem_factory import NODE, problems

settings.register_profile("default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

DRIVER = "d.example.com"
PROFILES = {"whole": (4, [[0, 1, 2, 3]]), "half": (2, [[0, 1], [2, 3]]), "quarter": (1, [[0], [1], [2], [3]])}
ANY = DeviceClass.model_validate(
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"}}
)


def _class(profile: str) -> DeviceClass:
    return DeviceClass.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": profile},
            "spec": {"selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].profile == "{profile}"'}}]},
        }
    )


def _gpu_slices(devices: list[dict], gpus: int) -> list[ResourceSlice]:
    """GPUs of four memory slots each (one counter set per GPU, a counter per slot), MIG-like."""
    counters = [{"name": f"gpu-{g}", "counters": {f"slot-{s}": {"value": "1"} for s in range(4)}} for g in range(gpus)]
    return [
        ResourceSlice.model_validate(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": name},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": NODE.name,
                    "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 2},
                    **body,
                },
            }
        )
        for name, body in (("counters", {"sharedCounters": counters}), ("gpus", {"devices": devices}))
    ]


def _partition(gpu: int, profile: str, index: int) -> dict:
    slots = PROFILES[profile][1][index]
    return {
        "name": f"g{gpu}-{profile}-{index}",
        "attributes": {"profile": {"string": profile}},
        "consumesCounters": [{"counterSet": f"gpu-{gpu}", "counters": {f"slot-{s}": {"value": "1"} for s in slots}}],
    }


def _claim(name: str, profile: str, count: int = 1, allocated: list[str] | None = None) -> ResourceClaim:
    body: dict = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": profile, "count": count}}]}},
    }
    if allocated:
        body["status"] = {
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": DRIVER, "pool": "pool", "device": d} for d in allocated]
                }
            }
        }
    return ResourceClaim.model_validate(body)


def _problem(gpus: int, devices: list[dict], claims: list[ResourceClaim], held: list[str]) -> Problem:
    allocated = [_claim("running", "any", len(held), held)] if held else []
    return Problem(
        node=NODE,
        slices=_gpu_slices(devices, gpus),
        classes=[ANY, *map(_class, PROFILES)],
        claims=claims,
        allocated=allocated,
        features=Features(),
    )


@st.composite
def partitioned(draw) -> Problem:
    """1-3 GPUs offering some of the whole/half/quarter partitions, listed interleaved across GPUs (so that
    first fit spreads), some partitions in use, 1-3 claims for a partition size or any partition."""
    gpus = draw(st.integers(1, 3))
    offered = [
        (g, p, i)
        for g in range(gpus)
        for p in PROFILES
        for i in range(len(PROFILES[p][1]))
        if draw(st.integers(0, 3)) > 0
    ]
    offered = draw(st.permutations(offered))
    held: list[str] = []
    used: set[tuple[int, int]] = set()
    for g, p, i in offered:
        slots = {(g, s) for s in PROFILES[p][1][i]}
        if draw(st.integers(0, 4)) == 0 and not slots & used:
            held.append(f"g{g}-{p}-{i}")
            used |= slots
    claims = [
        _claim(f"claim-{c}", draw(st.sampled_from(["any", *PROFILES])), draw(st.integers(1, 2)))
        for c in range(draw(st.integers(1, 3)))
    ]
    return _problem(gpus, [_partition(*o) for o in offered], claims, held)


def _answer(problem: Problem, objective: str) -> dict[str, AllocationResult] | None:
    try:
        results = allocate(problem, objective=objective).results
    except Unschedulable:
        return None
    assert verify(problem, results) == []
    return results


@given(partitioned())
def test_pack_touches_no_more_gpus_than_first_fit(problem):
    first_fit, pack = _answer(problem, "first-fit"), _answer(problem, "pack")
    assert (first_fit is None) == (pack is None)
    if pack is not None and first_fit is not None:
        assert footprint(problem, pack).counter_sets <= footprint(problem, first_fit).counter_sets
        assert footprint(problem, pack).key <= footprint(problem, first_fit).key


@given(problems())
def test_pack_footprint_never_bigger_on_any_input(problem):
    """Any input (shared devices, constraints, alternatives): pack's answer is valid and touches no more."""
    try:
        first_fit = allocate(problem).results
    except Exception:  # noqa: BLE001 - unschedulable or an error Kubernetes' search reaches; pack is checked below
        first_fit = None
    try:
        pack = allocate(problem, objective="pack").results
    except Unschedulable:
        assert first_fit is None
        return
    except Exception:  # noqa: BLE001 - the same error first fit's search raised
        assert first_fit is None
        return
    assert verify(problem, pack) == []
    if first_fit is not None:
        # Kubernetes' order of firstAvailable entries first: never a later entry than first fit's, and with
        # the same entries, never a bigger footprint.
        assert _entries(problem, pack) <= _entries(problem, first_fit)
        if _entries(problem, pack) == _entries(problem, first_fit):
            assert footprint(problem, pack).units <= footprint(problem, first_fit).units


def _entries(problem: Problem, results: dict[str, AllocationResult]) -> tuple[int, ...]:
    """Claim by claim, request by request: the index of the firstAvailable entry the results use (0 without)."""
    out = []
    for claim in problem.claims:
        used = {r.request for r in results[claim.name].devices.results}
        for request in claim.spec.devices.requests:
            names = [f"{request.name}/{sub.name}" for sub in request.first_available]
            out.append(next((i for i, name in enumerate(names) if name in used), 0))
    return tuple(out)


def test_pack_takes_a_later_first_available_entry_only_when_an_earlier_cannot_be_satisfied():
    """A quarter in use on GPU 1, GPU 0 idle; the claim asks for a whole GPU, else a quarter. Kubernetes takes
    the whole GPU 0 (the first entry can be satisfied); pack must too, although a quarter on GPU 1 would
    touch no new GPU."""
    devices = [_partition(g, p, i) for g in range(2) for p in PROFILES for i in range(len(PROFILES[p][1]))]
    claim = ResourceClaim.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "claim-0"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "firstAvailable": [
                                {"name": "whole", "deviceClassName": "whole"},
                                {"name": "small", "deviceClassName": "quarter"},
                            ],
                        }
                    ]
                }
            },
        }
    )
    problem = _problem(2, devices, [claim], ["g1-quarter-0"])
    for objective in ("first-fit", "pack"):
        answer = _answer(problem, objective)
        assert answer is not None
        assert [(r.request, r.device) for r in answer["claim-0"].devices.results] == [("gpu/whole", "g0-whole-0")]


def _every_allocation(problem: Problem) -> list[dict[str, AllocationResult]]:
    """Every way to give each claim its devices, by brute force; the verifier decides which are valid."""
    names = [d.name for s in problem.slices for d in s.spec.devices]
    per_claim = [itertools.combinations(names, c.spec.devices.requests[0].exactly.count) for c in problem.claims]
    selector = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE.name]}]}]
    }
    out = []
    for choice in itertools.product(*map(list, per_claim)):
        results = {
            c.name: AllocationResult.model_validate(
                {
                    "devices": {
                        "results": [{"request": "gpu", "driver": DRIVER, "pool": "pool", "device": d} for d in devices]
                    },
                    "nodeSelector": selector,
                }
            )
            for c, devices in zip(problem.claims, choice)
        }
        if verify(problem, results) == []:
            out.append(results)
    return out


@pytest.mark.parametrize("held", [[], ["g1-quarter-2"], ["g0-half-1", "g1-quarter-0"]])
def test_pack_is_optimal_by_brute_force(held):
    """Two GPUs, every partition offered; two claims: pack's score is the best over every valid allocation."""
    devices = [_partition(g, p, i) for p in PROFILES for g in range(2) for i in range(len(PROFILES[p][1]))]
    problem = _problem(2, devices, [_claim("claim-0", "quarter"), _claim("claim-1", "any")], held)
    valid = _every_allocation(problem)
    assert valid, "the brute force found nothing: the test would prove nothing"
    best = min(footprint(problem, results).key for results in valid)
    assert footprint(problem, _answer(problem, "pack")).key == best
    assert footprint(problem, _answer(problem, "first-fit")).key > best  # pack made a difference here


def test_pack_leaves_the_biggest_hole_on_a_used_gpu():
    """A quarter in use in slot 2 of the only GPU: first fit takes slot 0, and no half is left; pack takes
    slot 3, and the half in slots 0-1 stays allocatable."""
    devices = [_partition(0, p, i) for p in PROFILES for i in range(len(PROFILES[p][1]))]
    problem = _problem(1, devices, [_claim("claim-0", "quarter")], ["g0-quarter-2"])
    pack, first_fit = _answer(problem, "pack"), _answer(problem, "first-fit")
    assert pack is not None and first_fit is not None
    assert [r.device for r in first_fit["claim-0"].devices.results] == ["g0-quarter-0"]
    assert [r.device for r in pack["claim-0"].devices.results] == ["g0-quarter-3"]
    assert footprint(problem, pack).largest_free > footprint(problem, first_fit).largest_free


SCHEDULE_SCENARIO = Path(__file__).parent / "scenarios" / "pack-schedule-prefers-the-partly-used-gpu.yaml"


def _schedule(objective: str, running_cpu: str | None = None) -> dict[str, str]:
    objects = [loaded.obj for loaded in load_paths([str(SCHEDULE_SCENARIO)]).objects]
    for obj in objects:
        if getattr(obj, "kind", "") == "Pod" and obj.name == "running" and running_cpu:
            obj.spec.containers[0].resources.requests = {"cpu": Quantity.parse(running_cpu)}
    cluster = cluster_from_objects(objects, Features())
    placements = schedule(cluster, select_pods(cluster, ["default/new"]), options=AllocateOptions(objective=objective))
    assert violations(placements) == []
    return {p.pod.name: p.node or "" for p in placements}


def test_schedule_pack_breaks_score_ties_towards_the_used_gpu():
    assert _schedule("first-fit") == {"new": "node-a"}
    assert _schedule("pack") == {"new": "node-b"}


def test_schedule_pack_never_overrides_the_scheduler_score():
    """node-b's running pod takes half its cpu: least-allocated prefers node-a, and pack follows the score."""
    assert _schedule("pack", running_cpu="32") == {"new": "node-a"}


@pytest.mark.parametrize("solves", [1, 2, 3])
def test_time_up_between_pack_stages_returns_a_valid_allocation_marked_not_exact(monkeypatch, solves):
    """Time runs out after the first solve, or after pack's first or second stage: the allocation found so far
    comes back valid, with its bounds kept, and says it may not be pack's answer."""
    from .test_engine_deadline import _time_runs_out_after

    _time_runs_out_after(solves, monkeypatch)
    devices = [_partition(g, p, i) for p in PROFILES for g in range(2) for i in range(len(PROFILES[p][1]))]
    problem = _problem(2, devices, [_claim("claim-0", "quarter"), _claim("claim-1", "any")], ["g1-quarter-2"])
    answer = allocate(problem, objective="pack")
    assert not answer.stats.exact and any("may not be the pack answer" in n for n in answer.stats.notes)
    assert verify(problem, answer.results) == []
    assert sorted(answer.results) == ["claim-0", "claim-1"]


def test_stage_three_out_of_effort_keeps_stages_one_and_two(monkeypatch):
    """With no effort left for the biggest holes, the answer is still valid and touches the fewest GPUs."""
    from drasat.solver.allocation.cp_sat import packing

    monkeypatch.setattr(packing, "HOLES_EFFORT", 1e-9)
    devices = [_partition(g, p, i) for p in PROFILES for g in range(2) for i in range(len(PROFILES[p][1]))]
    problem = _problem(2, devices, [_claim("claim-0", "quarter"), _claim("claim-1", "any")], ["g0-half-1"])
    best = min(footprint(problem, results).key for results in _every_allocation(problem))
    answer = _answer(problem, "pack")
    assert answer is not None and footprint(problem, answer).key[:2] == best[:2]


def _two_gpu_node(name: str, held: list[str]) -> list[dict]:
    """A node of two 80Gi GPUs offering a whole one or two halves each; ``held``: halves allocated already."""
    pool = {"name": name, "generation": 1, "resourceSliceCount": 2}
    devices = [
        {
            "name": f"gpu-{g}-{kind}",
            "attributes": {"kind": {"string": kind.split("-")[0]}},
            "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"mem": {"value": size}}}],
        }
        for g in range(2)
        for kind, size in (("whole", "80Gi"), ("half-0", "40Gi"), ("half-1", "40Gi"))
    ]
    docs: list[dict] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-counters"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": name,
                "pool": pool,
                "sharedCounters": [{"name": f"gpu-{g}", "counters": {"mem": {"value": "80Gi"}}} for g in range(2)],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": name, "pool": pool, "devices": devices},
        },
    ]
    for device in held:
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"{name}-{device}", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu-half"}}]}},
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": name, "device": device}]
                        },
                        "nodeSelector": {
                            "nodeSelectorTerms": [
                                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                            ]
                        },
                    }
                },
            }
        )
    return docs


def test_schedule_pack_ties_go_to_the_more_used_node():
    """Both nodes have a GPU with a half free: the new half touches no new GPU on either. node-a's other GPU is
    whole, node-b's half used: packing onto node-b keeps node-a's whole GPU (the summed largest holes, bigger on
    the emptier node-a, would spread)."""
    import yaml

    from drasat.models.loader import load_text

    docs = [
        *_two_gpu_node("node-a", ["gpu-0-half-0"]),
        *_two_gpu_node("node-b", ["gpu-0-half-0", "gpu-1-half-0"]),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu-half"},
            "spec": {"selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].kind == "half"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "half", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu-half"}}]}}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "new", "namespace": "default"},
            "spec": {
                "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "half"}],
            },
        },
    ]
    objects = [loaded.obj for loaded in load_text(yaml.safe_dump_all(docs), "test").objects]
    places = {}
    for objective in ("first-fit", "pack"):
        cluster = cluster_from_objects(objects, Features())
        placements = schedule(
            cluster, select_pods(cluster, ["default/new"]), options=AllocateOptions(objective=objective)
        )
        assert violations(placements) == []
        places[objective] = [
            (p.node, [r.device for a in p.allocations.values() for r in a.devices.results]) for p in placements
        ]
    assert places == {"first-fit": [("node-a", ["gpu-0-half-1"])], "pack": [("node-b", ["gpu-0-half-1"])]}


def test_admin_access_takes_no_room_in_pack_as_in_its_footprint():
    """Admin results are left out of the allocated state later claims meet, so pack counts none of their GPUs
    (CP-SAT and footprint() alike). GPU 1 has one free quarter, GPU 0 is idle; an admin claim for any quarter and
    a normal one: the normal quarter on GPU 1 touches no new GPU, wherever the admin one goes."""
    devices = [_partition(g, "quarter", i) for g in (1, 0) for i in range(4)]
    admin = _claim("claim-0", "quarter")
    admin.spec.devices.requests[0].exactly.admin_access = True
    problem = _problem(
        2, devices, [admin, _claim("claim-1", "quarter")], ["g1-quarter-0", "g1-quarter-1", "g1-quarter-2"]
    )
    pack = _answer(problem, "pack")
    assert pack is not None
    assert [r.device for r in pack["claim-1"].devices.results] == ["g1-quarter-3"]
    assert footprint(problem, pack).units == 0


def test_schedule_warns_when_time_ran_out_before_packs_answer(monkeypatch, tmp_path):
    """The allocation found before time ran out is kept (valid), and schedule says it may not be pack's."""
    from click.testing import CliRunner

    from drasat.cli.main import cli, load_all_commands

    from .test_engine_deadline import _time_runs_out_after

    _time_runs_out_after(1, monkeypatch)
    load_all_commands()
    result = CliRunner().invoke(
        cli, ["schedule", "--objective", "pack", "--pods", "default/new", "-o", "name", str(SCHEDULE_SCENARIO)]
    )
    assert result.exit_code == 0 and "pod/new" in result.stdout
    assert "warning: pod default/new: time ran out before the pack answer on node-" in result.stderr


def _counters_off(claims: list[ResourceClaim]) -> Problem:
    """One pool with a device drawing on a counter set and one drawing nothing, DRAPartitionableDevices off:
    the counter slice is dropped, so the pool has no counters and the drawing device is unallocatable."""
    base = {"driver": DRIVER, "nodeName": NODE.name, "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 2}}
    slices = [
        ResourceSlice.model_validate(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": name},
                "spec": {**base, **body},
            }
        )
        for name, body in (
            ("devs", {"devices": [_partition(0, "whole", 0), {"name": "plain"}]}),
            (
                "counters",
                {"sharedCounters": [{"name": "gpu-0", "counters": {f"slot-{s}": {"value": "1"} for s in range(4)}}]},
            ),
        )
    ]
    return Problem(
        node=NODE,
        slices=slices,
        classes=[ANY],
        claims=claims,
        allocated=[],
        features=Features.from_mapping({"DRAPartitionableDevices": False}),
    )


def test_pack_with_partitionable_devices_disabled_takes_the_device_that_draws_nothing():
    problem = _counters_off([_claim("x", "any")])
    results = allocate(problem, objective="pack").results
    assert verify(problem, results) == []
    assert results["x"].devices.results[0].device == "plain"
    assert footprint(problem, results).units == 1
