"""Solve times and peak memory of drasat's searches, per input, beside Kubernetes' own allocator.

Run: ``python benchmarks/solve_bench.py [--repeat N] [--time-limit S] [--only TEXT] [--baseline REV] [--clock cpu]``.

Inputs: ``$DRASAT_SHARED/scenarios/perf`` and ``scenarios/scale`` (default ``../shared`` beside
the clone; left out with a note when absent), a tight-packing series (MIG-like nodes at 95-98 %
of their counter units) and a size series (wide nodes, 128 to 4,096 devices, 32 to 1,024 claims),
both written by ``benchmarks/generated_inputs.py``. Columns, per input: the default path, the
greedy depth-first search alone and CP-SAT alone (``greedy_budget=0``), each the median of
``--repeat`` fresh solves; the default path against Kubernetes' Go allocator (figures from
``reference/anchors.md``, measured on a machine like this one); peak memory of the processes that
ran the default path and CP-SAT alone (RSS, imports included: about 75 MB before any input, 150 MB
once OR-Tools is loaded).

Each input and search runs in its own process, so peak memory is that input's own, and so that
``--baseline REV`` can run the very same inputs with another commit's drasat in the same run: REV
is checked out into a temporary worktree and put first on the import path of the processes for
its column (the default path only), and the last column is the ratio to it (> 1.20 is flagged).
Every answer is checked by the verifier, outside the timed part.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("DRASAT_SHARED") or HERE.parents[1] / "shared")
PERF, SCALE = SHARED / "scenarios" / "perf", SHARED / "scenarios" / "scale"
FOLDERS = [PERF, SCALE]
TIGHT = [(64, 0.95, 1), (64, 0.96, 1), (64, 0.97, 1), (64, 0.98, 1), (64, 0.97, 2)]
SIZES = [(8, 32), (16, 64), (32, 128), (64, 256), (128, 512), (256, 1024)]  # NUMA groups of 16 GPUs, claims
#: Kubernetes' allocator (Go) on the same inputs, seconds (reference/anchors.md); None: no answer in 60-90 s.
GO_SECONDS: dict[str, float | None] = {
    "wide-8x16-16x4": 0.00095,
    "wide-16x16-64x4": 0.0044,
    "wide-32x16-128x4": 0.0155,
    "wide-64x16-256x4": 0.038,
    "wide-128x16-512x4": 0.123,
    "wide-192x16-768x4": 0.17,
    "mig-64gpu-100new": 0.20,
    "mig-64gpu-150new-40alloc": 0.49,
    "mig-64gpu-150new-40alloc-tight": None,
    "pigeon-8x8-9": 0.075,
    "pigeon-4x12-13": 0.47,
    "pigeon-4x14-15": 2.0,
    "pigeon-4x16-17": 10.0,
    "slow-counters-prioritized": None,
    "slow-consumable-distinct": None,
    **{f"tight-64gpu-{round(u * 100)}pct-seed{s}": None for _, u, s in TIGHT},
}
MODES = {"default": {}, "greedy": {"solver": "greedy"}, "cp-sat": {"greedy_budget": 0}}


def _fixtures_allowed() -> Any:
    """Allocator fixtures and benchmark inputs break API rules on purpose (tests/scenario_runner.py): read them
    as --allow-invalid-objects does; an older commit (--against/--baseline) has no such switch and needs none."""
    try:
        from drasat.models.storable import allowing_invalid
    except ImportError:
        from contextlib import nullcontext

        return nullcontext()
    return allowing_invalid()


def load_problem(path: Path) -> Any:
    """The problem a scenario file describes (its Scenario document names node, claims and gates)."""
    from drasat.models.loader import load_paths
    from drasat.solver import Features
    from drasat.solver.allocation.problem import problem_from_objects

    docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    spec = next(d for d in docs if d.get("kind") == "Scenario")["spec"]
    objects = [loaded.obj for loaded in load_paths([str(path)]).objects]
    with _fixtures_allowed():
        return problem_from_objects(
            objects,
            node=spec.get("node"),
            claims=spec.get("claims"),
            features=Features.from_mapping(spec.get("featureGates") or {}),
        )


def worker(path: Path, mode: str, repeat: int, time_limit: float, clock: str = "wall") -> dict[str, Any]:
    """One input, one search, in this process: median seconds (``clock``: wall or this process's CPU time),
    outcome, CP-SAT solves, peak RSS."""
    import gc
    import warnings

    from drasat.models.errors import SolveTimeout, Unschedulable
    from drasat.solver import allocate
    from drasat.solver.cel import SelectorEvaluator
    from drasat.solver.verification.verifier import verify

    warnings.simplefilter("ignore")
    problem = load_problem(path)
    now = time.process_time if clock == "cpu" else time.perf_counter
    times: list[float] = []
    outcome, solves = "", 0
    for _ in range(repeat):
        gc.collect()  # the last round's garbage (its answer, the verifier's work) is not this solve's cost
        started = now()
        try:
            answer = allocate(problem, evaluator=SelectorEvaluator(), time_limit=time_limit, **MODES[mode])
            times.append(now() - started)
            problems = verify(problem, answer.results)
            exact = getattr(answer.stats, "exact", True)  # older commits (--baseline) have no such field
            outcome = f"INVALID: {problems[0]}" if problems else ("allocated" if exact else "not exact")
            solves = answer.stats.cp_sat_solves
        except Unschedulable:
            times.append(now() - started)
            outcome = "unschedulable"
        except SolveTimeout:
            times.append(now() - started)
            outcome = "timeout"
        if outcome in ("timeout", "not exact") or times[-1] > 5:
            break  # one run says enough, and more would take minutes
    return {
        "seconds": statistics.median(times),
        "outcome": outcome,
        "solves": solves,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run(path: Path, mode: str, args: argparse.Namespace, import_root: Path | None = None) -> dict[str, Any] | None:
    """``worker`` in a fresh process (with another drasat first on the path when ``import_root``)."""
    env = dict(os.environ)
    if import_root is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(import_root), env.get("PYTHONPATH", "")])
    command = [
        sys.executable,
        str(Path(__file__)),
        "--worker",
        str(path),
        mode,
        "--repeat",
        str(args.repeat),
        "--time-limit",
        str(args.time_limit),
        "--clock",
        args.clock,
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.time_limit * 4 + 120)
    if done.returncode != 0:
        print(f"note: {path.stem} ({mode}) failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def inputs(folder: Path, only: str) -> list[Path]:
    """The shared scenario files, then the generated series written into ``folder``."""
    from generated_inputs import tight_scenario, wide_scenario

    found = [p for f in FOLDERS for p in sorted(f.glob("*.yaml"))]
    if not found:
        print(f"note: no scenarios under {SHARED} (set DRASAT_SHARED); generated inputs only", file=sys.stderr)
    series = [tight_scenario(*t) for t in TIGHT] + [wide_scenario(*s) for s in SIZES]
    for docs in series:
        path = folder / f"{docs[0]['metadata']['name']}.yaml"
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        found.append(path)
    return [p for p in found if only in p.stem]


@contextmanager
def checkout(rev: str | None) -> Iterator[Path | None]:
    """``rev`` in a temporary worktree, laid out as an importable ``drasat`` package (as .ci/lint does)."""
    if rev is None:
        yield None
        return
    repo = HERE.parent
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "add", "--detach", str(tree), rev], check=True, capture_output=True
        )
        try:
            (Path(tmp) / "root" / "drasat").mkdir(parents=True)
            for package in ("models", "solver", "cli"):
                (Path(tmp) / "root" / "drasat" / package).symlink_to(tree / package)
            (Path(tmp) / "root" / "drasat" / "__init__.py").write_text("")
            yield Path(tmp) / "root"
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)


def _ms(result: dict[str, Any] | None) -> str:
    if result is None:
        return "failed"
    text = f"{result['seconds'] * 1000:,.0f}" if result["seconds"] >= 0.1 else f"{result['seconds'] * 1000:.1f}"
    return text if result["outcome"] in ("allocated", "unschedulable") else f"{result['outcome']} {text}"


def _row(path: Path, args: argparse.Namespace, baseline: Path | None) -> list[str]:
    results = {mode: run(path, mode, args) if mode in args.searches else None for mode in MODES}
    default = results["default"]
    go = GO_SECONDS.get(path.stem, "")
    ratio = "-"
    if default is not None and isinstance(go, float):
        ratio = f"{default['seconds'] / go:.1f}x"
    elif default is not None and go is None:
        ratio = "Go: no answer"
    peaks = [f"{results[m]['rss_mb']:.0f}" if results[m] else "-" for m in ("default", "cp-sat")]
    row = [
        path.stem,
        *(_ms(results[m]) if m in args.searches else "-" for m in MODES),
        str((results["cp-sat"] or {}).get("solves", "-")),
        ratio,
        " / ".join(peaks),
        (default or {}).get("outcome", "-"),
    ]
    if baseline is not None:
        before = run(path, "default", args, baseline)
        change = "-"
        if before is not None and default is not None and before["seconds"] > 0:
            factor = default["seconds"] / before["seconds"]
            change = f"{factor:.2f}" + (" SLOWER" if factor > 1.2 else "")
        row[-1:-1] = [_ms(before), change]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="solves per input and search (median)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve")
    parser.add_argument("--only", default="", help="inputs whose name contains this text")
    parser.add_argument("--baseline", metavar="REV", help="also run the default path with drasat at REV")
    parser.add_argument(
        "--searches",
        nargs="+",
        choices=list(MODES),
        default=list(MODES),
        help="which searches to time (default: all three; the default path is always timed)",
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="time solves by the wall clock (default) or by CPU time, steadier on a shared machine",
    )
    parser.add_argument("--worker", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.searches = {"default", *args.searches}
    if args.worker:
        print(json.dumps(worker(Path(args.worker[0]), args.worker[1], args.repeat, args.time_limit, args.clock)))
        return
    from rich.console import Console
    from rich.table import Table

    columns = [
        "input",
        "default ms",
        "greedy ms",
        "cp-sat alone ms",
        "solves",
        "default / Go",
        "peak MB default / cp-sat",
        "outcome",
    ]
    if args.baseline:
        columns[-1:-1] = [f"{args.baseline} ms", "now / then"]
    table = Table(
        title=f"drasat solve, in-process (median of {args.repeat}, {args.clock} clock; "
        f"limit {args.time_limit:g} s per solve)"
    )
    for column in columns:
        table.add_column(column, justify="left" if column in ("input", "outcome") else "right")
    with tempfile.TemporaryDirectory() as folder, checkout(args.baseline) as baseline:
        for path in inputs(Path(folder), args.only):
            table.add_row(*_row(path, args, baseline))
    Console(width=220).print(table)


if __name__ == "__main__":
    main()
