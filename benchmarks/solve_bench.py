"""Solve times of both solvers, in-process, on the perf scenarios and on generated nodes.

Run: ``python benchmarks/solve_bench.py [--repeat N] [--greedy-seconds S]``.
Prints one table; every answer is checked by the verifier. Columns: the greedy
depth-first search alone (``--solver greedy``), the default (depth-first search
within a small step budget, then CP-SAT) and CP-SAT alone (``greedy_budget=0``).
The perf scenarios are read from ``$DRASAT_SHARED/scenarios/perf`` (default:
``../shared`` beside the clone) and left out, with a note, when absent. The last
column gives Kubernetes' own Go allocator on the same inputs, measured once by hand
on the development machine, for comparison only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from drasat.models.errors import SolveTimeout, Unschedulable
from drasat.models.loader import load_paths
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import Features, NodeInfo, Problem, allocate
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.greedy import BudgetExhausted
from drasat.solver.problem import problem_from_objects
from drasat.solver.verify import verify

SHARED = Path(os.environ.get("DRASAT_SHARED") or Path(__file__).resolve().parents[2] / "shared")
PERF = SHARED / "scenarios" / "perf"
GO_MS = {"wide-8x16-16x4": "0.9 ms", "wide-16x16-64x4": "4.3 ms", "pigeon-8x8-9": "90 ms",
         "pigeon-4x12-13": "300-460 ms", "pigeon-4x14-15": "2.5 s", "pigeon-4x16-17": "9.5 s",
         "pigeon-8x10-11": "-", "slow-counters-prioritized": "> 90 s", "slow-consumable-distinct": "> 90 s"}


def perf_problem(path: Path) -> Problem:
    import yaml

    scenario = next(d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "Scenario")
    spec = scenario["spec"]
    objects = [loaded.obj for loaded in load_paths([str(path)]).objects]
    return problem_from_objects(objects, node=spec.get("node"), claims=spec.get("claims"),
                                features=Features.from_mapping(spec.get("featureGates") or {}))


def generated_problem(devices: int, claims: int) -> Problem:
    """A node with ``devices`` GPUs over 4 NUMA nodes; each claim wants 1 GPU of a NUMA-matched pair."""
    gpus = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": i % 4}, "model": {"string": "h100"}},
             "capacity": {"memory": {"value": "80Gi"}}} for i in range(devices)]
    slice_ = ResourceSlice.model_validate({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpus"},
        "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                 "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}, "devices": gpus}})
    cls = DeviceClass.model_validate({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    count = 1 if devices < 8 * claims else 2
    wanted = [ResourceClaim.model_validate({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": f"claim-{c}"},
        "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu", "count": count}}],
                             "constraints": [{"matchAttribute": "gpu.example.com/numa"}]}}})
        for c in range(claims)]
    return Problem(NodeInfo("node-1"), [slice_], [cls], wanted)


def timed(problem: Problem, repeat: int, **options) -> tuple[str, str]:
    """Median milliseconds over ``repeat`` fresh solves (fresh CEL caches), and the outcome."""
    times, outcome = [], ""
    for _ in range(repeat):
        started = time.perf_counter()
        try:
            answer = allocate(problem, evaluator=SelectorEvaluator(), **options)
            times.append(time.perf_counter() - started)
            problems = verify(problem, answer.results)  # checked, outside the timed part
            outcome = f"INVALID: {problems[0]}" if problems else "allocated"
        except Unschedulable:
            times.append(time.perf_counter() - started)
            outcome = "unschedulable"
        except (BudgetExhausted, SolveTimeout) as exc:
            times.append(time.perf_counter() - started)
            return f"> {times[-1] * 1000:.0f}", f"gave up ({type(exc).__name__})"
    return f"{statistics.median(times) * 1000:.2f}", outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--greedy-seconds", type=float, default=20.0,
                        help="time limit of the greedy-only column (depth-first search is exponential)")
    args = parser.parse_args()
    table = Table(title="drasat solve time, in-process (median ms)")
    for column in ("input", "devices", "claims", "greedy ms", "cp-sat ms (default)", "cp-sat alone ms",
                   "greedy / cp-sat", "outcome", "Kubernetes (Go)"):
        table.add_column(column)
    inputs = [(p.stem, perf_problem(p)) for p in sorted(PERF.glob("*.yaml"))]
    if not inputs:
        print(f"note: no perf scenarios under {PERF} (set DRASAT_SHARED); generated inputs only")
    inputs += [(f"generated-{d}x{c}", generated_problem(d, c)) for d in (8, 64, 512) for c in (1, 4, 16)]
    inputs.append(("one-claim-one-device", generated_problem(1, 1)))
    for name, problem in inputs:
        devices = sum(len(s.spec.devices) for s in problem.slices)
        greedy_ms, greedy_out = timed(problem, args.repeat, solver="greedy", time_limit=args.greedy_seconds)
        default_ms, default_out = timed(problem, args.repeat)
        alone_ms, _ = timed(problem, args.repeat, greedy_budget=0)
        ratio = "-"
        if not greedy_ms.startswith(">") and float(default_ms) > 0:
            ratio = f"{float(greedy_ms) / float(default_ms):.2f}"
        table.add_row(name, str(devices), str(len(problem.claims)), greedy_ms, default_ms, alone_ms, ratio,
                      default_out if default_out == greedy_out else f"{default_out} / greedy: {greedy_out}",
                      GO_MS.get(name, ""))
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
