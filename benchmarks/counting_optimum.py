"""The proven most pods a ``frag_cluster`` input can run: a small CP-SAT counting model, independent of drasat.

Why a separate model: the joint placement's answers need a yardstick that does not share its code.
This one reads the generator's parameters (``frag_cluster.fleet``), not the Kubernetes objects.

Why counts are exact here: every GPU is one counter set of 28 units, and its partitions of one size
are interchangeable devices (same counters, same attributes but their name), each pending pod asks
for one device of one size with nothing else constraining it (no matchAttribute, cpu/memory/pods
never binding: at most 56 pods a node). So a set of pods fits on a GPU exactly when, per size, the
count fits the devices left free (a running seventh holds one of the 7 seventh devices *and* 4
units) and the units add up to at most the GPU's free units. Gangs are all or nothing: 8 full
partitions anywhere (the generator's PodGroups have no topology constraint), so only their number
counts. All pods have the same priority: the objective is the number of pods placed; a second
stage then finds the most gangs among the optimal answers, since a gang and 8 single full pods tie.

Two formulations of the same counts: per GPU (``--per-gpu``: a count per size on each GPU), and by
default per GPU *state* (GPUs with the same free devices and units are interchangeable: how many of
them take each mix). Both are exact and agree; the per-GPU one is slow to prove because its GPUs
are symmetric (measured: 1.3 s at 100 nodes, 220 s at 10,000, and its gangs stage 590 s at 100 nodes),
the per-state one proves every size here in well under a second.

Run ``python benchmarks/counting_optimum.py --nodes 100 [--per-gpu]`` (``--pods``/``--gangs``/``--seed``
as ``frag_cluster.py``); it prints the optimum, CP-SAT's status and the seconds to prove it.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice, product
from operator import mul
from typing import Any

from frag_cluster import GANG_SIZE, PRESETS, PROFILES, UNITS, Fleet, Pending, fleet
from ortools.sat.python import cp_model

State = tuple[int, ...]  # a GPU's free devices per size, then its free units
Mix = tuple[int, ...]  # partitions per size one GPU takes


@dataclass(frozen=True)
class Optimum:
    placed: int
    bound: int  # CP-SAT's best bound: equal to placed when proven
    status: str  # OPTIMAL when proven (both stages, when there are gangs)
    seconds: float
    by_size: dict[str, int]  # single pods placed per size
    gangs: int  # the most gangs complete among the answers placing ``placed`` pods
    mixes: dict[State, Counter[Mix]] = field(default_factory=dict)  # per GPU state (by_state only): the answer


def _free(f: Fleet) -> dict[State, list[tuple[int, int]]]:
    """Every GPU (node, gpu index) by its free state."""
    out: dict[State, list[tuple[int, int]]] = {}
    for n, gpus in enumerate(f.taken):
        for g, running in enumerate(gpus):
            held = Counter(profile for profile, _ in running)
            free_units = UNITS - sum(PROFILES[p][0] * k for p, k in held.items())
            out.setdefault((*(devices - held[size] for size, (_, devices) in PROFILES.items()), free_units), []).append(
                (n, g)
            )
    return out


def _capacity(model: cp_model.CpModel, f: Fleet, by_state: bool) -> tuple[dict[str, list[Any]], dict[State, Any]]:
    """Per size, the partitions the GPUs take. Per GPU: a count per size within its free devices and units.
    ``by_state``: the same counts summed over GPUs of one free state, as how many of them take each mix
    (GPUs in one state are interchangeable, so this is exact too, and small on 80,000 GPUs)."""
    units = [u for u, _ in PROFILES.values()]
    out: dict[str, list[Any]] = {size: [] for size in PROFILES}
    taking: dict[State, Any] = {}  # state -> [(mix, how many GPUs take it)]
    for state, gpus in _free(f).items():
        *devices, free_units = state
        if not by_state:
            for _ in gpus:
                counts = [model.new_int_var(0, d, "") for d in devices]
                model.add(sum(u * x for u, x in zip(units, counts)) <= free_units)
                for size, x in zip(PROFILES, counts):
                    out[size].append(x)
            continue
        mixes = [m for m in product(*(range(d + 1) for d in devices)) if sum(map(mul, units, m)) <= free_units]
        taking[state] = [(m, model.new_int_var(0, len(gpus), "")) for m in mixes]
        model.add(sum(y for _, y in taking[state]) == len(gpus))
        for i, size in enumerate(PROFILES):
            out[size].append(sum(m[i] * y for m, y in taking[state] if m[i]))
    return out, taking


def optimum(
    f: Fleet, time_limit: float = 600.0, workers: int = 1, by_state: bool = True, most_gangs: bool = True
) -> Optimum:
    """The most pods placed, gangs whole; with ``most_gangs``, then the most gangs among those answers (a gang
    and 8 single full pods count the same, so the first answer's gangs are an arbitrary tie)."""
    started = time.perf_counter()
    model = cp_model.CpModel()
    singles = Counter(p.size for p in f.queue if p.gang is None)
    placed = {size: model.new_int_var(0, singles[size], size) for size in PROFILES}
    gangs = model.new_int_var(0, len(f.gangs), "gangs")
    capacity, taking = _capacity(model, f, by_state)
    for size, taken in capacity.items():
        model.add(sum(taken) >= placed[size] + (GANG_SIZE * gangs if size == "full" else 0))
    total = sum(placed.values()) + GANG_SIZE * gangs
    model.maximize(total)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = workers
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Optimum(
            0, round(solver.best_objective_bound), solver.status_name(status), time.perf_counter() - started, {}, 0
        )
    best, bound, name = round(solver.objective_value), round(solver.best_objective_bound), solver.status_name(status)
    if most_gangs and f.gangs and status == cp_model.OPTIMAL:
        model.add(total == best)
        model.maximize(gangs)
        name = solver.status_name(solver.solve(model))
    mixes = {
        state: Counter({m: solver.value(y) for m, y in pairs if solver.value(y)}) for state, pairs in taking.items()
    }
    return Optimum(
        best,
        bound,
        name,
        time.perf_counter() - started,
        {s: solver.value(x) for s, x in placed.items()},
        solver.value(gangs),
        mixes,
    )


def witness(f: Fleet, best: Optimum) -> list[list[Pending]]:
    """The by-state answer made concrete: per node, the pods it runs (singles in queue order, whole gangs).
    Checking these nodes one at a time with an allocator shows the optimum is reachable."""
    chosen = {
        size: [p for p in f.queue if p.gang is None and p.size == size][: best.by_size[size]] for size in PROFILES
    }
    chosen["full"] += [p for p in f.queue if p.gang in f.gangs[: best.gangs]]
    out: list[list[Pending]] = [[] for _ in f.taken]
    gpus = _free(f)
    for state, mixes in best.mixes.items():
        mine = iter(gpus[state])
        for mix, count in mixes.items():
            for n, _ in islice(mine, count):
                for size, k in zip(PROFILES, mix):
                    out[n] += [chosen[size].pop() for _ in range(min(k, len(chosen[size])))]  # mixes may hold more
    if any(chosen.values()):
        raise ValueError("the answer places more pods than its mixes hold")  # a bug here, not in the input
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--pods", type=int)
    parser.add_argument("--gangs", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--workers", type=int, default=1, help="CP-SAT workers (1: deterministic)")
    parser.add_argument("--per-gpu", action="store_true", help="a count per size on every GPU, not per GPU state")
    parser.add_argument("--most-gangs", action="store_true", help="with --per-gpu: also the most gangs (slow)")
    args = parser.parse_args()
    pods, gangs = PRESETS.get(args.nodes, (20 * args.nodes, 0))
    started = time.perf_counter()
    f = fleet(
        args.nodes, pods if args.pods is None else args.pods, gangs if args.gangs is None else args.gangs, args.seed
    )
    drawn = time.perf_counter() - started
    best = optimum(f, args.time_limit, args.workers, not args.per_gpu, not args.per_gpu or args.most_gangs)
    print(
        f"{args.nodes} nodes, {len(f.queue)} pods, {len(f.gangs)} gangs (seed {args.seed}, drawn in {drawn:.1f} s): "
        f"{best.placed} pods placed, bound {best.bound}, {best.status} in {best.seconds:.2f} s; "
        f"singles {best.by_size}, gangs {best.gangs}/{len(f.gangs)}"
    )


if __name__ == "__main__":
    main()
