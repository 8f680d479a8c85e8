"""drasat's allocation engine: inventory, candidates, CP-SAT model, objectives, results; greedy; verify.

``solver`` never reads files: it takes model objects (a :class:`Problem`) and returns
model objects. Names are imported lazily so that ``import drasat.solver.cel`` does not
pull in OR-Tools.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Allocation": "api", "Stats": "api", "allocate": "api",
    "Features": "features", "NodeInfo": "problem", "Problem": "problem", "problem_from_objects": "problem",
    "Cluster": "cluster", "cluster_from_objects": "cluster", "AllocateOptions": "node_dra",
    "Placement": "scheduling", "schedule": "scheduling", "resolve_pod_claims": "pods",
    "Comparison": "comparison", "compare": "comparison",
    "Explanation": "explanation", "explain": "explanation",
    "PodExplanation": "pod_explanation", "explain_pods": "pod_explanation",
}

__all__ = sorted(_EXPORTS)


def __dir__() -> list[str]:
    """The public API (loaded lazily, so ``dir()`` would otherwise show only what was touched)."""
    return list(__all__)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
