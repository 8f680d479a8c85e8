"""From counts to pods on nodes: which pods of each class go where, then each node's claims allocated and verified.

The counting model says how many pods of each class every node takes and which gangs are placed.
Pods of a class are interchangeable, so they are handed out in queue order (singles first, then the
chosen gangs' members) over the nodes in name order. Each node's pods then have their claims
allocated together by the per-node allocator (``nodes.NodeAllocator``: every DRA rule, the answer
checked by the verifier). Where the model counted exactly, that always succeeds; where a rule was
relaxed, a node may refuse its mix, and the caller adds that refusal to the model (:func:`cut`) and
searches again. A gang that loses a member on a refusing node is withdrawn everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from drasat.models.resource import AllocationResult, ResourceClaim
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.pods import PodClaims

from .counting import CountingModel
from .devices import Value, read_devices
from .nodes import Direct, NodeAllocator, NodeCheck
from .pod_classes import Gang, PodKey, Queue, pod_key
from .search import Counts


@dataclass
class Decoded:
    """The nodes whose pods allocated and verified, what each holds, and the nodes that refused their mix."""

    checks: dict[str, NodeCheck] = field(default_factory=dict)
    assignment: dict[str, list[PodClaims]] = field(default_factory=dict)
    refused: dict[str, dict[int, int]] = field(default_factory=dict)  # node -> the mix it could not hold
    withdrawn: list[str] = field(default_factory=list)  # gangs taken back because a member's node refused


def assign(queue: Queue, counts: Counts) -> dict[str, list[PodClaims]]:
    """Pods to nodes: per pod class, the chosen pods in queue order over the nodes in name order."""
    chosen = _chosen(queue, counts)
    out: dict[str, list[PodClaims]] = {}
    for node in sorted(counts.on_node):
        for p, count in sorted(counts.on_node[node].items()):
            out.setdefault(node, []).extend(chosen[p][:count])
            chosen[p] = chosen[p][count:]
    return {node: sorted(pods, key=lambda pc: queue.class_of[pod_key(pc.pod)]) for node, pods in out.items()}


def _chosen(queue: Queue, counts: Counts) -> dict[int, list[PodClaims]]:
    """Per pod class, the pods the counts place: its first singles in queue order, then its members of each
    placed gang (the gang's first ones, where minCount lets part of it run)."""
    in_gang = {pod_key(pc.pod) for g in queue.gangs for pc in g.members}
    chosen: dict[int, list[PodClaims]] = {}
    for cls in queue.classes:
        singles = [pc for pc in cls.members if pod_key(pc.pod) not in in_gang]
        chosen[cls.index] = singles[: counts.singles.get(cls.index, 0)]
    for g in queue.gangs:
        if not counts.gangs.get(g.index):
            continue
        for p in sorted(g.demand(queue.class_of)):
            mine = [pc for pc in g.members if queue.class_of[pod_key(pc.pod)] == p]
            chosen[p] += mine[: counts.members.get((g.index, p), 0)]
    return chosen


def allocate_nodes(
    state: ClusterState,
    queue: Queue,
    assignment: dict[str, list[PodClaims]],
    allocator: NodeAllocator,
    counting: CountingModel,
    value: Value,
) -> Decoded:
    """Each node's pods allocated together and verified — their devices read off the solution (``value``) where
    it can tell, else by the per-node allocator; a gang that loses a member anywhere is withdrawn everywhere
    (and the nodes it left are allocated again, with fewer pods)."""
    decoded = Decoded(assignment={node: list(pods) for node, pods in assignment.items()})
    gang_of = {pod_key(pc.pod): g for g in queue.gangs for pc in g.members}
    todo = sorted(decoded.assignment)
    while todo:
        node = todo.pop(0)
        pods = decoded.assignment[node]
        if not pods:
            continue
        mix = tuple(sorted(_mix(queue, pods).items()))
        direct = _reader(queue, counting, node, pods, value)
        check = allocator.check(node, (state.signature(node), state.loads[node].key, mix), pods, direct)
        if check is not None and not check.violations:
            decoded.checks[node] = check
            continue
        decoded.refused[node] = _mix(queue, pods)
        decoded.assignment[node] = []
        for gang in {gang_of[key].index: gang_of[key] for pc in pods if (key := pod_key(pc.pod)) in gang_of}.values():
            todo = sorted(set(todo) | _withdraw(decoded, gang))
    return decoded


def _reader(queue: Queue, counting: CountingModel, node: str, pods: list[PodClaims], value: Value) -> Direct | None:
    """Reads the node's devices off the solution, for the pods' claims (grouped by class, in queue order)."""
    counted = counting.nodes.get(node)
    if counted is None:
        return None
    classes = [queue.class_of[pod_key(pc.pod)] for pc in pods]

    def direct(per_pod: list[list[ResourceClaim]]) -> dict[str, AllocationResult] | None:
        by_class: dict[int, list[Sequence[ResourceClaim]]] = {}
        for p, claims in zip(classes, per_pod):
            by_class.setdefault(p, []).append(claims)
        return read_devices(counted, value, by_class)

    return direct


def _withdraw(decoded: Decoded, gang: Gang) -> set[str]:
    """Take the gang's members off every node; the nodes they left, to allocate again."""
    members: set[PodKey] = {pod_key(pc.pod) for pc in gang.members}
    decoded.withdrawn.append(gang.label)
    touched = set()
    for node, pods in decoded.assignment.items():
        if any(pod_key(pc.pod) in members for pc in pods):
            decoded.assignment[node] = [pc for pc in pods if pod_key(pc.pod) not in members]
            decoded.checks.pop(node, None)
            touched.add(node)
    return touched


def _mix(queue: Queue, pods: list[PodClaims]) -> dict[int, int]:
    mix: dict[int, int] = {}
    for pc in pods:
        p = queue.class_of[pod_key(pc.pod)]
        mix[p] = mix.get(p, 0) + 1
    return mix


def cut(counting: CountingModel, node: str, mix: dict[int, int]) -> None:
    """The node cannot hold ``mix``, nor any mix containing it (fitting is monotone): some class gets fewer."""
    pods = counting.nodes[node].pods
    fewer = []
    for p, count in mix.items():
        less = counting.model.new_bool_var(f"fewer[{node}/class{p}/{count}]")
        counting.model.add(pods[p] <= count - 1).only_enforce_if(less)
        fewer.append(less)
    counting.model.add_bool_or(fewer)


def hint(counting: CountingModel, counts: Counts, refused: dict[str, dict[int, int]]) -> None:
    """Start the next search from ``counts``, without the refused nodes' pods (CP-SAT repairs the rest)."""
    model: cp_model.CpModel = counting.model
    model.clear_hints()
    for node, counted in counting.nodes.items():
        here = {} if node in refused else counts.on_node.get(node, {})
        for p, var in counted.pods.items():
            model.add_hint(var, here.get(p, 0))
