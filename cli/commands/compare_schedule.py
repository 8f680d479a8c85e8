"""``drasat compare --schedule``: one-by-one placement against the joint one, on the same cluster."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drasat.cli.allocation_options import names_option
from drasat.cli.nothing_to_do import say_no_pending_pods
from drasat.cli.render.schedule import schedule_comparison_table
from drasat.cli.render.text import echo
from drasat.models.errors import InputError
from drasat.solver.allocation.options import Objective, Solver

if TYPE_CHECKING:
    from drasat.models.bundle import Bundle


def compare_schedule(
    bundle: Bundle,
    node: str | None,
    claims: str | None,
    pods: str | None,
    feature_gates: str,
    objective: Objective,
    timeout: float,
    workers: int,
    cel_engine: str | None,
    html_file: str | None = None,
) -> tuple[dict[str, Any], str, list[str]] | None:
    """The comparison as data and as a table, and the pods compared (``ns/name``); --node and --claims belong
    to the claims comparison. None when no pod is pending: nothing to compare (the notice says so)."""
    from drasat.solver import Features
    from drasat.solver.cel import SelectorEvaluator
    from drasat.solver.report.schedule_comparison import compare_schedules
    from drasat.solver.scheduling.cluster import cluster_from_objects
    from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
    from drasat.solver.scheduling.pod_inputs import refuse_unstorable_pods
    from drasat.solver.scheduling.pods import pending_pods, select_pods

    if node is not None or claims is not None:
        raise InputError(
            "--node and --claims compare one node's claims; --schedule places Pods over every node "
            "(choose them with --pods)"
        )
    cluster = cluster_from_objects(list(bundle), Features.parse(feature_gates))
    chosen = select_pods(cluster, names_option(pods) or []) if pods is not None else pending_pods(cluster)
    refuse_unstorable_pods(cluster, chosen, bundle.location_of)
    if not chosen:
        say_no_pending_pods()
        return None
    options = AllocateOptions(Solver.CP_SAT, objective, timeout, workers, SelectorEvaluator(cel_engine))
    result = compare_schedules(cluster, chosen, options=options)
    if html_file is not None:
        _write_map(html_file, cluster, result)
    return result.to_data(), schedule_comparison_table(result), list(result.one_by_one.nodes)


def _write_map(path: str, cluster: Any, result: Any) -> None:
    """The map of the cluster as it is, with both placements beside it (each its own answer)."""
    from drasat.cli.render.html import MapExtras, PlacedSide, write_map
    from drasat.cli.render.map_data import reports_after

    reports = reports_after(cluster, [])
    sides = [PlacedSide(s.method, s.placements) for s in (result.one_by_one, result.batch)]
    write_map(reports, path, MapExtras(sides=sides))
    echo(f"wrote {path}: {sum(len(r.devices) for r in reports)} devices on {len(reports)} nodes", err=True)
