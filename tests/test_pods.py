"""A pod's claims resolved as Kubernetes resolves them: templates, named claims, PodGroups, reservations."""

from __future__ import annotations

import re

from drasat.solver.scheduling.extended import extended_claim
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.pods import (
    EXTENDED_CLAIM_ANNOTATION,
    POD_CLAIM_ANNOTATION,
    RESERVED_FOR_MAX,
    generated_name,
    resolve_pod_claims,
    template_claim_base,
)

from .cluster_factory import GPU, claim, device_class, gpu_slice, make_cluster, node, pod, template, violations

TEMPLATED = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]


def _only_pod(cluster):
    return resolve_pod_claims(cluster.pods[0], cluster)


def test_template_claim_is_named_after_pod_and_claim_and_owned_by_the_pod():
    cluster = make_cluster(template("one-gpu"), pod("trainer-0", claims=TEMPLATED))
    (use,) = _only_pod(cluster).uses
    assert re.fullmatch(r"trainer-0-gpu-[bcdfghjklmnpqrstvwxz2456789]{5}", use.claim.name)
    assert use.generated and use.claim.namespace == "default"
    (owner,) = use.claim.metadata.owner_references
    assert (owner.kind, owner.name, owner.controller, owner.uid) == ("Pod", "trainer-0", True, use.consumer.uid)
    assert use.claim.metadata.annotations[POD_CLAIM_ANNOTATION] == "gpu"
    assert use.claim.spec.devices.requests[0].exactly.device_class_name == GPU
    assert (use.consumer.resource, use.consumer.name) == ("pods", "trainer-0")


def test_generated_names_are_reproducible_and_differ_between_pods():
    cluster = make_cluster(template("one-gpu"), pod("a", claims=TEMPLATED), pod("b", claims=TEMPLATED))
    first = [resolve_pod_claims(p, cluster).uses[0].claim.name for p in cluster.pods]
    again = [resolve_pod_claims(p, cluster).uses[0].claim.name for p in cluster.pods]
    assert first == again and first[0] != first[1]


def test_long_names_are_cut_in_proportion_like_the_controller():
    base = template_claim_base("p" * 60, "c" * 30)
    # 92 characters with both hyphens: each part keeps 57/92 of its length, and the trailing hyphen goes
    assert base == "p" * 37 + "-" + "c" * 18
    assert len(generated_name(base, "x")) <= 63


def test_a_claim_the_pod_status_names_must_be_owned_by_the_pod():
    stranger = claim("someone-elses")
    body = pod("p", claims=TEMPLATED)
    body["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "someone-elses"}]}
    cluster = make_cluster(template("one-gpu"), stranger, body)
    assert "was not created for Pod default/p (Pod is not owner)" in _only_pod(cluster).unresolvable


def test_an_existing_generated_claim_is_used_not_generated_again():
    cluster = make_cluster(template("one-gpu"), pod("p", claims=TEMPLATED))
    generated = _only_pod(cluster).uses[0].claim
    again = make_cluster(template("one-gpu"), pod("p", claims=TEMPLATED), generated.to_api())
    use = _only_pod(again).uses[0]
    assert use.claim.name == generated.name and not use.generated


def test_a_claim_the_controller_made_is_found_by_owner_and_annotation():
    made = claim("p-gpu-abcde")
    made["metadata"]["annotations"] = {POD_CLAIM_ANNOTATION: "gpu"}
    body = pod("p", claims=TEMPLATED)
    body["metadata"]["uid"] = "uid-p"
    made["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}
    ]
    use = _only_pod(make_cluster(template("one-gpu"), made, body)).uses[0]
    assert use.claim.name == "p-gpu-abcde" and not use.generated


def test_missing_named_claim_and_missing_template_make_the_pod_unschedulable():
    named = make_cluster(pod("p", claims=[{"name": "gpu", "resourceClaimName": "nope"}]))
    assert _only_pod(named).unresolvable == 'resourceclaim.resource.k8s.io "nope" not found'
    templated = make_cluster(pod("p", claims=TEMPLATED))
    assert 'resourceclaimtemplate.resource.k8s.io "one-gpu" not found' in _only_pod(templated).unresolvable


def test_claims_and_templates_of_other_namespaces_are_not_seen():
    cluster = make_cluster(
        claim("shared", namespace="team-a"),
        template("one-gpu", namespace="team-a"),
        pod("p", namespace="team-b", claims=[{"name": "c", "resourceClaimName": "shared"}]),
        pod("q", namespace="team-b", claims=TEMPLATED),
    )
    assert "not found" in resolve_pod_claims(cluster.pods[0], cluster).unresolvable
    assert "not found" in resolve_pod_claims(cluster.pods[1], cluster).unresolvable
    same = make_cluster(
        claim("shared", namespace="team-a"),
        pod("p", namespace="team-a", claims=[{"name": "c", "resourceClaimName": "shared"}]),
    )
    assert _only_pod(same).uses[0].claim.namespace == "team-a"


def _reserved(n: int) -> list[dict]:
    return [{"resource": "pods", "name": f"user-{i}", "uid": f"uid-{i}"} for i in range(n)]


ALLOCATED = {
    "allocation": {"devices": {"results": [{"request": "gpu", "driver": GPU, "pool": "n1", "device": "gpu-0"}]}}
}


def test_a_claim_reserved_for_256_consumers_takes_no_more():
    full = make_cluster(
        claim("shared", **ALLOCATED, reservedFor=_reserved(RESERVED_FOR_MAX)),
        pod("p", claims=[{"name": "c", "resourceClaimName": "shared"}]),
    )
    assert "resourceclaim in use" == _only_pod(full).unresolvable
    room = make_cluster(
        claim("shared", **ALLOCATED, reservedFor=_reserved(RESERVED_FOR_MAX - 1)),
        pod("p", claims=[{"name": "c", "resourceClaimName": "shared"}]),
    )
    assert _only_pod(room).unresolvable == "" and _only_pod(room).uses[0].allocated


def test_a_pod_already_among_the_256_is_fine():
    body = pod("p", claims=[{"name": "c", "resourceClaimName": "shared"}])
    body["metadata"]["uid"] = "uid-7"
    cluster = make_cluster(claim("shared", **ALLOCATED, reservedFor=_reserved(RESERVED_FOR_MAX)), body)
    assert _only_pod(cluster).unresolvable == "" and _only_pod(cluster).uses[0].reserved


def _group(*claims: dict) -> dict:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "training", "namespace": "default"},
        "spec": {"resourceClaims": list(claims)},
    }


GROUP_GATE = {"DRAWorkloadResourceClaims": True}


def test_a_pod_claim_matching_the_group_claim_is_the_groups():
    entry = {"name": "shared-gpu", "resourceClaimTemplateName": "one-gpu"}
    members = [pod(f"w-{i}", claims=[entry], schedulingGroup={"podGroupName": "training"}) for i in range(2)]
    cluster = make_cluster(template("one-gpu"), _group(entry), *members, gates=GROUP_GATE)
    uses = [resolve_pod_claims(p, cluster).uses[0] for p in cluster.pods]
    assert uses[0].claim.name == uses[1].claim.name and uses[0].claim.name.startswith("training-shared-gpu-")
    assert {(u.consumer.resource, u.consumer.name, u.consumer.api_group) for u in uses} == {
        ("podgroups", "training", "scheduling.k8s.io")
    }
    assert uses[0].claim.metadata.owner_references[0].kind == "PodGroup"


def test_a_pod_claim_that_differs_from_the_group_claim_stays_the_pods():
    differs = {"name": "shared-gpu", "resourceClaimTemplateName": "other"}
    member = pod("w-0", claims=[differs], schedulingGroup={"podGroupName": "training"})
    cluster = make_cluster(
        template("other"),
        _group({"name": "shared-gpu", "resourceClaimTemplateName": "one-gpu"}),
        member,
        gates=GROUP_GATE,
    )
    use = _only_pod(cluster).uses[0]
    assert use.consumer.resource == "pods" and use.claim.name.startswith("w-0-shared-gpu-")


def test_without_the_gate_a_group_template_claim_gets_no_claim_and_the_pod_waits():
    # seed 000: with DRAWorkloadResourceClaims disabled, no ResourceClaim is created (not one per pod)
    entry = {"name": "shared-gpu", "resourceClaimTemplateName": "one-gpu"}
    cluster = make_cluster(
        template("one-gpu"), _group(entry), pod("w-0", claims=[entry], schedulingGroup={"podGroupName": "training"})
    )
    resolved = _only_pod(cluster)
    assert resolved.uses == [] and "DRAWorkloadResourceClaims feature disabled" in resolved.unresolvable
    assert 'pod claim "shared-gpu" matches a claim of PodGroup default/training' in resolved.unresolvable
    named = {"name": "c", "resourceClaimName": "mine"}
    other = make_cluster(
        claim("mine"), _group(named), pod("w-0", claims=[named], schedulingGroup={"podGroupName": "training"})
    )
    assert _only_pod(other).uses[0].consumer.resource == "pods"  # an existing claim is still the pod's


def test_with_the_gate_a_missing_podgroup_leaves_the_pod_pending_naming_it():
    entry = {"name": "shared-gpu", "resourceClaimTemplateName": "one-gpu"}
    cluster = make_cluster(
        device_class(),
        template("one-gpu"),
        node("n0"),
        gpu_slice("n0"),
        pod("w-0", claims=[entry], schedulingGroup={"podGroupName": "training"}),
        gates=GROUP_GATE,
    )
    assert 'podgroup.scheduling.k8s.io "training" not found' in _only_pod(cluster).unresolvable
    (placement,) = schedule(cluster)
    assert placement.node is None and '"training" not found' in placement.reason and violations([placement]) == []


def test_extended_resources_by_name_and_by_class_prefix():
    by_name = pod("p", requests={"example.com/gpu": "2", "cpu": "1"})
    by_class = pod("q", requests={f"deviceclass.resource.kubernetes.io/{GPU}": "1"})
    unknown = pod("r", requests={"example.com/fpga": "1"})
    cluster = make_cluster(device_class(extended="example.com/gpu"), by_name, by_class, unknown)
    pcs = [resolve_pod_claims(p, cluster) for p in cluster.pods]
    assert [pc.extended for pc in pcs] == [{"example.com/gpu": 2}, {f"deviceclass.resource.kubernetes.io/{GPU}": 1}, {}]
    made, mappings = extended_claim(cluster.pods[0], pcs[0].extended, cluster)
    (request,) = made.spec.devices.requests
    assert (request.name, request.exactly.device_class_name, request.exactly.count) == ("container-0-request-1", GPU, 2)
    assert made.metadata.annotations == {EXTENDED_CLAIM_ANNOTATION: "true"} and made.name.startswith(
        "p-extended-resources-"
    )
    assert [(m.container_name, m.resource_name, m.request_name) for m in mappings] == [
        ("main", "example.com/gpu", "container-0-request-1")
    ]


def test_extended_resources_are_ignored_with_the_gate_off():
    cluster = make_cluster(
        device_class(extended="example.com/gpu"),
        pod("p", requests={"example.com/gpu": "1"}),
        gates={"DRAExtendedResource": False},
    )
    assert _only_pod(cluster).extended == {}


def test_init_containers_reuse_the_devices_of_later_containers_and_keep_only_their_largest_request():
    def user(name: str, gpus: str, **extra) -> dict:
        return {"name": name, "image": "busybox", "resources": {"requests": {"example.com/gpu": gpus}}, **extra}

    body = pod("p")
    body["spec"]["initContainers"] = [
        user("init-a", "3"),
        user("init-b", "1"),
        user("side", "1", restartPolicy="Always"),
    ]
    body["spec"]["containers"] = [user("main", "2")]
    cluster = make_cluster(device_class(extended="example.com/gpu"), body)
    made, mappings = extended_claim(cluster.pods[0], {"example.com/gpu": 5}, cluster)
    # side (index 2) and main (index 3) have their own devices; init-a needs 3 = 1 (side) + 2 (main) + 0 more,
    # init-b needs 1 = side's: neither needs a request of its own
    assert [(r.name, r.exactly.count) for r in made.spec.devices.requests] == [
        ("container-2-request-0", 1),
        ("container-3-request-0", 2),
    ]
    assert [(m.container_name, m.request_name) for m in mappings] == [
        ("side", "container-2-request-0"),
        ("main", "container-3-request-0"),
        ("init-a", "container-2-request-0"),
        ("init-a", "container-3-request-0"),
        ("init-b", "container-2-request-0"),
    ]
    body["spec"]["initContainers"][0] = user("init-a", "5")
    bigger = make_cluster(device_class(extended="example.com/gpu"), body)
    made, _ = extended_claim(bigger.pods[0], {"example.com/gpu": 5}, bigger)
    assert ("container-0-request-0", 2) in [(r.name, r.exactly.count) for r in made.spec.devices.requests]


def test_a_group_claim_the_podgroup_status_names_is_used_by_a_new_member():
    entry = {"name": "shared-gpu", "resourceClaimTemplateName": "one-gpu"}
    group = _group(entry)
    group["metadata"]["uid"] = "uid-group"
    group["status"] = {"resourceClaimStatuses": [{"name": "shared-gpu", "resourceClaimName": "training-made-xyz"}]}
    on_n1 = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    made = claim("training-made-xyz", allocation={**ALLOCATED["allocation"], "nodeSelector": on_n1})
    made["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "name": "training",
            "uid": "uid-group",
            "controller": True,
        }
    ]
    member = pod("w-new", claims=[entry], schedulingGroup={"podGroupName": "training"})
    cluster = make_cluster(template("one-gpu"), group, made, member, gates=GROUP_GATE)
    (use,) = _only_pod(cluster).uses
    assert (use.claim.name, use.generated, use.allocated) == ("training-made-xyz", False, True)
    assert use.consumer.resource == "podgroups"
    on_nodes = make_cluster(
        device_class(),
        template("one-gpu"),
        group,
        made,
        member,
        node("n0"),
        gpu_slice("n0"),
        node("n1"),
        gpu_slice("n1"),
        gates=GROUP_GATE,
    )
    (placement,) = schedule(on_nodes)
    assert placement.node == "n1" and placement.allocations == {} and violations([placement]) == []
    assert [c.name for c in placement.claims] == ["training-made-xyz"]
