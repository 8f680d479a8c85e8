"""One-by-one (kube-scheduler) against the joint placement on the same cluster, as plain data.

``compare_schedules`` runs ``schedule`` and ``schedule_batch`` on the same input with the
same per-node objective and reports, for each: pods placed, PodGroups complete, devices and
counter sets touched, whole devices left free, the largest free partition per node type and
wall time — then every pod whose outcome differs. Gangs are counted the same way on both
sides: a PodGroup is complete when all its pending pods are placed (one-by-one may place
part of one, which the joint placement never does).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from drasat.models.core import Pod
from drasat.solver.allocation.options import Objective
from drasat.solver.batch.placement import schedule_batch
from drasat.solver.scheduling.cluster import Cluster, namespace_of
from drasat.solver.scheduling.one_by_one import Placement, schedule
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import pending_pods

from .device_usage import Usage, usage

ONE_BY_ONE, BATCH = "one-by-one", "batch"


@dataclass(frozen=True)
class ScheduleSide:
    """One way of placing the pods: what it achieved and what it cost."""

    method: str
    objective: Objective
    pods: int
    placed: int
    gangs: int
    gangs_complete: int
    usage: Usage
    seconds: float
    nodes: dict[str, str | None]  # pod -> node (None: pending)
    bound: int | None = None  # the joint model's bound on the pods it counts (batch only)
    proven: bool = False  # the joint answer is proven the most the cluster holds, priority by priority
    placements: tuple[Placement, ...] = field(default=(), repr=False, compare=False)  # for the map (not data)

    def to_data(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "objective": str(self.objective),  # plain text: YAML has no way to write a str subclass
            "pods": self.pods,
            "placed": self.placed,
            "gangs": self.gangs,
            "gangsComplete": self.gangs_complete,
            **self.usage.to_data(),
            "seconds": round(self.seconds, 3),
            **({"bound": self.bound, "proven": self.proven} if self.method == BATCH else {}),
        }


@dataclass(frozen=True)
class ScheduleComparison:
    one_by_one: ScheduleSide
    batch: ScheduleSide
    differences: list[str]  # one line per pod whose outcome differs

    def to_data(self) -> dict[str, Any]:
        return {"oneByOne": self.one_by_one.to_data(), "batch": self.batch.to_data(), "differences": self.differences}


def compare_schedules(
    cluster: Cluster, pods: Sequence[Pod] | None = None, *, options: AllocateOptions | None = None
) -> ScheduleComparison:
    """Place ``pods`` (default: every pending pod) one by one, then jointly, each on the untouched input."""
    options = options or AllocateOptions()
    chosen = list(pending_pods(cluster) if pods is None else pods)
    _warm_up(cluster)
    started = time.perf_counter()
    one = schedule(cluster, chosen, options=options)
    one_side = side_of(ONE_BY_ONE, options.objective, cluster, chosen, one, time.perf_counter() - started)
    started = time.perf_counter()
    result = schedule_batch(cluster, chosen, options=options)
    batch_side = side_of(BATCH, options.objective, cluster, chosen, result.placements, time.perf_counter() - started)
    batch_side = replace(batch_side, bound=result.summary.bound, proven=result.summary.proven)
    return ScheduleComparison(one_side, batch_side, _differences(one_side, batch_side))


def _warm_up(cluster: Cluster) -> None:
    """Pay the one-off costs before either clock starts (OR-Tools' import, compiling the CEL
    selectors: programs are cached per process, so the side that ran first would pay for both)."""
    from drasat.models.errors import Location
    from drasat.solver.allocation.cp_sat.model import build_model  # noqa: F401  (imports OR-Tools)
    from drasat.solver.cel.validate import check_cel

    for obj in [*cluster.classes, *cluster.templates, *cluster.claims]:
        check_cel(obj, Location("<warm-up>"))


def side_of(
    method: str, objective: Objective, cluster: Cluster, pods: list[Pod], placements: list[Placement], seconds: float
) -> ScheduleSide:
    """One column of ``compare --schedule``: what one method placed, and what it left of the devices."""
    nodes = {p.label: p.node for p in placements}
    groups: dict[str, list[str]] = {}
    for pod in pods:
        ref = pod.spec.scheduling_group
        if ref is not None and ref.pod_group_name:
            groups.setdefault(f"{namespace_of(pod)}/{ref.pod_group_name}", []).append(f"{namespace_of(pod)}/{pod.name}")
    complete = sum(1 for members in groups.values() if all(nodes.get(m) for m in members))
    new_claims = [c for p in placements if p.node for c in p.claims]
    return ScheduleSide(
        method,
        objective,
        len(pods),
        sum(1 for n in nodes.values() if n),
        len(groups),
        complete,
        usage(cluster, new_claims),
        seconds,
        nodes,
        placements=tuple(placements),
    )


def _differences(one: ScheduleSide, batch: ScheduleSide) -> list[str]:
    out = []
    for pod, node in one.nodes.items():
        other = batch.nodes.get(pod)
        if node != other:
            out.append(f"{pod}: one-by-one {node or 'pending'}, batch {other or 'pending'}")
    return out
