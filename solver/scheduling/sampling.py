"""Which nodes kube-scheduler looks at for a pod: ``percentageOfNodesToScore``, its node order and rotating start.

On a big cluster the scheduler does not score every feasible node: it filters nodes from where the
previous pod's search stopped, in its node tree's order (zones interleaved), until it has found
``numFeasibleNodesToFind`` feasible ones (kube-scheduler's ``schedule_one.go``), and scores only those.
So which node a pod lands on depends on the pods before it; one-by-one placement that scores every
node is not what the scheduler does on more than 100 nodes. The rules, as upstream writes them:

* fewer than 100 nodes: all of them; else ``percentage`` (0: adaptive, ``50 - nodes/125``, at least 5)
  of them, at least 100;
* nodes in the node tree's order: zones in the order their first node came, then round robin over the
  zones, nodes within a zone in input order (``node_tree.go``);
* the search starts at ``nextStartNodeIndex`` and stops at the first feasible node past the ones wanted
  (not counted); the index then moves on by the nodes it processed, feasible or not.

Ties between equally scored nodes are random upstream; drasat breaks them by node name, so that a run
is reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from drasat.models.core import Node

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")


def nodes_to_find(percentage: int, nodes: int) -> int:
    """kube-scheduler's ``numFeasibleNodesToFind``: how many feasible nodes a pod's search looks for."""
    if nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return nodes
    if percentage == 0:
        percentage = max(50 - nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def zone_key(node: Node) -> str:
    """``GetZoneKey``: region and zone (the beta labels first), "" for a node with neither."""
    labels = node.metadata.labels
    zone = next((labels[k] for k in ZONE_LABELS if labels.get(k)), "")
    region = next((labels[k] for k in REGION_LABELS if labels.get(k)), "")
    return f"{region}:\x00:{zone}" if zone or region else ""


def node_tree_order(nodes: Sequence[Node]) -> list[str]:
    """The scheduler's snapshot order: zones by their first node, round robin over them."""
    zones: dict[str, list[str]] = {}
    for node in nodes:
        zones.setdefault(zone_key(node), []).append(node.name)
    order: list[str] = []
    for depth in range(max((len(names) for names in zones.values()), default=0)):
        order.extend(names[depth] for names in zones.values() if depth < len(names))
    return order


@dataclass
class Rotation:
    """Where the next pod's search starts (one index for the whole scheduler, as upstream)."""

    order: list[str]
    start: int = 0

    def scan(self, want: int, feasible: Callable[[str], bool]) -> list[str]:
        """The first ``want`` nodes ``feasible`` accepts, from the start index on; the index moves past every
        node processed (the one feasible node found beyond ``want`` ends the search and is not counted)."""
        found: list[str] = []
        processed = 0
        total = len(self.order)
        for i in range(total):
            name = self.order[(self.start + i) % total]
            if feasible(name):
                if len(found) == want:
                    break
                found.append(name)
            processed += 1
        if total:
            self.start = (self.start + processed) % total
        return found
