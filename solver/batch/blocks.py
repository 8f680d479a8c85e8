"""Big clusters in blocks of nodes: one counting model per block, each given the pods the blocks before it left.

One model over a thousand fragmented nodes is too big for CP-SAT to find any answer in a minute
(measured: 1,000 nodes and 8,000 pods, first solution after 15 s of search on a quiet machine, none
within 13 s on a loaded one; 2,000 nodes, none in 300 s), while 250 nodes with every pending pod
find a near-optimal answer in seconds. So past ``SINGLE_MODEL_NODES`` the nodes (in name order)
are cut into blocks of about ``BLOCK_NODES``, and each block's model, with every pod still pending,
is solved, decoded, verified and committed before the next is built — anytime: whatever the clock
stops, every block done is placed and what is left goes to the last one-by-one pass. Each block
gets the time left in proportion to its nodes. Pods of higher priority fill the first blocks, as
the model's objective is lexicographic by priority; a gang is placed within one block.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import ceil
from typing import TypeVar

from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

from .budget import Budget
from .counting import CountingModel, build_counting_model
from .pod_classes import Gang, PodClass, PodKey, Queue, pod_key
from .rounds import Outcome, commit, decode_rounds, start_search
from .search import TIE_EFFORT, Progress

T = TypeVar("T")

SINGLE_MODEL_NODES = 300  # up to this many nodes, one model for the whole cluster (it proves optima there)
BLOCK_NODES = 100  # about this many nodes per block past it
SLACK = 1.25  # a block is offered its nodes' share of each pod class, times this
LEAST_SEARCH = 1.5  # seconds a block's search and decoding get at least, while the run has them
FILL_SHARE = 0.1  # of the time left when the blocks start, kept for the last one-by-one pass
# A block without gangs breaks its ties with a fifth of the whole model's effort: among answers with as many
# pods only queue order and packing are at stake, and a hundred blocks at full effort took 70 % of the
# search at 300 nodes forced into blocks (30.8 s, 8.7 s at a fifth, the same pods placed).
BLOCK_TIE_EFFORT = 0.2 * TIE_EFFORT


def blocks_of(nodes: list[str], size: int | None = None) -> list[list[str]]:
    """``nodes`` cut into blocks of about ``size`` (``BLOCK_NODES``), as even as can be, in their order."""
    return even_parts(nodes, max(1, ceil(len(nodes) / (size or BLOCK_NODES))))


def even_parts(items: list[T], count: int) -> list[list[T]]:
    """``items`` cut into ``count`` consecutive parts whose lengths differ by one at most (longer ones first)."""
    step, extra = divmod(len(items), count)
    out, start = [], 0
    for i in range(count):
        end = start + step + (i < extra)
        out.append(items[start:end])
        start = end
    return out


def remaining(queue: Queue, placed: dict[PodKey, Placement], share: float = 1.0) -> Queue:
    """``queue`` without the pods placed, and of what is left only ``share`` (the first pods of each class and
    the first gangs, in queue order, rounded up; gangs bring their members). Classes and gangs keep their
    indices; a gang's placed members count as running (toward its minCount); loose pods are left to the last
    pass."""
    gangs = []
    for g in queue.gangs:
        left = [pc for pc in g.members if pod_key(pc.pod) not in placed]
        if left:
            gangs.append(Gang(g.index, g.group, left, g.min_count, g.running + len(g.members) - len(left)))
    gangs = gangs[: ceil(share * len(gangs))]
    members = {pod_key(pc.pod) for g in gangs for pc in g.members}
    in_gangs = {pod_key(pc.pod) for g in queue.gangs for pc in g.members}
    classes = []
    for c in queue.classes:
        singles = [pc for pc in c.members if pod_key(pc.pod) not in placed and pod_key(pc.pod) not in in_gangs]
        kept = set(map(id, singles[: ceil(share * len(singles))]))
        left = [pc for pc in c.members if id(pc) in kept or pod_key(pc.pod) in members]
        if left:
            classes.append(PodClass(c.index, c.priority, left))
    return Queue(classes, gangs, queue.class_of, [], queue.loose_gangs)


@dataclass
class Tally:
    """What the blocks did, summed: for the run's summary."""

    blocks: int = 0
    blocks_done: int = 0
    nodes_counted: int = 0
    relaxed: dict[str, list[str]] = field(default_factory=dict)  # node -> the rules relaxed there
    skipped: list[str] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)


def place_in_blocks(
    state: ClusterState,
    queue: Queue,
    options: AllocateOptions,
    evaluator: SelectorEvaluator,
    budget: Budget,
    progress: Progress | None,
    gate: threading.Event | None = None,
    *,
    nodes: list[str] | None = None,
    keep: float = FILL_SHARE,
    on_block: Callable[[Outcome], None] | None = None,
) -> tuple[dict[PodKey, Placement], Tally]:
    """Every block's model in turn, each committed to ``state``: the pods placed, and the tally. ``gate`` is
    opened while each block's search runs (and closed after), for a pass running beside the blocks. ``nodes``
    (default: the cluster's) in name order are cut into blocks; ``keep`` is the share of the time left kept
    for the one-by-one pass after them (a lane's process keeps none: its parent runs that pass); ``on_block``
    hears each block's outcome once it is committed."""
    blocks = blocks_of(sorted(nodes if nodes is not None else (n.name for n in state.cluster.nodes)))
    tally, placed = Tally(blocks=len(blocks)), dict[PodKey, Placement]()
    fill_starts = budget.ends - keep * budget.left()
    for i, block in enumerate(blocks):
        nodes_left = sum(len(b) for b in blocks[i:])
        left = remaining(queue, placed, min(1.0, SLACK * len(block) / nodes_left))
        if not left.classes:
            break
        if not budget.searching():
            budget.cut(f"the joint model: {len(blocks) - i} of {len(blocks)} blocks of nodes not reached")
            break
        until = time.monotonic() + max(0.0, fill_starts - time.monotonic()) * len(block) / nodes_left
        heard = _shifted(progress, placed, budget)
        placed.update(_block(state, left, block, options, evaluator, budget, until, heard, tally, gate))
        tally.blocks_done += 1
        if on_block is not None:
            on_block(tally.outcomes[-1])
        gc.collect(0)  # the block's model is garbage now; with the collector paused it would stay
    return placed, tally


def _block(
    state: ClusterState,
    queue: Queue,
    nodes: list[str],
    options: AllocateOptions,
    evaluator: SelectorEvaluator,
    budget: Budget,
    until: float,
    progress: Progress | None,
    tally: Tally,
    gate: threading.Event | None,
) -> dict[PodKey, Placement]:
    """One block: its model built over ``nodes``, searched until ``until`` (less decoding's share), committed."""
    counting = build_counting_model(state, queue, evaluator, budget, pack=True, nodes=nodes)
    _count(tally, counting)
    # A build that took the block's share still gets a short search (the blocks after it get less).
    until = min(budget.ends, max(until, time.monotonic() + LEAST_SEARCH))
    effort = TIE_EFFORT if queue.gangs else BLOCK_TIE_EFFORT
    search = start_search(counting, until, options, progress, budget.halt, tie_effort=effort)
    if gate is not None:  # the scheduler-order pass runs while CP-SAT searches
        gate.set()
        search.wait()
        gate.clear()
    outcome = decode_rounds(state, queue, counting, search, options, budget, until)
    tally.outcomes.append(outcome)
    return commit(state, outcome.decoded)


def _count(tally: Tally, counting: CountingModel) -> None:
    tally.nodes_counted += len(counting.nodes)
    tally.relaxed.update({name: n.relaxed for name, n in counting.nodes.items() if not n.exact})
    tally.skipped += counting.skipped


def _shifted(progress: Progress | None, placed: dict[PodKey, Placement], budget: Budget) -> Progress | None:
    """``progress`` hearing the pods the blocks before this one placed added to this block's, and the run's time
    left (no bound: each block's is for its own nodes)."""
    if progress is None:
        return None
    before = len(placed)

    def heard(pods: int, _bound: int | None, _seconds_left: float) -> None:
        progress(before + pods, None, budget.left())

    return heard
