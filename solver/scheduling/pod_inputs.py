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


def refuse_uncountable_bound_pods(cluster: Cluster, locate: Callable[[Any], Location | None] | None = None) -> None:
    """Raise InputError naming file, object and field when a pod bound to a node (whose requests are that
    node's load) asks for what the API server would not store or kube-scheduler cannot count: a negative
    or fractional extended resource, a request above its limit, a quantity beyond int64.

    Only the requests and limits are checked: the rest of a running pod is not this question's."""
    from drasat.models.validation.formats import Findings, index
    from drasat.models.validation.pod_resources import check_requirements

    from .pods import finished

    problems: list[InputProblem] = []
    for pod in cluster.pods:
        if not pod.spec.node_name or finished(pod):
            continue
        out, where = Findings(), locate(pod) if locate is not None else None
        at = (where or Location(kind=pod.kind, name=f"{namespace_of(pod)}/{pod.name}")).child("spec")
        for field, containers in (("containers", pod.spec.containers), ("initContainers", pod.spec.init_containers)):
            for i, container in enumerate(containers):
                if container.resources is not None:
                    resources = container.resources
                    here = index(at.child(field), i).child("resources")
                    check_requirements(out, here, resources.limits, resources.requests, container=True)
        problems += out.problems
    if problems:
        raise InputError(problems)
