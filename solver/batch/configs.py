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

from dataclasses import dataclass, field, replace
from fractions import Fraction

from drasat.models.errors import AllocationError, EvaluationError, InternalError, SolveTimeout, Unschedulable
from drasat.models.resource import AllocationResult, ResourceClaim, ResourceClaimStatus
from drasat.solver.allocation.api import GREEDY_BUDGET, allocate
from drasat.solver.allocation.options import Objective
from drasat.solver.allocation.problem import claim_key
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions, claim_shape
from drasat.solver.scheduling.plugins.node_filters import filter_reasons
from drasat.solver.scheduling.plugins.node_resources import Resources, insufficient, pod_requests
from drasat.solver.scheduling.pods import is_extended_resource

from .pod_classes import PodClass

Mix = tuple[int, ...]  # pods per pod class (indexed like the queue's classes)
# Seconds one "does this mix fit?" may take. Proving that many identical claims do NOT fit can take
# CP-SAT minutes (their symmetry); an undecided mix is treated as not fitting, which is always safe:
# the master only ever uses mixes proven to fit.
MIX_SECONDS = 1.0
# All-claims re-allocations per node class after a cheap try failed. They find the mixes one-by-one
# cannot (kubernetes#138765) but mostly prove a "no" at CP-SAT's price (measured: 9 of 116 succeed on
# the benchmark's mix), so each node class gets a budget; past it, growth uses the cheap tries alone.
JOINT_TRIES = 12


@dataclass
class NodeClass:
    """Nodes that accept the same mixes; ``configurations`` are the maximal mixes found for them."""

    index: int
    nodes: list[str]
    configurations: list[Mix] = field(default_factory=list)
    eligible: list[int] = field(default_factory=list)  # pod classes that fit alone
    calls: int = 0  # allocator calls spent on this class
    untouched: bool = False  # no device of its nodes in use yet (pack keeps such nodes whole when it can)

    @property
    def representative(self) -> str:
        return self.nodes[0]


def node_classes(state: ClusterState, nodes: list[str], classes: list[PodClass]) -> list[NodeClass]:
    """``nodes`` grouped by which pod classes pass their filters (labels and taints as the pods see them),
    load, devices and devices in use."""
    groups: dict[tuple, list[str]] = {}
    for name in sorted(nodes):
        node = state.loads[name].node
        passes = tuple(not filter_reasons(c.representative.pod, node) for c in classes)
        key = (passes, state.loads[name].key, state.signature(name))
        groups.setdefault(key, []).append(name)
    return [
        NodeClass(i, names, untouched=state.nodes[names[0]].in_use == "[]") for i, names in enumerate(groups.values())
    ]


class MixFitter:
    """Answers "does this mix fit one node of the class?" with the per-node allocator, cached.

    A mix grown by one pod is first tried the cheap way — only the new pod's claims, with the
    smaller mix's devices in use, as one-by-one would — and only when that fails are all its
    claims allocated together (where the smaller mix's pods may move)."""

    def __init__(self, state: ClusterState, node: str, classes: list[PodClass], options: AllocateOptions) -> None:
        self.state, self.node, self.classes, self.options = state, node, classes, options
        self._claims = {c.index: claim_shape(state, c.representative, node).claims for c in classes}
        level = state.cluster.features["PodLevelResources"]
        self._requests = {
            c.index: _relevant(
                pod_requests(c.representative.pod, pod_level=level),
                set(c.representative.extended),
                state.loads[node].allocatable,
            )
            for c in classes
        }
        self._copies: dict[tuple[int, int], list[ResourceClaim]] = {}
        self._held: dict[Mix, list[ResourceClaim]] = {(0,) * len(classes): []}  # a fitting mix's claims, allocated
        self._fits: list[Mix] = []
        self._fails: list[Mix] = []
        self._base = state.problem(node, [])
        self.calls = 0
        self.undecided = 0
        self.joint_tries = 0

    def passes_filters(self, cls: PodClass) -> bool:
        return not filter_reasons(cls.representative.pod, self.state.loads[self.node].node)

    def fits(self, mix: Mix, grown_from: Mix | None = None) -> bool:
        """Whether ``mix`` fits; grown by more than one pod from ``grown_from``, only the cheap try is made
        (a "no" then proves nothing and is not remembered)."""
        if mix in self._held or any(all(a <= b for a, b in zip(mix, known)) for known in self._fits):
            return True
        if any(all(a >= b for a, b in zip(mix, known)) for known in self._fails):
            return False
        if not self._resources_fit(mix):
            self._fails.append(mix)
            return False
        if grown_from is not None and self._grow_cheaply(mix, grown_from):
            return True
        if grown_from is not None and (sum(mix) - sum(grown_from) > 1 or self.joint_tries >= JOINT_TRIES):
            return False
        ok = self._devices_fit(mix, cheap_try_failed=grown_from is not None)
        (self._fits if ok else self._fails).append(mix)
        return ok

    def _resources_fit(self, mix: Mix) -> bool:
        load = self.state.loads[self.node]
        total: Resources = {}
        for index, count in enumerate(mix):
            for name, amount in self._requests.get(index, {}).items():
                total[name] = total.get(name, Fraction(0)) + amount * count
        return not insufficient(load.allocatable, load.used, total, load.pods + sum(mix) - 1)

    def _grow_cheaply(self, mix: Mix, grown_from: Mix) -> bool:
        held = self._held.get(grown_from)
        if held is None:
            return False
        added = [
            c for index, count in enumerate(mix) for j in range(grown_from[index], count) for c in self._copy(index, j)
        ]
        answer = self._allocate(added, held, greedy_budget=GREEDY_BUDGET)
        if answer is None:
            return False
        self._held[mix] = held + _allocated(added, answer)
        self._fits.append(mix)
        return True

    def _devices_fit(self, mix: Mix, cheap_try_failed: bool) -> bool:
        claims = [c for index, count in enumerate(mix) for j in range(count) for c in self._copy(index, j)]
        self.joint_tries += cheap_try_failed
        answer = self._allocate(claims, [], greedy_budget=0 if cheap_try_failed else GREEDY_BUDGET)
        if answer is None:
            return False
        self._held[mix] = _allocated(claims, answer)
        return True

    def _allocate(
        self, claims: list[ResourceClaim], held: list[ResourceClaim], greedy_budget: int
    ) -> dict[str, AllocationResult] | None:
        """The claims' devices with ``held`` in use; after a failed cheap try the depth-first search is skipped
        (it would only spend its budget proving a "no" that CP-SAT proves faster)."""
        if not claims:
            return {}
        self.calls += 1
        problem = replace(self._base, claims=claims, allocated=[*self._base.allocated, *held])
        try:
            return dict(
                allocate(
                    problem,
                    solver=self.options.solver,
                    objective=Objective.FIRST_FIT,
                    time_limit=min(MIX_SECONDS, self.options.time_limit),
                    workers=self.options.workers,
                    evaluator=self.options.evaluator,
                    greedy_budget=greedy_budget,
                ).results
            )
        except (Unschedulable, AllocationError, EvaluationError):
            return None
        except (SolveTimeout, InternalError):  # undecided (CP-SAT may stop early on a symmetric model)
            self.undecided += 1
            return None

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


def _allocated(claims: list[ResourceClaim], answer: dict[str, AllocationResult]) -> list[ResourceClaim]:
    """The claims as allocated (in use for the next, bigger mix)."""
    out = []
    for claim in claims:
        held = claim.model_copy()
        held.status = ResourceClaimStatus(allocation=answer[claim_key(claim)])
        out.append(held)
    return out


def _relevant(request: Resources, on_dra: set[str], allocatable: Resources) -> Resources:
    """What NodeResourcesFit checks (extended resources a DeviceClass backs are the devices' business)."""
    return {
        name: amount
        for name, amount in request.items()
        if not (name in on_dra and not allocatable.get(name))
        and (
            name in ("cpu", "memory", "ephemeral-storage")
            or name.startswith("hugepages-")
            or is_extended_resource(name)
        )
    }


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
    return _fill(fitter, [0] * len(demand), index, demand[index])[index]


def _grow(fitter: MixFitter, order: list[int], demand: list[int]) -> Mix:
    mix = [0] * len(demand)
    for index in order:
        mix = _fill(fitter, mix, index, demand[index])
    return tuple(mix)


def _fill(fitter: MixFitter, mix: list[int], index: int, limit: int) -> list[int]:
    """``mix`` with as many more pods of class ``index`` as fit (up to ``limit``): steps that double while
    they fit and fall back to one pod when they do not, so a class of many small pods costs few calls."""
    mix, step = list(mix), 1
    while mix[index] < limit:
        before = tuple(mix)
        mix[index] = min(limit, mix[index] + step)
        if fitter.fits(tuple(mix), before):
            step *= 2
            continue
        mix[index] = before[index]
        if step == 1:
            break
        step = 1
    return mix
