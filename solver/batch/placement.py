"""``schedule_batch(cluster)``: every pending pod placed at once, the most pods (by priority) the cluster holds.

kube-scheduler places pods one at a time and never revisits a choice; on partitionable devices
that strands capacity (kubernetes#138765). The joint placement decides all pending pods together:

1. the queue as classes of interchangeable pods, gangs (PodGroups: all, or minCount, or none) and
   loose pods (``pod_classes``);
2. one CP-SAT model over counts for the whole cluster (``counting``, each node's devices through
   ``lifted``): pods of each class per node, devices of each equivalence class per claim, counters
   per counter set — every DRA rule's own encoding, lifted to counts;
3. its search in a thread of its own (``search``), anytime: the best counts so far are always held,
   with CP-SAT's bound; beside it, on the other core, the queue placed as the scheduler places it
   (``passes.scheduler_baseline``), stopped once the model proves it cannot be beaten;
4. decoding (``decode``): pods to nodes, each node's claims allocated together by ``allocate`` and
   checked by the verifier; a node that refuses its mix (only where a rule was relaxed) is cut from
   the model and the search runs again from its last answer;
5. loose pods and what the model left placed one by one on what is left; and whichever of that and
   the scheduler-order answer places more pods, priority by priority, is the answer.

``options.time_limit`` is one deadline for the whole run (``budget``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from drasat.models.collector import collector_paused
from drasat.models.core import Pod
from drasat.solver.allocation.options import CAPABILITIES, check_options
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster import Cluster, label_of
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import pending_pods

from .beside import Beside
from .blocks import BLOCK_NODES, FILL_SHARE, SINGLE_MODEL_NODES, place_in_blocks, remaining
from .budget import Budget
from .counting import build_counting_model
from .lanes import CAN_FORK, Lanes, pools_across_nodes
from .lifted import CountedNode
from .nodes import NodeCheck
from .passes import better, group_of, one_by_one, scheduler_baseline
from .pod_classes import PodKey, Queue, sort_queue
from .rounds import Outcome, commit, decode_rounds, search_ends, start_search
from .search import Progress


@dataclass
class BatchSummary:
    """What the joint placement did and what it cost."""

    pods: int = 0
    placed: int = 0
    placed_jointly: int = 0
    gangs: int = 0
    gangs_complete: int = 0
    pod_classes: int = 0
    nodes_counted: int = 0
    nodes_relaxed: int = 0  # nodes where some rule could not be counted exactly
    solutions: int = 0
    rounds: int = 0
    bound: int | None = None  # the most pods the counted part of the cluster can hold, as CP-SAT bounds it
    proven: bool = False  # the joint model's answer is optimal (priority by priority) for what it counts
    nodes_verified: int = 0
    nodes_carried: int = 0  # answers carried from a node of the same devices and mix (verified all the same)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_data(self) -> dict[str, Any]:
        return {
            "pods": self.pods,
            "placed": self.placed,
            "placedJointly": self.placed_jointly,
            "gangs": self.gangs,
            "gangsComplete": self.gangs_complete,
            "podClasses": self.pod_classes,
            "nodesCounted": self.nodes_counted,
            "nodesRelaxed": self.nodes_relaxed,
            "solutions": self.solutions,
            "rounds": self.rounds,
            "bound": self.bound,
            "proven": self.proven,
            "nodesVerified": self.nodes_verified,
            "nodesCarried": self.nodes_carried,
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
        }


@dataclass
class BatchResult:
    placements: list[Placement]  # in queue order, as ``schedule`` returns them
    nodes: list[NodeCheck]
    summary: BatchSummary


def schedule_batch(
    cluster: Cluster,
    pods: Sequence[Pod] | None = None,
    *,
    options: AllocateOptions | None = None,
    progress: Progress | None = None,
    halt: threading.Event | None = None,
    processes: int = 1,
) -> BatchResult:
    """Place ``pods`` (default: every pending pod) jointly; see the module docstring. ``options.time_limit``
    bounds the whole run; ``progress(placed, bound, seconds_left)`` hears of each better answer. Setting
    ``halt`` (from another thread: Ctrl-C) ends the searching early: the best answer found so far is decoded,
    verified and returned, its summary saying so. ``processes`` > 1 searches a big cluster's blocks in that
    many processes (``lanes``); up to ``SINGLE_MODEL_NODES`` nodes one model is searched in this one.

    Python's cyclic collector is paused for the run: building the model walks tens of thousands of long-lived
    objects, and each collection re-examined the whole cluster (a third of the build on 200 nodes)."""
    with collector_paused():
        return _schedule_batch(cluster, pods, options, progress, halt, processes)


def _schedule_batch(
    cluster: Cluster,
    pods: Sequence[Pod] | None,
    options: AllocateOptions | None,
    progress: Progress | None,
    halt: threading.Event | None,
    processes: int,
) -> BatchResult:
    started = time.monotonic()
    options = options or AllocateOptions()
    check_options(options.solver, options.objective, options.time_limit, batch=True)
    budget = Budget.of(options.time_limit, halt)  # the run's clock: reading the queue counts too
    if options.evaluator is None:
        options = replace(options, evaluator=SelectorEvaluator())
    state = ClusterState(cluster)
    pending = list(pending_pods(cluster) if pods is None else pods)
    queue = sort_queue(cluster, pending, state.book)
    summary = BatchSummary(pods=len(pending), pod_classes=len(queue.classes), gangs=len(queue.gangs))
    cache: dict[tuple, Any] = {}  # the scheduler's, shared by every one-by-one pass
    if len(cluster.nodes) > SINGLE_MODEL_NODES:
        lanes = _lanes_asked(processes, state, summary)
        placed, checks, baseline = _blocks(state, queue, pending, options, budget, progress, summary, lanes)
    else:
        if processes > 1:
            summary.notes.append(
                f"{len(cluster.nodes)} nodes: one model, searched in this process (processes are used past "
                f"{SINGLE_MODEL_NODES} nodes, where the nodes are cut into blocks)"
            )
        placed, checks, baseline = _whole(state, queue, pending, options, cache, budget, progress, summary)
    # What the model left out, and loose pods, one by one: they get the scheduler's own reasons where none fits.
    placements = one_by_one(state, queue, pending, placed, options, cache, budget=budget)
    if baseline is not None and better(baseline, placements):
        summary.notes.append("one by one places more pods by priority than the joint model found: its answer is kept")
        placements, checks, placed = baseline, {}, {}
    _finish(summary, queue, pending, placements, placed, budget, options)
    summary.nodes_verified = len(checks)
    summary.nodes_carried = sum(1 for c in checks.values() if c.carried)
    summary.seconds = time.monotonic() - started
    return BatchResult(placements, list(checks.values()), summary)


def _whole(
    state: ClusterState,
    queue: Queue,
    pending: list[Pod],
    options: AllocateOptions,
    cache: dict[tuple, Any],
    budget: Budget,
    progress: Progress | None,
    summary: BatchSummary,
) -> tuple[dict[PodKey, Placement], dict[str, NodeCheck], list[Placement] | None]:
    """One model for the whole cluster, the scheduler-order pass beside its search: the pods it placed (committed
    to ``state``), its nodes' checks, and the baseline to compare with (None: the model proved it unbeatable)."""
    assert options.evaluator is not None
    pack = CAPABILITIES[options.objective].packs
    counting = build_counting_model(state, queue, options.evaluator, budget, pack=pack)
    _describe(summary, counting.nodes.values(), counting.skipped)
    search = start_search(counting, budget.ends, options, progress, budget.halt)
    whole = counting.complete and not queue.loose  # the model's proven optimum is then the cluster's
    ends = search_ends(budget.ends)
    baseline, stopped = _baseline(state, queue, pending, options, cache, budget, ends, lambda: whole and search.proven)
    outcome = decode_rounds(state, queue, counting, search, options, budget, budget.ends)
    _outcomes(summary, [outcome], budget)
    if counting.unbuilt:  # its bound and proof speak of the nodes it reached only
        summary.notes.append(
            f"{budget.why} while the model was built: it counts {len(counting.nodes)} of "
            f"{len(counting.nodes) + counting.unbuilt} nodes, so no bound is proven"
        )
    elif outcome.counts is not None:
        summary.bound, summary.proven = outcome.counts.bound, outcome.counts.proven
    return commit(state, outcome.decoded), outcome.decoded.checks, None if stopped else baseline


def _blocks(
    state: ClusterState,
    queue: Queue,
    pending: list[Pod],
    options: AllocateOptions,
    budget: Budget,
    progress: Progress | None,
    summary: BatchSummary,
    processes: int,
) -> tuple[dict[PodKey, Placement], dict[str, NodeCheck], list[Placement] | None]:
    """A big cluster block by block (``blocks``; in ``processes`` lanes, ``lanes``), the scheduler-order pass
    beside the searches (``beside``): the pods placed, committed to ``state``, the nodes' checks, and the pass's
    answer to compare with."""
    assert options.evaluator is not None
    lanes = Lanes(state, queue, options, budget, processes).start() if processes > 1 else None
    try:  # started after the forks: fork copies only the calling thread, and a lane must not inherit a held lock
        beside = Beside(state.cluster, queue, pending, options, budget, yielding=lanes is not None).start()
    except BaseException:
        if lanes is not None:
            lanes.stop()
        raise
    placed: dict[PodKey, Placement] = {}
    try:
        if lanes is None:
            placed, tally = place_in_blocks(state, queue, options, options.evaluator, budget, progress, beside.gate)
            checks = {node: check for o in tally.outcomes for node, check in o.decoded.checks.items()}
        else:
            beside.gate.set()  # this process only waits for the lanes: the pass has the interpreter
            done = lanes.finish(progress, beside.gate)
            placed, checks, tally = done.placed, done.checks, done.tally
            summary.notes.extend(done.notes)
    finally:
        # Every pod the model could count placed: the pass cannot do better, and is stopped at once.
        unbeatable = placed and not remaining(queue, placed).classes
        baseline = beside.stop(time.monotonic() if unbeatable else budget.ends - FILL_SHARE * budget.left())
    where = f", in {len(lanes.nodes)} processes" if lanes is not None else ""
    summary.notes.append(
        f"{len(state.cluster.nodes)} nodes: one model per block of about {BLOCK_NODES} nodes, each with the pods "
        f"the blocks before it left ({tally.blocks_done} of {tally.blocks} blocks searched{where}); no bound is "
        "proven"
    )
    _describe(summary, [], tally.skipped, relaxed=tally.relaxed, counted=tally.nodes_counted)
    _outcomes(summary, tally.outcomes, budget)
    return placed, checks, baseline


def _lanes_asked(processes: int, state: ClusterState, summary: BatchSummary) -> int:
    """The processes the blocks run in: as asked, but one where this platform cannot fork or where pools span
    several nodes (said)."""
    if processes <= 1:
        return processes
    if not CAN_FORK:
        summary.notes.append("processes: this platform cannot fork, so the blocks are searched in one process")
        return 1
    spanning = pools_across_nodes(state)
    if spanning:
        summary.notes.append(
            f"processes: {spanning} pools are published by more than one node, so the blocks are searched in one "
            "process (each sees what the blocks before it took)"
        )
        return 1
    return processes


def _outcomes(summary: BatchSummary, outcomes: list[Outcome], budget: Budget) -> None:
    summary.rounds = sum(o.rounds for o in outcomes)
    summary.solutions = sum(o.solutions for o in outcomes)
    for outcome in outcomes:
        summary.notes.extend(n for n in outcome.notes() if n not in summary.notes)
    if any(o.counts is None for o in outcomes):
        budget.cut("the joint model found no answer in time: the pods are placed one by one")


def _baseline(
    state: ClusterState,
    queue: Queue,
    pending: list[Pod],
    options: AllocateOptions,
    cache: dict[tuple, Any],
    budget: Budget,
    ends: float,
    unbeatable: Callable[[], bool],
) -> tuple[list[Placement], bool]:
    """The queue placed as the scheduler places it, until ``ends`` or until ``unbeatable()`` (the joint model
    proved its answer the cluster's optimum): the placements, and whether the proof stopped it (then what it
    had not reached is no cut of time, and goes unsaid)."""
    own = Budget(ends, [], stop=lambda: unbeatable() or budget.halted)
    placements, _ = scheduler_baseline(state, queue, pending, options, cache, own)
    stopped = unbeatable()
    if not stopped:
        budget.cut_short.extend(what for what in own.cut_short if what not in budget.cut_short)
    return placements, stopped


def _describe(
    summary: BatchSummary,
    nodes: Iterable[CountedNode],
    skipped: list[str],
    *,
    relaxed: dict[str, list[str]] | None = None,
    counted: int | None = None,
) -> None:
    """The model's reach in the summary: nodes counted, nodes with rules relaxed, nodes left out."""
    nodes = list(nodes)
    relaxed = relaxed if relaxed is not None else {n.node: n.relaxed for n in nodes if not n.exact}
    summary.nodes_counted = counted if counted is not None else len(nodes)
    summary.nodes_relaxed = len(relaxed)
    if relaxed:
        what = sorted({r for rules in relaxed.values() for r in rules})
        summary.notes.append(
            f"{len(relaxed)} nodes counted with rules relaxed ({'; '.join(what)}): their answers are checked by "
            "allocating, and a refused mix is cut from the model"
        )
    shared = [s for s in skipped if "shared" in s]
    if shared:
        summary.notes.append(
            f"{len(shared)} nodes reach shared device pools: only the one-by-one pass places pods there"
        )


def _finish(
    summary: BatchSummary,
    queue: Queue,
    pending: list[Pod],
    placements: list[Placement],
    placed: dict[PodKey, Placement],
    budget: Budget,
    options: AllocateOptions,
) -> None:
    summary.notes += [
        f"{budget.why} (--timeout {options.time_limit:g} s for the whole run): {what}" for what in budget.cut_short
    ]
    summary.placed = sum(1 for p in placements if p.node)
    summary.placed_jointly = len(placed)
    on_node = {p.label for p in placements if p.node}
    summary.gangs_complete = sum(1 for g in queue.gangs if all(pc.label in on_node for pc in g.members))
    summary.gangs += len(queue.loose_gangs)
    summary.gangs_complete += sum(1 for g in queue.loose_gangs if _group_complete(g, pending, on_node))


def _group_complete(group: tuple[str, str], pending: list[Pod], on_node: set[str]) -> bool:
    members = [p for p in pending if group_of(p) == f"{group[0]}/{group[1]}"]
    return bool(members) and all(label_of(p) in on_node for p in members)
