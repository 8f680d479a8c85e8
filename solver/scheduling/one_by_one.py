"""``schedule(cluster)``: pods placed one at a time over every node, as kube-scheduler places them.

For each pending pod, in order: PreEnqueue (gates, another scheduler), its claims resolved and the
registry's PreFilter (:mod:`.cycle`, :mod:`.plugins.registry`); then the nodes, as kube-scheduler's
search looks at them (:mod:`.node_search`): each filtered by the registry's plugins per class of
alike nodes (:mod:`.node_outcomes`), its devices asked (:mod:`.devices_step`), the nodes that pass
scored (:mod:`.ranking`), and the best committed (:mod:`.binding`): its claims allocated and
reserved, the pod bound, the node's load and devices in use updated for the next pod. A pod no node
can run gets the scheduler's summary line instead (:mod:`.placement`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from drasat.models.core import Node, Pod, PodGroup
from drasat.solver.cel import SelectorEvaluator

from .binding import bound_pod, updated_claims
from .cluster import Cluster
from .cluster_state import ClusterState
from .cycle import Cycle
from .devices_step import Devices
from .group_placement import constrained_group, in_group, place_group
from .node_outcomes import Outcome, class_keys, prepared
from .node_search import everywhere, filtered, sampled
from .parallel import Executor
from .placement import Placement, pending_or_placed, with_binding_state
from .plugins import registry
from .plugins.binding_conditions import recover
from .plugins.dynamic_resources import AllocateOptions
from .plugins.node_filters import summary
from .pods import not_schedulable_now, pending_pods, resolve_pod_claims
from .ranking import scores_fixed as _scores_fixed  # by this name: a seam the shortcut tests replace
from .sampling import nodes_to_find

__all__ = ["Placement", "bound_pod", "group_placements", "schedule", "schedule_one", "updated_claims"]
"""``Placement`` and the binding helpers are named here too: the batch layer and the reports take them
from the one-by-one scheduler, whose answers they are."""


def schedule(
    cluster: Cluster,
    pods: Sequence[Pod] | None = None,
    *,
    options: AllocateOptions | None = None,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Placement]:
    """Place ``pods`` (default: every pending pod) one at a time; each placement shapes the next.

    With an ``executor`` of several workers (:mod:`parallel`), the allocations a pod's node classes still
    need are computed on its processes; the placements are the same as without. ``progress(done, total)``
    is called after each pod (the command line's progress bar)."""
    queue = pending_pods(cluster) if pods is None else list(pods)
    recovery = recover(cluster, queue)
    state = ClusterState(recovery.cluster)
    options = options or AllocateOptions()
    if options.evaluator is None:  # one CEL engine for the whole run: compiled selectors are kept
        options = replace(options, evaluator=SelectorEvaluator())
    cache: dict[tuple, Any] = {}  # devices verdicts and per-class outcomes, kept across pods
    placements: list[Placement] = []
    done: set[int] = set()
    for pod in queue:
        if id(pod) in done:
            continue
        group = constrained_group(cluster, pod)
        found = [schedule_one(state, pod, options, cache, executor)] if group is None else []
        if group is not None:
            members = [p for p in queue if id(p) not in done and in_group(p, group)]
            done.update(id(p) for p in members)
            found = group_placements(state, group, members, options, cache, executor)
        placements += [with_binding_state(p, recovery, state.cluster) for p in found]
        if progress is not None:
            progress(len(placements), len(queue))
    return placements


def group_placements(
    state: ClusterState,
    group: PodGroup,
    members: list[Pod],
    options: AllocateOptions,
    cache: dict[tuple, Any],
    executor: Executor | None,
) -> list[Placement]:
    """A topology-constrained PodGroup's pods, placed together in the best domain (:mod:`.group_placement`)."""
    found, _, why = place_group(state, group, members, options, cache, executor, schedule_one)
    if why:
        return [Placement(pod, reason=summary(len(state.cluster.nodes), [], why)) for pod in members]
    return found


def schedule_one(
    state: ClusterState, pod: Pod, options: AllocateOptions, cache: dict[tuple, Any], executor: Executor | None = None
) -> Placement:
    """Filter, score and commit one pod against the current state: the registry's PreFilter, then
    kube-scheduler's sampled search on a big cluster, else every node, class by class
    (:mod:`.node_outcomes`; what the filters and scores say of a class is kept in ``cache`` for later
    pods of the same spec)."""
    cluster = state.cluster
    cycle, refused = _queued(state, pod)
    if cycle is None or refused:  # no claims: a gate or another scheduler, said as it is; else as the summary
        return Placement(pod, reason=refused if cycle is None else summary(len(cluster.nodes), [], refused))
    want = nodes_to_find(options.percentage_of_nodes_to_score, len(cluster.nodes))
    if want < len(cluster.nodes):
        return pending_or_placed(sampled(cycle, options, cache, want), cluster.nodes)
    keys = class_keys(cycle)
    firsts: dict[tuple, Node] = {}
    for node in cluster.nodes:
        key = keys[node.name]
        if key is not None and key not in firsts:
            firsts[key] = node
    reasons, passed = filtered([n.name for n in cluster.nodes], keys, _prepared(cycle, firsts, cache))
    devices = Devices(cycle, options, cache, {key: node.name for key, node in firsts.items()})
    if executor is not None and executor.workers > 1:
        classes = {key: None for name, _ in passed if (key := keys[name]) is not None}
        devices.prefetch(list(classes), executor)
    placement = everywhere(devices, keys, passed, reasons, _scores_fixed(cycle, passed, options))
    return pending_or_placed((placement, reasons), cluster.nodes)


def _prepared(cycle: Cycle, firsts: dict[tuple, Node], cache: dict[tuple, Any]) -> dict[tuple, Outcome]:
    """Each class's outcome before the devices (:func:`.node_outcomes.prepared`; a seam the tests replace)."""
    return prepared(cycle, firsts, cache)


def _queued(state: ClusterState, pod: Pod) -> tuple[Cycle | None, str]:
    """What is decided before any node is looked at: the pod's cycle (its claims, and the nodes PreFilter
    pins it to), or why it cannot be scheduled at all — PreEnqueue (a gate, another scheduler: no cycle),
    claims that cannot be resolved, or a PreFilter plugin's refusal."""
    waiting = not_schedulable_now(pod)
    if waiting:
        return None, waiting
    pc = resolve_pod_claims(pod, state.cluster, state.book)
    cycle = Cycle(state, pc)
    if pc.unresolvable:
        return cycle, pc.unresolvable
    for plugin in registry.PROFILE.plugins:
        refused = plugin.pre_filter(cycle)
        if refused:
            return cycle, refused
    return cycle, ""
