"""``policy/v1`` PodDisruptionBudget, reduced to what preemption reads: which pods it covers, how many may go.

kube-scheduler's preemption prefers victims whose eviction breaks no budget: a budget's
``status.disruptionsAllowed`` says how many of the pods its selector matches may be disrupted now
(the disruption controller keeps it; without a status, drasat derives it from ``minAvailable`` or
``maxUnavailable`` over the matching pods that run, as that controller would).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from .meta import ApiModel, TypedObject, empty_dict, empty_list

_OPEN = ConfigDict(extra="allow", defer_build=True)


class LabelSelectorRequirement(ApiModel):
    """One ``matchExpressions`` entry: key, operator (In, NotIn, Exists, DoesNotExist), values."""

    model_config = _OPEN

    key: str
    operator: str
    values: list[str] = Field(default_factory=empty_list)


class LabelSelector(ApiModel):
    """``matchLabels`` and ``matchExpressions``, all of which must hold (an empty selector matches every pod)."""

    model_config = _OPEN

    match_labels: dict[str, str] = Field(default_factory=empty_dict)
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=empty_list)

    def matches(self, labels: dict[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        for r in self.match_expressions:
            present, value = r.key in labels, labels.get(r.key)
            held = {
                "In": present and value in r.values,
                "NotIn": not present or value not in r.values,
                "Exists": present,
                "DoesNotExist": not present,
            }.get(r.operator, False)
            if not held:
                return False
        return True


class PodDisruptionBudgetSpec(ApiModel):
    """Which pods the budget covers, and how many must stay (``minAvailable``) or may go (``maxUnavailable``)."""

    model_config = _OPEN

    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None


class PodDisruptionBudgetStatus(ApiModel):
    """What the disruption controller computed: how many covered pods may be disrupted now."""

    model_config = _OPEN

    disruptions_allowed: int | None = None


class PodDisruptionBudget(TypedObject):
    """A PodDisruptionBudget; every field beyond those preemption reads is kept verbatim."""

    model_config = _OPEN

    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus | None = None
