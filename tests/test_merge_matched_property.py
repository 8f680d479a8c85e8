"""CP-SAT alone against the depth-first search on inputs shaped for merged matched claims
(solver/allocation/cp_sat/merge.py): several alike claims under one matchAttribute, interleaved with claims of
other shapes (several requests, firstAvailable, distinctAttribute, admin access, a narrower class), devices
already held, list attributes, counters. The answer must be Kubernetes' first-fit answer device for device, and both answers must verify."""

from __future__ import annotations

import dataclasses
import itertools
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasat.models.errors import AllocationError, SolveTimeout, Unschedulable
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import Features, Problem, allocate
from drasat.solver.verification.verifier import verify

from .problem_factory import NODE, allocated

CLASSES = [
    DeviceClass.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}
    )
    for name, spec in [
        ("any", {}),
        ("numa0", {"selectors": [{"cel": {"expression": 'device.attributes["d.example.com"].numa == 0'}}]}),
    ]
]


def _claim(name: str, requests: list[dict], constraints: list[dict]) -> ResourceClaim:
    return ResourceClaim.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": name},
            "spec": {"devices": {"requests": requests, "constraints": constraints}},
        }
    )


@st.composite
def request(draw, index: int) -> dict:
    """A request for one or two devices of either class, maybe with admin access, or a firstAvailable of two."""

    def exactly(most: int = 2) -> dict:
        return {"deviceClassName": draw(st.sampled_from(["any", "numa0"])), "count": draw(st.integers(1, most))}

    if draw(st.integers(0, 2)) == 0:  # the first entry maybe too big (a rank to pay)
        return {"name": f"r{index}", "firstAvailable": [{"name": "s0", **exactly(4)}, {"name": "s1", **exactly()}]}
    body = exactly()
    if draw(st.integers(0, 5)) == 0:
        body["adminAccess"] = True
    return {"name": f"r{index}", "exactly": body}


@st.composite
def matched_claims(draw) -> list[ResourceClaim]:
    """Two to four alike claims under a match constraint (some naming their request, some not; maybe one
    wanting another count or of another class), with zero to two claims of other shapes placed among them."""
    attribute = draw(st.sampled_from(["d.example.com/numa", "d.example.com/roots", "d.example.com/kind"]))
    count = draw(st.integers(1, 3))
    device_class = draw(st.sampled_from(["any", "any", "numa0"]))
    out = []
    for c in range(draw(st.integers(2, 4))):
        constraint: dict = {"matchAttribute": attribute}
        if draw(st.booleans()):
            constraint["requests"] = ["gpus"]
        wanted = count + 1 if draw(st.integers(0, 5)) == 0 else count
        other_class = "numa0" if device_class == "any" else "any"  # maybe a second group over some of the devices
        wanted_class = other_class if draw(st.integers(0, 3)) == 0 else device_class
        out.append(
            _claim(
                f"alike-{c}",
                [{"name": "gpus", "exactly": {"deviceClassName": wanted_class, "count": wanted}}],
                [constraint],
            )
        )
    for c in range(draw(st.integers(0, 2))):
        requests = [draw(request(i)) for i in range(draw(st.integers(1, 2)))]
        kind = draw(
            st.sampled_from(
                [
                    [],
                    [{"matchAttribute": attribute}],
                    [{"distinctAttribute": attribute}],
                    [{"matchAttribute": attribute, "requests": ["r0"]}],
                ]
            )
        )
        out.insert(draw(st.integers(0, len(out))), _claim(f"other-{c}", requests, kind))
    return out


@st.composite
def slices(draw) -> list[ResourceSlice]:
    """One pool of 4 to 12 devices on NUMA nodes 0-2, of kinds a and b, with one or more roots (a list attribute),
    maybe consuming shared counters."""
    counters = draw(st.integers(0, 3)) == 0
    devices = []
    for i in range(draw(st.integers(4, 12))):
        roots = draw(st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True))
        device: dict = {
            "name": f"dev-{i}",
            "attributes": {
                "numa": {"int": draw(st.integers(0, 2))},
                "kind": {"string": draw(st.sampled_from(["a", "b"]))},
                "roots": {"ints": roots} if len(roots) > 1 or draw(st.booleans()) else {"int": roots[0]},
            },
        }
        if counters and draw(st.booleans()):
            device["consumesCounters"] = [
                {"counterSet": "mem", "counters": {"gib": {"value": str(draw(st.integers(1, 3)))}}}
            ]
        devices.append(device)
    spec = {
        "driver": "d.example.com",
        "nodeName": NODE.name,
        "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 2 if counters else 1},
        "devices": devices,
    }
    out = [
        ResourceSlice.model_validate(
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "devices"}, "spec": spec}
        )
    ]
    if counters:
        out.append(
            ResourceSlice.model_validate(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": "counters"},
                    "spec": {
                        "driver": "d.example.com",
                        "nodeName": NODE.name,
                        "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 2},
                        "sharedCounters": [
                            {"name": "mem", "counters": {"gib": {"value": str(draw(st.integers(3, 9)))}}}
                        ],
                    },
                }
            )
        )
    return out


@st.composite
def problems(draw) -> Problem:
    chosen = draw(slices())
    return Problem(
        node=NODE,
        slices=chosen,
        classes=CLASSES,
        claims=draw(matched_claims()),
        allocated=draw(allocated(chosen)),
        features=Features.from_mapping(
            {"DRAListTypeAttributes": draw(st.booleans()), "DRADeviceCompatibilityGroups": draw(st.booleans())}
        ),
    )


def _answer(problem: Problem, **options) -> dict | str | None:
    """Each claim's (request, pool, device) triples after checking them; None: unschedulable; an error's text."""
    try:
        results = allocate(problem, **options).results
    except Unschedulable:
        return None
    except AllocationError as exc:
        return str(exc)
    assert verify(problem, results) == []
    return {name: [(r.request, r.pool, r.device) for r in res.devices.results] for name, res in results.items()}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_cp_sat_alone_returns_the_depth_first_answer(problem):
    assert _answer(problem, solver="cp-sat", greedy_budget=0) == _answer(problem, solver="greedy")


def _rank(answer: dict) -> int:
    """The total rank of the firstAvailable entries an answer chose (``r0/s1`` ranks 1)."""
    chosen = {(claim, request) for claim, triples in answer.items() for request, _, _ in triples}
    return sum(int(request.split("/s")[1]) for _, request in chosen if "/s" in request)


def _best_rank(problem: Problem) -> int | None:
    """The least total rank by brute force: every choice of firstAvailable entries, each tried by the depth-first
    search with that entry alone (None: no choice fits)."""
    choices = [
        (c, r)
        for c, claim in enumerate(problem.claims)
        for r, req in enumerate(claim.spec.devices.requests)
        if req.first_available
    ]
    best: int | None = None
    for picked in itertools.product(range(2), repeat=len(choices)):
        claims = [claim.model_copy(deep=True) for claim in problem.claims]
        for (c, r), entry in zip(choices, picked):
            req = claims[c].spec.devices.requests[r]
            req.first_available = [req.first_available[entry]]
        if _answer(dataclasses.replace(problem, claims=claims), solver="greedy") is not None:
            best = sum(picked) if best is None else min(best, sum(picked))
    return best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_prioritized_list_finds_the_least_total_rank(problem):
    answer = _answer(problem, objective="prioritized-list")
    best = _best_rank(problem)
    assert (answer is None) == (best is None)
    if isinstance(answer, dict):
        assert _rank(answer) == best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.integers(1, 4))
def test_time_up_mid_decoding_returns_a_valid_allocation(problem, solves):
    """Time runs out after ``solves`` solves of the call (all its models): the answer is the depth-first one,
    or a valid allocation marked not exact, or (before any allocation was found) a SolveTimeout."""
    from drasat.solver.allocation.cp_sat import stages

    real, done = stages.Stages.solve, list[bool]()  # each solve's answer

    def solve(self, *assume, **options):  # type: ignore[no-untyped-def]
        if len(done) >= solves:
            raise SolveTimeout("the CP-SAT solver ran out of time (raise --timeout)")
        done.append(real(self, *assume, **options))
        return done[-1]

    expected = _answer(problem, solver="greedy")
    try:
        with mock.patch.object(stages.Stages, "solve", solve):
            answer = allocate(problem, greedy_budget=0)
    except SolveTimeout:
        assert not any(done)  # no solve had found an allocation
        return
    except (Unschedulable, AllocationError):
        assert not isinstance(expected, dict)
        return
    assert verify(problem, answer.results) == []
    if answer.stats.exact:
        assert {
            n: [(r.request, r.pool, r.device) for r in res.devices.results] for n, res in answer.results.items()
        } == expected
