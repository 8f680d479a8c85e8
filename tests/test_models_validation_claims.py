"""One test per validation rule of claims, claim status, classes, templates, taint rules and core kinds.

Same method as test_models_validation.py (which holds the valid base objects):
one change to a valid object, the exact field path, words of the message.
"""

from __future__ import annotations

import pytest

from .helpers_models import CONDITION, DELETE, Edits, many, problems

R0 = "spec.devices.requests[0].exactly"
RESULT = "status.allocation.devices.results[0]"
STATUS = "status.devices[0]"

CASES: list[tuple[str, str, Edits, str, str]] = [
    # --- claims: requests --------------------------------------------------------------------
    (
        "requests limit",
        "claim",
        {
            "spec.devices.requests": many(33, lambda i: {"name": f"r{i}", "exactly": {"deviceClassName": "c"}}),
            "spec.devices.constraints": [],
            "spec.devices.config": [],
        },
        "spec.devices.requests",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "request name",
        "claim",
        {"spec.devices.requests[0].name": "GPU"},
        "spec.devices.requests[0].name",
        "must be a DNS label",
    ),
    (
        "request names unique",
        "claim",
        {"spec.devices.requests[1].name": "gpu"},
        "spec.devices.requests[1]",
        'Duplicate value: "gpu"',
    ),
    (
        "request kind required",
        "claim",
        {"spec.devices.requests[0].exactly": DELETE},
        "spec.devices.requests[0]",
        "exactly one of `exactly` or `firstAvailable` is required",
    ),
    (
        "request kind both",
        "claim",
        {"spec.devices.requests[0].firstAvailable": [{"name": "s", "deviceClassName": "c"}]},
        "spec.devices.requests[0]",
        "but both are set",
    ),
    (
        "class required",
        "claim",
        {f"{R0}.deviceClassName": ""},
        f"{R0}.deviceClassName",
        "a device class name is required",
    ),
    ("class name", "claim", {f"{R0}.deviceClassName": "GPU class"}, f"{R0}.deviceClassName", "must be a DNS subdomain"),
    (
        "selectors limit",
        "claim",
        {f"{R0}.selectors": [{"cel": {"expression": "true"}}] * 33},
        f"{R0}.selectors",
        "Too many: 33: must have at most 32 items",
    ),
    ("selector cel", "claim", {f"{R0}.selectors": [{}]}, f"{R0}.selectors[0].cel", "a selector needs a CEL expression"),
    (
        "expression empty",
        "claim",
        {f"{R0}.selectors[0].cel.expression": ""},
        f"{R0}.selectors[0].cel.expression",
        "must not be empty",
    ),
    (
        "expression length",
        "claim",
        {f"{R0}.selectors[0].cel.expression": "true" + " " * 10240},
        f"{R0}.selectors[0].cel.expression",
        "Too long: may not be more than 10240 bytes",
    ),
    ("allocation mode", "claim", {f"{R0}.allocationMode": "Some"}, f"{R0}.allocationMode", "is not an allocation mode"),
    (
        "count with All",
        "claim",
        {f"{R0}.allocationMode": "All", f"{R0}.count": 1},
        f"{R0}.count",
        "must not be set when allocationMode is All",
    ),
    ("count positive", "claim", {f"{R0}.count": -2}, f"{R0}.count", "must be greater than zero"),
    (
        "tolerations limit",
        "claim",
        {f"{R0}.tolerations": [{"operator": "Exists"}] * 17},
        f"{R0}.tolerations",
        "Too many: 17: must have at most 16 items",
    ),
    (
        "toleration operator",
        "claim",
        {f"{R0}.tolerations": [{"key": "k", "operator": "In"}]},
        f"{R0}.tolerations[0].operator",
        "is not a toleration operator",
    ),
    (
        "toleration Exists value",
        "claim",
        {f"{R0}.tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
        f"{R0}.tolerations[0].value",
        "must be empty when the operator is Exists",
    ),
    (
        "toleration value",
        "claim",
        {f"{R0}.tolerations": [{"key": "k", "value": "a b"}]},
        f"{R0}.tolerations[0].value",
        "not a valid label value",
    ),
    (
        "toleration effect",
        "claim",
        {f"{R0}.tolerations": [{"key": "k", "effect": "PreferNoSchedule"}]},
        f"{R0}.tolerations[0].effect",
        "is not a device taint effect",
    ),
    (
        "toleration key",
        "claim",
        {f"{R0}.tolerations": [{"key": "a b", "operator": "Exists"}]},
        f"{R0}.tolerations[0].key",
        "is not a valid key",
    ),
    (
        "subrequests limit",
        "claim",
        {
            "spec.devices.requests[1].firstAvailable": many(9, lambda i: {"name": f"s{i}", "deviceClassName": "c"}),
            "spec.devices.constraints": [],
        },
        "spec.devices.requests[1].firstAvailable",
        "Too many: 9: must have at most 8 items",
    ),
    (
        "subrequest name",
        "claim",
        {"spec.devices.requests[1].firstAvailable[0].name": "subReq-0", "spec.devices.constraints": []},
        "spec.devices.requests[1].firstAvailable[0].name",
        "must be a DNS label",
    ),
    (
        "subrequest names unique",
        "claim",
        {"spec.devices.requests[1].firstAvailable[1].name": "fast"},
        "spec.devices.requests[1].firstAvailable[1]",
        'Duplicate value: "fast"',
    ),
    (
        "subrequest class",
        "claim",
        {"spec.devices.requests[1].firstAvailable[0].deviceClassName": ""},
        "spec.devices.requests[1].firstAvailable[0].deviceClassName",
        "a device class name is required",
    ),
    (
        "derived limit",
        "claim",
        {f"{R0}.derivedAttributes": many(33, lambda i: {"name": "example.com/numa", "expression": "1"})},
        f"{R0}.derivedAttributes",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "derived qualified",
        "claim",
        {f"{R0}.derivedAttributes": [{"name": "numa", "expression": "1"}]},
        f"{R0}.derivedAttributes[0].name",
        "must be fully qualified",
    ),
    (
        "derived used",
        "claim",
        {f"{R0}.derivedAttributes": [{"name": "derived/pcie", "expression": "1"}]},
        f"{R0}.derivedAttributes[0].name",
        "must be used by at least one matchAttribute or distinctAttribute",
    ),
    (
        "derived unique",
        "claim",
        {f"{R0}.derivedAttributes": [{"name": "example.com/numa", "expression": "1"}] * 2},
        f"{R0}.derivedAttributes[1]",
        'Duplicate value: "example.com/numa"',
    ),
    (
        "derived expression",
        "claim",
        {f"{R0}.derivedAttributes": [{"name": "example.com/numa", "expression": ""}]},
        f"{R0}.derivedAttributes[0].expression",
        "must not be empty",
    ),
    # --- claims: constraints and config ------------------------------------------------------
    (
        "constraints limit",
        "claim",
        {"spec.devices.constraints": [{"matchAttribute": "a.com/b"}] * 33},
        "spec.devices.constraints",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "constraint both",
        "claim",
        {"spec.devices.constraints[0].distinctAttribute": "a.com/b"},
        "spec.devices.constraints[0]",
        "but both are set",
    ),
    (
        "constraint neither",
        "claim",
        {"spec.devices.constraints[0].matchAttribute": DELETE},
        "spec.devices.constraints[0]",
        "exactly one of `matchAttribute` or `distinctAttribute` is required",
    ),
    (
        "match qualified",
        "claim",
        {"spec.devices.constraints[0].matchAttribute": "numa"},
        "spec.devices.constraints[0].matchAttribute",
        "must be fully qualified",
    ),
    (
        "distinct qualified",
        "claim",
        {
            "spec.devices.constraints[0].matchAttribute": DELETE,
            "spec.devices.constraints[0].distinctAttribute": "a/b/c",
        },
        "spec.devices.constraints[0].distinctAttribute",
        "more than one '/'",
    ),
    (
        "constraint unknown request",
        "claim",
        {"spec.devices.constraints[0].requests[1]": "nics"},
        "spec.devices.constraints[0].requests[1]",
        "must name a request of this claim",
    ),
    (
        "constraint unknown subrequest",
        "claim",
        {"spec.devices.constraints[0].requests[1]": "nic/slow"},
        "spec.devices.constraints[0].requests[1]",
        "must name a request of this claim",
    ),
    (
        "constraint exact has no subrequests",
        "claim",
        {"spec.devices.constraints[0].requests[0]": "gpu/x"},
        "spec.devices.constraints[0].requests[0]",
        "must name a request of this claim",
    ),
    (
        "constraint request unique",
        "claim",
        {"spec.devices.constraints[0].requests[1]": "gpu"},
        "spec.devices.constraints[0].requests[1]",
        'Duplicate value: "gpu"',
    ),
    (
        "constraint references limit",
        "claim",
        {"spec.devices.constraints[0].requests": ["gpu"] * 33},
        "spec.devices.constraints[0].requests",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "config limit",
        "claim",
        {"spec.devices.config": [{"opaque": {"driver": "d", "parameters": {}}}] * 33},
        "spec.devices.config",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "config opaque",
        "claim",
        {"spec.devices.config[0].opaque": DELETE},
        "spec.devices.config[0].opaque",
        "needs opaque driver parameters",
    ),
    (
        "config driver",
        "claim",
        {"spec.devices.config[0].opaque.driver": "a/b"},
        "spec.devices.config[0].opaque.driver",
        "must be a DNS subdomain",
    ),
    (
        "config parameters object",
        "claim",
        {"spec.devices.config[0].opaque.parameters": [1, 2]},
        "spec.devices.config[0].opaque.parameters",
        "must be a JSON object",
    ),
    (
        "config parameters size",
        "claim",
        {"spec.devices.config[0].opaque.parameters": {"x": "y" * 10240}},
        "spec.devices.config[0].opaque.parameters",
        "Too long: may not be more than 10240 bytes",
    ),
    (
        "config requests",
        "claim",
        {"spec.devices.config[0].requests": ["tpu"]},
        "spec.devices.config[0].requests[0]",
        "must name a request of this claim",
    ),
    # --- claims: status ----------------------------------------------------------------------
    (
        "reserved limit",
        "allocated",
        {"status.reservedFor": many(257, lambda i: {"resource": "pods", "name": f"p{i}", "uid": f"u{i}"})},
        "status.reservedFor",
        "Too many: 257: must have at most 256 items",
    ),
    ("reserved uid", "allocated", {"status.reservedFor[0].uid": ""}, "status.reservedFor[0].uid", "is required"),
    (
        "reserved unique",
        "allocated",
        {"status.reservedFor[1]": {"resource": "pods", "name": "q", "uid": "u-1"}},
        "status.reservedFor[1]",
        'Duplicate value: "u-1"',
    ),
    (
        "reserved needs allocation",
        "allocated",
        {"status.allocation": DELETE, "status.devices": []},
        "status.reservedFor",
        "may only be set on an allocated claim",
    ),
    (
        "results limit",
        "allocated",
        {
            "status.allocation.devices.results": many(
                33, lambda i: {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": f"gpu-{i}"}
            )
        },
        "status.allocation.devices.results",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "result request",
        "allocated",
        {f"{RESULT}.request": "tpu"},
        f"{RESULT}.request",
        "must name a request of this claim",
    ),
    ("result driver", "allocated", {f"{RESULT}.driver": "GPU driver"}, f"{RESULT}.driver", "must be a DNS subdomain"),
    ("result pool", "allocated", {f"{RESULT}.pool": "Node_1"}, f"{RESULT}.pool", "pool name part"),
    (
        "result device",
        "allocated",
        {f"{RESULT}.device": "GPU-0", f"{STATUS}.device": "GPU-0"},
        f"{RESULT}.device",
        "must be a DNS label",
    ),
    (
        "share ID",
        "allocated",
        {"status.allocation.devices.results[1].shareID": "7F3C9A52-1B4E-4D6A-9E2F-3C5B7D9A1E40"},
        "status.allocation.devices.results[1].shareID",
        "lower-case hexadecimal",
    ),
    (
        "result binding",
        "allocated",
        {f"{RESULT}.bindingConditions": ["a"]},
        f"{RESULT}.bindingFailureConditions",
        "are required when bindingConditions are given",
    ),
    (
        "result toleration",
        "allocated",
        {f"{RESULT}.tolerations": [{"key": "k", "operator": "Has"}]},
        f"{RESULT}.tolerations[0].operator",
        "is not a toleration operator",
    ),
    (
        "result node operations",
        "allocated",
        {f"{RESULT}.skipNodeOperations": ["Reboot"]},
        f"{RESULT}.skipNodeOperations[0]",
        "is not a node operation",
    ),
    (
        "allocation config source",
        "allocated",
        {"status.allocation.devices.config[0].source": "FromPod"},
        "status.allocation.devices.config[0].source",
        "must be FromClass or FromClaim",
    ),
    (
        "allocation config limit",
        "allocated",
        {
            "status.allocation.devices.config": [{"source": "FromClass", "opaque": {"driver": "d", "parameters": {}}}]
            * 65
        },
        "status.allocation.devices.config",
        "Too many: 65: must have at most 64 items",
    ),
    (
        "allocation node selector",
        "allocated",
        {"status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].operator": "Exists"},
        "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].operator",
        "use In or NotIn",
    ),
    (
        "device status allocated",
        "allocated",
        {f"{STATUS}.device": "gpu-9"},
        STATUS,
        "must be one allocated to this claim",
    ),
    (
        "device status unique",
        "allocated",
        {"status.devices[1]": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}},
        "status.devices[1]",
        'Duplicate value: "gpu.example.com/node-1/gpu-0"',
    ),
    (
        "device conditions limit",
        "allocated",
        {f"{STATUS}.conditions": many(9, lambda i: CONDITION | {"type": f"T{i}"})},
        f"{STATUS}.conditions",
        "Too many: 9: must have at most 8 items",
    ),
    (
        "condition status",
        "allocated",
        {f"{STATUS}.conditions[0].status": "Yes"},
        f"{STATUS}.conditions[0].status",
        "must be True, False or Unknown",
    ),
    (
        "condition reason",
        "allocated",
        {f"{STATUS}.conditions[0].reason": "not ok"},
        f"{STATUS}.conditions[0].reason",
        "must start with a letter",
    ),
    (
        "condition time",
        "allocated",
        {f"{STATUS}.conditions[0].lastTransitionTime": DELETE},
        f"{STATUS}.conditions[0].lastTransitionTime",
        "is required",
    ),
    (
        "condition types unique",
        "allocated",
        {f"{STATUS}.conditions[1]": CONDITION},
        f"{STATUS}.conditions[1]",
        'Duplicate value: "Ready"',
    ),
    (
        "device data",
        "allocated",
        {f"{STATUS}.data": {"blob": "x" * 10240}},
        f"{STATUS}.data",
        "Too long: may not be more than 10240 bytes",
    ),
    (
        "interface name",
        "allocated",
        {f"{STATUS}.networkData.interfaceName": "e" * 257},
        f"{STATUS}.networkData.interfaceName",
        "Too long: may not be more than 256 bytes",
    ),
    (
        "hardware address",
        "allocated",
        {f"{STATUS}.networkData.hardwareAddress": "a" * 129},
        f"{STATUS}.networkData.hardwareAddress",
        "Too long: may not be more than 128 bytes",
    ),
    (
        "ips limit",
        "allocated",
        {f"{STATUS}.networkData.ips": [f"10.0.0.{i}/24" for i in range(17)]},
        f"{STATUS}.networkData.ips",
        "Too many: 17: must have at most 16 items",
    ),
    (
        "ip format",
        "allocated",
        {f"{STATUS}.networkData.ips[0]": "10.0.0.5"},
        f"{STATUS}.networkData.ips[0]",
        "with a prefix length",
    ),
    (
        "ips unique",
        "allocated",
        {f"{STATUS}.networkData.ips[1]": "10.0.0.5/24"},
        f"{STATUS}.networkData.ips[1]",
        'Duplicate value: "10.0.0.5/24"',
    ),
    # --- classes, templates, taint rules --------------------------------------------------------
    (
        "class selectors",
        "class",
        {"spec.selectors": [{"cel": {"expression": "true"}}] * 33},
        "spec.selectors",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "class config limit",
        "class",
        {"spec.config": [{"opaque": {"driver": "d", "parameters": {}}}] * 33},
        "spec.config",
        "Too many: 33: must have at most 32 items",
    ),
    ("class config opaque", "class", {"spec.config": [{}]}, "spec.config[0].opaque", "needs opaque driver parameters"),
    (
        "extended resource domain",
        "class",
        {"spec.extendedResourceName": "gpu"},
        "spec.extendedResourceName",
        "is not an extended resource name",
    ),
    (
        "extended resource kubernetes.io",
        "class",
        {"spec.extendedResourceName": "kubernetes.io/gpu"},
        "spec.extendedResourceName",
        "is not an extended resource name",
    ),
    (
        "template metadata fields",
        "template",
        {"spec.metadata.name": "x"},
        "spec.metadata.name",
        "cannot be set for a resource claim template",
    ),
    (
        "template metadata labels",
        "template",
        {'spec.metadata.labels["team"]': "a b"},
        "spec.metadata.labels[team]",
        "not a valid label value",
    ),
    (
        "template requests",
        "template",
        {"spec.spec.devices.requests[0].name": "GPU"},
        "spec.spec.devices.requests[0].name",
        "must be a DNS label",
    ),
    (
        "rule driver",
        "rule",
        {"spec.deviceSelector.driver": "a_b"},
        "spec.deviceSelector.driver",
        "must be a DNS subdomain",
    ),
    ("rule pool", "rule", {"spec.deviceSelector.pool": ""}, "spec.deviceSelector.pool", "is required"),
    ("rule device", "rule", {"spec.deviceSelector.device": "GPU"}, "spec.deviceSelector.device", "must be a DNS label"),
    ("rule effect", "rule", {"spec.taint.effect": "Evict"}, "spec.taint.effect", "is not a device taint effect"),
    (
        "rule conditions",
        "rule",
        {"status": {"conditions": many(9, lambda i: CONDITION | {"type": f"T{i}"})}},
        "status.conditions",
        "Too many: 9: must have at most 8 items",
    ),
    # --- core kinds and pool status requests ----------------------------------------------------
    (
        "node taint effect",
        "node",
        {"spec.taints[0].effect": "None"},
        "spec.taints[0].effect",
        "is not a node taint effect",
    ),
    ("node name", "node", {"metadata.name": "Node 1"}, "metadata.name", "must be a DNS subdomain"),
    ("namespace name", "namespace", {"metadata.name": "team.ml"}, "metadata.name", "must be a DNS label"),
    ("pod containers", "pod", {"spec.containers": []}, "spec.containers", "at least one container is required"),
    (
        "pod container names",
        "pod",
        {"spec.initContainers": [{"name": "main"}]},
        "spec.initContainers[0].name",
        'duplicate container name "main"',
    ),
    (
        "pod claim use",
        "pod",
        {"spec.containers[0].resources.claims[0].name": "tpu"},
        "spec.containers[0].resources.claims[0].name",
        "must be the name of one of the pod's spec.resourceClaims",
    ),
    (
        "pod claim source",
        "pod",
        {"spec.resourceClaims[0].resourceClaimName": "c"},
        "spec.resourceClaims[0]",
        "but both are set",
    ),
    (
        "pod claim no source",
        "pod",
        {"spec.resourceClaims[0].resourceClaimTemplateName": DELETE},
        "spec.resourceClaims[0]",
        "exactly one of `resourceClaimName` or `resourceClaimTemplateName`",
    ),
    (
        "pod claim names",
        "pod",
        {"spec.resourceClaims[1]": {"name": "gpu", "resourceClaimName": "c"}},
        "spec.resourceClaims[1]",
        'Duplicate value: "gpu"',
    ),
    (
        "pod requests within limits",
        "pod",
        {'spec.containers[0].resources.requests["cpu"]': "3"},
        "spec.containers[0].resources.requests",  # Kubernetes' field.Invalid(reqPath, ...): the map, not the key
        'Invalid value: "3": must be less than or equal to cpu limit of 2',
    ),
    ("pod node name", "pod", {"spec.nodeName": "Node 1"}, "spec.nodeName", "must be a DNS subdomain"),
    (
        "pod node selector",
        "pod",
        {'spec.nodeSelector["zone"]': "a b"},
        "spec.nodeSelector[zone]",
        "not a valid label value",
    ),
    (
        "pod affinity",
        "pod",
        {
            "spec.affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]
                    }
                }
            }
        },
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values",
        "must be given when the operator is In",
    ),
    (
        "pod group name",
        "pod",
        {"spec.schedulingGroup": {"podGroupName": "Group"}},
        "spec.schedulingGroup.podGroupName",
        "must be a DNS label",
    ),
    (
        "pod claim references",
        "pod",
        {"spec.containers[0].resources.claims[1]": {"name": "gpu"}},
        "spec.containers[0].resources.claims[1]",
        'Duplicate value: "gpu"',
    ),
    (
        "pod-level claim use",
        "pod",
        {"spec.resources": {"claims": [{"name": "tpu"}]}},
        "spec.resources.claims[0].name",
        "must be the name of one of the pod's spec.resourceClaims",
    ),
    (
        "pod group claims",
        "podgroup",
        {"spec.resourceClaims[0].resourceClaimName": DELETE},
        "spec.resourceClaims[0]",
        "exactly one of `resourceClaimName` or `resourceClaimTemplateName`",
    ),
    ("pool request driver", "pool", {"spec.driver": "example.com/gpu"}, "spec.driver", "must be a DNS subdomain"),
    ("pool request pool", "pool", {"spec.poolName": ""}, "spec.poolName", "is required"),
    ("pool request limit low", "pool", {"spec.limit": 0}, "spec.limit", "between 1 and 1000"),
    ("pool request limit high", "pool", {"spec.limit": 1001}, "spec.limit", "between 1 and 1000"),
    (
        "pool request attribute",
        "pool",
        {"spec.defaultPartitionTypeAttribute": "profile"},
        "spec.defaultPartitionTypeAttribute",
        "must be fully qualified",
    ),
    (
        "pool status counts",
        "pool",
        {
            "status": {
                "poolCount": 1,
                "pools": [{"driver": "gpu.example.com", "poolName": "p", "generation": 1, "totalDevices": -1}],
            }
        },
        "status.pools[0].totalDevices",
        "must not be negative",
    ),
]


@pytest.mark.parametrize("base, edits, path, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(base: str, edits: Edits, path: str, words: str) -> None:
    found = problems(base, edits)
    at_path = [p.message for p in found if p.location.path == path]
    assert any(words in m for m in at_path), f"expected {words!r} at {path}; got {[str(p) for p in found]}"


def test_case_ids_are_unique() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))
