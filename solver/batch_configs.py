"""Per node class, the configurations the joint model chooses from: multisets of pod classes that fit one node.

Nodes alike in labels, taints, load, devices and devices in use (the scheduling loop's own
equivalence, ``node_classes``) accept the same multisets of pods, so the question "does
this mix of pods fit one node?" is asked once per node class, of the per-node allocator
itself (every DRA rule, all the mix's claims allocated together, so earlier pods' devices may
move to make room — which one-by-one placement never does), plus cpu, memory and pods.

Fitting is monotone (a sub-multiset of a mix that fits also fits), so the model only needs
maximal mixes; they are grown greedily from several orders of the pod classes (each class
first, then the others largest first) with every answer cached and both directions of
monotonicity used to skip allocator calls. The master problem may use any sub-multiset of a
configuration, so a node is never asked to hold more than one of them proves it can.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.errors import AllocationError, EvaluationError, SolveTimeout, Unschedulable
from drasat.models.resource import ResourceClaim

from .api import allocate
from .node_dra import AllocateOptions, claim_shape
from .node_filter import filter_reasons
from .node_resources import Resources, insufficient, pod_requests
from .pod_classes import PodClass
from .pods import is_extended_resource
from .problem import FIRST_FIT
from .schedule_state import ClusterState

Mix = tuple[int, ...]  # pods per pod class (indexed like the queue's classes)


@dataclass
class NodeClass:
    """Nodes that accept the same mixes; ``configurations`` are the maximal mixes found for them."""

    index: int
    nodes: list[str]
    configurations: list[Mix] = field(default_factory=list)
    eligible: list[int] = field(default_factory=list)  # pod classes that fit alone
    calls: int = 0  # allocator calls spent on this class

    @property
    def representative(self) -> str:
        return self.nodes[0]


def node_classes(state: ClusterState, nodes: list[str]) -> list[NodeClass]:
    """``nodes`` grouped by everything the filters, the resources and the devices read."""
    groups: dict[tuple, list[str]] = {}
    for name in sorted(nodes):
        key = (state.filter_key(name), state.loads[name].key, state.signature(name))
        groups.setdefault(key, []).append(name)
    return [NodeClass(i, names) for i, names in enumerate(groups.values())]


class MixFitter:
    """Answers "does this mix fit one node of the class?" with the per-node allocator, cached."""

    def __init__(self, state: ClusterState, node: str, classes: list[PodClass], options: AllocateOptions) -> None:
        self.state, self.node, self.classes, self.options = state, node, classes, options
        self._claims = {c.index: claim_shape(state, c.representative, node).claims for c in classes}
        level = state.cluster.features["PodLevelResources"]
        self._requests = {c.index: _relevant(pod_requests(c.representative.pod, pod_level=level),
                                             set(c.representative.extended), state.loads[node].allocatable)
                          for c in classes}
        self._copies: dict[tuple[int, int], list[ResourceClaim]] = {}
        self._fits: list[Mix] = []
        self._fails: list[Mix] = []
        self.calls = 0

    def passes_filters(self, cls: PodClass) -> bool:
        return not filter_reasons(cls.representative.pod, self.state.loads[self.node].node)

    def fits(self, mix: Mix) -> bool:
        if any(all(a <= b for a, b in zip(mix, known)) for known in self._fits):
            return True
        if any(all(a >= b for a, b in zip(mix, known)) for known in self._fails):
            return False
        ok = self._resources_fit(mix) and self._devices_fit(mix)
        (self._fits if ok else self._fails).append(mix)
        return ok

    def _resources_fit(self, mix: Mix) -> bool:
        load = self.state.loads[self.node]
        total: Resources = {}
        for index, count in enumerate(mix):
            for name, amount in self._requests.get(index, {}).items():
                total[name] = total.get(name, Fraction(0)) + amount * count
        return not insufficient(load.allocatable, load.used, total, load.pods + sum(mix) - 1)

    def _devices_fit(self, mix: Mix) -> bool:
        claims = [c for index, count in enumerate(mix) for j in range(count) for c in self._copy(index, j)]
        if not claims:
            return True
        self.calls += 1
        try:
            allocate(self.state.problem(self.node, claims), solver=self.options.solver, objective=FIRST_FIT,
                     time_limit=self.options.time_limit, workers=self.options.workers,
                     evaluator=self.options.evaluator)
        except (Unschedulable, SolveTimeout, AllocationError, EvaluationError):
            return False
        return True

    def _copy(self, index: int, j: int) -> list[ResourceClaim]:
        """The class's claims for its ``j``-th pod on the node, under names of their own."""
        if (index, j) not in self._copies:
            copies = []
            for claim in self._claims[index]:
                copy = claim.model_copy(deep=True)
                copy.metadata.name = f"{claim.name}-c{index}-{j}"
                copies.append(copy)
            self._copies[(index, j)] = copies
        return self._copies[(index, j)]


def _relevant(request: Resources, on_dra: set[str], allocatable: Resources) -> Resources:
    """What NodeResourcesFit checks (extended resources a DeviceClass backs are the devices' business)."""
    return {name: amount for name, amount in request.items()
            if not (name in on_dra and not allocatable.get(name)) and (
                name in ("cpu", "memory", "ephemeral-storage") or name.startswith("hugepages-")
                or is_extended_resource(name))}


def configurations(fitter: MixFitter, demand: list[int], eligible: list[int]) -> list[Mix]:
    """Maximal mixes grown greedily from several orders of the eligible classes, never beyond demand."""
    alone = {i: _most_alone(fitter, i, demand) for i in eligible}
    largest_first = sorted(eligible, key=lambda i: (alone[i], i))
    orders = [[lead] + [i for i in largest_first if i != lead] for lead in largest_first]
    orders.append(sorted(eligible, key=lambda i: (-alone[i], i)))
    found: list[Mix] = []
    for order in orders:
        mix = _grow(fitter, order, demand)
        if mix not in found and not any(all(a <= b for a, b in zip(mix, other)) for other in found):
            found = [m for m in found if not all(a <= b for a, b in zip(m, mix))] + [mix]
    return found


def _most_alone(fitter: MixFitter, index: int, demand: list[int]) -> int:
    """How many pods of one class fit on an empty node of the class (capped by the demand)."""
    mix = [0] * len(demand)
    while mix[index] < demand[index]:
        mix[index] += 1
        if not fitter.fits(tuple(mix)):
            return mix[index] - 1
    return mix[index]


def _grow(fitter: MixFitter, order: list[int], demand: list[int]) -> Mix:
    mix = [0] * len(demand)
    for index in order:
        while mix[index] < demand[index]:
            mix[index] += 1
            if not fitter.fits(tuple(mix)):
                mix[index] -= 1
                break
    return tuple(mix)
