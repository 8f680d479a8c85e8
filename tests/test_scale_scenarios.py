"""The scale scenarios (../shared/scenarios/scale/): hundreds of claims on up to 3,072 devices.

Every answer must be Kubernetes' own, device for device: the scenario's expectation where it has
one, else the greedy twin's (the depth-first search Kubernetes runs; it finishes on these). The
default path goes through the CLI; CP-SAT alone (no depth-first search at all) through the library,
so that first-fit decoding in rounds is what is checked. Each answer goes through the verifier.
"""

from __future__ import annotations

import functools
import json
import runpy
from pathlib import Path

import pytest

from drasat.models.loader import load_paths
from drasat.models.storable import allowing_invalid
from drasat.solver import Features, allocate
from drasat.solver.allocation.problem import Problem, problem_from_objects
from drasat.solver.verification.verifier import verify

from .printed import printed_allocations
from .scenario_runner import SHARED, SKIP, Outcome, mismatches, run, scenario_doc, scenario_files
from .shared_inputs import params

SCALE = scenario_files(SHARED / "scenarios" / "scale")
# The skip annotation (no reference answer) found by text: parsing a megabyte of YAML per file at collection is slow.
WITH_ANSWER = [p for p in SCALE if SKIP not in p.read_text()]
# CP-SAT alone builds a model of 300,000 variables on the widest input (seconds): the default path is tested there.
CP_SAT_ALONE = [p for p in WITH_ANSWER if not p.stem.startswith("wide-")]
# Reading a megabyte of YAML takes most of these tests' time (the CLI's reading, then the verifier's): over
# 5 s on the widest input, which is marked slow (deselect with -m "not slow").
SLOW = ("wide-192x16-768x4",)


@functools.lru_cache(maxsize=1)
def _problem(path: Path) -> Problem:
    spec = scenario_doc(path).get("spec") or {}
    objects = [loaded.obj for loaded in load_paths([str(path)]).objects]
    with allowing_invalid():  # the scale inputs have slices beyond the API's 128 devices (scenario_runner.py)
        return problem_from_objects(
            objects,
            node=spec.get("node"),
            claims=spec.get("claims"),
            features=Features.from_mapping(spec.get("featureGates") or {}),
        )


def _devices(allocations: dict[str, dict]) -> dict[str, list[tuple[str, str]]]:
    return {
        name: sorted((r["request"], r["device"]) for r in body["devices"]["results"])
        for name, body in allocations.items()
    }


def _reference(path: Path) -> dict[str, list[tuple[str, str]]] | None:
    """Kubernetes' answer: the expectation, or (where the file's expectation is empty although it asks for
    claims) the greedy twin's through the CLI."""
    doc = scenario_doc(path)
    expected = (doc.get("expect") or {}).get("allocations")
    if expected or not (doc.get("spec") or {}).get("claims"):
        return None  # the expectation itself is the reference (compared by the scenario runner)
    greedy = run(path, "greedy")
    assert greedy.exit_code == 0, greedy.stderr
    return _devices(greedy.allocations())


def _verified(path: Path, outcome: Outcome) -> list[str]:
    return verify(_problem(path), printed_allocations(json.loads(outcome.stdout)["items"]))


@pytest.mark.parametrize(
    "path",
    params([pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW else p for p in WITH_ANSWER]),
    ids=lambda p: p.stem,
)
def test_scale_scenario_is_kubernetes_answer_through_the_cli(path, shared):
    outcome = run(path, "cp-sat")
    assert outcome.exit_code == 0, outcome.stderr
    reference = _reference(path)
    if reference is None:
        assert mismatches(scenario_doc(path).get("expect") or {}, outcome) == []
    else:
        assert _devices(outcome.allocations()) == reference
    assert _verified(path, outcome) == []


@pytest.mark.parametrize("path", params(CP_SAT_ALONE), ids=lambda p: p.stem)
def test_scale_scenario_cp_sat_alone_decodes_the_same_answer(path, shared):
    problem = _problem(path)
    cp_sat = allocate(problem, greedy_budget=0)
    greedy = allocate(problem, solver="greedy")
    assert cp_sat.stats.exact and cp_sat.stats.greedy_tries == 0
    assert verify(problem, cp_sat.results) == []
    as_lists = [
        {n: [(d.request, d.device) for d in r.devices.results] for n, r in a.results.items()} for a in (cp_sat, greedy)
    ]
    assert as_lists[0] == as_lists[1]


def test_scale_scenarios_exist(shared):
    assert len(SCALE) >= 4 and WITH_ANSWER, f"scale scenarios not found under {SHARED}"


TIGHT = [p for p in SCALE if "tight" in p.stem]


@pytest.mark.parametrize("path", params(TIGHT), ids=lambda p: p.stem)
def test_tight_scenario_is_allocated_and_verified(path, shared):
    """97 % of the GPUs' counter units: Kubernetes' depth-first search finds nothing in 60 s; the default
    path decides it (exit 0: first-fit's answer, not a best-so-far one)."""
    outcome = run(path, "cp-sat", ["--timeout", "60"])
    assert outcome.exit_code == 0, outcome.stderr
    assert set(outcome.allocations()) == set((scenario_doc(path).get("spec") or {}).get("claims") or [])
    assert _verified(path, outcome) == []


def _tight_problem(gpus: int, utilisation: float, seed: int) -> Problem:
    from drasat.models.loader import load_objects

    generator = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "generated_inputs.py"))
    objects = [loaded.obj for loaded in load_objects(generator["tight_objects"](gpus, utilisation, seed)).objects]
    return problem_from_objects(
        objects, node="node-1", features=Features.from_mapping({"DRAPartitionableDevices": True})
    )


# Packed nodes small enough for depth-first search to finish, after 600-2,000 backtracks (found by a scan of
# seeds: at 96-100 % most small nodes either need none or take it minutes).
BACKTRACKING = [(3, 0.98, 11), (4, 0.98, 6), (4, 0.98, 10), (5, 0.98, 0)]


@pytest.mark.parametrize("gpus, utilisation, seed", BACKTRACKING)
def test_merged_claims_decode_kubernetes_answer_on_packed_gpus(gpus, utilisation, seed):
    """Alike claims merged into one count (solver/allocation/cp_sat/merge.py) still decode to the depth-first
    search's answer, device for device, on small packed nodes where that search backtracks but finishes."""
    problem = _tight_problem(gpus, utilisation, seed)
    greedy = allocate(problem, solver="greedy")
    cp_sat = allocate(problem, greedy_budget=0)
    assert greedy.stats.greedy_backtracks > 0  # else the input tests nothing the guess does not already get
    assert cp_sat.stats.exact and verify(problem, cp_sat.results) == []
    assert {n: [d.device for d in r.devices.results] for n, r in cp_sat.results.items()} == {
        n: [d.device for d in r.devices.results] for n, r in greedy.results.items()
    }
