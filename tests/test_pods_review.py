"""Review findings on pods and scheduling: what kube-scheduler and the API server do that drasat must match."""

from __future__ import annotations

import copy
import json

import yaml

from drasat.models.loader import load_text
from drasat.solver import Features
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.pod_problem import pods_problem
from drasat.solver.verification.verifier import verify

from .cluster_factory import claim, device_class, gpu_slice, make_cluster, node, pod, template, violations
from .printed import printed_allocations
from .test_schedule_cli import drasat

TEMPLATED = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]


def _stream(*docs: dict) -> str:
    return yaml.safe_dump_all(list(docs))


def _verified_solve(text: str, claims: str | None = None):
    """``drasat solve`` on ``text``; every claim it prints checked by the verifier against the same question."""
    result = drasat("solve", "-o", "json", *(["--claims", claims] if claims else []), "-", stdin=text)
    if result.exit_code == 0:
        items = json.loads(result.stdout)["items"]
        objects = [o.obj for o in load_text(text).objects]
        question = pods_problem(
            objects, node=None, pods=None, claims=claims.split(",") if claims else None, features=Features()
        )
        answer = printed_allocations(items)
        assert verify(question.problem, answer) == []
    return result


# --- 2: PreEnqueue: scheduling gates and other schedulers ---------------------------------------


def test_gated_pods_and_pods_for_another_scheduler_stay_pending_with_the_reason():
    cluster = make_cluster(
        device_class(),
        template("one-gpu"),
        node("n0"),
        gpu_slice("n0"),
        pod("gated", claims=TEMPLATED, schedulingGates=[{"name": "example.com/wait"}]),
        pod("other", claims=TEMPLATED, schedulerName="my-scheduler"),
        pod("default", claims=TEMPLATED, schedulerName="default-scheduler"),
        pod("unset", claims=TEMPLATED),
    )
    placements = schedule(cluster)
    assert [(p.pod.name, p.node) for p in placements] == [
        ("gated", None),
        ("other", None),
        ("default", "n0"),
        ("unset", "n0"),
    ]
    assert placements[0].reason.startswith("scheduling gated") and "example.com/wait" in placements[0].reason
    assert placements[1].reason.startswith("not for the default scheduler") and "my-scheduler" in placements[1].reason
    assert violations(placements) == []


def test_solve_leaves_out_a_gated_pods_claims():
    text = _stream(
        device_class(),
        template("one-gpu"),
        node("n0"),
        gpu_slice("n0"),
        pod("gated", claims=TEMPLATED, schedulingGates=[{"name": "wait"}]),
        pod("ready", claims=TEMPLATED),
    )
    result = _verified_solve(text)
    assert result.exit_code == 0, result.stderr
    assert [i["metadata"]["name"][:6] for i in json.loads(result.stdout)["items"]] == ["ready-"]
    assert "pod default/gated is not allocated: scheduling gated" in result.stderr


# --- 9: solve with Pods: one bad pod does not spoil the rest; claims no pod uses are left alone -------


def test_solve_allocates_the_other_pods_when_one_pending_pod_lacks_its_template():
    text = _stream(
        device_class(),
        template("one-gpu"),
        node("n0"),
        gpu_slice("n0"),
        pod("lost", claims=[{"name": "gpu", "resourceClaimTemplateName": "missing"}]),
        pod("ready", claims=TEMPLATED),
    )
    result = _verified_solve(text)
    assert result.exit_code == 0, result.stderr
    assert [i["metadata"]["name"][:6] for i in json.loads(result.stdout)["items"]] == ["ready-"]
    assert 'pod default/lost is not allocated: resource claim template "missing"' in result.stderr
    named = drasat("solve", "--pods", "lost", "-", stdin=text)
    assert named.exit_code == 1 and named.stdout == "" and "missing" in named.stderr


def test_solve_with_only_bound_pods_leaves_unused_claims_alone_unless_named():
    text = _stream(device_class(), node("n0"), gpu_slice("n0"), claim("unused"), pod("bound", nodeName="n0"))
    result = _verified_solve(text)
    assert result.exit_code == 0 and json.loads(result.stdout)["items"] == []
    assert "claims no pod uses are left alone" in result.stderr
    named = _verified_solve(text, claims="unused")
    assert named.exit_code == 0 and [i["metadata"]["name"] for i in json.loads(named.stdout)["items"]] == ["unused"]


# --- 7: pods the API server would never have stored are refused, naming file, object and field ----------


def _bad(edit) -> dict:
    body = pod("p", claims=copy.deepcopy(TEMPLATED))
    edit(body["spec"])
    return body


UNSTORABLE = [
    (
        lambda s: s["containers"][0]["resources"]["claims"].append({"name": "nope"}),
        'spec.containers[0].resources.claims[1].name: "nope" must be the name of one of the pod\'s spec.resourceClaims',
    ),
    (
        lambda s: s["resourceClaims"][0].update(resourceClaimName="also"),
        "spec.resourceClaims[0]: exactly one of `resourceClaimName` or `resourceClaimTemplateName` is required",
    ),
    (
        lambda s: s.update(
            affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
        ),
        "nodeSelectorTerms: must have at least one node selector term",
    ),
    (
        lambda s: s.update(tolerations=[{"key": "a", "operator": "Gt", "value": "1"}]),
        'spec.tolerations[0].operator: "Gt" is not a toleration operator: use Equal or Exists',
    ),
]


def test_schedule_and_solve_refuse_a_pod_the_api_server_would_not_store():
    for edit, message in UNSTORABLE:
        text = _stream(device_class(), template("one-gpu"), node("n0"), gpu_slice("n0"), _bad(edit))
        for command in ("schedule", "solve"):
            result = drasat(command, "-", stdin=text)
            assert result.exit_code == 2 and result.stdout == "", (command, message, result.stderr)
            assert "<stdin>" in result.stderr and "Pod/default/p" in result.stderr and message in result.stderr, (
                result.stderr
            )
            assert "Traceback" not in result.stderr


def test_schedule_refuses_an_unstorable_template_the_pod_uses():
    broken = template("one-gpu")
    broken["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = -1
    result = drasat(
        "schedule", "-", stdin=_stream(device_class(), broken, node("n0"), gpu_slice("n0"), pod("p", claims=TEMPLATED))
    )
    assert result.exit_code == 2 and "ResourceClaimTemplate/default/one-gpu" in result.stderr
    assert "count" in result.stderr and result.stdout == ""


def test_validate_refuses_a_toleration_operator_other_than_exists_or_equal():
    device_tolerant = claim("c")
    device_tolerant["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
        {"key": "a", "operator": "Gt", "value": "1"}
    ]
    text = _stream(pod("p", tolerations=[{"key": "a", "operator": "Lt", "value": "1"}]), device_tolerant)
    result = drasat("validate", "-", stdin=text)
    said = result.stderr + result.stdout
    assert result.exit_code == 2 and 'spec.tolerations[0].operator: "Lt" is not a toleration operator' in said
    assert 'exactly.tolerations[0].operator: "Gt" is not a toleration operator' in said


# --- 8: the summary line in kube-scheduler's FitError form ---------------------------------------------


def test_summary_sorts_count_and_reason_as_strings_and_ends_with_a_period():
    from drasat.solver.scheduling.plugins.node_filters import summary

    assert summary(12, [["b"]] * 10 + [["a"]] * 2) == "0/12 nodes are available: 10 b, 2 a."


def _pinned(*names: str) -> dict:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(names)}]}
                ]
            }
        }
    }


def test_nodes_outside_a_metadata_name_pin_did_not_satisfy_node_affinity():
    docs = [
        device_class(),
        node("n0", cpu="1"),
        gpu_slice("n0"),
        node("n1"),
        gpu_slice("n1"),
        node("n2"),
        gpu_slice("n2"),
    ]
    cluster = make_cluster(*docs, pod("p", requests={"cpu": "2"}, affinity=_pinned("n0")))
    (placement,) = schedule(cluster)
    assert placement.reason == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    placed = schedule(make_cluster(*docs, pod("p", claims=TEMPLATED, affinity=_pinned("n2")), template("one-gpu")))
    assert placed[0].node == "n2" and violations(placed) == []


def test_a_claim_reserved_for_256_consumers_reads_resourceclaim_in_use():
    full = [{"resource": "pods", "name": f"u-{i}", "uid": f"uid-{i}"} for i in range(256)]
    allocated = {
        "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n0", "device": "gpu-0"}]}
    }
    cluster = make_cluster(
        device_class(),
        node("n0"),
        gpu_slice("n0"),
        claim("shared", allocation=allocated, reservedFor=full),
        pod("p", claims=[{"name": "c", "resourceClaimName": "shared"}]),
    )
    (placement,) = schedule(cluster)
    assert placement.reason == "0/1 nodes are available: resourceclaim in use."


# --- 3, 4: DRA node-allocatable amounts in the pod footprint and the pod-level check -----------------------


def _status(containers: list[str], mapped: str | None = None, per_container: str | None = None, resource: str = "cpu"):
    from drasat.models.core import NodeAllocatableResourceClaimStatus

    body: dict = {"resourceClaimName": "c", "containers": containers}
    if mapped:
        body["mapping"] = [{"name": resource, "quantity": mapped}]
    if per_container:
        body["overhead"] = [{"name": resource, "perContainer": per_container}]
    return NodeAllocatableResourceClaimStatus.model_validate(body)


def _model_pod(spec: dict):
    from drasat.models.core import Pod

    return Pod.model_validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})


def _cpu(name: str, cpu: str, **extra) -> dict:
    return {"name": name, "image": "busybox", "resources": {"requests": {"cpu": cpu}}, **extra}


def test_per_container_dra_overhead_of_init_containers_is_added_after_the_init_peak():
    from drasat.solver.scheduling.plugins.node_resources import pod_requests

    pod_obj = _model_pod({"containers": [_cpu("main", "1")], "initContainers": [_cpu("init", "4")]})
    # upstream: max(1 main, 4 init) = 4, then both containers' 1 cpu DRA overhead: 6 (not max(1+1, 4+1) = 5)
    assert pod_requests(pod_obj, [_status(["init", "main"], per_container="1")])["cpu"] == 6


def test_pod_overhead_is_not_counted_in_the_pod_level_check():
    from drasat.solver.scheduling.plugins.node_resources import pod_level_violation

    pod_obj = _model_pod(
        {"containers": [_cpu("main", "2")], "overhead": {"cpu": "1"}, "resources": {"requests": {"cpu": "3"}}}
    )
    assert pod_level_violation(pod_obj, [_status(["main"], mapped="1")], enabled=True) == ""  # overhead apart
    assert "pod level request for cpu" in pod_level_violation(pod_obj, [_status(["main"], mapped="2")], enabled=True)


# --- 5: a limit without a request is the request (API server defaulting) -----------------------------------


def _limited(name: str, limits: dict, **spec) -> dict:
    body = pod(name, **spec)
    body["spec"]["containers"][0]["resources"] = {"limits": limits}
    return body


def test_a_limit_without_a_request_counts_as_the_request():
    cluster = make_cluster(
        device_class(extended="example.com/gpu"),
        node("n0", cpu="8"),
        gpu_slice("n0", 4),
        _limited("a", {"cpu": "6", "example.com/gpu": "2"}),
        _limited("b", {"cpu": "6"}),
    )
    placements = schedule(cluster)
    assert [p.node for p in placements] == ["n0", None] and placements[1].reason.endswith("1 Insufficient cpu.")
    (made,) = placements[0].claims
    assert made.spec.devices.requests[0].exactly.count == 2 and len(made.status.allocation.devices.results) == 2
    assert violations(placements) == []


def test_a_pod_level_limit_without_a_request_counts_as_the_request():
    # defaultPodRequests: no container requests cpu, so the pod-level request is the pod-level limit (6)
    level = pod("a", resources={"limits": {"cpu": "6"}})
    cluster = make_cluster(node("n0", cpu="8"), level, _limited("b", {"cpu": "3"}), gates={"PodLevelResources": True})
    placements = schedule(cluster)
    assert [p.node for p in placements] == ["n0", None] and violations(placements) == []
    # a container requesting cpu (here by its limit, 1) makes the pod-level request the containers' sum
    summed = _limited("a", {"cpu": "1"}, resources={"limits": {"cpu": "6"}})
    placements = schedule(make_cluster(node("n0", cpu="8"), summed, _limited("b", {"cpu": "3"})))
    assert [p.node for p in placements] == ["n0", "n0"] and violations(placements) == []


# --- 10: a pod named twice ------------------------------------------------------------------------------


def test_a_pod_named_twice_in_pods_is_refused():
    text = _stream(device_class(), template("one-gpu"), node("n0"), gpu_slice("n0"), pod("p1", claims=TEMPLATED))
    for command in ("schedule", "solve"):
        for names in ("p1,p1", "p1,default/p1"):
            result = drasat(command, "--pods", names, "-", stdin=text)
            assert result.exit_code == 2 and result.stdout == "", (command, result.stdout)
            assert "Pod default/p1 is named twice in --pods" in result.stderr
    once = drasat("schedule", "-o", "json", "--pods", "p1", "-", stdin=text)
    assert once.exit_code == 0
    placements = schedule(
        make_cluster(device_class(), template("one-gpu"), node("n0"), gpu_slice("n0"), pod("p1", claims=TEMPLATED))
    )
    assert violations(placements) == [] and placements[0].node == "n0"


# --- 11: the default profile's other scores ----------------------------------------------------------------


def test_prefer_no_schedule_taints_weigh_against_a_node():
    soft = [{"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}]
    docs = [device_class(), template("one-gpu"), node("a", taints=soft), gpu_slice("a"), node("b"), gpu_slice("b")]
    placements = schedule(make_cluster(*docs, pod("p", claims=TEMPLATED)))
    assert placements[0].node == "b" and violations(placements) == []
    tolerated = pod("p", claims=TEMPLATED, tolerations=[{"key": "spot", "operator": "Exists"}])
    assert schedule(make_cluster(*docs, tolerated))[0].node == "a"


def test_preferred_node_affinity_weighs_for_a_node():
    prefer = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}}
            ]
        }
    }
    docs = [
        device_class(),
        template("one-gpu"),
        node("a", labels={"zone": "a"}),
        gpu_slice("a"),
        node("b", labels={"zone": "b"}),
        gpu_slice("b"),
    ]
    placements = schedule(make_cluster(*docs, pod("p", claims=TEMPLATED, affinity=prefer)))
    assert placements[0].node == "b" and violations(placements) == []


def test_balanced_allocation_breaks_a_least_allocated_tie():
    # least allocated: a = (50 + 90) / 2 = 70, b = (70 + 70) / 2 = 70; balanced: a 80, b 100
    docs = [
        node("a-skewed", cpu="10", memory="10Gi"),
        node("b-even", cpu="10", memory="10Gi"),
        pod("on-a", nodeName="a-skewed", requests={"cpu": "4", "memory": "0"}),
        pod("on-b", nodeName="b-even", requests={"cpu": "2", "memory": "2Gi"}),
    ]
    placements = schedule(make_cluster(*docs, pod("p", requests={"cpu": "1", "memory": "1Gi"})))
    assert placements[0].node == "b-even" and violations(placements) == []


def test_scoring_defaults_apply_to_init_containers_but_not_to_the_fit_filter():
    from fractions import Fraction

    from drasat.solver.scheduling.plugins.node_resources import pod_requests

    pod_obj = _model_pod({"containers": [_cpu("main", "10m")], "initContainers": [{"name": "init", "image": "x"}]})
    assert pod_requests(pod_obj, defaults=True)["cpu"] == Fraction(1, 10)  # the init container's 100m default
    assert pod_requests(pod_obj)["cpu"] == Fraction(1, 100)


# --- 12: the extended-resource claim's generated name --------------------------------------------------


def test_a_long_pods_extended_resource_claim_name_is_cut_as_generate_name_does():
    long_name = "p" * 50
    cluster = make_cluster(
        device_class(extended="example.com/gpu"),
        node("n0"),
        gpu_slice("n0"),
        pod(long_name, requests={"example.com/gpu": "1"}),
    )
    (placement,) = schedule(cluster)
    (made,) = placement.claims
    base = (long_name + "-extended-resources-")[:58]
    assert made.name.startswith(base) and len(made.name) == 63 and violations([placement]) == []


# --- 13: the pod-level limits check: hugepages, and only with the PodLevelResources gate --------------------


def test_pod_level_hugepages_limit_must_cover_container_hugepages_plus_dra_and_only_with_the_gate():
    from drasat.solver.scheduling.plugins.node_resources import pod_level_violation

    mapped = _status(["main"], mapped="2Mi", resource="hugepages-2Mi")
    # the container's hugepages request below its limit lets the request check pass, so the limit check decides
    container = {
        "name": "main",
        "image": "x",
        "resources": {"requests": {"hugepages-2Mi": "2Mi"}, "limits": {"hugepages-2Mi": "4Mi"}},
    }
    pod_obj = _model_pod(
        {
            "containers": [container],
            "resources": {"requests": {"hugepages-2Mi": "4Mi"}, "limits": {"hugepages-2Mi": "4Mi"}},
        }
    )
    assert pod_level_violation(pod_obj, [mapped], enabled=True) == (
        "pod level limit for hugepages-2Mi is insufficient to cover the aggregated container and "
        "node-allocatable DRA limits"
    )
    assert pod_level_violation(pod_obj, [mapped], enabled=False) == ""


def test_without_the_pod_level_resources_gate_the_pod_level_check_does_not_run():
    from .test_node_resources import CPU_REQUEST, _cpu_slice, _pod_with_claim, _user

    docs = [
        device_class("cpu.example.com", "cpu.example.com"),
        node("my-node", cpu="16"),
        _cpu_slice("my-node"),
        *_pod_with_claim("a", CPU_REQUEST, [_user("main")], resources={"requests": {"cpu": "2"}}),
    ]
    gates = {"DRANodeAllocatableResources": True}
    assert schedule(make_cluster(*docs, gates=gates))[0].node is None
    placements = schedule(make_cluster(*docs, gates={**gates, "PodLevelResources": False}))
    assert placements[0].node == "my-node" and violations(placements) == []


def test_balanced_allocation_skips_a_best_effort_pod():
    # a pod without requests: least allocated (with the 100m/200Mi defaults) ties, balanced allocation is
    # skipped as upstream does, so the tie goes by name and not to the node whose shares happen to be even
    docs = [
        node("a-skewed", cpu="10", memory="10Gi"),
        node("b-even", cpu="10", memory="10Gi"),
        pod("on-a", nodeName="a-skewed", requests={"cpu": "4", "memory": "0"}),
        pod("on-b", nodeName="b-even", requests={"cpu": "2", "memory": "2Gi"}),
    ]
    placements = schedule(make_cluster(*docs, pod("p")))
    assert placements[0].node == "a-skewed" and violations(placements) == []
