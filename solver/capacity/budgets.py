"""PodDisruptionBudgets as preemption reads them: which victims' evictions break a budget.

As kube-scheduler's ``filterPodsWithPDBViolation``: each budget allows ``status.disruptionsAllowed``
evictions of the pods its selector matches (in its namespace; an empty selector matches none there,
and a pod without labels is never counted); going through the victims in order, each matching one
takes one from every budget it matches, and a pod that takes a budget below zero breaks it. Without
a status, the allowance is what the disruption controller would write: the matching running pods less
``minAvailable``, or ``maxUnavailable`` (percentages of the matching pods, rounded up).
"""

from __future__ import annotations

from math import ceil

from drasat.models.core import Pod
from drasat.models.policy import PodDisruptionBudget
from drasat.solver.scheduling.cluster import Cluster, namespace_of
from drasat.solver.scheduling.pods import finished


class Budgets:
    """The cluster's budgets, each with the evictions it allows now."""

    def __init__(self, cluster: Cluster) -> None:
        running = [p for p in cluster.pods if p.spec.node_name and not finished(p)]
        self.budgets = [(b, _allowed(b, running)) for b in cluster.disruption_budgets]

    def split(self, pods: list[Pod]) -> tuple[list[Pod], list[Pod]]:
        """The pods (in order) whose eviction breaks some budget, and the others."""
        left = [allowed for _, allowed in self.budgets]
        violating: list[Pod] = []
        keeping: list[Pod] = []
        for pod in pods:
            broken = False
            for i, (budget, _) in enumerate(self.budgets):
                if _covers(budget, pod):
                    left[i] -= 1
                    broken |= left[i] < 0
            (violating if broken else keeping).append(pod)
        return violating, keeping

    def broken(self, pods: list[Pod]) -> int:
        """How many of ``pods``, evicted together, break a budget."""
        return len(self.split(pods)[0])


def _covers(budget: PodDisruptionBudget, pod: Pod) -> bool:
    selector = budget.spec.selector
    if selector is None or not (selector.match_labels or selector.match_expressions):
        return False
    labels = dict(pod.metadata.labels)
    return bool(labels) and namespace_of(pod) == (budget.namespace or "default") and selector.matches(labels)


def _allowed(budget: PodDisruptionBudget, running: list[Pod]) -> int:
    if budget.status is not None and budget.status.disruptions_allowed is not None:
        return budget.status.disruptions_allowed
    matched = sum(1 for p in running if _covers(budget, p))
    spec = budget.spec
    if spec.min_available is not None:
        return max(0, matched - _scaled(spec.min_available, matched))
    if spec.max_unavailable is not None:
        return max(0, _scaled(spec.max_unavailable, matched))
    return 0


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.endswith("%") and text[:-1].isdigit():
        return ceil(int(text[:-1]) * total / 100)
    return int(text) if text.isdigit() else 0
