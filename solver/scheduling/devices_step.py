"""The devices step for one pod, per node class: DynamicResources' allocation, then the filters that read it.

The verdict (``dra_verdict``: the per-node allocator's answer) is the same for every node of a class
and every pod of one claim shape, so it is kept in ``cache`` under the claim shape and the node's
signature (its devices and devices in use); the filters after the devices (the registry's
``filter_devices``, in its order) then run for the node the pod is asked about.
"""

from __future__ import annotations

from typing import Any

from .cluster_state import ClusterState
from .cycle import Cycle
from .node_outcomes import Outcome
from .parallel import Executor
from .plugins import registry
from .plugins.dynamic_resources import (
    AllocateOptions,
    ClaimShape,
    NodeTask,
    answer_on_node,
    claim_shape,
    dra_verdict,
)
from .plugins.node_filters import REASON_DRA
from .pods import PodClaims


class Devices:
    """The devices step for one pod, per node class: the verdict (kept across nodes and pods of one claim
    shape in ``cache``), then the filters that read it."""

    def __init__(
        self, cycle: Cycle, options: AllocateOptions, cache: dict[tuple, Any], firsts: dict[tuple, str]
    ) -> None:
        self.cycle, self.options, self.cache, self.firsts = cycle, options, cache, firsts
        self.state, self.pc = cycle.state, cycle.pc
        self._shapes: dict[frozenset[str], ClaimShape] = {}
        self._done: dict[tuple, Outcome] = {}
        # Whole outcomes kept across pods of one spec: the scored outcome and the verdict are kept so already,
        # and the filters after the devices read only the pod's spec, the node's load and the verdict — unless
        # node-allocatable amounts or a NUMA layout make them read the pod's own claims.
        features = self.state.cluster.features
        self._reusable = bool(cycle.spec) and not self.state.numa and not features["DRANodeAllocatableResources"]

    def known(self, key: tuple, node: str) -> Outcome | None:
        """The class's complete outcome for a pod of this spec, when one was kept (None: work it out). A
        kept failure to find devices is noted for ``node`` too, as working it out would have."""
        if not self._reusable:
            return None
        found = self.cache.get(("complete", self.cycle.spec, key))
        if found is None:
            return None
        outcome, failed = found
        if failed is not None:
            self.state.dra_failures[(failed, node)] = REASON_DRA
        return outcome

    def keep(self, key: tuple, node: str, outcome: Outcome) -> None:
        """Keep the class's complete outcome on ``node`` for later pods of this spec (:meth:`known`)."""
        if self._reusable:
            failed = (
                verdict_key(self.state, self.pc, node, self._shapes)[1].key if outcome.reasons == [REASON_DRA] else None
            )
            self.cache[("complete", self.cycle.spec, key)] = (outcome, failed)

    def outcome(self, key: tuple, scored: Outcome, on: str | None = None) -> Outcome:
        """The class's complete outcome; a verdict still to compute is computed on node ``on`` (default: the
        class's first node), so that committing there needs no second allocation."""
        if key not in self._done:
            self._done[key] = self._complete(on or self.firsts[key], scored)
        return self._done[key]

    def failed_before(self, node: str) -> bool:
        """Whether the pod's claims found no devices on ``node`` before (in this state or an earlier one)."""
        _, shape = verdict_key(self.state, self.pc, node, self._shapes)
        return (shape.key, node) in self.state.dra_failures

    def _complete(self, node: str, scored: Outcome) -> Outcome:
        key, shape = verdict_key(self.state, self.pc, node, self._shapes)
        if key not in self.cache:
            self.cache[key] = dra_verdict(self.state, self.pc, node, self.options, shape)
        verdict = self.cache[key]
        if verdict.reasons == [REASON_DRA]:  # no devices (not a timeout or an error): none later either
            self.state.dra_failures[(shape.key, node)] = REASON_DRA
        if verdict.reasons:
            return Outcome(verdict.reasons)
        for plugin in registry.PROFILE.plugins:
            refused = plugin.filter_devices(self.cycle, node, verdict)
            if refused:
                return Outcome(refused)
        return scored.with_verdict(verdict)

    def prefetch(self, keys: list[tuple], executor: Executor) -> None:
        """The verdicts these classes still lack, their allocations run on the executor (each on the class's
        first node, as the serial loop would have run it)."""
        nodes = [self.firsts[k] for k in keys]
        prefetch(self.state, self.pc, nodes, self.options, self.cache, self._shapes, executor)


def verdict_key(
    state: ClusterState, pc: PodClaims, node: str, shapes: dict[frozenset[str], ClaimShape]
) -> tuple[tuple, ClaimShape]:
    """Devices verdicts are kept per claim shape and node class (across pods too): the key, and the shape."""
    allocatable = state.loads[node].allocatable
    on_dra = frozenset(name for name in pc.extended if not allocatable.get(name))
    if on_dra not in shapes:
        shapes[on_dra] = claim_shape(state, pc, node)
    shape = shapes[on_dra]
    return (shape.key, state.signature(node)), shape


def prefetch(
    state: ClusterState,
    pc: PodClaims,
    nodes: list[str],
    options: AllocateOptions,
    cache: dict[tuple, Any],
    shapes: dict[frozenset[str], ClaimShape],
    executor: Executor,
) -> None:
    """The verdicts these nodes still lack, their allocations run on the executor (each on the first node of
    its key, as the serial loop would have run it)."""
    todo: dict[tuple, tuple[str, ClaimShape]] = {}
    for node in nodes:
        key, shape = verdict_key(state, pc, node, shapes)
        if key not in cache and key not in todo and shape.claims:
            todo[key] = (node, shape)
    if len(todo) < 2:
        return
    tasks = [NodeTask(state.problem(node, shape.claims), options) for node, shape in todo.values()]
    answers = executor.map(answer_on_node, [task.shippable() for task in tasks])
    for (key, (node, shape)), task, answer in zip(todo.items(), tasks, answers):
        cache[key] = dra_verdict(state, pc, node, options, shape, (task.problem, answer))
