"""Would the node's kubelet admit the pod? Its Topology Manager, predicted before the pod gets there.

The scheduler can pick a node whose kubelet then refuses the pod with TopologyAffinityError
("Resources cannot be allocated with Topology locality"): the best-known surprise of NUMA-aligned
workloads. With a NodeResourceTopology for the node (and the kubelet's policies from its attributes
or a KubeletConfiguration), this module runs the kubelet's admission on the node's free NUMA
resources:

* the static CPU manager gives hints for the integer CPUs of a Guaranteed pod's containers,
  the Static Memory Manager for their memory; other pods take the shared pool (no hints);
* DRA devices are already chosen when the kubelet admits the pod: each container's devices (those
  of the claims it names; with pod scope all of the pod's) give the masks that hold all their NUMA
  nodes (``resource.kubernetes.io/numaNode``, or a driver's own ``numaNode``/``numa`` attribute),
  preferred when as narrow as the fewest NUMA nodes that hold as many of that driver's devices;
* ``container`` scope admits containers one after another, each taking its CPUs and memory from its
  hint's NUMA nodes before the next is asked; ``pod`` scope asks once for the pod's total (the
  pod-level ``spec.resources`` when given: the pod's budget, exclusive containers carved from it).

CPU ids are not in a NodeResourceTopology: cell ``node-N``'s CPUs are numbered after those of the
cells before it, and the free ones are taken to be the highest of each cell (the CPU manager hands
out the lowest first). Refusals are worded as NodeResourceTopologyMatch words them ("cannot align
container"/"cannot align pod").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.core import Container, Pod
from drasat.models.topology_policies import CpuManagerPolicy, MemoryManagerPolicy, TopologyPolicy, TopologyScope

from .numa_layout import NumaLayout, Policies
from .topology_manager import Hint, ProviderHints, generate_hints, hints_containing, merge

REASON_CONTAINER = "cannot align container"
REASON_POD = "cannot align pod"


@dataclass(frozen=True)
class PlacedDevice:
    """One device allocated to the pod: which claim, and its NUMA node (None: it reports none)."""

    pod_claim: str
    driver: str
    pool: str
    device: str
    numa: int | None


@dataclass
class ContainerShare:
    """What one container gets: its exclusive CPU ids and memory per NUMA node (empty: the shared pool)."""

    name: str
    cpu_ids: list[int] = field(default_factory=list)
    memory: dict[int, int] = field(default_factory=dict)
    hint: Hint | None = None


@dataclass
class Admission:
    """The kubelet's verdict, and (when admitted) what it hands out."""

    admitted: bool
    reason: str = ""  # NodeResourceTopologyMatch's words, with the unit refused
    containers: list[ContainerShare] = field(default_factory=list)
    pod_cpu_ids: list[int] = field(default_factory=list)  # pod scope: the pod's whole exclusive budget
    pod_memory: dict[int, int] = field(default_factory=dict)
    hint: Hint | None = None  # pod scope: the pod's hint


def admit(layout: NumaLayout, pod: Pod, devices: Sequence[PlacedDevice], counts: Mapping[str, int]) -> Admission:
    """Run the kubelet's Topology Manager admission for ``pod`` on ``layout`` (changed in place when admitted:
    call it on a copy to ask only). ``counts``: devices per driver and NUMA node on the node, for the
    devices' preferred width."""
    policies = layout.policies
    result = Admission(True, containers=[ContainerShare(c.name) for c in pod.spec.containers])
    if policies.topology is TopologyPolicy.NONE and policies.cpu is CpuManagerPolicy.NONE:
        return result
    if policies.scope is TopologyScope.POD:
        return _admit_pod(layout, pod, devices, counts, result)
    return _admit_containers(layout, pod, devices, counts, result)


def _admit_pod(
    layout: NumaLayout, pod: Pod, devices: Sequence[PlacedDevice], counts: Mapping[str, int], result: Admission
) -> Admission:
    """Pod scope: one hint for the pod's total, then each exclusive container carved from the budget."""
    policies, guaranteed = layout.policies, is_guaranteed(pod)
    cpu, memory = _pod_amounts(pod, guaranteed, policies)
    hint, admitted = merge(policies.topology, layout.numa_nodes, _providers(layout, cpu, memory, devices, counts))
    if not admitted:
        return Admission(False, REASON_POD)
    result.hint = hint
    result.pod_cpu_ids = _take_cpus(layout, hint, cpu)
    result.pod_memory = _take_memory(layout, hint, memory)
    _carve(pod, guaranteed, policies, result)
    return result


def _admit_containers(
    layout: NumaLayout, pod: Pod, devices: Sequence[PlacedDevice], counts: Mapping[str, int], result: Admission
) -> Admission:
    """Container scope: init containers, then the others, each admitted and given its share in turn."""
    policies, guaranteed = layout.policies, is_guaranteed(pod)
    shares = {s.name: s for s in result.containers}
    for c in [*pod.spec.init_containers, *pod.spec.containers]:
        cpu, memory = _container_amounts(c, guaranteed, policies)
        mine = [d for d in devices if d.pod_claim in _claims_of(c)]
        providers = _providers(layout, cpu, memory, mine, counts)
        hint, admitted = merge(policies.topology, layout.numa_nodes, providers)
        if not admitted:
            return Admission(False, f"{REASON_CONTAINER}: {c.name}")
        share = shares.get(c.name) or ContainerShare(c.name)
        share.hint = hint
        share.cpu_ids = _take_cpus(layout, hint, cpu)
        share.memory = _take_memory(layout, hint, memory)
        if c.name not in shares:  # an init container's CPUs go back to the node when it ends
            _give_back(layout, share)
    return result


def is_guaranteed(pod: Pod) -> bool:
    """Guaranteed QoS: cpu and memory limits everywhere, requests equal to them (pod-level resources, when
    given, decide for the pod)."""
    level = pod.spec.resources
    if level is not None and (level.requests or level.limits):
        return _equal_limits(level.requests, level.limits)
    containers = [*pod.spec.init_containers, *pod.spec.containers]
    return bool(containers) and all(
        c.resources is not None and _equal_limits(c.resources.requests, c.resources.limits) for c in containers
    )


def _equal_limits(requests: Mapping, limits: Mapping) -> bool:
    for name in ("cpu", "memory"):
        limit = limits.get(name)
        request = requests.get(name, limit)
        if limit is None or request is None or Fraction(request.value) != Fraction(limit.value):
            return False
    return True


def _container_amounts(c: Container, guaranteed: bool, policies: Policies) -> tuple[int, int]:
    """Exclusive CPUs (integer CPUs of a Guaranteed pod, static policy) and Static-managed memory bytes."""
    requests = c.resources.requests if c.resources else {}
    cpu = Fraction(requests["cpu"].value) if "cpu" in requests else Fraction(0)
    memory = int(Fraction(requests["memory"].value)) if "memory" in requests else 0
    exclusive = int(cpu) if guaranteed and policies.cpu is CpuManagerPolicy.STATIC and cpu.denominator == 1 else 0
    managed = memory if guaranteed and policies.memory is MemoryManagerPolicy.STATIC else 0
    return exclusive, managed


def _pod_amounts(pod: Pod, guaranteed: bool, policies: Policies) -> tuple[int, int]:
    """The pod's total, as GetPodTopologyHints asks it: pod-level requests, else max(init, sum of the rest)."""
    level = pod.spec.resources
    if level is not None and level.requests:
        fake = Container(name="pod", resources=level)
        return _container_amounts(fake, guaranteed, policies)
    init = [_container_amounts(c, guaranteed, policies) for c in pod.spec.init_containers]
    apps = [_container_amounts(c, guaranteed, policies) for c in pod.spec.containers]
    return (
        max([c for c, _ in init] + [sum(c for c, _ in apps)]),
        max([m for _, m in init] + [sum(m for _, m in apps)]),
    )


def _claims_of(c: Container) -> set[str]:
    return {claim.name for claim in (c.resources.claims if c.resources else [])}


def _providers(
    layout: NumaLayout, cpu: int, memory: int, devices: Sequence[PlacedDevice], counts: Mapping[str, int]
) -> list[ProviderHints]:
    """Each resource's hints: CPUs, memory, then each driver's devices (None: no preference)."""
    nodes = layout.numa_nodes
    cells = layout.cells
    out: list[ProviderHints] = []
    out.append(
        generate_hints(nodes, cpu, {n: c.cpus for n, c in cells.items()}, {n: c.free_cpus for n, c in cells.items()})
        if cpu
        else None
    )
    out.append(
        generate_hints(
            nodes, memory, {n: c.memory for n, c in cells.items()}, {n: c.free_memory for n, c in cells.items()}
        )
        if memory
        else None
    )
    for driver in sorted({d.driver for d in devices}):
        placed = [d for d in devices if d.driver == driver and d.numa is not None]
        if not placed:
            out.append(None)
            continue
        needed = frozenset(d.numa for d in placed if d.numa is not None)
        out.append(hints_containing(nodes, needed, _narrowest(counts, driver, len(placed), nodes)))
    return out


def _narrowest(counts: Mapping[str, int], driver: str, wanted: int, nodes: Sequence[int]) -> int:
    """The fewest NUMA nodes that hold ``wanted`` of the driver's devices (counts keyed driver/numa)."""
    per = sorted((counts.get(f"{driver}/{n}", 0) for n in nodes), reverse=True)
    held = 0
    for width, count in enumerate(per, start=1):
        held += count
        if held >= wanted:
            return width
    return len(nodes)


def _give_back(layout: NumaLayout, share: ContainerShare) -> None:
    for cpu in share.cpu_ids:
        cell = next(c for c in layout.cells.values() if c.first_cpu <= cpu < c.first_cpu + c.cpus)
        cell.free_cpus += 1
    for n, amount in share.memory.items():
        layout.cells[n].free_memory += amount


def _carve(pod: Pod, guaranteed: bool, policies: Policies, result: Admission) -> None:
    """Pod scope: each exclusive container's CPUs cut from the pod's budget in order; the rest is the pod's
    shared pool (seed 004: a shared-pool container's own fields stay empty)."""
    left = list(result.pod_cpu_ids)
    shares = {s.name: s for s in result.containers}
    for c in pod.spec.containers:
        cpu, _ = _container_amounts(c, guaranteed, policies)
        if cpu and c.resources is not None and "cpu" in c.resources.requests and len(left) >= cpu:
            shares[c.name].cpu_ids, left = left[:cpu], left[cpu:]
            shares[c.name].hint = result.hint


def _cells_of(layout: NumaLayout, hint: Hint) -> list[int]:
    return sorted(hint.mask) if hint.mask is not None else layout.numa_nodes


def _take_cpus(layout: NumaLayout, hint: Hint, count: int) -> list[int]:
    taken: list[int] = []
    for n in _cells_of(layout, hint):
        cell = layout.cells[n]
        while len(taken) < count and cell.free_cpus > 0:
            taken.append(cell.first_cpu + cell.cpus - cell.free_cpus)
            cell.free_cpus -= 1
    return taken


def _take_memory(layout: NumaLayout, hint: Hint, amount: int) -> dict[int, int]:
    taken: dict[int, int] = {}
    for n in _cells_of(layout, hint):
        cell = layout.cells[n]
        part = min(amount - sum(taken.values()), cell.free_memory)
        if part > 0:
            taken[n] = part
            cell.free_memory -= part
    return taken
