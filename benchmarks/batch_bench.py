"""``schedule_bench.py --batch``: one-by-one (kube-scheduler) against ``schedule --batch`` on fragmented MIG nodes.

For each size: the cluster of ``mig_cluster`` (8 MIG-like GPUs and 2 NICs a node, part
already allocated in a few patterns; mixed pending pods, an 8-pod gang per 100 pods) is
placed both ways from the same input. Printed per method: pods placed, gangs complete,
whole GPUs left free and wall time; for the batch also the verifier's verdict on every
node's joint allocation (the one-by-one placements are verified in a sample, as the plain
benchmark does).

Measured on the 2-core machine (1 December 2026, shared with other work; the batch with
drasat's default --timeout 60, one deadline for its whole run):

    nodes  pods  method      placed  gangs  whole GPUs free  wall time
      100  1000  one-by-one     788   5/10                0     15.6 s
      100  1000  batch          830  10/10                0     17.2 s
      500  4000  one-by-one    3362  26/40                0    115.2 s
      500  4000  batch         3538  40/40                0     43.3 s

(30 November, before the scheduler's per-class memo and best-node-first devices step: one-by-one
33.2 s and 412.2 s.) The batch's joint part costs mostly per node class (6 here, whatever the
node count: ~715 allocator calls at both sizes); the rest is the pass in the scheduler's order
(``batch_passes.scheduler_baseline``), which costs what ``schedule`` costs: whole at 100 nodes,
cut at half the deadline at 500 (1,828 of 4,000 pods tried, said in the notes). So 100 -> 500
nodes (5x nodes, 4x pods) takes the batch from 17 s to 43 s, one-by-one from 16 s to 115 s.
With ``--timeout 600`` the pass runs whole at 500 nodes too (measured 250 s on a loaded machine,
same 3,538 pods placed).
"""

from __future__ import annotations

import time

from mig_cluster import GPU, cluster_objects
from rich.console import Console
from rich.table import Table

from drasat.models.loader import load_objects
from drasat.solver import Features
from drasat.solver.allocation.options import Objective
from drasat.solver.batch.placement import schedule_batch
from drasat.solver.report.schedule_comparison import BATCH, ONE_BY_ONE, side_of
from drasat.solver.scheduling.cluster import Cluster, cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import pending_pods
from drasat.solver.verification.verifier import verify


def _cluster(nodes: int, pods: int) -> Cluster:
    return cluster_from_objects([o.obj for o in load_objects(cluster_objects(nodes, pods)).objects], Features())


def _row(nodes: int, pods: int, timeout: float) -> dict:
    """Both methods on one size, each timed alone, summarised as ``drasat compare --schedule`` does."""
    cluster = _cluster(nodes, pods)
    pending = pending_pods(cluster)
    started = time.perf_counter()
    one = schedule(cluster, pending)
    one_side = side_of(ONE_BY_ONE, Objective.FIRST_FIT, cluster, pending, one, time.perf_counter() - started)
    started = time.perf_counter()
    batch = schedule_batch(cluster, pending, options=AllocateOptions(time_limit=timeout))
    batch_side = side_of(BATCH, Objective.FIRST_FIT, cluster, pending, batch.placements, time.perf_counter() - started)
    bad_batch = sum(1 for c in batch.nodes if verify(c.problem, c.allocations))
    sample = [p for p in one if p.problem is not None][::50]
    bad_one = sum(1 for p in sample if verify(p.problem, p.allocations))
    return {
        "nodes": nodes,
        "pods": pods,
        "one": one_side,
        "batch": batch_side,
        "batch_checked": f"{len(batch.nodes) - bad_batch}/{len(batch.nodes)} nodes valid",
        "one_checked": f"{len(sample) - bad_one}/{len(sample)} sampled valid",
        "summary": batch.summary,
    }


def run(sizes: list[int], pods: list[int], plot: str | None, timeout: float = 60.0) -> None:
    """Both methods on each size; ``timeout`` is the batch's deadline for its whole run."""
    pods = pods if len(pods) == len(sizes) else [pods[0]] * len(sizes)
    rows = []
    table = Table(title="schedule: one-by-one vs --batch, fragmented MIG-like GPUs (8 a node) and 2 NICs")
    for column in ("nodes", "pods", "method", "placed", "gangs complete", "whole GPUs free", "wall time", "verified"):
        table.add_column(column, justify="right")
    for nodes, count in zip(sizes, pods):
        started = time.perf_counter()
        row = _row(nodes, count, timeout)
        rows.append(row)
        for side, checked in ((row["one"], row["one_checked"]), (row["batch"], row["batch_checked"])):
            table.add_row(
                str(nodes),
                str(count),
                side.method,
                str(side.placed),
                f"{side.gangs_complete}/{side.gangs}",
                str(side.usage.whole_free_by_driver.get(GPU, 0)),
                f"{side.seconds:.1f} s",
                checked,
            )
        s = row["summary"]
        Console(stderr=True).print(
            f"{nodes} nodes: {s.pod_classes} pod classes, {s.nodes_counted} nodes counted, "
            f"bound {s.bound} ({'proven' if s.proven else 'not proven'}), {s.nodes_verified} nodes verified "
            f"({time.perf_counter() - started:.0f} s for the size)" + "".join(f"\n  note: {n}" for n in s.notes)
        )
    Console(width=150).print(table)
    if plot:
        _plot(rows, plot)


def _plot(rows: list[dict], path: str) -> None:
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'drasat[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nodes = [r["nodes"] for r in rows]
    fig, (placed, seconds) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label in (("one", "one-by-one"), ("batch", "batch")):
        placed.plot(nodes, [r[key].placed for r in rows], marker="o", label=label)
        seconds.plot(nodes, [r[key].seconds for r in rows], marker="o", label=label)
    placed.set(xlabel="nodes", ylabel="pods placed", title="Pods placed")
    seconds.set(xlabel="nodes", ylabel="seconds", title="Wall time")
    for axes in (placed, seconds):
        axes.legend()
        axes.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
