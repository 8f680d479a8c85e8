"""``schedule(cluster)``: pods placed one at a time over every node, as kube-scheduler places them.

For each pending pod, in order: resolve its claims (``pods``), filter every node
(``node_filter``; then cpu, memory and pods; then devices with ``node_dra``),
score the nodes that pass (the default profile's weighted sum, ``node_scores``;
ties broken by node name), and commit
the best: its claims allocated and reserved, the pod bound, the node's load and
devices in use updated for the next pod. A pod no node can run gets the
scheduler's summary line instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from drasat.models.core import (
    Node,
    NodeAllocatableResourceClaimStatus,
    Pod,
    PodExtendedResourceClaimStatus,
    PodGroup,
    PodResourceClaimStatus,
    PodStatus,
)
from drasat.models.resource import AllocationResult, ResourceClaim, ResourceClaimStatus
from drasat.solver.allocation.options import CAPABILITIES
from drasat.solver.allocation.problem import Problem, claim_key
from drasat.solver.cel import SelectorEvaluator

from .cluster import Cluster, label_of
from .cluster_state import ClusterState, NodeLoad
from .group_placement import constrained_group, in_group, place_group
from .parallel import Executor
from .plugins.binding_conditions import BindingClock, BindingVerdict, Recovery, recover, stamped, waiting_in_prebind
from .plugins.dynamic_resources import (
    AllocateOptions,
    ClaimShape,
    DraVerdict,
    NodeTask,
    allocated_elsewhere,
    answer_on_node,
    claim_shape,
    dra_verdict,
)
from .plugins.node_filters import REASON_DRA, REASON_PIN_CONFLICT, REASON_PINNED, filter_reasons, pinned_nodes, summary
from .plugins.node_resources import Resources, insufficient, least_allocated, pod_requests
from .plugins.numa_admission import Admission
from .plugins.numa_filter import admitted_on, numa_refusal
from .plugins.scores import (
    WEIGHT_BALANCED_ALLOCATION,
    WEIGHT_DYNAMIC_RESOURCES,
    WEIGHT_NODE_AFFINITY,
    WEIGHT_NODE_RESOURCES_FIT,
    WEIGHT_TAINT_TOLERATION,
    balanced_allocation,
    intolerable_prefer_no_schedule,
    normalized,
    preferred_affinity,
)
from .pods import (
    PodClaims,
    is_extended_resource,
    not_schedulable_now,
    pending_pods,
    pod_consumer,
    resolve_pod_claims,
)
from .sampling import nodes_to_find


@dataclass
class Placement:
    """One pod's outcome: the node and the claims as the scheduler leaves them, or why it stays pending."""

    pod: Pod  # with spec.nodeName and the status fields the scheduler writes, when placed
    node: str | None = None
    claims: list[ResourceClaim] = field(default_factory=list)  # allocated and/or reserved for this pod
    reason: str = ""
    problem: Problem | None = None  # the per-node question the new allocations answer (for the verifier)
    allocations: dict[str, AllocationResult] = field(default_factory=dict)  # by claim_key, as allocate's results
    node_reasons: dict[str, list[str]] = field(default_factory=dict)
    exact: bool = True  # False: time ran out before the objective's answer on the node (the allocation is valid)
    # Binding conditions: claims PostFilter deallocated before this attempt, and those PreBind waits for (then
    # the pod is not bound yet: ``pod`` has no spec.nodeName, ``node`` is the node it waits on).
    deallocated: list[BindingVerdict] = field(default_factory=list)
    waiting: list[BindingVerdict] = field(default_factory=list)
    admission: Admission | None = None  # the kubelet's predicted admission (nodes with a NodeResourceTopology)

    @property
    def label(self) -> str:
        return label_of(self.pod)


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


def _stamped_claim(claim: ResourceClaim, placement: Placement, clock: BindingClock | None) -> ResourceClaim:
    """A claim newly allocated by this placement, its allocationTimestamp at the clock's moment (any path that
    made the allocation: one by one stamps it already, the joint model does not)."""
    status = claim.status
    if clock is None or status is None or status.allocation is None or claim_key(claim) not in placement.allocations:
        return claim
    return claim.model_copy(
        update={"status": status.model_copy(update={"allocation": stamped(status.allocation, clock)})}
    )


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


def with_binding_state(placement: Placement, recovery: Recovery, cluster: Cluster) -> Placement:
    """The placement with the claims deallocated for it and, when PreBind waits for binding conditions, the
    pod as it stands meanwhile: assumed on its node (its resources count there) but not bound."""
    placement.deallocated = recovery.deallocated.get(placement.label, [])
    if placement.node is None:
        return placement
    placement.claims = [_stamped_claim(c, placement, cluster.clock) for c in placement.claims]
    placement.waiting = waiting_in_prebind(placement.claims, cluster)
    if placement.waiting:
        pod = placement.pod.model_copy()
        pod.spec = pod.spec.model_copy()
        pod.spec.node_name = None
        pod.spec.model_fields_set.discard("node_name")  # unset, not null: the API prints no nodeName
        placement.pod = pod
    return placement


@dataclass
class _Outcome:
    """One node's answer for the pod: why not, or the devices verdict and the NodeResourcesFit score."""

    reasons: list[str]
    verdict: DraVerdict | None = None
    fit_score: int = 0
    balanced: int = 0
    taints: int = 0  # raw: PreferNoSchedule taints not tolerated (normalised over the nodes that passed)
    affinity: int = 0  # raw: weights of the preferred terms matched


def schedule_one(
    state: ClusterState, pod: Pod, options: AllocateOptions, cache: dict[tuple, Any], executor: Executor | None = None
) -> Placement:
    """Filter, score and commit one pod against the current state.

    Nodes alike in everything the filters read (labels and taints, load, devices and devices in use) get
    the same answer, so each such class of nodes is evaluated once for the pod, on its first node; what
    the filters and scores say of a class is kept for later pods of the same spec (``cache``)."""
    cluster = state.cluster
    pc, pinned, refused = _queued(state, pod)
    if pc is None or refused:  # no claims: a gate or another scheduler, said as it is; else as the summary
        return Placement(pod, reason=refused if pc is None else summary(len(cluster.nodes), [], refused))
    want = nodes_to_find(options.percentage_of_nodes_to_score, len(cluster.nodes))
    if want < len(cluster.nodes):
        return _pending_or_placed(_sampled(state, pc, pinned, options, cache, want), cluster.nodes)
    keys = _class_keys(state, pc, pinned)
    firsts: dict[tuple, Node] = {}
    for node in cluster.nodes:
        key = keys[node.name]
        if key is not None and key not in firsts:
            firsts[key] = node
    reasons, passed = _filtered(cluster.nodes, keys, _prepared(state, pc, firsts, cache))
    devices = _Devices(state, pc, options, cache, {key: node.name for key, node in firsts.items()})
    if executor is not None and executor.workers > 1:
        classes = {key: None for name, _ in passed if (key := keys[name]) is not None}
        devices.prefetch(list(classes), executor)
    placement = _everywhere(devices, keys, passed, reasons, _scores_fixed(pc, passed, options))
    assert placement is not None  # without skipping, a placement or why not
    return _pending_or_placed((placement, reasons), cluster.nodes)


def _pending_or_placed(found: tuple[Placement, dict[str, list[str]]], nodes: Sequence[Node]) -> Placement:
    """The placement, or the pending pod with the scheduler's summary: reasons in node order, whichever order
    the nodes were looked at in."""
    placement, reasons = found
    if placement.node is not None:
        return placement
    node_reasons = {n.name: reasons[n.name] for n in nodes if n.name in reasons}
    return Placement(placement.pod, reason=summary(len(nodes), node_reasons.values()), node_reasons=node_reasons)


def _queued(state: ClusterState, pod: Pod) -> tuple[PodClaims | None, set[str] | None, str]:
    """What is decided before any node is looked at: the pod's claims and pinned nodes, or why it cannot be
    scheduled at all (a gate or another scheduler; its claims cannot be resolved; pins that exclude every
    node). Claims are None only when the pod waits."""
    waiting = not_schedulable_now(pod)
    if waiting:
        return None, None, waiting
    pc = resolve_pod_claims(pod, state.cluster, state.book)
    if pc.unresolvable:
        return pc, None, pc.unresolvable
    pinned = pinned_nodes(pod)
    if pinned is not None and not pinned:
        return pc, pinned, REASON_PIN_CONFLICT
    return pc, pinned, ""


def _filtered(
    nodes: Sequence[Node], keys: dict[str, tuple | None], outcomes: dict[tuple, _Outcome]
) -> tuple[dict[str, list[str]], list[tuple[str, _Outcome]]]:
    """The filters' verdict per node, from its class's outcome: why each refused node fails, and the nodes
    that pass (in node order) with their outcome."""
    reasons: dict[str, list[str]] = {}
    passed: list[tuple[str, _Outcome]] = []
    for node in nodes:
        key = keys[node.name]
        outcome = _Outcome([REASON_PINNED]) if key is None else outcomes[key]
        if outcome.reasons:
            reasons[node.name] = outcome.reasons
        else:
            passed.append((node.name, outcome))
    return reasons, passed


def _everywhere(
    devices: _Devices,
    keys: dict[str, tuple | None],
    passed: list[tuple[str, _Outcome]],
    reasons: dict[str, list[str]],
    fixed: bool,
) -> Placement | None:
    """Every feasible node scored (fewer than 100 nodes, or a percentage that covers them all): lazily where
    the devices cannot change the ranking, else exhaustively, then once more without skipping failed nodes
    when no node took the pod (so that the reasons are today's)."""
    placement = _lazily(devices, keys, passed, reasons) if fixed else None
    if placement is None:
        placement = _exhaustively(devices, keys, passed, reasons, skip_failed=True)
    if placement is None:
        placement = _exhaustively(devices, keys, passed, reasons, skip_failed=False)
    return placement


def _sampled(
    state: ClusterState,
    pc: PodClaims,
    pinned: set[str] | None,
    options: AllocateOptions,
    cache: dict[tuple, Any],
    want: int,
) -> tuple[Placement, dict[str, list[str]]]:
    """kube-scheduler's search on a big cluster (:mod:`.sampling`): nodes in its order from where the last
    pod's search stopped, each filtered (its class's outcome, worked out when first met) and its devices
    asked until ``want`` pass; only those are scored. The placement, and why each node looked at refused."""
    keys, spec = _ClassKeys(state, pc, pinned), spec_memo(pc)
    outcomes: dict[tuple, _Outcome] = {}
    firsts: dict[tuple, str] = {}
    devices = _Devices(state, pc, options, cache, firsts)
    reasons: dict[str, list[str]] = {}
    complete: dict[str, _Outcome] = {}

    def feasible(name: str) -> bool:
        key = keys.of(name)
        if key is None:
            reasons[name] = [REASON_PINNED]
            return False
        if key not in outcomes:
            firsts[key] = name
            outcomes[key] = _prepared_one(state, pc, spec, key, state.loads[name].node, cache)
        done = outcomes[key] if outcomes[key].reasons else devices.outcome(key, outcomes[key], on=name)
        if done.reasons:
            reasons[name] = done.reasons
            return False
        complete[name] = done
        return True

    for name, verdict in _ranked([(name, complete[name]) for name in state.rotation.scan(want, feasible)]):
        placement = _committed(devices, name, verdict, reasons)
        if placement is not None:
            return placement, reasons
    return Placement(pc.pod), reasons


def _exhaustively(
    devices: _Devices,
    keys: dict[str, tuple | None],
    passed: list[tuple[str, _Outcome]],
    reasons: dict[str, list[str]],
    skip_failed: bool,
) -> Placement | None:
    """Every node that passed the filters asked about its devices, then ranked by the full score. With
    ``skip_failed``, nodes where the pod's claims found no devices before are passed over (they would fail
    again, and fail nodes count for nothing in the scores); None if then no node takes the pod."""
    complete = []
    passed_over = False
    for name, outcome in passed:
        key = keys[name]
        assert key is not None  # pinned-away nodes never pass
        if skip_failed and devices.failed_before(name):
            passed_over = True
            continue
        done = devices.outcome(key, outcome)
        if done.reasons:
            reasons[name] = done.reasons
        else:
            complete.append((name, done))
    for name, verdict in _ranked(complete):
        placement = _committed(devices, name, verdict, reasons)
        if placement is not None:
            return placement
    return None if passed_over else Placement(devices.pc.pod)


def _lazily(
    devices: _Devices, keys: dict[str, tuple | None], passed: list[tuple[str, _Outcome]], reasons: dict[str, list[str]]
) -> Placement | None:
    """When the devices cannot change the ranking (no DRA score, no per-node preference to normalise, no
    pack tie-break), nodes are asked about their devices best score first and the first that passes
    wins: the same node the exhaustive ranking picks, with a devices step for few nodes instead of all.
    A node where the pod's claims already found no devices is passed over without asking again (placements
    only fill nodes). None when a devices answer carries a DRA score after all, or when no node takes the
    pod and some were passed over (then every node is asked: the reasons are today's)."""
    order = sorted(
        passed,
        key=lambda item: (
            -(WEIGHT_NODE_RESOURCES_FIT * item[1].fit_score + WEIGHT_BALANCED_ALLOCATION * item[1].balanced),
            item[0],
        ),
    )
    passed_over = False
    for name, outcome in order:
        key = keys[name]
        assert key is not None  # pinned-away nodes never pass
        if devices.failed_before(name):
            passed_over = True
            continue
        done = devices.outcome(key, outcome, on=name)
        if done.reasons:
            reasons[name] = done.reasons
            continue
        assert done.verdict is not None  # nodes pass with a verdict
        if done.verdict.score:
            return None
        placement = _committed(devices, name, done.verdict, reasons)
        if placement is not None:
            return placement
    return None if passed_over else Placement(devices.pc.pod)


def _committed(devices: _Devices, name: str, verdict: DraVerdict, reasons: dict[str, list[str]]) -> Placement | None:
    """The pod bound to ``name``; or None, with the node's reason noted, when its devices fail for this pod
    (a verdict kept from another node or pod of its class does not hold here)."""
    placement = _commit(devices.state, devices.pc, name, verdict, devices.options)
    if placement is None:
        reasons[name] = [REASON_DRA]
    return placement


def _scores_fixed(pc: PodClaims, passed: list[tuple[str, _Outcome]], options: AllocateOptions) -> bool:
    """Whether the scores the devices step could change are the same on every node that passes it: the
    DRA score is 0 without firstAvailable requests; normalised taint and affinity scores are equal when
    the raw ones are equal on all nodes that passed the filters; the pack tie-break never is."""
    first_available = any(r.first_available for u in pc.uses if not u.allocated for r in u.claim.spec.devices.requests)
    return (
        not CAPABILITIES[options.objective].packs
        and not first_available
        and len({o.taints for _, o in passed}) <= 1
        and len({o.affinity for _, o in passed}) <= 1
    )


def _class_keys(state: ClusterState, pc: PodClaims, pinned: set[str] | None) -> dict[str, tuple | None]:
    """Each node's class for this pod: what the filters and the devices step read of it (None: pinned away)."""
    keys = _ClassKeys(state, pc, pinned)
    return {node.name: keys.of(node.name) for node in state.cluster.nodes}


class _ClassKeys:
    """A node's class for one pod, asked node by node (a big cluster's search looks at only part of it)."""

    def __init__(self, state: ClusterState, pc: PodClaims, pinned: set[str] | None) -> None:
        pod = pc.pod
        self.state, self.pc, self.pinned = state, pc, pinned
        self.name_matters = (
            bool(pod.spec.node_name)
            or any(t.match_fields for t in pod.required_node_terms())
            or any(t.preference.match_fields for t in pod.preferred_node_terms())
        )
        self.shares_claims = any(u.allocated for u in pc.uses)  # where they are allocated decides: checked per node

    def of(self, name: str) -> tuple | None:
        if self.pinned is not None and name not in self.pinned:
            return None
        state = self.state
        elsewhere = tuple(allocated_elsewhere(state, self.pc, name)) if self.shares_claims else ()
        return (
            name if self.name_matters else "",
            elsewhere,
            state.filter_key(name),
            state.loads[name].key,
            state.signature(name),
            state.numa_key(name),
        )


def _prepared(
    state: ClusterState, pc: PodClaims, firsts: dict[tuple, Node], cache: dict[tuple, Any]
) -> dict[tuple, _Outcome]:
    """Each class's filters and scores (the devices step aside), evaluated on its first node. They read the
    pod's spec and the node's labels, taints and load only, so for a pod without allocated claims they are
    kept (in ``cache``) for every later pod of the same spec."""
    spec = spec_memo(pc)
    return {key: _prepared_one(state, pc, spec, key, node, cache) for key, node in firsts.items()}


def spec_memo(pc: PodClaims) -> str:
    """What the filters' memo keys a pod by: its spec ("" for a pod sharing allocated claims: never kept)."""
    return "" if any(u.allocated for u in pc.uses) else json.dumps(pc.pod.spec.to_api(), sort_keys=True)


def _prepared_one(
    state: ClusterState, pc: PodClaims, spec: str, key: tuple, node: Node, cache: dict[tuple, Any]
) -> _Outcome:
    if not spec:
        return _scored(state, pc, node)
    memo = ("outcome", spec, key[:4])  # the class key without the devices' signature
    found = cache.get(memo)
    if found is None:
        found = cache[memo] = _scored(state, pc, node)
    return found


def _scored(state: ClusterState, pc: PodClaims, node: Node) -> _Outcome:
    """The filters before the devices, in the scheduler's order, then (when they pass) the scores that do
    not depend on the devices."""
    pod, load = pc.pod, state.loads[node.name]
    level = state.cluster.features["PodLevelResources"]
    reasons = (
        filter_reasons(pod, node)
        or _fit(load, pc, pod_requests(pod, pod_level=level))
        or allocated_elsewhere(state, pc, node.name)
    )
    if reasons:
        return _Outcome(reasons)
    for_score = pod_requests(pod, pod_level=level, defaults=True)
    return _Outcome(
        [],
        None,
        least_allocated(load.allocatable, load.used_for_score, for_score),
        balanced_allocation(load.allocatable, load.used, pod_requests(pod, pod_level=level)),
        intolerable_prefer_no_schedule(pod, node),
        preferred_affinity(pod, node),
    )


class _Devices:
    """The devices step for one pod, per node class: the verdict (kept across nodes and pods of one claim
    shape in ``cache``), then the DRA amounts on top of the node's load."""

    def __init__(
        self,
        state: ClusterState,
        pc: PodClaims,
        options: AllocateOptions,
        cache: dict[tuple, Any],
        firsts: dict[tuple, str],
    ) -> None:
        self.state, self.pc, self.options, self.cache, self.firsts = state, pc, options, cache, firsts
        self._shapes: dict[frozenset[str], ClaimShape] = {}
        self._done: dict[tuple, _Outcome] = {}

    def outcome(self, key: tuple, scored: _Outcome, on: str | None = None) -> _Outcome:
        """The class's complete outcome; a verdict still to compute is computed on node ``on`` (default: the
        class's first node), so that committing there needs no second allocation."""
        if key not in self._done:
            self._done[key] = self._complete(on or self.firsts[key], scored)
        return self._done[key]

    def failed_before(self, node: str) -> bool:
        """Whether the pod's claims found no devices on ``node`` before (in this state or an earlier one)."""
        _, shape = _verdict_key(self.state, self.pc, node, self._shapes)
        return (shape.key, node) in self.state.dra_failures

    def _complete(self, node: str, scored: _Outcome) -> _Outcome:
        pc, load = self.pc, self.state.loads[node]
        key, shape = _verdict_key(self.state, pc, node, self._shapes)
        if key not in self.cache:
            self.cache[key] = dra_verdict(self.state, pc, node, self.options, shape)
        verdict = self.cache[key]
        if verdict.reasons == [REASON_DRA]:  # no devices (not a timeout or an error): none later either
            self.state.dra_failures[(shape.key, node)] = REASON_DRA
        if verdict.reasons:
            return _Outcome(verdict.reasons)
        if verdict.statuses:
            level = self.state.cluster.features["PodLevelResources"]
            why = _fit(load, pc, pod_requests(pc.pod, verdict.statuses, pod_level=level))
            if why:
                return _Outcome(why)
        refused = numa_refusal(self.state, pc, node, verdict.allocations) if self.state.numa else []
        if refused:
            return _Outcome(refused)
        return replace(scored, verdict=verdict)

    def prefetch(self, keys: list[tuple], executor: Executor) -> None:
        """The verdicts these classes still lack, their allocations run on the executor (each on the class's
        first node, as the serial loop would have run it)."""
        _prefetch(self.state, self.pc, [self.firsts[k] for k in keys], self.options, self.cache, self._shapes, executor)


def _verdict_key(
    state: ClusterState, pc: PodClaims, node: str, shapes: dict[frozenset[str], ClaimShape]
) -> tuple[tuple, ClaimShape]:
    """Devices verdicts are kept per claim shape and node class (across pods too): the key, and the shape."""
    allocatable = state.loads[node].allocatable
    on_dra = frozenset(name for name in pc.extended if not allocatable.get(name))
    if on_dra not in shapes:
        shapes[on_dra] = claim_shape(state, pc, node)
    shape = shapes[on_dra]
    return (shape.key, state.signature(node)), shape


def _prefetch(
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
        key, shape = _verdict_key(state, pc, node, shapes)
        if key not in cache and key not in todo and shape.claims:
            todo[key] = (node, shape)
    if len(todo) < 2:
        return
    tasks = [NodeTask(state.problem(node, shape.claims), options) for node, shape in todo.values()]
    answers = executor.map(answer_on_node, [task.shippable() for task in tasks])
    for (key, (node, shape)), task, answer in zip(todo.items(), tasks, answers):
        cache[key] = dra_verdict(state, pc, node, options, shape, (task.problem, answer))


def _fit(load: NodeLoad, pc: PodClaims, request: Resources) -> list[str]:
    """NodeResourcesFit; extended resources a DeviceClass backs are the devices step's business on
    nodes that do not offer them through a device plugin."""
    wanted = {
        name: amount for name, amount in request.items() if not (name in pc.extended and not load.allocatable.get(name))
    }
    relevant = {
        name: amount
        for name, amount in wanted.items()
        if name in ("cpu", "memory", "ephemeral-storage") or name.startswith("hugepages-") or is_extended_resource(name)
    }
    return insufficient(load.allocatable, load.used, relevant, load.pods)


def _ranked(passed: list[tuple[str, _Outcome]]) -> list[tuple[str, DraVerdict]]:
    """Nodes that passed, best first by the default profile's weighted sum — TaintToleration, NodeAffinity,
    NodeResourcesFit (least allocated), NodeResourcesBalancedAllocation and DynamicResources, each
    normalised as upstream — then by name. With the pack objective, nodes of equal score are ordered by
    the footprint of their allocation first (fewest devices and GPUs newly touched: whole ones stay free);
    the scheduler's score itself is never overridden."""
    outcomes = [o for _, o in passed]
    taints = normalized([o.taints for o in outcomes], reverse=True)
    affinity = normalized([o.affinity for o in outcomes])
    dra = normalized([o.verdict.score if o.verdict else 0 for o in outcomes])
    scored = []
    for i, (name, outcome) in enumerate(passed):
        assert outcome.verdict is not None  # nodes pass with a verdict
        total = (
            WEIGHT_TAINT_TOLERATION * taints[i]
            + WEIGHT_NODE_AFFINITY * affinity[i]
            + WEIGHT_NODE_RESOURCES_FIT * outcome.fit_score
            + WEIGHT_BALANCED_ALLOCATION * outcome.balanced
            + WEIGHT_DYNAMIC_RESOURCES * dra[i]
        )
        scored.append((-total, name, outcome.verdict))
    scored.sort(key=lambda item: (item[0], item[2].footprint, item[1]))  # footprint: () unless packing
    return [(name, verdict) for _, name, verdict in scored]


def _commit(
    state: ClusterState, pc: PodClaims, node: str, verdict: DraVerdict, options: AllocateOptions
) -> Placement | None:
    """Bind the pod to ``node``: allocations for this very pod and node (a cached verdict may come from
    another node of its class or another pod of its shape), claims reserved, pod status written, state
    updated. None if the devices fail."""
    if (verdict.node, verdict.pod) != (node, pc.label):
        verdict = _for_this_pod(state, pc, node, verdict) or dra_verdict(state, pc, node, options)
        if verdict.reasons:
            return None
    claims = updated_claims(pc, verdict, state.cluster.clock)
    pod = bound_pod(pc, node, verdict, claims)
    admission = admitted_on(state, pc, node, verdict.allocations) if state.numa else None
    state.record(claims)
    state.bind(pod, node)
    placement = Placement(pod, node, claims, problem=verdict.problem, allocations=verdict.allocations)
    placement.exact, placement.admission = verdict.exact, admission
    return placement


def _for_this_pod(state: ClusterState, pc: PodClaims, node: str, verdict: DraVerdict) -> DraVerdict | None:
    """Another pod's verdict on this very node (and state of it: the cache's key) for claims of the same shape:
    the same devices serve this pod's claims, taken over by position — unless the answer names its claims
    (share IDs) or depends on the pod (node-allocatable amounts). None: allocate again."""
    if verdict.node != node or verdict.statuses or not verdict.claims:
        return None
    if any(r.share_id for a in verdict.allocations.values() for r in a.devices.results):
        return None
    claims = claim_shape(state, pc, node).claims
    if len(claims) != len(verdict.claims):
        return None
    allocations = {claim_key(new): verdict.allocations[claim_key(old)] for new, old in zip(claims, verdict.claims)}
    return replace(verdict, pod=pc.label, claims=claims, allocations=allocations, problem=state.problem(node, claims))


def updated_claims(pc: PodClaims, verdict: DraVerdict, clock: BindingClock | None = None) -> list[ResourceClaim]:
    """Every claim of the pod with its allocation (stamped at ``clock``'s moment, when the scheduler stamps
    allocations) and the pod (or its group) in ``reservedFor``."""
    out = []
    consumers = [(u.claim, u.consumer) for u in pc.uses]
    own = {claim_key(u.claim) for u in pc.uses}
    consumers += [(c, pod_consumer(pc.pod)) for c in verdict.claims if claim_key(c) not in own]
    for claim, consumer in consumers:
        # Shallow copies: the spec is shared as it is, and the status gets new values, never changed ones.
        updated = claim.model_copy()
        status = updated.status.model_copy() if updated.status else ResourceClaimStatus()
        allocation = verdict.allocations.get(claim_key(claim))
        if allocation is not None:
            status.allocation = stamped(allocation, clock)
        if not any(r.uid == consumer.uid for r in status.reserved_for):
            status.reserved_for = [*status.reserved_for, consumer.reference()]
        updated.status = status
        out.append(updated)
    return out


def bound_pod(pc: PodClaims, node: str, verdict: DraVerdict, claims: list[ResourceClaim]) -> Pod:
    """The pod as the API server would store it once bound to ``node``, with its generated claims named."""
    pod = pc.pod.model_copy()  # shallow, as the claims: only new values are set on the copies
    pod.spec = pod.spec.model_copy()
    pod.spec.node_name = node
    status = pod.status.model_copy() if pod.status else PodStatus()
    templated = {e.name for e in pod.spec.resource_claims if e.resource_claim_template_name}
    known = {s.name for s in status.resource_claim_statuses}
    generated = [
        PodResourceClaimStatus(name=u.pod_claim, resource_claim_name=u.claim.name)
        for u in pc.uses
        if u.pod_claim in templated and u.pod_claim not in known
    ]
    if generated:
        status.resource_claim_statuses = [*status.resource_claim_statuses, *generated]
    if verdict.mappings:
        own = {claim_key(u.claim) for u in pc.uses}
        extended = next(c for c in claims if claim_key(c) not in own)
        status.extended_resource_claim_status = PodExtendedResourceClaimStatus(
            request_mappings=verdict.mappings, resource_claim_name=extended.name
        )
    if verdict.statuses:
        status.node_allocatable_resource_claim_statuses = [
            NodeAllocatableResourceClaimStatus.model_validate(s.to_api()) for s in verdict.statuses
        ]
    pod.status = status
    return pod
