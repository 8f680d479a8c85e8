"""The joint placement's one-by-one passes: what the master leaves, and the answer it must never lose to.

The counting model is exact for most inputs, but it leaves some pods out (loose pods, nodes
reaching shared pools, pods whose claims Kubernetes decides mid-search), and time may cut its
search short. So the batch also places the queue as the scheduler does (``scheduler_baseline``:
``schedule``'s own placements, then the gangs it splits withdrawn and what is still pending placed
one by one, gangs whole), beside the model's search, and the final answer is whichever places
more pods, priority by priority (``better``). One pass, a class that failed never tried again, gangs tried and undone on the
state itself (``ClusterState.snapshot``), and the scheduler's caches shared by every pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from drasat.models.core import Pod
from drasat.models.errors import SolveTimeout
from drasat.models.resource import ResourceClaimConsumerReference
from drasat.solver.scheduling.cluster import label_of, namespace_of
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement, schedule_one
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import pod_consumer

from .budget import Budget
from .pod_classes import PodKey, Queue, pod_key, priority_of

NOT_TRIED = "not tried: the batch's time limit (--timeout) ran out first"
HALTED = "not tried: the batch was stopped (Ctrl-C) first"


def scheduler_baseline(
    state: ClusterState,
    queue: Queue,
    pending: list[Pod],
    options: AllocateOptions,
    cache: dict[tuple, Any],
    budget: Budget,
) -> tuple[list[Placement], list[Placement]]:
    """The answer the batch must never lose to, and the scheduler's own placements; ``state`` is left as it
    was.

    First the pods as ``schedule`` places them — same order, same nodes, gang members one at a time —
    then every gang left partly placed withdrawn (what remains still fits: withdrawing only frees room)
    and the pods still pending placed one by one on what is left, gangs whole. So the answer places
    every pod ``schedule`` does except members of gangs it splits, and often more."""
    start = state.snapshot()
    scheduler = one_by_one(
        state,
        queue,
        pending,
        {},
        options,
        cache,
        whole_gangs=False,
        budget=budget,
        stage="the pass in the scheduler's order (the answer is checked against the "
        "scheduler's on the pods it tried only)",
    )
    split = _split_gangs(scheduler, queue)
    baseline = scheduler
    if split:
        state.restore(start)
        withdrawn = {pod_consumer(p.pod).uid for p in scheduler if p.node and group_of(p.pod) in split}
        # keyed by the pending pod (a placement's pod is the bound copy), so that they are not placed again
        kept = {
            pod_key(pod): _unreserved(p, withdrawn)
            for pod, p in zip(pending, scheduler)
            if p.node and group_of(p.pod) not in split
        }
        for placement in kept.values():
            state.record(placement.claims)
            state.bind(placement.pod, placement.node or "")
        baseline = one_by_one(
            state, queue, pending, kept, options, cache, budget=budget, stage="the pass after withdrawing split gangs"
        )
    state.restore(start)
    return baseline, scheduler


def _unreserved(placement: Placement, withdrawn: set[str]) -> Placement:
    """``placement`` with its claims no longer reserved for the withdrawn pods (a claim a kept pod shares
    with a withdrawn gang member keeps its allocation: the kept pod uses it)."""

    def kept(ref: ResourceClaimConsumerReference) -> bool:
        return not (ref.resource == "pods" and ref.uid in withdrawn)

    if all(kept(r) for c in placement.claims for r in (c.status.reserved_for if c.status else [])):
        return placement
    claims = []
    for claim in placement.claims:
        claim = claim.model_copy(deep=True)
        if claim.status is not None:
            claim.status.reserved_for = [r for r in claim.status.reserved_for if kept(r)]
        claims.append(claim)
    return replace(placement, claims=claims)


def one_by_one(
    state: ClusterState,
    queue: Queue,
    pending: list[Pod],
    placed: dict[PodKey, Placement],
    options: AllocateOptions,
    cache: dict[tuple, Any],
    *,
    whole_gangs: bool = True,
    budget: Budget | None = None,
    stage: str = "the last one-by-one pass",
) -> list[Placement]:
    """Every pod's placement in queue order: those in ``placed``, then one by one for the others; with
    ``whole_gangs``, each gang at its first pending member, tried first and kept only when every member fits.

    A pod of a class that already failed here is not tried again: placements only fill nodes, so a spec
    that fitted nowhere still fits nowhere (its placement is the one ``schedule`` gives, its reason the
    first failure's). ``cache`` is ``schedule_one``'s: what it keeps holds whatever the state. Once the
    ``budget`` is spent, the pods left are not tried (and ``stage`` says so in the budget's notes)."""
    gangs = gang_labels(queue) if whole_gangs else set()
    class_of = queue.class_of
    failed: dict[int, Placement] = {}
    out: dict[PodKey, Placement] = dict(placed)
    untried = 0
    for pod in pending:
        if pod_key(pod) in out:
            continue
        if budget is not None and not budget.searching():
            out[pod_key(pod)] = Placement(pod, reason=HALTED if budget.halted else NOT_TRIED)
            untried += 1
            continue
        if budget is not None:
            options = budget.options(options)
        group = group_of(pod)
        members = [p for p in pending if group_of(p) == group and pod_key(p) not in out] if group in gangs else [pod]
        try:
            if group in gangs:
                out.update(_gang(state, group, members, queue.need(group, len(members)), options, cache))
                continue
            same = failed.get(class_of.get(pod_key(pod), -1))
            if same is not None:
                out[pod_key(pod)] = Placement(pod, reason=same.reason, node_reasons=same.node_reasons)
                continue
            out[pod_key(pod)] = schedule_one(state, pod, options, cache)
        except SolveTimeout as exc:  # an allocation undecided in its time: the pod (or gang) stays pending
            out.update({pod_key(p): Placement(p, reason=f"{NOT_TRIED} ({exc})") for p in members})
            untried += len(members)
            continue
        if out[pod_key(pod)].node is None and pod_key(pod) in class_of:
            failed[class_of[pod_key(pod)]] = out[pod_key(pod)]
    if untried and budget is not None:
        budget.cut(f"{stage}: {untried} pod{'s' * (untried != 1)} not tried")
    return [out[pod_key(pod)] for pod in pending]


def group_of(pod: Pod) -> str:
    """``namespace/name`` of the pod's PodGroup ("" without one)."""
    ref = pod.spec.scheduling_group
    return f"{namespace_of(pod)}/{ref.pod_group_name}" if ref is not None and ref.pod_group_name else ""


def _gang(
    state: ClusterState,
    group: str,
    members: list[Pod],
    need: int,
    options: AllocateOptions,
    cache: dict[tuple, Any],
) -> dict[PodKey, Placement]:
    """A gang placed one by one; undone (the state as before) unless ``need`` members fit (its minCount, or all);
    members past that which do not fit stay pending with their own reasons, as the scheduler leaves them."""
    before = state.snapshot()
    try:
        tried = [schedule_one(state, pod, options, cache) for pod in members]
    except SolveTimeout:
        state.restore(before)
        raise
    if sum(p.node is not None for p in tried) >= need:
        return {pod_key(pod): p for pod, p in zip(members, tried)}
    state.restore(before)
    why = next(p.reason for p in tried if p.node is None)
    whole = "every member fits" if need == len(members) else f"{need} of its {len(members)} pending members fit"
    return {
        pod_key(pod): Placement(
            pod, reason=f"PodGroup {group}: not {whole} at once (a gang is placed whole or not at all): {why}"
        )
        for pod in members
    }


def _split_gangs(placements: list[Placement], queue: Queue) -> set[str]:
    """The gangs ``placements`` place in part, below what they need (their minCount, or all their members)."""
    gangs = gang_labels(queue)
    placed: dict[str, list[bool]] = {}
    for p in placements:
        if group_of(p.pod) in gangs:
            placed.setdefault(group_of(p.pod), []).append(p.node is not None)
    return {group for group, outcomes in placed.items() if 0 < sum(outcomes) < queue.need(group, len(outcomes))}


def placed_by_priority(placements: Iterable[Placement]) -> list[tuple[int, int]]:
    """(priority, pods placed) from the highest priority down: compared as lists, the lexicographic order
    the scheduler's queue serves (more pods of the highest priority first, then the next)."""
    counts: dict[int, int] = {}
    for p in placements:
        counts.setdefault(priority_of(p.pod), 0)
        counts[priority_of(p.pod)] += p.node is not None
    return sorted(counts.items(), reverse=True)


def gang_labels(queue: Queue) -> set[str]:
    """Every gang of the queue, joint or loose, by its label."""
    return {g.label for g in queue.gangs} | {f"{ns}/{name}" for ns, name in queue.loose_gangs}


def better(first: list[Placement], second: list[Placement]) -> bool:
    """Whether ``first`` places more pods than ``second``, priority by priority (the highest decides)."""
    return [n for _, n in placed_by_priority(first)] > [n for _, n in placed_by_priority(second)]


def labels(placements: Iterable[Placement]) -> set[str]:
    """The pods these placements put on a node."""
    return {label_of(p.pod) for p in placements if p.node}
