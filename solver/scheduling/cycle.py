"""One pod's scheduling cycle: what every plugin reads of the pod, worked out once for all the nodes.

kube-scheduler keeps a ``CycleState`` per pod; drasat's is the pod's resolved claims, the nodes its
NodeAffinity PreFilter pins it to, and its resource requests — the same on every node, and the
filters and scores ask for them on each (hundreds of nodes a pod on a big cluster), so they are
computed once here instead of once per node.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from drasat.models.core import Pod

from .cluster_state import ClusterState, NodeLoad
from .plugins.node_resources import Resources, pod_requests
from .pods import PodClaims


@dataclass
class Cycle:
    """The pod, its claims and pins, and its requests (read-only once made: plugins share it)."""

    state: ClusterState
    pc: PodClaims
    pinned: set[str] | None = None  # NodeAffinity's PreFilter: only these nodes (None: every node)

    @property
    def pod(self) -> Pod:
        return self.pc.pod

    @property
    def pod_level(self) -> bool:
        return self.state.cluster.features["PodLevelResources"]

    @cached_property
    def requests(self) -> Resources:
        """The pod's requests as written (NodeResourcesFit's filter, the balanced allocation's score)."""
        return pod_requests(self.pod, pod_level=self.pod_level)

    @cached_property
    def requests_for_score(self) -> Resources:
        """The pod's requests with the scheduler's defaults for missing ones (NodeResourcesFit's score)."""
        return pod_requests(self.pod, pod_level=self.pod_level, defaults=True)

    @cached_property
    def requests_key(self) -> str:
        """Equal for pods whose requests are equal, with and without defaults (the resource scores' memo)."""
        return repr((sorted(self.requests.items()), sorted(self.requests_for_score.items())))

    def resource_score(self, plugin: str, load: NodeLoad, score: Callable[[], int]) -> int:
        """A score that reads only the node's load and the pod's requests, kept per load and requests across
        pods (their exact arithmetic is the slowest part of filtering a node for a pod seen before)."""
        memo = self.state.score_memo
        key = (plugin, load.key, self.requests_key)
        found = memo.get(key)
        if found is None:
            found = memo[key] = score()
        return found

    @cached_property
    def shares_claims(self) -> bool:
        """Whether the pod uses a claim allocated already (where it is allocated decides, node by node)."""
        return any(u.allocated for u in self.pc.uses)

    @cached_property
    def spec(self) -> str:
        """What the filters' memo keys a pod by: its spec ("" for a pod sharing allocated claims: never kept)."""
        return "" if self.shares_claims else json.dumps(self.pod.spec.to_api(), sort_keys=True)
