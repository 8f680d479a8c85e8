"""What the allocation map needs beyond ``inventory``'s node reports: the cluster as a placement leaves it,
and per node the pending pods that could go there now.

Both are asked of the solver (the scheduler's own filters and allocator); this module only gathers its
answers for :mod:`.html`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .text import echo

MAX_TRIALS = 2000
"""Pods × nodes tried for "pending pods that could go there" (each a scheduling of one pod on one node);
beyond it the column is left out, with a notice, rather than make the page slow to write."""


def reports_after(cluster: Any, placements: Sequence[Any], default_attribute: str | None = None) -> list[Any]:
    """The node reports of ``cluster`` with the claims the placements allocated (or reserved) in their new
    state, and the claims they generated from templates added."""
    from drasat.solver.report.device_states import node_reports
    from drasat.solver.report.pool_status import PoolInputs
    from drasat.solver.scheduling.cluster import key_of

    claims = {key_of(c): c for c in cluster.claims}
    for placement in placements:
        if placement.node is not None:
            claims.update({key_of(c): c for c in placement.claims})
    inputs = PoolInputs(list(cluster.slices), list(claims.values()), list(cluster.taint_rules))
    return node_reports(inputs, default_attribute=default_attribute)


def pods_that_fit(objects: Sequence[Any]) -> dict[str, list[str]] | None:
    """Per node, the pending pods the scheduler would place there if it were the only node (each pod alone,
    on the cluster as it is); None when the input has no pending pod or no Node, or too many to try."""
    from drasat.models.errors import DrasatError
    from drasat.solver.scheduling.cluster import cluster_from_objects, label_of
    from drasat.solver.scheduling.one_by_one import schedule
    from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
    from drasat.solver.scheduling.pods import pending_pods

    kinds = {getattr(obj, "kind", None) for obj in objects}
    if "Pod" not in kinds or "Node" not in kinds:
        return None
    cluster = cluster_from_objects(list(objects))
    pods = pending_pods(cluster)
    if not pods or not cluster.nodes:
        return None
    if len(pods) * len(cluster.nodes) > MAX_TRIALS:
        echo(
            f"notice: {len(pods)} pending pods on {len(cluster.nodes)} nodes: the map leaves out which pods could "
            f"go where (more than {MAX_TRIALS} tries; `drasat schedule --html` shows where they would go)",
            err=True,
        )
        return None
    options = AllocateOptions(percentage_of_nodes_to_score=100)
    fits: dict[str, list[str]] = {}
    try:
        for node in cluster.nodes:
            alone = replace(cluster, nodes=[node])
            for pod in pods:
                if schedule(alone, [pod], options=options)[0].node is not None:
                    fits.setdefault(node.name, []).append(label_of(pod))
    except DrasatError as exc:
        echo(f"notice: the map leaves out which pending pods could go where: {exc}", err=True)
        return None
    return fits
