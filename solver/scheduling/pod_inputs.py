"""Refuse Pods (and the templates and PodGroups they name) that the API server would never have stored.

``drasat validate`` reports every rule; ``schedule`` and ``solve`` with Pods must not
answer for a pod the cluster could not hold — a container naming a claim the pod does
not list, a claim with both a name and a template, an empty ``nodeSelectorTerms`` —
because the answer would describe a cluster that cannot exist. The checks are
validate's own (:func:`drasat.models.validation.validate_object`), run on the objects
the question uses only, so an unrelated broken object stays validate's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from drasat.models.core import Pod
from drasat.models.errors import InputError, InputProblem, Location
from drasat.models.meta import TypedObject
from drasat.models.validation import validate_object

from .cluster import Cluster, namespace_of


def refuse_unstorable_pods(
    cluster: Cluster, pods: Iterable[Pod], locate: Callable[[Any], Location | None] | None = None
) -> None:
    """Raise InputError naming file, object and field when a pod, or a template or PodGroup it names,
    breaks a rule the API server enforces."""
    used: dict[int, TypedObject] = {}
    for pod in pods:
        used[id(pod)] = pod
        ns = namespace_of(pod)
        for entry in pod.spec.resource_claims:
            template = cluster.templates_by_key.get((ns, entry.resource_claim_template_name or ""))
            if template is not None:
                used[id(template)] = template
        group = pod.spec.scheduling_group
        found = cluster.pod_groups_by_key.get((ns, group.pod_group_name or "")) if group is not None else None
        if found is not None:
            used[id(found)] = found
    problems: list[InputProblem] = [
        p for obj in used.values() for p in validate_object(obj, locate(obj) if locate is not None else None)
    ]
    if problems:
        raise InputError(problems)
