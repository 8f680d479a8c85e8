"""The kubelet's Topology Manager: NUMA hints from each resource manager, merged by the node's policy.

Followed from pkg/kubelet/cm/topologymanager: a hint is a NUMA mask and whether it is preferred.
Each provider gives, per resource, ``None`` (no preference: one preferred any-NUMA hint), ``[]``
(no possible alignment: one non-preferred any-NUMA hint) or its hints (``filterProvidersHints``).
``mergeFilteredHints`` tries every permutation of one hint per resource, ANDs their masks (an
any-NUMA hint stands for every NUMA node), keeps non-empty results, and picks the best: a preferred
hint over a non-preferred one, then the narrower mask (fewer NUMA nodes, then the lower mask).
``single-numa-node`` first keeps only preferred hints of one NUMA node (or any-NUMA); ``restricted``
and ``single-numa-node`` admit only a preferred result; ``best-effort`` and ``none`` admit all.

Hints are generated as the CPU manager's ``generateCPUTopologyHints`` does (also used here for the
Memory Manager and for DRA devices): every mask whose free amount covers the request is a hint, and
the preferred ones are those as narrow as the narrowest mask whose *total* amount could cover it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, product

from drasat.models.topology_policies import TopologyPolicy

KUBELET_MESSAGE = "Resources cannot be allocated with Topology locality"  # the kubelet's admission message
KUBELET_REASON = "TopologyAffinityError"


@dataclass(frozen=True)
class Hint:
    """A NUMA affinity (None: any NUMA node) and whether the allocation it stands for is preferred."""

    mask: frozenset[int] | None
    preferred: bool

    def describe(self) -> str:
        nodes = "any" if self.mask is None else ",".join(str(n) for n in sorted(self.mask))
        return f"NUMA {nodes}{'' if self.preferred else ' (not preferred)'}"


ProviderHints = Sequence[Hint] | None  # one resource's hints: None no preference, [] no possible alignment


def masks(numa_nodes: Sequence[int]) -> list[frozenset[int]]:
    """Every non-empty set of NUMA nodes, narrowest first (``bitmask.IterateBitMasks``' order by size)."""
    return [frozenset(c) for size in range(1, len(numa_nodes) + 1) for c in combinations(sorted(numa_nodes), size)]


def generate_hints(
    numa_nodes: Sequence[int], request: int, total: Mapping[int, int], free: Mapping[int, int]
) -> list[Hint]:
    """``generateCPUTopologyHints``: masks whose free amount covers ``request``, preferred when as narrow as
    the narrowest mask whose total could (an empty list: no mask can take it now)."""
    all_masks = masks(numa_nodes)
    fitting_total = [m for m in all_masks if sum(total.get(n, 0) for n in m) >= request]
    narrowest = min((len(m) for m in fitting_total), default=len(numa_nodes))
    return [Hint(m, len(m) == narrowest) for m in all_masks if sum(free.get(n, 0) for n in m) >= request]


def hints_containing(numa_nodes: Sequence[int], needed: frozenset[int], narrowest: int) -> list[Hint]:
    """For resources already chosen (DRA devices): every mask holding all of ``needed``, preferred when as
    narrow as ``narrowest`` (the fewest NUMA nodes that could have held as many such devices)."""
    return [Hint(m, len(m) == narrowest) for m in masks(numa_nodes) if needed <= m]


def merge(policy: TopologyPolicy, numa_nodes: Sequence[int], providers: Iterable[ProviderHints]) -> tuple[Hint, bool]:
    """The policy's best hint over every resource's hints, and whether the pod (or container) is admitted."""
    if policy is TopologyPolicy.NONE:
        return Hint(None, True), True
    every = frozenset(numa_nodes)
    filtered = [_filtered(hints) for hints in providers]
    if policy is TopologyPolicy.SINGLE_NUMA_NODE:
        filtered = [[h for h in hints if h.preferred and (h.mask is None or len(h.mask) == 1)] for hints in filtered]
    best = _best(every, filtered)
    if policy is TopologyPolicy.SINGLE_NUMA_NODE and best.mask == every:
        best = Hint(None, best.preferred)
    return best, policy is TopologyPolicy.BEST_EFFORT or best.preferred


def _filtered(hints: ProviderHints) -> list[Hint]:
    if hints is None:
        return [Hint(None, True)]
    if not hints:
        return [Hint(None, False)]
    return list(hints)


def _best(every: frozenset[int], filtered: list[list[Hint]]) -> Hint:
    best = Hint(every, False)
    for permutation in product(*filtered):
        merged = _merged(every, permutation)
        if merged.mask and _better(merged, best):
            best = merged
    return best


def _merged(every: frozenset[int], permutation: Iterable[Hint]) -> Hint:
    """``mergePermutation``: the AND of the masks (any-NUMA counts as all), preferred if all are."""
    mask, preferred = every, True
    for hint in permutation:
        mask = mask & (every if hint.mask is None else hint.mask)
        preferred = preferred and hint.preferred
    return Hint(mask, preferred)


def _better(candidate: Hint, best: Hint) -> bool:
    if candidate.preferred != best.preferred:
        return candidate.preferred
    return _narrower(candidate.mask or frozenset(), best.mask or frozenset())


def _narrower(a: frozenset[int], b: frozenset[int]) -> bool:
    """``IsNarrowerThan``: fewer NUMA nodes, or as many and a lower mask value."""
    if len(a) != len(b):
        return len(a) < len(b)
    return sum(1 << n for n in a) < sum(1 << n for n in b)
