"""``defrag``: at most K moves of running pods that free the most whole devices, then the largest free partitions.

Partitionable GPUs fragment: small partitions scattered over several GPUs leave none whole, and only a
re-pack frees one (dra-driver-nvidia-gpu#932). A *move* takes a running pod off its node (its claims
released as the resourceclaim controller releases them) and places it again, pinned to one node (its
own or another), by drasat's scheduler with the ``pack`` objective — partly used GPUs first, the fewest
newly touched — its claims allocated anew. Each step is valid on its own: it is made on the state the
steps before it left, and its allocation is verified there.

The plan is searched depth first over move sequences (no pod moved twice), within the time limit: the
most whole devices free (counter sets nothing draws on, plain devices nobody holds), then the largest
free share of one counter set per node summed, then the fewest moves. ``proven`` when every sequence of
at most K moves was tried.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from drasat.models.core import Pod
from drasat.solver.allocation.options import Objective
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.report.device_states import node_reports
from drasat.solver.report.pool_status import PoolInputs
from drasat.solver.scheduling.cluster import Cluster, key_of, label_of
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement, schedule_one
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import finished, object_uid
from drasat.solver.verification.verifier import verify

from .ffd import pinned
from .fit import committed
from .preempt import released

MAX_MOVES = 20


@dataclass(frozen=True)
class Score:
    """What a state is worth: whole devices free, then the largest free share of a counter set per node;
    ``counter_sets``: how many there are (none: no partitionable device, so no share to speak of)."""

    whole: int
    largest: Fraction
    counter_sets: int = 0

    def key(self) -> tuple[int, Fraction]:
        return (self.whole, self.largest)


@dataclass
class Move:
    """One step: a pod off ``source`` and onto ``target``, with the devices before and after."""

    pod: str
    source: str
    target: str
    before: list[str]
    after: list[str]
    placement: Placement


@dataclass
class DefragResult:
    """The plan's moves in order, the state's worth before and after, and whether every plan was tried."""

    moves: list[Move]
    before: Score
    after: Score
    proven: bool
    notes: list[str] = field(default_factory=list)

    @property
    def improves(self) -> bool:
        return self.after.key() > self.before.key()

    def to_data(self) -> dict[str, Any]:
        return {
            "moves": [
                {
                    "step": i,
                    "pod": m.pod,
                    "from": m.source,
                    "to": m.target,
                    "devicesBefore": m.before,
                    "devicesAfter": m.after,
                }
                for i, m in enumerate(self.moves, 1)
            ],
            "wholeDevicesFree": {"before": self.before.whole, "after": self.after.whole},
            "largestFreeShare": {"before": float(self.before.largest), "after": float(self.after.largest)},
            "proven": self.proven,
            "notes": self.notes,
        }


def defrag(cluster: Cluster, *, moves: int = 2, options: AllocateOptions | None = None) -> DefragResult:
    """The best plan of at most ``moves`` moves (see the module docstring); every step verified."""
    if not 0 <= moves <= MAX_MOVES:
        from drasat.models.errors import InputError

        raise InputError(f"--moves must be from 0 to {MAX_MOVES}, not {moves}")
    options = options or AllocateOptions()
    if options.evaluator is None:
        options = replace(options, evaluator=SelectorEvaluator())
    search = _Search(replace(options, objective=Objective.PACK), time.monotonic() + options.time_limit, moves)
    start = score(cluster)
    search.best = ([], start)
    search.walk(cluster, [], set())
    plan, after = search.best
    return DefragResult(plan, start, after, not search.cut)


def score(cluster: Cluster) -> Score:
    """Whole devices free and the largest free shares, read from the device report of every node."""
    whole, largest, counter_sets = 0, Fraction(0), 0
    for report in node_reports(PoolInputs(cluster.slices, cluster.claims, cluster.taint_rules)):
        sets: dict[str, list[Fraction]] = {}
        for c in report.counters:
            share = Fraction(c.left.value) / Fraction(c.capacity.value) if c.capacity.value else Fraction(0)
            sets.setdefault(f"{c.pool}/{c.counter_set}", []).append(share)
        whole += sum(1 for shares in sets.values() if all(s == 1 for s in shares))
        whole += sum(1 for d in report.devices if d.state == "free" and not d.counter_sets)
        largest += max((min(shares) for shares in sets.values()), default=Fraction(0))
        counter_sets += len(sets)
    return Score(whole, largest, counter_sets)


class _Search:
    def __init__(self, options: AllocateOptions, ends: float, depth: int) -> None:
        self.options, self.ends, self.depth = options, ends, depth
        self.cut = False
        self.best: tuple[list[Move], Score] = ([], Score(0, Fraction(0)))

    def walk(self, cluster: Cluster, plan: list[Move], moved: set[tuple[str, str]]) -> None:
        if len(plan) >= self.depth:
            return
        for pod in _movable(cluster):
            if key_of(pod) in moved:
                continue
            for node in cluster.nodes:
                if time.monotonic() > self.ends:
                    self.cut = True
                    return
                for after, made in moves_of(cluster, pod, node.name, self.options):
                    here = score(after)
                    best_plan, best = self.best
                    if (here.key(), -len(plan) - 1) > (best.key(), -len(best_plan)):
                        self.best = ([*plan, made], here)
                    self.walk(after, [*plan, made], moved | {key_of(pod)})


def _movable(cluster: Cluster) -> list[Pod]:
    """Running pods holding devices through claims of their own (a shared claim stays where it is)."""
    holders: dict[str, list[str]] = {}
    for claim in cluster.claims:
        if claim.status and claim.status.allocation:
            for r in claim.status.reserved_for:
                holders.setdefault(r.uid, []).append(claim.name)
    out = []
    for pod in cluster.pods:
        if pod.spec.node_name and not finished(pod) and object_uid("Pod", pod) in holders:
            out.append(pod)
    return out


def moves_of(cluster: Cluster, pod: Pod, target: str, options: AllocateOptions) -> list[tuple[Cluster, Move]]:
    """Every way to take ``pod`` off its node and place it again on ``target``: the scheduler checks the node
    (filters, cpu, memory, some allocation of its claims), then each device the claim could take there instead
    (a claim of one device) is tried, each answer verified on the state the move starts from."""
    uid = object_uid("Pod", pod)
    before = _devices_of(cluster, uid)
    pending = pod.model_copy(deep=True)
    pending.spec.node_name = None
    without = replace(
        cluster,
        pods=[pending if p is pod else p for p in cluster.pods],
        claims=[released(c, {uid}) for c in cluster.claims],
    )
    placed = schedule_one(ClusterState(without), pinned(pending, [target]), options, {})
    if placed.node is None or placed.problem is None:
        return []
    placed.pod.spec.affinity = pod.spec.affinity  # the pin was the plan's, not the pod's
    out = []
    for variant in _variants(without, placed, target):
        after = committed(without, [variant])
        made = Move(label_of(pod), pod.spec.node_name or "", target, before, _devices_of(after, uid), variant)
        if made.after != made.before:
            out.append((after, made))
    return out


def _variants(cluster: Cluster, placed: Placement, target: str) -> list[Placement]:
    """The scheduler's placement, and the same with its one-device claim on each other device of the target
    node the verifier accepts."""
    assert placed.problem is not None
    out = [placed] if not verify(placed.problem, placed.allocations) else []
    if len(placed.allocations) != 1:
        return out
    ((key, result),) = placed.allocations.items()
    if len(result.devices.results) != 1:
        return out
    chosen = result.devices.results[0]
    for s in cluster.slices:
        if s.spec.node_name != target or s.spec.driver != chosen.driver:
            continue
        for device in s.spec.devices:
            if device.name == chosen.device and s.spec.pool.name == chosen.pool:
                continue
            other = result.model_copy(deep=True)
            other.devices.results[0].pool, other.devices.results[0].device = s.spec.pool.name, device.name
            if not verify(placed.problem, {key: other}):
                out.append(_with_allocation(placed, key, other))
    return out


def _with_allocation(placed: Placement, key: str, result: Any) -> Placement:
    claims = []
    for claim in placed.claims:
        if f"{claim.namespace or 'default'}/{claim.name}" == key and claim.status is not None:
            claim = claim.model_copy(deep=True)
            assert claim.status is not None
            claim.status.allocation = result
        claims.append(claim)
    return replace(placed, claims=claims, allocations={key: result})


def _devices_of(cluster: Cluster, uid: str) -> list[str]:
    return [
        f"{r.pool}/{r.device}"
        for c in cluster.claims
        if c.status and c.status.allocation and any(ref.uid == uid for ref in c.status.reserved_for)
        for r in c.status.allocation.devices.results
    ]
