"""The scheduler-order pass beside the blocks' searches: the answer a big cluster's batch must never lose to.

On a big cluster (``blocks``) the main thread builds and decodes one block after another, and
CP-SAT searches each block in C++ without Python's lock; so the queue placed as the scheduler places
it (``passes.scheduler_baseline``) runs in a thread of its own, on its own copy of the cluster
state, and only while a search runs (``Budget.gate``): it takes the interpreter when the main
thread has nothing to do. When the blocks are done it runs on alone while the time allows (the
last one-by-one pass keeps its share), then stops where it is; whichever answer places
more pods, priority by priority, is kept — so a myopic block order never costs pods that the
scheduler's own order, as far as it got, placed.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from drasat.models.core import Pod
from drasat.solver.scheduling.cluster import Cluster
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

from .budget import Budget
from .passes import scheduler_baseline
from .pod_classes import Queue

NICE = 10  # the pass's thread priority beside lanes (``_lower_priority``)


class Beside:
    """``scheduler_baseline`` in a thread, stepping only while :attr:`gate` is open; :meth:`stop` for its answer."""

    def __init__(
        self,
        cluster: Cluster,
        queue: Queue,
        pending: list[Pod],
        options: AllocateOptions,
        run: Budget,
        *,
        yielding: bool = False,
    ):
        self.yielding = yielding
        self.gate = threading.Event()
        self._finished = threading.Event()
        self._own = Budget(run.ends, [], stop=lambda: run.halted or self._finished.is_set(), gate=self.gate)
        self._answer: list[Placement] | None = None
        self._failure: BaseException | None = None
        self._args = (cluster, queue, pending, options)
        self._thread = threading.Thread(target=self._run, name="drasat-batch-baseline", daemon=True)

    def start(self) -> Beside:
        self._thread.start()
        return self

    def stop(self, until: float) -> list[Placement] | None:
        """The pass run on alone until it ends or until ``until`` (the main thread has nothing else to do), then
        stopped where it is: its placements (the pods it had not reached pending), None if it never began."""
        self.gate.set()
        self._thread.join(max(0.0, until - time.monotonic()))
        self._finished.set()
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        return self._answer

    def _run(self) -> None:
        cluster, queue, pending, options = self._args
        if self.yielding:
            _lower_priority()
        self.gate.wait()
        if self._finished.is_set():
            return
        try:
            cache: dict[tuple, Any] = {}  # its own: the scheduler's caches are not shared between threads
            self._answer, _ = scheduler_baseline(ClusterState(cluster), queue, pending, options, cache, self._own)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread by stop()
            self._failure = exc


def _lower_priority() -> None:
    """This thread's CPU priority lowered (Linux schedules threads as processes, so ``setpriority`` on its id
    lowers it alone): beside processes searching blocks on every core, the pass takes only the time they leave.
    Elsewhere (or refused) it runs at the usual priority."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
    except (AttributeError, OSError):
        pass
