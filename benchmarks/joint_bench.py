"""Joint placement against its proven optimum: ``frag_cluster`` inputs, one-by-one, ``schedule --batch``.

For each size: the counting optimum (``counting_optimum``, proven by CP-SAT from the generator's
parameters, per GPU state; and per GPU as a cross-check of the same number), ``schedule`` (pods one
by one, kube-scheduler's order), ``schedule_batch`` with its default options (60 s for the whole
run) and with ``--timeout``, and the command ``drasat schedule --batch FILE`` in a subprocess (read,
place, print: what a user waits for). Printed per method: pods placed, pods placed counting only
whole gangs (one-by-one places parts of gangs, which would not run), gangs complete, the share of
the optimum, wall seconds, peak RSS and the checks.

Why every method runs in a fresh process: peak RSS (``resource.getrusage``'s ``ru_maxrss``, of
the process that built the input and ran the method; the CLI's from ``os.wait4``) is only
meaningful per process, and no method inherits another's caches. The input is built in memory as
``batch_bench`` builds it (``load_objects``), so the library rows' seconds exclude reading YAML.
"input" is the RSS once the cluster is built; the difference is the method's.

Checks: drasat's verifier on every node's joint allocation (as ``batch_bench``) and on every
one-by-one placement; and, independently of drasat, a count over the placements' claims: each
device allocated once, of the pod's size, on its node, no GPU over its 28 units — and no method
above the optimum. A method still running after ``--kill-after`` seconds is stopped and said so.

Run ``python benchmarks/joint_bench.py --sizes 10,100 [--timeout 600] [--skip-batch] [--seed 1]``;
``--sizes`` takes node counts of ``frag_cluster.PRESETS`` or ``NODES/PODS/GANGS``.

Measured on the 2-core machine, 3 December 2026 (main at a040698 with the lanes, seed 1, ``--timeout 10``,
load 0.2-1.8), wall seconds of the method alone:

    nodes  pods gangs  method           placed  gangs  of opt.    wall  peak RSS
       10   200     2  optimum             189    1/2   100 %    0.0 s    101 MB  OPTIMAL
       10   200     2  one-by-one          181    1/2  95.8 %    0.6 s    145 MB
       10   200     2  batch (60 s)        189    1/2   100 %    0.6 s    159 MB  proven
       10   200     2  batch (10 s)        189    1/2   100 %    0.6 s    160 MB  proven
       10   200     2  CLI --batch         189    1/2   100 %    1.7 s    163 MB
      100  2000    10  optimum            1901  10/10   100 %    0.0 s    102 MB  OPTIMAL
      100  2000    10  one-by-one         1687   6/10  88.7 %    7.0 s    303 MB
      100  2000    10  batch (60 s)       1901  10/10   100 %   13.6 s    387 MB  proven
      100  2000    10  batch (10 s)       1901   1/10   100 %    9.3 s    388 MB  proven (ties cut: fewer gangs)
      100  2000    10  CLI --batch        1901  10/10   100 %   17.2 s    379 MB  (14.6-15.3 s after 778aa38)
      500  4000    40  optimum            4000  40/40   100 %    0.0 s    103 MB  OPTIMAL
      500  4000    40  one-by-one         4000  40/40   100 %   30.6 s    901 MB
      500  4000    40  batch (60 s)       4000  40/40   100 %   24.9 s    959 MB  blocks of ~100 nodes
      500  4000    40  batch (10 s)       2809  29/40  70.2 %   10.2 s    784 MB
      500  4000    40  CLI --batch        4000  40/40   100 %   40.4 s    873 MB

Every placement passed drasat's verifier and the independent count. The --timeout overrun printed: -94.5 %,
-7.2 % and +1.8 % at 10, 100 and 500 nodes. Through the command line with ``--processes 2`` (``cli-lanes``;
quiet machine): 2,000 nodes / 8,000 pods ``--timeout 120``, all placed in 59.5 s whole command (84.2 s in one
process); the 10,000-node preset (407 MB of YAML) ``--timeout 400``, all 40,000 placed in 5 min 38 s, peak
RSS 7.4 GB (largest process).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from counting_optimum import Optimum, optimum, witness
from frag_cluster import (
    GANG_SIZE,
    NAMESPACE,
    PRESETS,
    PROFILES,
    UNITS,
    Fleet,
    classes_and_templates,
    describe,
    fleet,
    node_objects,
    objects,
    running_objects,
)
from rich.console import Console
from rich.table import Table

METHODS = ("optimum", "optimum-per-gpu", "one-by-one", "batch", "batch-timeout", "cli-batch", "cli-lanes")
BATCH_METHODS = ("batch", "batch-timeout", "cli-batch", "cli-lanes")
LANES = 2  # cli-lanes: ``schedule --batch --processes LANES`` (past 300 nodes, the blocks in that many processes)


@dataclass(frozen=True)
class Size:
    nodes: int
    pods: int
    gangs: int
    seed: int

    def fleet(self) -> Fleet:
        return fleet(self.nodes, self.pods, self.gangs, self.seed)


@dataclass
class Row:
    method: str
    placed: int = 0
    whole: int = 0  # placed, counting a gang's pods only when the whole gang is
    gangs: int = 0
    seconds: float = 0.0
    rss_mb: float = 0.0
    input_mb: float = 0.0
    checks: str = ""
    note: str = ""
    load: float = 0.0  # the machine's 1-minute load average when the method ended (2 cores: above 2 is shared)
    trace: list[tuple[float, int]] = field(default_factory=list)  # batch: (seconds, pods placed) per better answer


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def _outcome(f: Fleet, nodes: dict[str, str | None]) -> tuple[int, int, int]:
    """Pods placed, pods placed in whole gangs or alone, gangs complete (by pod name -> node)."""
    placed = {name for name, node in nodes.items() if node}
    members = Counter(p.gang for p in f.queue if p.gang and p.name in placed)
    complete = {g for g, k in members.items() if k == GANG_SIZE}
    whole = sum(1 for p in f.queue if p.name in placed and (p.gang is None or p.gang in complete))
    return len(placed), whole, len(complete)


def _count_check(f: Fleet, placements: list[Any]) -> str:
    """Not through drasat: each device once, of the pod's size, on its node, no GPU over its units."""
    size_of = {p.name: p.size for p in f.queue}
    node_index = {f.node_name(n): n for n in range(len(f.taken))}
    held = {(n, g, profile, i) for n, gpus in enumerate(f.taken) for g, gpu in enumerate(gpus) for profile, i in gpu}
    units = Counter(
        {(n, g): sum(PROFILES[p][0] for p, _ in gpu) for n, gpus in enumerate(f.taken) for g, gpu in enumerate(gpus)}
    )
    for p in placements:
        if not p.node:
            continue
        results = [r for c in p.claims if c.status and c.status.allocation for r in c.status.allocation.devices.results]
        if len(results) != 1:
            return f"{p.pod.name}: {len(results)} devices"
        r = results[0]
        _, g, profile, i = r.device.split("-")
        key = (node_index[p.node], int(g), profile, int(i))
        if r.pool != p.node or profile != size_of[p.pod.name] or key in held:
            return f"{p.pod.name}: {r.pool}/{r.device} on {p.node}"
        held.add(key)
        units[key[:2]] += PROFILES[profile][0]
    over = [k for k, u in units.items() if u > UNITS]
    return f"GPU {over[0]} over {UNITS} units" if over else "counts ok"


def _verified(checks: list[tuple[Any, Any]]) -> str:
    from drasat.solver import verify

    bad = sum(1 for problem, allocations in checks if verify(problem, allocations))
    return f"{len(checks) - bad}/{len(checks)} verified"


def _library(method: str, size: Size, timeout: float) -> Row:
    """``schedule`` or ``schedule_batch`` on the cluster built in memory; the checks after the clock."""
    from drasat.models.loader import load_objects
    from drasat.solver import AllocateOptions, Features, cluster_from_objects, schedule, schedule_batch
    from drasat.solver.scheduling.pods import pending_pods

    f = size.fleet()
    cluster = cluster_from_objects([o.obj for o in load_objects(objects(f)).objects], Features())
    pending, input_mb, note = pending_pods(cluster), _rss_mb(), ""
    started = time.perf_counter()
    if method == "one-by-one":
        placements = schedule(cluster, pending)
        seconds = time.perf_counter() - started
        checks = [(p.problem, p.allocations) for p in placements if p.problem is not None]
    else:
        options = AllocateOptions() if method == "batch" else AllocateOptions(time_limit=timeout)
        trace: list[tuple[float, int]] = []

        def heard(placed: int, _bound: int | None, _left: float) -> None:
            trace.append((time.perf_counter() - started, placed))

        result = schedule_batch(cluster, pending, options=options, progress=heard)
        seconds, placements = time.perf_counter() - started, result.placements
        jointly = {pod for c in result.nodes for pod in c.pods}
        checks = [(c.problem, c.allocations) for c in result.nodes]
        checks += [(p.problem, p.allocations) for p in placements if p.problem is not None and p.label not in jointly]
        s = result.summary
        note = "; ".join(
            [
                f"{s.placed_jointly} jointly, bound {s.bound}, {'proven' if s.proven else 'not proven'}, "
                f"{s.nodes_counted} nodes counted, {s.rounds} rounds",
                *s.notes,
            ]
        )
    rss = _rss_mb()
    placed, whole, gangs = _outcome(f, {p.pod.name: p.node for p in placements})
    row = Row(
        method, placed, whole, gangs, seconds, rss, input_mb, f"{_verified(checks)}, {_count_check(f, placements)}"
    )
    row.note = note
    if method != "one-by-one":
        row.trace = [*trace, (seconds, placed)]
    return row


def _witness_check(f: Fleet, best: Optimum, most: int = 500) -> str:
    """The optimum made concrete (``counting_optimum.witness``), each node's share allocated by drasat's per-node
    allocator and checked by its verifier: the number is reachable, not only a bound. ``most`` nodes at most
    (evenly spread), so that 10,000 nodes stay quick."""
    from drasat.solver import allocate, problem_from_objects, verify

    shares = witness(f, best)
    chosen = list(range(len(shares)))[:: max(1, len(shares) // most)]
    good = 0
    for n in chosen:
        node = f.node_name(n)
        claims = [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": p.name, "namespace": NAMESPACE},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"gpu-{p.size}"}}]}},
            }
            for p in shares[n]
        ]
        if not claims:
            good += 1
            continue
        docs = [*classes_and_templates(), *node_objects(node), *running_objects(n, node, f.taken[n]), *claims]
        problem = problem_from_objects(docs, node=node, claims=[f"{NAMESPACE}/{p.name}" for p in shares[n]])
        good += not verify(problem, allocate(problem).results)
    return f"witness {good}/{len(chosen)} nodes allocated+verified"


def _optimum(method: str, size: Size) -> Row:
    f = size.fleet()
    best = optimum(f, by_state=method == "optimum", most_gangs=method == "optimum")
    seconds = best.seconds
    if method == "optimum":
        return Row(
            method,
            best.placed,
            best.placed,
            best.gangs,
            seconds,
            _rss_mb(),
            0.0,
            f"{best.status}, bound {best.bound}, {_witness_check(f, best)}",
            f"singles {best.by_size}",
        )
    return Row(
        method,
        best.placed,
        best.placed,
        best.gangs,
        seconds,
        _rss_mb(),
        0.0,
        f"{best.status}, bound {best.bound}",
        f"singles {best.by_size} (gangs: the first answer's, a tie)",
    )


def _child(method: str, size: Size, timeout: float, conn: Any) -> None:
    try:
        conn.send(_optimum(method, size) if method.startswith("optimum") else _library(method, size, timeout))
    except Exception as exc:  # reported as the row, so that one crash does not lose the other sizes
        conn.send(Row(method, checks="error", note=f"{type(exc).__name__}: {exc}"))


def in_process(method: str, size: Size, timeout: float, kill_after: float) -> Row:
    """One method in a fresh (spawned) process; stopped after ``kill_after`` seconds."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(method, size, timeout, send))
    started = time.perf_counter()
    child.start()
    if receive.poll(kill_after):
        row: Row = receive.recv()
    else:
        row = Row(method, checks="killed", note=f"still running after {kill_after:g} s: stopped")
    child.terminate()  # this process's own child, by its handle
    child.join()
    if row.checks == "killed":
        row.seconds = time.perf_counter() - started
    return row


def cli_batch(f: Fleet, path: Path, kill_after: float, method: str = "cli-batch", timeout: float | None = None) -> Row:
    """``drasat schedule --batch -o name FILE`` as a user runs it (``cli-lanes``: with ``--processes LANES``;
    ``timeout``: with ``--timeout``): wall time and peak RSS (``wait4``'s: the largest of the command and of the
    lanes it waited for)."""
    drasat = Path(sys.executable).with_name("drasat")
    command = [str(drasat), "schedule", "--batch", "-o", "name", str(path)]
    command += ["--processes", str(LANES)] if method == "cli-lanes" else []
    command += ["--timeout", f"{timeout:g}"] if timeout is not None else []
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err)
        status, usage = 0, None
        while usage is None:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                usage = rusage
            elif time.perf_counter() - started > kill_after:
                proc.kill()  # this process's own child, by its pid
            else:
                time.sleep(0.1)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        names = [line.split("/", 1)[1] for line in out.read().decode().splitlines() if line.startswith("pod/")]
        summary = [
            line.strip() for line in err.read().decode().splitlines() if line.startswith(("batch:", "error", "  note:"))
        ]
    placed, whole, gangs = _outcome(f, {name: "yes" for name in names})
    return Row(
        method,
        placed,
        whole,
        gangs,
        seconds,
        usage.ru_maxrss / 1024,
        0.0,
        f"exit {proc.returncode}",
        "; ".join(summary),
    )


def write_yaml(f: Fleet, path: Path) -> float:
    """The input as ``frag_cluster.py`` writes it, for the command line; the seconds it took."""
    started = time.perf_counter()
    with path.open("w") as out:
        yaml.dump_all(objects(f), out, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    return time.perf_counter() - started


def _size(text: str, seed: int) -> Size:
    nodes, *rest = (int(x) for x in text.split("/"))
    pods, gangs = PRESETS.get(nodes, (20 * nodes, 0))
    return Size(nodes, rest[0] if rest else pods, rest[1] if len(rest) > 1 else (gangs if not rest else 0), seed)


def measure(
    size: Size, methods: list[str], timeout: float, kill_after: float, folder: Path, cli_timeout: float | None = None
) -> list[Row]:
    """Every chosen method on one size, each in its own process, one after the other (the command line's input
    written once, and kept if it is there already)."""
    f = size.fleet()
    console = Console(stderr=True)
    console.print(f"{size.nodes}/{size.pods}/{size.gangs} seed {size.seed}: {describe(f)}")
    rows = []
    for method in methods:
        if method.startswith("cli-"):
            path = folder / f"frag-{size.nodes}-{size.pods}-{size.gangs}-seed{size.seed}.yaml"
            if not path.exists():
                wrote = write_yaml(f, path)
                console.print(f"  wrote {path} ({path.stat().st_size / 2**20:.0f} MiB) in {wrote:.1f} s")
            rows.append(cli_batch(f, path, kill_after, method, cli_timeout))
        else:
            rows.append(in_process(method, size, timeout, kill_after))
        r = rows[-1]
        r.load = os.getloadavg()[0]
        console.print(
            f"  {method}: {r.placed} placed ({r.whole} in whole gangs or alone), {r.gangs} gangs, "
            f"{r.seconds:.1f} s, {r.rss_mb:.0f} MB, load {r.load:.1f}; {r.checks}" + (f"; {r.note}" if r.note else "")
        )
    return rows


def table(results: list[tuple[Size, list[Row]]], timeout: float) -> Table:
    out = Table(
        title=f"joint placement vs its proven optimum: frag_cluster (8 GPUs a node, every node unlike "
        f"the others); batch-timeout = --timeout {timeout:g}"
    )
    for column in (
        "nodes",
        "pods",
        "gangs",
        "method",
        "placed",
        "whole gangs",
        "gangs done",
        "of optimum",
        "wall",
        "peak RSS",
        "input RSS",
        "load",
        "checks",
    ):
        out.add_column(column, justify="left" if column in ("method", "checks") else "right")
    for size, rows in results:
        best = next((r.placed for r in rows if r.method == "optimum"), 0)
        for r in rows:
            share = f"{r.whole / best:.1%}" if best and r.checks not in ("killed", "error") else ""
            out.add_row(
                str(size.nodes),
                str(size.pods),
                str(size.gangs),
                r.method,
                str(r.placed),
                str(r.whole),
                f"{r.gangs}/{size.gangs}",
                share,
                f"{r.seconds:.1f} s",
                f"{r.rss_mb:.0f} MB",
                f"{r.input_mb:.0f} MB" if r.input_mb else "",
                f"{r.load:.1f}",
                r.checks,
            )
        for r in rows:
            if best and r.whole > best:
                out.add_row(
                    str(size.nodes),
                    "",
                    "",
                    r.method,
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    f"ABOVE THE OPTIMUM {best}: a bug on one side",
                )
    return out


def plot(results: list[tuple[Size, list[Row]]], path: str) -> None:
    """Pods placed over time by each batch run, beside the optimum and one-by-one's count (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, (size, rows) in zip(axes[0], results):
        for r in rows:
            if r.trace:
                ax.step([0.0] + [t for t, _ in r.trace], [0] + [n for _, n in r.trace], where="post", label=r.method)
            elif r.method in ("optimum", "one-by-one") and r.placed:
                ax.axhline(r.placed, linestyle="--" if r.method == "optimum" else ":", label=f"{r.method} {r.placed}")
        ax.set_title(f"{size.nodes} nodes, {size.pods} pods, {size.gangs} gangs")
        ax.set_xlabel("seconds")
        ax.set_ylabel("pods placed")
        ax.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100", help="node counts (frag_cluster.PRESETS) or NODES/PODS/GANGS")
    parser.add_argument("--timeout", type=float, default=600.0, help="the batch-timeout row's deadline, seconds")
    parser.add_argument("--skip-batch", action="store_true", help="only the optimum and one-by-one")
    parser.add_argument("--methods", default=",".join(METHODS), help=f"a subset of {','.join(METHODS)}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kill-after", type=float, default=900.0, help="stop a method after this many seconds")
    parser.add_argument("--cli-timeout", type=float, help="--timeout for the cli-* methods (default: the command's)")
    parser.add_argument("--yaml-dir", help="where the command line's input files go (default: a temporary folder)")
    parser.add_argument("--plot", metavar="FILE.png", help="pods placed over time per batch run (needs matplotlib)")
    args = parser.parse_args()
    methods = [m for m in args.methods.split(",") if not (args.skip_batch and m in BATCH_METHODS)]
    if unknown := set(methods) - set(METHODS):
        parser.error(f"unknown methods: {', '.join(sorted(unknown))}")
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.yaml_dir or scratch)
        for text in args.sizes.split(","):
            size = _size(text, args.seed)
            results.append((size, measure(size, methods, args.timeout, args.kill_after, folder, args.cli_timeout)))
    Console(width=190).print(table(results, args.timeout))
    overruns = [(size, r) for size, rows in results for r in rows if r.method == "batch-timeout" and r.seconds]
    for size, r in overruns:
        print(
            f"--timeout {args.timeout:g} at {size.nodes} nodes: the call took {r.seconds:.2f} s, overrun "
            f"{(r.seconds - args.timeout) / args.timeout:+.1%} (target < 10 %)"
        )
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
