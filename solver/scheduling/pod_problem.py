"""``drasat solve`` with Pods in the input: the claims of those pods (and of ``--claims``) on one node.

Without Pods, solve allocates every pending claim, as before. With Pods, the
question becomes the scheduler's for one node: the claims the pods need —
existing ones, ones generated from templates, PodGroup claims once per group and
the implicit extended-resource claims — and nothing else, unless named. Each
claim carries the consumers it will be reserved for, so the answer can show
``reservedFor`` as the scheduler writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from drasat.models.core import Pod
from drasat.models.errors import Location, Unschedulable
from drasat.models.resource import ResourceClaim, ResourceClaimConsumerReference
from drasat.models.storable import checking_once
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.problem import Problem, chosen_claims, claim_key, problem_from_objects, refuse_unstorable

from .cluster import Cluster, ObjectKey, key_of, label_of
from .extended import extended_claim
from .plugins.binding_conditions import BindingClock, binding_verdict, recover
from .plugins.node_filters import REASON_NOT_ON_NODE
from .plugins.node_resources import Resources, allocatable_of
from .pod_inputs import refuse_unstorable_pods
from .pods import not_schedulable_now, pending_pods, pod_consumer, resolve_pod_claims, select_pods


@dataclass
class PodsProblem:
    """The one-node problem, and for each claim to allocate the consumers to reserve it for."""

    problem: Problem
    consumers: dict[str, list[ResourceClaimConsumerReference]] = field(default_factory=dict)  # by claim_key
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (pod, why) pending pods whose claims are not asked
    binding_notes: list[str] = field(default_factory=list)  # claims deallocated for failed binding conditions


def select_claims(cluster: Cluster, names: Sequence[str]) -> list[ResourceClaim]:
    """Claims named ``namespace/name`` or by a bare name that only one namespace has, in the order given."""
    return chosen_claims(cluster.claims, names)


@checking_once()  # its two questions share most objects (4,000 slices of a fleet): each is checked once
def pods_problem(
    objects: Sequence[object],
    *,
    node: str | None,
    pods: Sequence[str] | None,
    claims: Sequence[str] | None,
    features: Features,
    locate: Callable[[Any], Location | None] | None = None,
    namespace: str | None = None,
    clock: BindingClock | None = None,
) -> PodsProblem:
    """The Problem ``drasat solve`` answers: pods' claims (all pending pods unless ``pods`` names some)
    plus the claims named; with neither Pods nor names, every pending claim. A pending pod that cannot have
    its claims (gated, a template missing) is left out with its reason, unless ``pods`` names it: one
    unrelated pod must not spoil the answer for the others. ``namespace`` limits the pending pods (or,
    without Pods, the pending claims) taken by default to that namespace. A pod's claim whose binding
    conditions failed or timed out at ``clock`` is deallocated first, as the scheduler's PostFilter does."""
    from .cluster import cluster_from_objects

    base = problem_from_objects(objects, node=node, claims=[], features=features, locate=locate)
    cluster = cluster_from_objects(objects, features, clock)
    named = pods is not None
    if namespace is not None and pods is None and claims is None and not cluster.pods:
        claims = [
            f"{namespace}/{c.name}"
            for c in cluster.claims
            if key_of(c)[0] == namespace and not (c.status and c.status.allocation)
        ]
    pending = [p for p in pending_pods(cluster) if namespace is None or key_of(p)[0] == namespace]
    chosen_pods = select_pods(cluster, pods) if pods is not None else (pending if claims is None else [])
    refuse_unstorable_pods(cluster, chosen_pods, locate)
    if not cluster.pods and claims is None:  # every pending claim: what problem_from_objects gives, built once
        every_pending = [c for c in cluster.claims if not (c.status and c.status.allocation)]
        refuse_unstorable(every_pending, locate)
        return PodsProblem(replace(base, claims=every_pending))
    recovery = recover(cluster, chosen_pods)
    if recovery.keys:
        cluster = recovery.cluster
        now = {key_of(c): c for c in cluster.claims}  # released or deallocated claims replace their old selves
        kept = [now[key_of(c)] for c in base.allocated if key_of(c) in now]
        base = replace(base, allocated=[c for c in kept if c.status and c.status.allocation])
    wanted: dict[ObjectKey, ResourceClaim] = {key_of(c): c for c in select_claims(cluster, claims or [])}
    node_obj = next((n for n in cluster.nodes if n.name == base.node.name), None)
    allocatable = allocatable_of(node_obj) if node_obj is not None else {}
    consumers, left_out = _gathered(chosen_pods, cluster, allocatable, named, wanted)
    refuse_unstorable(list(wanted.values()), locate)  # claims chosen here, not by problem_from_objects
    problem = replace(base, claims=list(wanted.values()))
    return PodsProblem(problem, consumers, left_out, recovery.notes())


def _gathered(
    pods: Sequence[Pod], cluster: Cluster, allocatable: Resources, named: bool, wanted: dict[ObjectKey, ResourceClaim]
) -> tuple[dict[str, list[ResourceClaimConsumerReference]], list[tuple[str, str]]]:
    """Each pod's claims added to ``wanted``, with who consumes each claim, and the pods left out with why (a
    pod the user named that cannot have its claims is an error instead)."""
    consumers: dict[str, list[ResourceClaimConsumerReference]] = {}
    left_out: list[tuple[str, str]] = []
    for pod in pods:
        found, why = _pod_claims(pod, cluster, allocatable)
        if why and named:
            raise Unschedulable(f"pod {label_of(pod)} cannot be scheduled: {why}")
        if why:
            left_out.append((label_of(pod), why))
        for claim, consumer in found:
            wanted.setdefault(key_of(claim), claim)
            if consumer not in consumers.setdefault(claim_key(claim), []):
                consumers[claim_key(claim)].append(consumer)
    return consumers, left_out


def _pod_claims(
    pod: Pod, cluster: Cluster, allocatable: Resources
) -> tuple[list[tuple[ResourceClaim, ResourceClaimConsumerReference]], str]:
    """The claims still to allocate for ``pod`` with their consumer, or why the pod cannot have them."""
    why = not_schedulable_now(pod)
    if why:
        return [], why
    pc = resolve_pod_claims(pod, cluster)
    if pc.unresolvable:
        return [], pc.unresolvable
    for use in pc.uses:
        verdict = binding_verdict(use.claim, cluster.clock, cluster.features)
        if verdict.state.gives_up:  # still reserved for others: the scheduler cannot deallocate it
            return [], f"{REASON_NOT_ON_NODE} ({verdict.describe()}; reserved for others)"
    found = [(u.claim, u.consumer.reference()) for u in pc.uses if not u.allocated]
    on_dra = {name: n for name, n in pc.extended.items() if not allocatable.get(name)}
    if on_dra:
        found.append((extended_claim(pod, on_dra, cluster)[0], pod_consumer(pod).reference()))
    return found, ""
