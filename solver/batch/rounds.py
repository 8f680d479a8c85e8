"""One counting model's answer made real: its counts decoded to pods on nodes, allocated, verified and bound.

The search's best counts are decoded node by node (``decode``); a node that refuses its mix (only
where a rule was relaxed) is cut from the model and the search runs again from its last answer, a
few rounds while time is left. What every node accepted is then committed to the cluster state:
claims allocated and reserved, pods bound — so that whatever is placed next (another block of
nodes, the last one-by-one pass) sees it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from drasat.solver.allocation.problem import claim_key
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement, bound_pod, updated_claims
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions, DraVerdict, claim_shape, dra_score
from drasat.solver.scheduling.pods import PodClaims

from .budget import Budget
from .counting import CountingModel
from .decode import Decoded, allocate_nodes, assign, cut, hint
from .nodes import NodeAllocator, NodeCheck
from .pod_classes import PodKey, Queue, pod_key
from .search import TIE_EFFORT, Counts, Progress, Search

DECODE_SHARE = 0.25  # of the time left once a model is built, kept for decoding, allocating and what follows
ROUNDS = 4  # searches at most: the first, then again after nodes refused the mixes of a relaxed count


def search_ends(until: float) -> float:
    """When a search must stop so that decoding keeps its share of the time left before ``until``."""
    return until - DECODE_SHARE * max(0.0, until - time.monotonic())


def start_search(
    counting: CountingModel,
    until: float,
    options: AllocateOptions,
    progress: Progress | None = None,
    halt: threading.Event | None = None,
    tie_effort: float = TIE_EFFORT,
) -> Search:
    """The model's search, started in its own thread, to end in time for decoding before ``until`` (or ``halt``)."""
    ends = search_ends(until)
    return Search(counting, ends, workers=options.workers, progress=progress, halt=halt, tie_effort=tie_effort).start()


@dataclass
class Outcome:
    """What the rounds of search and decoding gave: the nodes' answers, the counts they came from, and tallies."""

    decoded: Decoded = field(default_factory=Decoded)
    counts: Counts | None = None
    rounds: int = 0
    solutions: int = 0
    cuts: int = 0  # mixes a node refused, cut from the model

    def notes(self) -> list[str]:
        out = []
        if self.cuts:
            out.append(
                f"{self.cuts} time{'s' * (self.cuts != 1)} a node could not allocate the mix the model gave it: "
                "the mix was cut from the model and the model searched again"
            )
        if self.decoded.refused:
            out.append(
                f"{len(self.decoded.refused)} nodes could not allocate the mix the model gave them; their pods go back"
            )
        return out


def decode_rounds(
    state: ClusterState,
    queue: Queue,
    counting: CountingModel,
    search: Search,
    options: AllocateOptions,
    budget: Budget,
    until: float,
) -> Outcome:
    """The search's counts decoded node by node; nodes refusing their mix cut, and searched again (a few rounds,
    before ``until``): the last round's nodes that still refuse give their pods back."""
    allocator = NodeAllocator(state, options, budget.finishing())
    outcome = Outcome()
    for round_ in range(1, ROUNDS + 1):
        found = search.result()
        outcome.rounds = round_
        if found is None:
            break
        outcome.counts = found
        outcome.solutions += found.solutions
        outcome.decoded = allocate_nodes(state, queue, assign(queue, found), allocator, counting, search.value)
        refused = outcome.decoded.refused
        if not refused or round_ == ROUNDS or not budget.searching() or time.monotonic() >= until:
            break
        for node, mix in refused.items():
            cut(counting, node, mix)
            outcome.cuts += 1
        hint(counting, found, refused)
        search = start_search(counting, until, options, halt=budget.halt)
    return outcome


def commit(state: ClusterState, decoded: Decoded) -> dict[PodKey, Placement]:
    """Bind every jointly placed pod: its claims allocated and reserved, its pod status written."""
    placed: dict[PodKey, Placement] = {}
    for node in sorted(decoded.checks):
        check = decoded.checks[node]
        for pc in decoded.assignment[node]:
            placed[pod_key(pc.pod)] = _bound(state, pc, node, check)
    return placed


def _bound(state: ClusterState, pc: PodClaims, node: str, check: NodeCheck) -> Placement:
    shape = claim_shape(state, pc, node)
    allocations = {claim_key(c): check.allocation(pc.label, claim_key(c)) for c in shape.claims}
    verdict = DraVerdict(
        node,
        pc.label,
        claims=shape.claims,
        allocations=allocations,
        problem=check.problem,
        score=dra_score(shape.claims, allocations),
        mappings=shape.mappings,
    )
    claims = updated_claims(pc, verdict)
    pod = bound_pod(pc, node, verdict, claims)
    state.record(claims)
    state.bind(pod, node)
    return Placement(pod, node, claims, problem=check.problem, allocations=check.allocations)
