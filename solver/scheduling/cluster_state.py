"""What changes while pods are placed one at a time: claims, what each node has left, devices in use.

The Cluster is the input and never changes; this state starts from it and takes
each placement in turn (claims allocated and reserved, a pod's requests on its
node), so that each pod finds what the previous ones left — as kube-scheduler's
cache does between scheduling cycles.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.core import Node, Pod
from drasat.models.defaults import apply_defaults
from drasat.models.errors import SelectorParseError
from drasat.models.resource import Device, ResourceClaim, ResourceSlice
from drasat.solver.allocation.planning.inventory import Inventory, build_inventory
from drasat.solver.allocation.planning.node_selectors import selector_matches
from drasat.solver.allocation.problem import NodeInfo, Problem
from drasat.solver.allocation.rules.node_operations import FEATURE as OPTIONAL_NODE_OPERATIONS

from .cluster import Cluster, ObjectKey, key_of
from .node_classes import NodeDevices, NodeSignature, PoolKey, Signatures, in_use_text, node_devices
from .plugins.node_resources import Resources, allocatable_of, pod_requests
from .plugins.numa_layout import NumaLayout, layouts
from .pods import finished
from .sampling import Rotation, node_tree_order

INVENTORIES_KEPT = 20_000  # node states whose inventory is kept (a few hundred KB each at most)


@dataclass
class NodeLoad:
    """A node's allocatable resources and what bound pods already request of them."""

    node: Node
    allocatable: Resources
    used: Resources = field(default_factory=dict)
    used_for_score: Resources = field(default_factory=dict)  # with the scheduler's defaults for missing requests
    pods: int = 0
    key: str = ""  # equal for nodes with the same allocatable resources and load (a string: its hash is kept)

    def __post_init__(self) -> None:
        self._rekey()

    def _rekey(self) -> None:
        self.key = repr(
            (
                sorted(self.allocatable.items()),
                sorted(self.used.items()),
                sorted(self.used_for_score.items()),
                self.pods,
            )
        )

    def add(self, requests: Resources, for_score: Resources) -> None:
        for name, amount in requests.items():
            self.used[name] = self.used.get(name, Fraction(0)) + amount
        for name, amount in for_score.items():
            self.used_for_score[name] = self.used_for_score.get(name, Fraction(0)) + amount
        self.pods += 1
        self._rekey()

    def restore(self, used: Resources, used_for_score: Resources, pods: int) -> None:
        self.used, self.used_for_score, self.pods = used, used_for_score, pods
        self._rekey()


@dataclass(frozen=True)
class Snapshot:
    """What placements change in a :class:`ClusterState`, as it stood at one moment."""

    book: dict[ObjectKey, ResourceClaim]
    by_pool: dict[PoolKey, dict[ObjectKey, ResourceClaim]]
    loads: dict[str, tuple[Resources, Resources, int]]
    in_use: dict[str, str]
    dra_failures: dict[tuple[str, str], str]
    numa: dict[str, NumaLayout] = field(default_factory=dict)


class ClusterState:
    """Claims as they stand, node loads, and each node's devices with their equivalence signature."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        # Defaulted once here (the allocator defaults every claim of every problem it is given, and a claim
        # already defaulted is taken as it is: no copy per problem of each claim in use around it).
        self.book: dict[ObjectKey, ResourceClaim] = {k: apply_defaults(c) for k, c in cluster.claims_by_key.items()}
        self.loads = {n.name: NodeLoad(n, allocatable_of(n)) for n in cluster.nodes}
        self._by_pool: dict[PoolKey, dict[ObjectKey, ResourceClaim]] = {}
        self._devices: dict[tuple[str, str, str], Device] = {}
        self._signatures = Signatures()
        # (claim shape, node) -> why the devices failed there. Placements only add devices in use, so a shape
        # that found no devices on a node finds none later either (until a snapshot before it is restored).
        self.dra_failures: dict[tuple[str, str], str] = {}
        self._filter_keys = self._describe_filters()
        self.rotation = Rotation(node_tree_order(cluster.nodes))
        self._inventories: dict[tuple[str, str], Inventory] = {}  # not part of snapshots: upstream never undoes it
        # Scores that read only a node's load and a pod's requests, by plugin, load and requests (Cycle).
        self.score_memo: dict[tuple[str, str, str], int] = {}
        self._state_keys: dict[str, tuple[str, str, tuple]] = {}  # node -> (load key, in use, state_key)
        self._first_inventories: dict[str, Inventory] = {}  # per node, whose devices later inventories share
        self.nodes = self._describe_nodes()
        # Nodes with a NodeResourceTopology: their kubelet's NUMA cells, as pods take CPUs and memory.
        self.numa: dict[str, NumaLayout] = {
            name: layout
            for name, layout in layouts(cluster.topologies, cluster.kubelet_configs).items()
            if name in self.loads
        }
        for claim in self.book.values():
            self._index(claim)
        self._pool_nodes: dict[PoolKey, list[NodeDevices]] = {}
        for node in self.nodes.values():
            node.in_use = in_use_text(node, self._by_pool)
            for pool in node.pools:
                self._pool_nodes.setdefault(pool, []).append(node)
        for pod in cluster.pods:
            if pod.spec.node_name in self.loads and not finished(pod):
                self.bind(pod, pod.spec.node_name)

    def _describe_nodes(self) -> dict[str, NodeDevices]:
        own: dict[str, list] = {n.name: [] for n in self.cluster.nodes}
        others = []
        for s in self.cluster.slices:
            for d in s.spec.devices:
                self._devices.setdefault((s.spec.driver, s.spec.pool.name, d.name), d)
            if s.spec.node_name is not None:
                own.setdefault(s.spec.node_name, []).append(s)
            else:
                others.append(s)
        keep_apart = bool(self.cluster.taint_rules)
        return {
            n.name: node_devices(
                n.name, own[n.name], _reaching(n, others), keep_apart, NodeInfo.of(n).declares(OPTIONAL_NODE_OPERATIONS)
            )
            for n in self.cluster.nodes
        }

    def _index(self, claim: ResourceClaim) -> set[PoolKey]:
        allocation = claim.status.allocation if claim.status else None
        pools = {(r.driver, r.pool) for r in allocation.devices.results} if allocation else set()
        for pool in pools:
            self._by_pool.setdefault(pool, {})[key_of(claim)] = claim
        return pools

    def device(self, driver: str, pool: str, name: str) -> Device | None:
        return self._devices.get((driver, pool, name))

    def numa_key(self, node: str) -> str:
        """Equal for nodes whose kubelets answer alike ("" for a node without a NodeResourceTopology)."""
        layout = self.numa.get(node)
        return layout.key() if layout is not None else ""

    def filter_key(self, node: str) -> int:
        """Equal for nodes whose labels, taints and schedulability are equal (what the node filters read)."""
        return self._filter_keys[node]

    def _describe_filters(self) -> dict[str, int]:
        ids: dict[str, int] = {}
        out = {}
        for n in self.cluster.nodes:
            text = json.dumps([n.metadata.labels, n.spec.to_api() if n.spec else {}], sort_keys=True)
            out[n.name] = ids.setdefault(text, len(ids))
        return out

    def state_key(self, node: str) -> tuple:
        """Equal for nodes whose filters and devices answer every pod alike: labels and taints, load, devices
        and devices in use, NUMA cells. Kept per node until its load or devices in use change (asked for
        every node a pod's search looks at: hundreds per pod on a big cluster)."""
        load, devices = self.loads[node], self.nodes[node]
        kept = self._state_keys.get(node)
        if kept is not None and kept[0] is load.key and kept[1] is devices.in_use and node not in self.numa:
            return kept[2]
        key = (self.filter_key(node), load.key, self.signature(node), self.numa_key(node))
        self._state_keys[node] = (load.key, devices.in_use, key)
        return key

    def signature(self, node: str) -> NodeSignature:
        return self._signatures.of(self.nodes[node])

    def problem(self, node: str, claims: list[ResourceClaim]) -> Problem:
        """The per-node question for the existing allocator: these claims, with what is in use around them."""
        devices = self.nodes[node]
        allocated = {key_of(c): c for pool in devices.pools for c in self._by_pool.get(pool, {}).values()}
        n = self.loads[node].node
        return Problem(
            node=NodeInfo.of(n),
            slices=devices.slices,
            classes=self.cluster.classes,
            claims=claims,
            allocated=list(allocated.values()),
            taint_rules=self.cluster.taint_rules,
            features=self.cluster.features,
        )

    def inventory(self, node: str) -> Inventory:
        """The node's devices and what is in use there, as the allocator builds them for any claims: built once
        per state of the node (its devices in use) and shared by every pod asked about it meanwhile; a new
        state of the node takes its device records from the node's first inventory (only pools change)."""
        devices = self.nodes[node]
        key = (node, devices.in_use)
        found = self._inventories.get(key)
        if found is None:
            if len(self._inventories) > INVENTORIES_KEPT:
                self._inventories.clear()
            first = self._first_inventories.get(node)  # its devices: the same whatever is in use
            found = self._inventories[key] = build_inventory(self.problem(node, []), first)
            if first is None:
                self._first_inventories[node] = found
        return found

    def record(self, claims: list[ResourceClaim]) -> None:
        """Claims allocated or newly reserved: they replace their old version; nodes using their pools change."""
        touched: set[PoolKey] = set()
        for claim in claims:
            self.book[key_of(claim)] = claim
            touched |= self._index(claim)
        changed = {id(n): n for pool in touched for n in self._pool_nodes.get(pool, [])}
        for node in changed.values():
            node.in_use = in_use_text(node, self._by_pool)

    def snapshot(self) -> Snapshot:
        """The state as it stands, to go back to (placements tried and undone: a gang that does not fit whole).
        Copies only what placements change (claims are replaced, never written), so it is cheap."""
        return Snapshot(
            dict(self.book),
            {pool: dict(claims) for pool, claims in self._by_pool.items()},
            {name: (dict(load.used), dict(load.used_for_score), load.pods) for name, load in self.loads.items()},
            {name: node.in_use for name, node in self.nodes.items()},
            dict(self.dra_failures),
            {name: layout.copy() for name, layout in self.numa.items()},
        )

    def restore(self, snapshot: Snapshot) -> None:
        """Back to ``snapshot`` (which stays usable: it can be restored again)."""
        self.book = dict(snapshot.book)
        self._by_pool = {pool: dict(claims) for pool, claims in snapshot.by_pool.items()}
        for name, (used, for_score, pods) in snapshot.loads.items():
            self.loads[name].restore(dict(used), dict(for_score), pods)
        for name, in_use in snapshot.in_use.items():
            self.nodes[name].in_use = in_use
        self.dra_failures = dict(snapshot.dra_failures)
        self.numa = {name: layout.copy() for name, layout in snapshot.numa.items()}

    def bind(self, pod: Pod, node: str) -> None:
        """The pod runs on ``node``: its requests (with its DRA amounts) count there from now on."""
        statuses = pod.status.node_allocatable_resource_claim_statuses if pod.status else []
        level = self.cluster.features["PodLevelResources"]
        self.loads[node].add(
            pod_requests(pod, statuses, pod_level=level), pod_requests(pod, statuses, pod_level=level, defaults=True)
        )


def _reaching(node: Node, others: list[ResourceSlice]) -> list[ResourceSlice]:
    """Slices without a node name that may serve ``node``, with every other slice of their pools (the
    allocator needs a pool whole); a selector that does not parse counts as reaching, so that the
    allocator reports it."""
    info = NodeInfo(node.name, dict(node.metadata.labels))
    pools = set()
    for s in others:
        spec = s.spec
        try:
            hit = bool(
                spec.all_nodes
                or spec.per_device_node_selection
                or (spec.node_selector is not None and selector_matches(info, spec.node_selector))
            )
        except SelectorParseError:
            hit = True
        if hit:
            pools.add((spec.driver, spec.pool.name))
    return [s for s in others if (s.spec.driver, s.spec.pool.name) in pools]
