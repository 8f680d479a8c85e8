"""Every conformance scenario through the public CLI, with both solvers, every answer verified.

The upstream scenarios come from Kubernetes' own allocator test suite and their
expectations were checked against the running allocator; the CEL scenarios pin
selector semantics; the perf inputs must at least be answered correctly.
"""

from __future__ import annotations

import json

import pytest

from drasat.models.loader import load_paths
from drasat.models.storable import allowing_invalid
from drasat.solver import Features
from drasat.solver.allocation.problem import problem_from_objects
from drasat.solver.batch.placement import schedule_batch
from drasat.solver.scheduling.cluster import cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import select_pods
from drasat.solver.verification.verifier import verify

from .cluster_factory import violations
from .printed import printed_allocations
from .scenario_runner import OWN, SHARED, SKIP, allows_invalid, mismatches, run, scenario_doc, scenario_files
from .shared_inputs import params

UPSTREAM = scenario_files(SHARED / "scenarios" / "upstream", SHARED / "scenarios" / "cel", OWN)
PERF = scenario_files(SHARED / "scenarios" / "perf")
# Depth-first search is exponential on these (Kubernetes itself needs seconds to minutes).
GREEDY_TOO_SLOW = ("pigeon-", "slow-")


def _verified(path, outcome) -> list[str]:
    """The verifier's complaints about an answer (allocations only), the objects read as the CLI read them."""
    with allowing_invalid(allows_invalid(path)):
        return _verified_as_read(path, outcome)


def _verified_as_read(path, outcome) -> list[str]:
    doc = scenario_doc(path)
    spec = doc.get("spec") or {}
    objects = [loaded.obj for loaded in load_paths([str(path)]).objects]
    if spec.get("command") == "schedule":
        return _verified_placements(objects, spec, outcome)
    if outcome.exit_code != 0:
        return []
    problem = problem_from_objects(
        objects,
        node=spec.get("node"),
        claims=spec.get("claims"),
        features=Features.from_mapping(spec.get("featureGates") or {}),
    )
    return verify(problem, printed_allocations(json.loads(outcome.stdout)["items"]))


def _verified_placements(objects, spec, outcome) -> list[str]:
    """The same schedule through the library: every allocation verified, and the same nodes as the CLI chose."""
    cluster = cluster_from_objects(objects, Features.from_mapping(spec.get("featureGates") or {}))
    chosen = select_pods(cluster, spec["pods"]) if spec.get("pods") is not None else None
    options = AllocateOptions(objective=spec.get("objective", "first-fit"))
    placements = (
        schedule_batch(cluster, chosen, options=options).placements
        if spec.get("batch")
        else schedule(cluster, chosen, options=options)
    )
    items = json.loads(outcome.stdout)["items"] if outcome.stdout else []
    cli_nodes = {i["metadata"]["name"]: i["spec"]["nodeName"] for i in items if i["kind"] == "Pod"}
    library_nodes = {p.pod.name: p.node for p in placements if p.node}
    return violations(placements) + ([] if cli_nodes == library_nodes else [f"{cli_nodes} != {library_nodes}"])


def _check(path, solver: str, extra: list[str] | None = None) -> None:
    doc = scenario_doc(path)
    if solver == "greedy" and (doc.get("spec") or {}).get("objective", "first-fit") != "first-fit":
        pytest.skip("the greedy solver only knows the first-fit objective")
    if SKIP in (doc.get("metadata", {}).get("annotations") or {}) and path.parent.name != "perf":
        pytest.skip(doc["metadata"]["annotations"][SKIP])
    outcome = run(path, solver, extra)
    if not (doc.get("metadata", {}).get("annotations") or {}).get(SKIP):
        assert mismatches(doc.get("expect") or {}, outcome) == []
    elif outcome.exit_code not in (0, 1):
        pytest.fail(f"no answer: exit {outcome.exit_code}: {outcome.stderr}")
    assert _verified(path, outcome) == []


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
@pytest.mark.parametrize("path", UPSTREAM, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_scenario(path, solver):
    _check(path, solver)


@pytest.mark.parametrize("path", params(scenario_files(SHARED / "scenarios" / "cel")), ids=lambda p: p.stem)
def test_cel_scenario_on_the_pure_python_engine(path, shared):
    """The CEL scenarios again, with the fallback engine (cel-python) behind the same CLI."""
    _check(path, "cp-sat", ["--cel-engine", "celpy"])


@pytest.mark.parametrize("path", params(PERF), ids=lambda p: p.stem)
def test_perf_scenario_cp_sat(path, shared):
    _check(path, "cp-sat")


@pytest.mark.parametrize(
    "path", params([p for p in PERF if not p.stem.startswith(GREEDY_TOO_SLOW)]), ids=lambda p: p.stem
)
def test_perf_scenario_greedy(path, shared):
    _check(path, "greedy")


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in scenario_files(OWN)
        if (scenario_doc(p).get("spec") or {}).get("objective", "first-fit") != "first-fit"
    ],
    ids=lambda p: p.stem,
)
def test_objective_scenario_differs_from_first_fit(path):
    """A scenario pinned to another objective must not also be the first-fit answer, or it tests nothing."""
    expect = scenario_doc(path).get("expect") or {}
    first_fit = run(path, "cp-sat", ["--objective", "first-fit"])
    assert first_fit.exit_code == 0 and mismatches(expect, first_fit) != []


def test_scenarios_exist(shared):
    """The shared scenarios must be found: a run that silently tests nothing must fail."""
    assert len(UPSTREAM) >= 177 and len(PERF) >= 9, f"scenarios not found under {SHARED}"
