"""Equivalence classes of nodes: nodes whose devices and devices in use look alike are decided once.

Real clusters have hundreds of nodes built from a handful of machine types, each
publishing its devices in its own pool. For one pod's claims, two such nodes give
the same answer when their slices are the same apart from the node and pool names
and the same devices of them are in use — first-fit then picks the same devices
by name, and the node-allocatable amounts are the same. The signature below says
exactly that, so the scheduling loop can run the allocator once per class.

Anything that could make the answer depend on a node's identity keeps the node
apart: slices reaching it through labels or ``allNodes`` (their use is shared
with other nodes), per-device node selection, and DeviceTaintRules (they select
by pool name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from drasat.models.resource import ResourceClaim, ResourceSlice

PoolKey = tuple[str, str]


@dataclass
class NodeDevices:
    """A node's slices (its own and those reaching many nodes), its pools, and its static signature."""

    name: str
    slices: list[ResourceSlice]
    pools: list[PoolKey]  # sorted: the order the allocator visits them
    static: str  # description of the node's slices without its own name and pool names
    shared: bool = False  # its answer depends on its name (per-device node selection, taint rules)
    in_use: str = field(default="")


def _slice_text(s: ResourceSlice, pool_rank: int, keep_pool_name: bool) -> str:
    body = s.spec.to_api()
    body.pop("nodeName", None)
    if not keep_pool_name:
        body["pool"] = {**body["pool"], "name": pool_rank}
    return json.dumps(body, sort_keys=True)


def node_devices(
    name: str,
    own: Sequence[ResourceSlice],
    reaching: Sequence[ResourceSlice],
    keep_apart: bool,
    skips_node_operations: bool = False,
) -> NodeDevices:
    """The description of one node: ``own`` slices name it; ``reaching`` ones (``allNodes``, node selectors)
    are shared with other nodes, so they are described by name and their pools' use is the same for all.
    ``skips_node_operations``: the node declares it can run devices that skip node operations (it matters
    only with such slices)."""
    pools = sorted({(s.spec.driver, s.spec.pool.name) for s in [*own, *reaching]})
    rank = {pool: i for i, pool in enumerate(pools)}
    texts = []
    for s, is_shared in [*((s, False) for s in own), *((s, True) for s in reaching)]:
        r = rank[(s.spec.driver, s.spec.pool.name)]
        texts.append((r, s.name, _slice_text(s, r, keep_pool_name=is_shared)))
    texts.sort()
    shared = keep_apart or any(s.spec.per_device_node_selection for s in [*own, *reaching])
    static = json.dumps([[r, t] for r, _, t in texts])
    if skips_node_operations and any(s.spec.skip_node_operations for s in [*own, *reaching]):
        static = f"skips-node-operations|{static}"
    if shared:
        static = f"{name}|{static}"  # identity matters: never equal to another node's
    return NodeDevices(name, list(own) + list(reaching), pools, static, shared)


def in_use_text(node: NodeDevices, by_pool: Mapping[PoolKey, Mapping[tuple[str, str], ResourceClaim]]) -> str:
    """The devices of the node's pools that allocated claims hold, without pool names."""
    rows = []
    for rank, pool in enumerate(node.pools):
        for claim in by_pool.get(pool, {}).values():
            allocation = claim.status.allocation if claim.status else None
            for r in allocation.devices.results if allocation else []:
                if (r.driver, r.pool) == pool:
                    consumed = sorted((k, str(v)) for k, v in r.consumed_capacity.items())
                    rows.append((rank, r.driver, r.device, bool(r.admin_access), bool(r.share_id), consumed))
    return json.dumps(sorted(rows))


NodeSignature = tuple[int, str]


class Signatures:
    """Interns each node's static description as a small number, so a signature is cheap to hash."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def of(self, node: NodeDevices) -> NodeSignature:
        static = self._ids.setdefault(node.static, len(self._ids))
        return static, node.in_use
