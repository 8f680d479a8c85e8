"""drasat's solver: one node's allocation, explanations, the verifier, scheduling, joint placement, reports.

``solver`` never reads files: it takes model objects and returns model objects (``load_paths`` and
``load_objects`` are re-exported from :mod:`drasat.models.loader` so that one import serves a library
caller). The packages, each importing only those before it: ``allocate`` (one node, all claims),
``explain`` and ``verify``, ``schedule`` (one pod at a time, as kube-scheduler), ``batch`` (every pod
at once), ``report``; ``cel`` sits below them all. Names are imported lazily so that
``import drasat.solver.cel`` does not pull in OR-Tools.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Allocation": "allocation.api",
    "Stats": "allocation.api",
    "allocate": "allocation.api",
    "Features": "allocation.features",
    "Objective": "allocation.options",
    "Solver": "allocation.options",
    "NodeInfo": "allocation.problem",
    "Problem": "allocation.problem",
    "problem_from_objects": "allocation.problem",
    "Explanation": "explanation.explain",
    "explain": "explanation.explain",
    "verify": "verification.verifier",
    "Cluster": "scheduling.cluster",
    "cluster_from_objects": "scheduling.cluster",
    "AllocateOptions": "scheduling.plugins.dynamic_resources",
    "Placement": "scheduling.one_by_one",
    "schedule": "scheduling.one_by_one",
    "resolve_pod_claims": "scheduling.pods",
    "PodExplanation": "scheduling.pod_explanation",
    "explain_pods": "scheduling.pod_explanation",
    "BatchResult": "batch.placement",
    "BatchSummary": "batch.placement",
    "schedule_batch": "batch.placement",
    "Comparison": "report.comparison",
    "compare": "report.comparison",
    "PoolInputs": "report.pool_status",
    "pool_status": "report.pool_status",
    "answer_pool_status_request": "report.pool_status",
    "NodeReport": "report.device_states",
    "DeviceReport": "report.device_states",
    "CounterReport": "report.device_states",
    "node_reports": "report.device_states",
    "RuleSelector": "report.taint_impact",
    "Impact": "report.taint_impact",
    "taint_impact": "report.taint_impact",
    "load_paths": "drasat.models.loader",
    "load_objects": "drasat.models.loader",
}

_RENAMED = {"answer_pool_status_request": "answer"}
"""Public names that differ from the module's own (``answer`` says little outside its module)."""

__all__ = sorted(_EXPORTS)


def __dir__() -> list[str]:
    """The public API (loaded lazily, so ``dir()`` would otherwise show only what was touched)."""
    return list(__all__)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        where = _EXPORTS[name]
        module = importlib.import_module(where if where.startswith("drasat.") else f"{__name__}.{where}")
        return getattr(module, _RENAMED.get(name, name))
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("drasat")
        except PackageNotFoundError:  # a source tree that was not installed
            return "unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
