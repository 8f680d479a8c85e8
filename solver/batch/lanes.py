"""A big cluster's blocks searched in parallel: the nodes dealt into lanes, each lane a process of its own.

In one process the blocks (``blocks``) are searched one after another, each on one core (one CP-SAT
worker keeps answers reproducible). With ``processes`` > 1 the blocks are dealt into that many lanes
of consecutive blocks (``lanes_of``) and the queue is split between the lanes in proportion to their
nodes (``split_queue``: a gang whole to the lane least loaded so far, each class's single pods dealt
by share). Each lane is a forked process: it inherits the cluster and its state (never pickled: a
10,000-node cluster costs more to ship than the lanes save, measured before), runs ``place_in_blocks``
on its nodes, and sends back, as each block is decoded, per node the pods placed and their
allocations, verified there. The parent rebuilds each node's problem from its own state and commits
the block's answers while the lanes search on (committing at the end took 9 s of 60 at 1,000
nodes), and leaves what no lane placed to the last one-by-one pass over every node, so a pod one lane
could not hold may still land on another lane's nodes. The scheduler-order pass runs beside, in the
parent, as beside the blocks.

A lane that dies (killed, out of memory) costs only the blocks it had not sent: their pods go to the
one-by-one pass and a note says so. A lane that raises is a bug: :class:`InternalError`, with its message.
Fork is the start method (POSIX; where the platform has none, one process is used and said).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from drasat.models.errors import InternalError
from drasat.models.resource import AllocationResult
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement
from drasat.solver.scheduling.parallel import worker_signals
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

from .blocks import FILL_SHARE, Tally, blocks_of, even_parts, place_in_blocks
from .budget import Budget
from .decode import Decoded
from .nodes import NodeCheck, node_claims
from .pod_classes import Gang, PodClass, PodKey, Queue, pod_key
from .rounds import Outcome, commit
from .search import Counts, Progress

GRACE = 5.0  # seconds past the lanes' deadline one is waited for (decoding its last block), within the run's
POLL = 0.2  # seconds between looks at the halt while waiting for the lanes
CAN_FORK = "fork" in multiprocessing.get_all_start_methods()


@dataclass
class NodeAnswer:
    """One node's joint answer as a lane sends it: the pods placed there (in the order their claims were
    allocated) and the allocations, keyed as ``node_claims`` names the claims."""

    node: str
    pods: list[PodKey]
    allocations: dict[str, AllocationResult]
    carried: bool


@dataclass
class LanesDone:
    """The lanes' work, committed to the parent's state: pods placed, nodes' checks, blocks' tally, lanes lost."""

    placed: dict[PodKey, Placement] = field(default_factory=dict)
    checks: dict[str, NodeCheck] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)
    notes: list[str] = field(default_factory=list)


def pools_across_nodes(state: ClusterState) -> int:
    """How many pools more than one node publishes in slices of its own: lanes would allocate such a pool's
    devices each from its own copy of what is in use, so a cluster with any keeps its blocks in one process
    (where each block sees what the ones before it took). Pools reaching many nodes (``allNodes``, node
    selectors) do not count: the counting model leaves the nodes they reach to the last one-by-one pass."""
    seen: dict[tuple[str, str], set[str]] = {}
    for name, devices in state.nodes.items():
        for s in devices.slices:
            if s.spec.node_name == name:
                seen.setdefault((s.spec.driver, s.spec.pool.name), set()).add(name)
    return sum(1 for names in seen.values() if len(names) > 1)


def lanes_of(blocks: list[list[str]], count: int) -> list[list[str]]:
    """The blocks dealt into ``count`` lanes of consecutive blocks (their block counts differ by one at most),
    each lane as its nodes: neighbouring blocks stay together, as the blocks of one process would run."""
    return [[n for block in part for n in block] for part in even_parts(blocks, min(count, len(blocks)))]


def split_queue(queue: Queue, sizes: list[int]) -> list[Queue]:
    """``queue`` split between lanes of ``sizes`` nodes: each gang whole to the lane it loads least (members per
    node), each class's single pods dealt in queue order by the lanes' shares. Classes keep their indices; loose
    pods and loose gangs stay with the parent (its one-by-one pass)."""
    load = [0] * len(sizes)
    gangs: list[list[Gang]] = [[] for _ in sizes]
    lane_of: dict[PodKey, int] = {}
    for gang in queue.gangs:
        k = min(range(len(sizes)), key=lambda i: ((load[i] + len(gang.members)) / sizes[i], i))
        gangs[k].append(gang)
        load[k] += len(gang.members)
        lane_of.update((pod_key(pc.pod), k) for pc in gang.members)
    classes: list[list[PodClass]] = [[] for _ in sizes]
    for cls in queue.classes:
        dealt = [0] * len(sizes)
        members: list[list[Any]] = [[] for _ in sizes]
        for pc in cls.members:
            k = lane_of.get(pod_key(pc.pod), -1)
            if k < 0:  # a single pod: to the lane furthest below its share of this class
                k = min(range(len(sizes)), key=lambda i: ((dealt[i] + 1) / sizes[i], i))
                dealt[k] += 1
            members[k].append(pc)
        for k, pods in enumerate(members):
            if pods:
                classes[k].append(PodClass(cls.index, cls.priority, pods))
    return [Queue(classes[k], gangs[k], queue.class_of, [], {}) for k in range(len(sizes))]


class Lanes:
    """The lanes' processes, started by :meth:`start` (before any thread of the parent's: fork copies only the
    calling thread), and their answers by :meth:`finish`."""

    def __init__(self, state: ClusterState, queue: Queue, options: AllocateOptions, budget: Budget, count: int):
        self.state, self.queue, self.options, self.budget = state, queue, options, budget
        self.ends = budget.ends - FILL_SHARE * budget.left()  # the lanes leave the last pass its share
        self.nodes = lanes_of(blocks_of(sorted(n.name for n in state.cluster.nodes)), count)
        self.queues = split_queue(queue, [len(nodes) for nodes in self.nodes])
        self.context = multiprocessing.get_context("fork")
        # Set by the parent on a halt, polled by each lane: a shared flag, not an Event (whose set() waits for
        # every sleeper to wake, and a lane that has ended never does: the parent hung on Ctrl-C).
        self.halt_all = self.context.RawValue("b", 0)
        self.parent = os.getpid()
        self.processes: list[Any] = []
        self.conns: list[Connection] = []

    def start(self) -> Lanes:
        for k in range(len(self.nodes)):
            mine, theirs = self.context.Pipe(duplex=False)
            process = self.context.Process(target=self._lane, args=(k, theirs), name=f"drasat-lane-{k + 1}")
            process.start()
            theirs.close()
            self.processes.append(process)
            self.conns.append(mine)
        return self

    def stop(self) -> None:
        """Every lane ended: asked (SIGTERM), then made to (SIGKILL) if it is still there after a second."""
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join()

    def finish(self, progress: Progress | None, gate: threading.Event | None = None) -> LanesDone:
        """Every lane's blocks committed as they come, until each lane reports its end (or is lost). ``gate``
        (the scheduler-order pass's) is closed while this process commits a block, so that the pass, at a
        lower priority, does not hold the interpreter while the lanes' messages wait."""
        collector = _Collector(self, progress, gate)
        try:
            ended = collector.run()
        finally:
            self.stop()
        collector.done.notes = [self._lost(k) for k in range(len(self.nodes)) if not ended[k]]
        return collector.done

    def _lost(self, k: int) -> str:
        code = self.processes[k].exitcode
        return (
            f"lane {k + 1} of the joint placement ({len(self.nodes[k])} nodes): its process ended before its last "
            f"block (exit code {code}); the pods it had not placed are placed one by one"
        )

    def _lane(self, k: int, conn: Connection) -> None:
        """In the lane's process: its blocks placed, each block's answers sent as it is done, then its tally;
        never returns (``os._exit``: none of the parent's atexit handlers or buffers run twice)."""
        worker_signals()  # Ctrl-C is the parent's (it sets the halt all lanes hear); SIGTERM ends the lane alone
        halt, lock = threading.Event(), threading.Lock()
        threading.Thread(target=_relay, args=(self.halt_all, self.parent, halt), daemon=True).start()

        def send(message: tuple[str, Any]) -> None:
            with lock:  # progress comes from CP-SAT's thread, the rest from this one
                conn.send(message)

        try:
            budget, evaluator = Budget(self.ends, halt=halt), self.options.evaluator
            assert evaluator is not None
            _, tally = place_in_blocks(
                self.state,
                self.queues[k],
                self.options,
                evaluator,
                budget,
                lambda placed, _bound, _left: send(("progress", placed)),
                nodes=self.nodes[k],
                keep=0.0,
                on_block=lambda outcome: send(("block", _answers(outcome))),
            )
            tally.outcomes = [_slim(o) for o in tally.outcomes]
            send(("end", (tally, budget.cut_short)))
        except BaseException as exc:  # noqa: BLE001 - the parent raises it as a bug of drasat's
            send(("error", f"{type(exc).__name__}: {exc}"))
        finally:
            conn.close()
            os._exit(0)


class _Collector:
    """The parent's side: each block's answers committed as they come, the lanes' progress summed for
    ``progress``, the halt relayed, the lanes' deadline (plus ``GRACE``) kept."""

    def __init__(self, lanes: Lanes, progress: Progress | None, gate: threading.Event | None):
        self.lanes, self.progress, self.gate = lanes, progress, gate
        self.placed = [0] * len(lanes.nodes)
        self.ended = [False] * len(lanes.nodes)
        self.done = LanesDone()
        self.pods = {pod_key(pc.pod): pc for cls in lanes.queue.classes for pc in cls.members}

    def run(self) -> list[bool]:
        """Until every lane has ended or the time is up: which lanes ended."""
        waiting: dict[Any, int] = dict(zip(self.lanes.conns, range(len(self.lanes.conns))))
        until = min(self.lanes.ends + GRACE, self.lanes.budget.ends)  # a short --timeout is not overrun by GRACE
        while waiting and time.monotonic() < until:
            if self.lanes.budget.halted:
                self.lanes.halt_all.value = 1
            for conn in wait(list(waiting), timeout=POLL):
                if self._heard(waiting[conn], conn):
                    del waiting[conn]
        return self.ended

    def _heard(self, k: int, conn: Any) -> bool:
        """One message from lane ``k``; whether the lane is done (ended, or its pipe closed)."""
        try:
            kind, body = conn.recv()
        except (EOFError, OSError):
            return True
        if kind == "error":
            raise InternalError(f"lane {k + 1} of the joint placement failed: {body}")
        if kind == "block":
            if self.gate is not None:
                self.gate.clear()
            try:
                self._commit(body)
            finally:
                if self.gate is not None:
                    self.gate.set()
        elif kind == "end":
            tally, cut_short = body
            _add(self.done.tally, tally)
            for what in cut_short:
                self.lanes.budget.cut(what)
            self.ended[k] = True
            return True
        else:
            self.placed[k] = body
            if self.progress is not None:
                self.progress(sum(self.placed), None, self.lanes.budget.left())
        return False

    def _commit(self, answers: list[NodeAnswer]) -> None:
        """A block's answers as the parent's: each node's claims named and its problem built from the parent's
        state, as the lane did from the same state, then committed."""
        state, decoded = self.lanes.state, Decoded()
        for answer in answers:
            chosen = [self.pods[key] for key in answer.pods]
            claims, renamed, _ = node_claims(state, answer.node, chosen)
            problem = state.problem(answer.node, claims)
            labels = [pc.label for pc in chosen]
            check = NodeCheck(answer.node, labels, problem, answer.allocations, carried=answer.carried, renamed=renamed)
            decoded.checks[answer.node], decoded.assignment[answer.node] = check, chosen
        self.done.placed.update(commit(state, decoded))
        self.done.checks.update(decoded.checks)


def _relay(flag: Any, parent: int, target: threading.Event) -> None:
    """The parent's halt (a process-shared flag) onto the lane's own (what its searches poll); a lane whose parent
    is gone (killed, or ended on a second Ctrl-C) ends at once instead of searching on for nobody."""
    while not flag.value:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(POLL)
    target.set()


def _answers(outcome: Outcome) -> list[NodeAnswer]:
    """A block's answers per node, as a lane sends them."""
    decoded = outcome.decoded
    return [
        NodeAnswer(node, [pod_key(pc.pod) for pc in decoded.assignment[node]], check.allocations, check.carried)
        for node, check in sorted(decoded.checks.items())
    ]


def _slim(outcome: Outcome) -> Outcome:
    """``outcome`` without its decoded nodes (sent already) or its counts (only whether it found any is used)."""
    counts = None if outcome.counts is None else Counts()
    decoded = Decoded(refused=outcome.decoded.refused, withdrawn=outcome.decoded.withdrawn)
    return Outcome(decoded, counts, outcome.rounds, outcome.solutions, outcome.cuts)


def _add(total: Tally, part: Tally) -> None:
    total.blocks += part.blocks
    total.blocks_done += part.blocks_done
    total.nodes_counted += part.nodes_counted
    total.relaxed.update(part.relaxed)
    total.skipped += part.skipped
    total.outcomes += part.outcomes
