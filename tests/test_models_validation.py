"""One test per Kubernetes validation rule: a valid object, one change, the exact field and the message.

Every case starts from a valid base object (checked valid below), makes one
change, and expects a problem at exactly that field path whose message contains
the given words. A rule that stops firing, fires at the wrong field, or fires on
a valid object fails here.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Callable

import pytest

from drasat.models.errors import Location, Problem
from drasat.models.kinds import lookup
from drasat.models.meta import TypedObject
from drasat.models.validation import register_checker, unregister_checker, validate_object

from .helpers_models import SHARED, documents, shared_available, shared_files

SLICE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpus"},
    "spec": {
        "driver": "gpu.example.com", "nodeName": "node-1",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "devices": [{
            "name": "gpu-0",
            "attributes": {"model": {"string": "GX-80"}, "example.com/numa": {"int": 0}},
            "capacity": {"memory": {"value": "80Gi"}},
        }],
    },
}
SHARED_DEVICE = {  # a consumable-capacity device: allowMultipleAllocations with a request policy
    "name": "nic-0", "allowMultipleAllocations": True,
    "capacity": {"bandwidth": {"value": "100", "requestPolicy": {
        "default": "10", "validRange": {"min": "10", "max": "100", "step": "10"}}}},
}
CLAIM = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ml"},
    "spec": {"devices": {
        "requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                        "selectors": [{"cel": {"expression": "true"}}]}},
            {"name": "nic", "firstAvailable": [{"name": "fast", "deviceClassName": "nic.example.com"},
                                               {"name": "any", "deviceClassName": "nic.example.com"}]},
        ],
        "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "example.com/numa"}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}],
    }},
}
ALLOCATED = copy.deepcopy(CLAIM) | {"status": {
    "allocation": {"devices": {
        "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
                    {"request": "nic/fast", "driver": "nic.example.com", "pool": "node-1", "device": "nic-0",
                     "shareID": "7f3c9a52-1b4e-4d6a-9e2f-3c5b7d9a1e40"}],
        "config": [{"source": "FromClaim", "requests": ["gpu"],
                    "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}},
    "reservedFor": [{"resource": "pods", "name": "p", "uid": "u-1"}],
    "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                 "conditions": [{"type": "Ready", "status": "True", "reason": "Prepared",
                                 "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                 "networkData": {"interfaceName": "eth1", "ips": ["10.0.0.5/24"]}}],
}}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
                  "extendedResourceName": "example.com/gpu"}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "ml"},
            "spec": {"metadata": {"labels": {"team": "ml"}},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g"}}]}}}}
RULE = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
        "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
                 "taint": {"key": "example.com/broken", "value": "yes", "effect": "NoExecute"}}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"zone": "a"}},
        "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
       "spec": {"nodeSelector": {"zone": "a"},
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                "containers": [{"name": "main", "image": "busybox",
                                "resources": {"claims": [{"name": "gpu"}], "requests": {"cpu": "1"},
                                              "limits": {"cpu": "2"}}}]}}
POD_GROUP = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"},
             "spec": {"resourceClaims": [{"name": "shared", "resourceClaimName": "c"}]}}
POOL_REQUEST = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourcePoolStatusRequest",
                "metadata": {"name": "q"}, "spec": {"driver": "gpu.example.com", "limit": 10}}

BASES = {"slice": SLICE, "claim": CLAIM, "allocated": ALLOCATED, "class": CLASS, "template": TEMPLATE,
         "rule": RULE, "node": NODE, "namespace": NAMESPACE, "pod": POD, "podgroup": POD_GROUP,
         "pool": POOL_REQUEST}
_TOKEN = re.compile(r'\.?([A-Za-z_][\w-]*)|\[(\d+)\]|\["([^"]*)"\]')


def _steps(path: str) -> list[str | int]:
    return [m[0] or (int(m[1]) if m[1] else m[2]) for m in _TOKEN.findall(path)]  # type: ignore[misc]


def edit(data: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, with value DELETE, remove) the field at an API path like ``spec.devices[0].attributes["x"]``."""
    *parents, last = _steps(path)
    here: Any = data
    for step in parents:
        here = here[step]
    if value is DELETE:
        del here[last]
    elif isinstance(here, list) and last == len(here):
        here.append(copy.deepcopy(value))
    else:
        here[last] = copy.deepcopy(value)


DELETE = object()
Edits = dict[str, Any]


def problems(base: str, edits: Edits) -> list[Problem]:
    data = copy.deepcopy(BASES[base])
    for path, value in edits.items():
        edit(data, path, value)
    info = lookup(data["apiVersion"], data["kind"])
    assert info is not None
    obj = info.model.model_validate(data)
    return validate_object(obj, Location("case.yaml", 0, obj.kind, obj.name))


def many(n: int, make: Callable[[int], Any]) -> list[Any]:
    return [make(i) for i in range(n)]


def device(i: int, **extra: Any) -> dict[str, Any]:
    return {"name": f"d-{i}", **extra}


TAINT = {"key": "k", "effect": "NoSchedule"}
CONDITION = {"type": "Ready", "status": "True", "reason": "Ok", "lastTransitionTime": "2026-01-01T00:00:00Z"}
D0 = "spec.devices[0]"
R0 = "spec.devices.requests[0].exactly"
CAP = f'{D0}.capacity["bandwidth"]'
POLICY = f"{CAP}.requestPolicy"
RESULT = "status.allocation.devices.results[0]"
STATUS = "status.devices[0]"

# (id, base, edits, expected path, words in the message)
CASES: list[tuple[str, str, Edits, str, str]] = [
    # --- metadata -------------------------------------------------------------------------
    ("name required", "slice", {"metadata.name": DELETE}, "metadata.name", "name or generateName is required"),
    ("name subdomain", "slice", {"metadata.name": "Node_1"}, "metadata.name", "must be a DNS subdomain"),
    ("name too long", "class", {"metadata.name": "a" * 254}, "metadata.name", "no more than 253 characters"),
    ("namespace label", "claim", {"metadata.namespace": "ml.team"}, "metadata.namespace", "must be a DNS label"),
    ("label key", "node", {'metadata.labels["-zone"]': "a"}, 'metadata.labels["-zone"]', "is not a valid key"),
    ("label key prefix", "node", {'metadata.labels["Ex_ample.com/zone"]': "a"},
     'metadata.labels["Ex_ample.com/zone"]', "prefix must be a DNS subdomain"),
    ("label value", "node", {'metadata.labels["zone"]': "a b"}, 'metadata.labels["zone"]', "not a valid label value"),
    ("label value length", "node", {'metadata.labels["zone"]': "a" * 64}, 'metadata.labels["zone"]',
     "no more than 63 characters"),
    ("annotation key", "slice", {"metadata.annotations": {"a/b/c": "x"}}, 'metadata.annotations["a/b/c"]',
     "is not a valid key"),
    ("annotations size", "slice", {"metadata.annotations": {"big": "x" * (256 * 1024)}}, "metadata.annotations",
     "more than the limit of 262144"),
    # --- slice: driver, pool, node selection ----------------------------------------------
    ("driver format", "slice", {"spec.driver": "GPU_driver"}, "spec.driver", "must be a DNS subdomain"),
    ("driver length", "slice", {"spec.driver": "a" * 60 + ".com"}, "spec.driver", "longer than 63 characters"),
    ("driver empty", "slice", {"spec.driver": ""}, "spec.driver", "the driver name is required"),
    ("pool name part", "slice", {"spec.pool.name": "a//b"}, "spec.pool.name", 'pool name part ""'),
    ("pool name length", "slice", {"spec.pool.name": "a." * 127}, "spec.pool.name", "longer than 253"),
    ("slice count", "slice", {"spec.pool.resourceSliceCount": 0}, "spec.pool.resourceSliceCount",
     "must be greater than zero"),
    ("generation", "slice", {"spec.pool.generation": -1}, "spec.pool.generation", "must not be negative"),
    ("no node selection", "slice", {"spec.nodeName": DELETE}, "spec", "exactly one of `nodeName`, `nodeSelector`"),
    ("two node selections", "slice", {"spec.allNodes": True}, "spec", "but `nodeName`, `allNodes` are set"),
    ("empty node name", "slice", {"spec.nodeName": ""}, "spec.nodeName", "either unset or a node name"),
    ("node name format", "slice", {"spec.nodeName": "Node 1"}, "spec.nodeName", "must be a DNS subdomain"),
    ("allNodes false", "slice", {"spec.nodeName": DELETE, "spec.allNodes": False}, "spec.allNodes",
     "must be either unset or true"),
    ("selector terms", "slice", {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists"}]}] * 2}},
     "spec.nodeSelector.nodeSelectorTerms", "exactly one node selector term"),
    ("selector no terms", "slice", {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": []}},
     "spec.nodeSelector.nodeSelectorTerms", "at least one node selector term"),
    ("selector operator", "slice", {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Has"}]}]}},
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator", "is not an operator"),
    ("selector In needs values", "slice", {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "In"}]}]}},
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values", "must be given when the operator is In"),
    ("selector Exists no values", "slice", {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}]}},
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values", "must be empty"),
    ("selector Gt one value", "slice", {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1", "2"]}]}]}},
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values", "exactly one value"),
    ("selector field key", "slice", {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]}]}},
     "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].key", "use metadata.name"),
    ("selector field values", "slice", {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}},
     "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].values", "exactly one value"),
    ("devices and counters", "slice", {"spec.sharedCounters": [{"name": "s", "counters": {"c": {"value": "1"}}}]},
     "spec", "only one of `sharedCounters` or `devices`"),
    # --- slice: devices ---------------------------------------------------------------------
    ("128 devices", "slice", {"spec.devices": many(129, device)}, "spec.devices", "129 devices, more than the limit of 128"),
    ("64 with taints", "slice", {"spec.devices": many(65, lambda i: device(i, taints=[TAINT]))}, "spec.devices",
     "more than the limit of 64"),
    ("64 with counters", "slice", {"spec.devices": many(65, lambda i: device(i, consumesCounters=[
        {"counterSet": "s", "counters": {"c": {"value": "1"}}}]))}, "spec.devices", "more than the limit of 64"),
    ("64 with lists", "slice", {"spec.devices": many(65, lambda i: device(i, attributes={"l": {"ints": [1]}}))},
     "spec.devices", "more than the limit of 64"),
    ("duplicate device", "slice", {"spec.devices": [device(0), device(0)]}, "spec.devices[1]",
     'duplicate device name "d-0"'),
    ("device name", "slice", {f"{D0}.name": "GPU-0"}, f"{D0}.name", "must be a DNS label"),
    ("32 attributes and capacities", "slice", {f"{D0}.attributes": {f"a{i}": {"int": i} for i in range(32)}}, D0,
     "33 attributes and capacities together, more than the limit of 32"),
    ("48 attribute values", "slice", {f"{D0}.attributes": {"a": {"ints": list(range(47))}, "b": {"ints": [1, 2]}}},
     D0, "49 attribute values"),
    ("attribute name slashes", "slice", {f'{D0}.attributes["a/b/c"]': {"int": 1}}, f'{D0}.attributes["a/b/c"]',
     "more than one '/'"),
    ("attribute C identifier", "slice", {f'{D0}.attributes["x.com/supported-models"]': {"int": 1}},
     f'{D0}.attributes["x.com/supported-models"]', "must be a C identifier"),
    ("attribute identifier length", "slice", {f'{D0}.attributes["{"a" * 33}"]': {"int": 1}},
     f'{D0}.attributes["{"a" * 33}"]', "longer than 32 characters"),
    ("attribute domain", "slice", {f'{D0}.attributes["Bad_Domain/x"]': {"int": 1}},
     f'{D0}.attributes["Bad_Domain/x"]', "must be a DNS subdomain"),
    ("attribute empty domain", "slice", {f'{D0}.attributes["/x"]': {"int": 1}}, f'{D0}.attributes["/x"]',
     "domain before '/' must not be empty"),
    ("capacity name", "slice", {f'{D0}.capacity["capacity-0"]': {"value": "1"}}, f'{D0}.capacity["capacity-0"]',
     "must be a C identifier"),
    ("attribute two values", "slice", {f'{D0}.attributes["model"]': {"string": "x", "int": 1}},
     f'{D0}.attributes["model"]', "exactly one value must be given"),
    ("attribute no value", "slice", {f'{D0}.attributes["model"]': {}}, f'{D0}.attributes["model"]',
     "exactly one value must be given"),
    ("string length", "slice", {f'{D0}.attributes["model"]': {"string": "x" * 65}},
     f'{D0}.attributes["model"].string', "no more than 64 characters"),
    ("version semver", "slice", {f'{D0}.attributes["model"]': {"version": "v1.2"}},
     f'{D0}.attributes["model"].version', "is not a semantic version"),
    ("versions semver", "slice", {f'{D0}.attributes["model"]': {"versions": ["1.0.0", "01.0.0"]}},
     f'{D0}.attributes["model"].versions[1]', "is not a semantic version"),
    ("empty list", "slice", {f'{D0}.attributes["model"]': {"strings": []}}, f'{D0}.attributes["model"].strings',
     "must not be empty when given"),
    ("strings length", "slice", {f'{D0}.attributes["model"]': {"strings": ["a", "b" * 65]}},
     f'{D0}.attributes["model"].strings[1]', "no more than 64 characters"),
    # --- slice: consumable capacity -------------------------------------------------------------
    ("policy needs multiple allocations", "slice", {"spec.devices[0]": SHARED_DEVICE | {"allowMultipleAllocations": False}},
     POLICY, "only allowed on devices with allowMultipleAllocations: true"),
    ("policy values and range", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validValues": ["10"]}, POLICY,
     "not both"),
    ("valid values default", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE,
                                       f"{POLICY}.validValues": ["10"], f"{POLICY}.default": DELETE},
     f"{POLICY}.default", "is required when validValues"),
    ("valid values sorted", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE,
                                      f"{POLICY}.validValues": ["20", "10"]}, f"{POLICY}.validValues[1]",
     "ascending order"),
    ("valid values limit", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE,
                                     f"{POLICY}.validValues": [str(i) for i in range(1, 12)]},
     f"{POLICY}.validValues", "more than the limit of 10"),
    ("valid value above capacity", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE,
                                             f"{POLICY}.validValues": ["10", "200"]}, f"{POLICY}.validValues[1]",
     "larger than the capacity value 100"),
    ("valid values duplicate", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE,
                                         f"{POLICY}.validValues": ["10", "10"]}, f"{POLICY}.validValues[1]",
     "duplicate value"),
    ("default among values", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE,
                                       f"{POLICY}.validValues": ["20", "30"]}, f"{POLICY}.validValues",
     "does not contain the default 10"),
    ("range default", "slice", {D0: SHARED_DEVICE, f"{POLICY}.default": DELETE}, f"{POLICY}.default",
     "is required when validRange"),
    ("range min", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange.min": DELETE}, f"{POLICY}.validRange.min",
     "is required when validRange"),
    ("range min above capacity", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "200"},
                                           f"{POLICY}.default": "200"}, f"{POLICY}.validRange.min",
     "larger than the capacity value"),
    ("range default below min", "slice", {D0: SHARED_DEVICE, f"{POLICY}.default": "5"}, f"{POLICY}.default",
     "less than the minimum 10"),
    ("range max below min", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "10", "max": "5"}},
     f"{POLICY}.validRange.max", "the minimum 10 is larger than the maximum 5"),
    ("range max above capacity", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange.max": "110"},
     f"{POLICY}.validRange.max", "larger than the capacity value"),
    ("range default above max", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "10", "max": "50"},
                                          f"{POLICY}.default": "60"}, f"{POLICY}.default", "more than the maximum 50"),
    ("range step positive", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange.step": "0"},
     f"{POLICY}.validRange.step", "must be greater than zero"),
    ("range one step", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "10", "step": "95"}},
     f"{POLICY}.validRange.step", "one step from the minimum"),
    ("range default on step", "slice", {D0: SHARED_DEVICE, f"{POLICY}.default": "15"}, f"{POLICY}.validRange.step",
     "15 is not the minimum 10 plus a multiple of the step 10"),
    ("range max on step", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validRange.max": "95"},
     f"{POLICY}.validRange.step", "95 is not the minimum"),
    # --- slice: taints, counters, node selection per device ------------------------------------
    ("taints limit", "slice", {f"{D0}.taints": [TAINT] * 17}, f"{D0}.taints", "more than the limit of 16"),
    ("taint effect", "slice", {f"{D0}.taints": [{"key": "k", "effect": "PreferNoSchedule"}]},
     f"{D0}.taints[0].effect", "is not a device taint effect"),
    ("taint effect required", "slice", {f"{D0}.taints": [{"key": "k", "effect": ""}]}, f"{D0}.taints[0].effect",
     "is required"),
    ("taint key", "slice", {f"{D0}.taints": [{"key": "a b", "effect": "None"}]}, f"{D0}.taints[0].key",
     "is not a valid key"),
    ("taint value", "slice", {f"{D0}.taints": [{"key": "k", "value": "a b", "effect": "None"}]},
     f"{D0}.taints[0].value", "not a valid label value"),
    ("consumptions limit", "slice", {f"{D0}.consumesCounters": many(3, lambda i: {
        "counterSet": f"s{i}", "counters": {"c": {"value": "1"}}})}, f"{D0}.consumesCounters",
     "more than the limit of 2"),
    ("consumption set unique", "slice", {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}] * 2},
     f"{D0}.consumesCounters[1]", 'duplicate counter set "s"'),
    ("consumption counters", "slice", {f"{D0}.consumesCounters": [{"counterSet": "s"}]},
     f"{D0}.consumesCounters[0].counters", "at least one counter is required"),
    ("consumption counters limit", "slice", {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {
        f"c{i}": {"value": "1"} for i in range(33)}}]}, f"{D0}.consumesCounters[0].counters",
     "more than the limit of 32"),
    ("counter name", "slice", {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"Mem": {"value": "1"}}}]},
     f'{D0}.consumesCounters[0].counters["Mem"]', "must be a DNS label"),
    ("counter set name", "slice", {f"{D0}.consumesCounters": [{"counterSet": "S", "counters": {"c": {"value": "1"}}}]},
     f"{D0}.consumesCounters[0].counterSet", "must be a DNS label"),
    ("compatibility groups limit", "slice", {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {
        "c": {"value": "1"}}, "compatibilityGroups": ["a", "b", "c"]}]},
     f"{D0}.consumesCounters[0].compatibilityGroups", "more than the limit of 2"),
    ("compatibility groups unique", "slice", {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {
        "c": {"value": "1"}}, "compatibilityGroups": ["mig", "mig"]}]},
     f"{D0}.consumesCounters[0].compatibilityGroups[1]", 'duplicate compatibility group "mig"'),
    ("compatibility group name", "slice", {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {
        "c": {"value": "1"}}, "compatibilityGroups": ["MIG"]}]},
     f"{D0}.consumesCounters[0].compatibilityGroups[0]", "must be a DNS label"),
    ("counter sets limit", "slice", {"spec.devices": DELETE, "spec.sharedCounters": many(9, lambda i: {
        "name": f"s{i}", "counters": {"c": {"value": "1"}}})}, "spec.sharedCounters", "more than the limit of 8"),
    ("counter set needs counters", "slice", {"spec.devices": DELETE, "spec.sharedCounters": [{"name": "s"}]},
     "spec.sharedCounters[0].counters", "at least one counter is required"),
    ("counters per set", "slice", {"spec.devices": DELETE, "spec.sharedCounters": [{"name": "s", "counters": {
        f"c{i}": {"value": "1"} for i in range(33)}}]}, "spec.sharedCounters[0].counters", "more than the limit of 32"),
    ("counter sets unique", "slice", {"spec.devices": DELETE, "spec.sharedCounters": [
        {"name": "s", "counters": {"c": {"value": "1"}}}] * 2}, "spec.sharedCounters[1]",
     'duplicate counter set name "s"'),
    ("counter set name format", "slice", {"spec.devices": DELETE, "spec.sharedCounters": [
        {"name": "gpu_0", "counters": {"c": {"value": "1"}}}]}, "spec.sharedCounters[0].name", "must be a DNS label"),
    ("device node needs per-device", "slice", {f"{D0}.nodeName": "node-1"}, D0,
     "may only be set when the slice sets perDeviceNodeSelection"),
    ("per-device needs one", "slice", {"spec.nodeName": DELETE, "spec.perDeviceNodeSelection": True}, D0,
     "exactly one of `nodeName`, `nodeSelector` or `allNodes` is required"),
    ("per-device only one", "slice", {"spec.nodeName": DELETE, "spec.perDeviceNodeSelection": True,
                                      f"{D0}.nodeName": "node-1", f"{D0}.allNodes": True}, D0, "but 2 are set"),
    ("per-device node name", "slice", {"spec.nodeName": DELETE, "spec.perDeviceNodeSelection": True,
                                       f"{D0}.nodeName": ""}, f"{D0}.nodeName", "must not be empty"),
    ("per-device false", "slice", {"spec.perDeviceNodeSelection": False}, "spec.perDeviceNodeSelection",
     "must be either unset or true"),
    # --- slice: binding conditions, node allocatable resources, partitions, node operations ---
    ("binding conditions limit", "slice", {f"{D0}.bindingConditions": [f"c{i}" for i in range(5)],
                                           f"{D0}.bindingFailureConditions": ["f"]}, f"{D0}.bindingConditions",
     "more than the limit of 4"),
    ("binding duplicates", "slice", {f"{D0}.bindingConditions": ["a", "a"], f"{D0}.bindingFailureConditions": ["f"]},
     f"{D0}.bindingConditions[1]", 'duplicate condition "a"'),
    ("binding overlap", "slice", {f"{D0}.bindingConditions": ["a"], f"{D0}.bindingFailureConditions": ["a"]},
     f"{D0}.bindingFailureConditions[0]", "must not overlap"),
    ("binding needs failure", "slice", {f"{D0}.bindingConditions": ["a"]}, f"{D0}.bindingFailureConditions",
     "are required when bindingConditions are given"),
    ("failure needs binding", "slice", {f"{D0}.bindingFailureConditions": ["a"]}, f"{D0}.bindingConditions",
     "are required when bindingFailureConditions are given"),
    ("binding condition format", "slice", {f"{D0}.bindingConditions": ["is ready"],
                                           f"{D0}.bindingFailureConditions": ["f"]}, f"{D0}.bindingConditions[0]",
     "is not a valid key"),
    ("node resource name", "slice", {f"{D0}.nodeAllocatableResources": {"example.com/gpu": {"overhead": {"perPod": "1"}}}},
     f'{D0}.nodeAllocatableResources["example.com/gpu"]', "is not a node allocatable resource"),
    ("node resource empty", "slice", {f"{D0}.nodeAllocatableResources": {"memory": {}}},
     f'{D0}.nodeAllocatableResources["memory"]', "at least one of `mapping` or `overhead`"),
    ("mapping capacity key", "slice", {f"{D0}.nodeAllocatableResources": {"cpu": {"mapping": {
        "capacityKey": "cores", "capacityMultiplier": "1"}}}},
     f'{D0}.nodeAllocatableResources["cpu"].mapping.capacityKey', "is not a capacity of this device"),
    ("mapping multiplier required", "slice", {f"{D0}.nodeAllocatableResources": {"memory": {"mapping": {
        "capacityKey": "memory"}}}}, f'{D0}.nodeAllocatableResources["memory"].mapping.capacityMultiplier',
     "is required when capacityKey is set"),
    ("mapping key required", "slice", {f"{D0}.nodeAllocatableResources": {"memory": {"mapping": {
        "capacityMultiplier": "2"}}}}, f'{D0}.nodeAllocatableResources["memory"].mapping.capacityKey',
     "is required when capacityMultiplier is set"),
    ("mapping positive", "slice", {f"{D0}.nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "0"}}}},
     f'{D0}.nodeAllocatableResources["cpu"].mapping.deviceMultiplier', "must be positive"),
    ("overhead empty", "slice", {f"{D0}.nodeAllocatableResources": {"memory": {"overhead": {}}}},
     f'{D0}.nodeAllocatableResources["memory"].overhead', "at least one of `perPod` or `perContainer`"),
    ("overhead negative", "slice", {f"{D0}.nodeAllocatableResources": {"memory": {"overhead": {"perPod": "-1Gi"}}}},
     f'{D0}.nodeAllocatableResources["memory"].overhead.perPod', "must not be negative"),
    ("partition type needs counters", "slice", {"spec.partitionTypeAttribute": "gpu.example.com/profile"},
     "spec.partitionTypeAttribute", "may only be set on a slice with devices that consume counters"),
    ("partition type qualified", "slice", {"spec.partitionTypeAttribute": "profile", f"{D0}.consumesCounters": [
        {"counterSet": "s", "counters": {"c": {"value": "1"}}}]}, "spec.partitionTypeAttribute",
     "must be fully qualified"),
    ("partition attribute present", "slice", {"spec.partitionTypeAttribute": "gpu.example.com/profile",
                                              f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]},
     f'{D0}.attributes["gpu.example.com/profile"]', "is required: the device consumes counters"),
    ("partition attribute string", "slice", {"spec.partitionTypeAttribute": "gpu.example.com/model",
                                             f'{D0}.attributes["model"]': {"int": 1},
                                             f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]},
     f'{D0}.attributes["gpu.example.com/model"]', "must be a string value"),
    ("skip operation value", "slice", {"spec.skipNodeOperations": ["NodeStart"]}, "spec.skipNodeOperations[0]",
     "is not a node operation"),
    ("skip prepare alone", "slice", {"spec.skipNodeOperations": ["NodePrepareResources"]}, "spec.skipNodeOperations",
     "only be skipped together with NodeUnprepareResources"),
    ("skip duplicates", "slice", {"spec.skipNodeOperations": ["*", "*"]}, "spec.skipNodeOperations[1]",
     'duplicate operation "*"'),
    # --- claims: requests --------------------------------------------------------------------
    ("requests limit", "claim", {"spec.devices.requests": many(33, lambda i: {
        "name": f"r{i}", "exactly": {"deviceClassName": "c"}}), "spec.devices.constraints": [],
        "spec.devices.config": []}, "spec.devices.requests", "more than the limit of 32"),
    ("request name", "claim", {"spec.devices.requests[0].name": "GPU"}, "spec.devices.requests[0].name",
     "must be a DNS label"),
    ("request names unique", "claim", {"spec.devices.requests[1].name": "gpu"}, "spec.devices.requests[1]",
     'duplicate request name "gpu"'),
    ("request kind required", "claim", {"spec.devices.requests[0].exactly": DELETE}, "spec.devices.requests[0]",
     "exactly one of `exactly` or `firstAvailable` is required"),
    ("request kind both", "claim", {"spec.devices.requests[0].firstAvailable": [{"name": "s", "deviceClassName": "c"}]},
     "spec.devices.requests[0]", "but both are set"),
    ("class required", "claim", {f"{R0}.deviceClassName": ""}, f"{R0}.deviceClassName", "a device class name is required"),
    ("class name", "claim", {f"{R0}.deviceClassName": "GPU class"}, f"{R0}.deviceClassName", "must be a DNS subdomain"),
    ("selectors limit", "claim", {f"{R0}.selectors": [{"cel": {"expression": "true"}}] * 33}, f"{R0}.selectors",
     "more than the limit of 32"),
    ("selector cel", "claim", {f"{R0}.selectors": [{}]}, f"{R0}.selectors[0].cel", "a selector needs a CEL expression"),
    ("expression empty", "claim", {f"{R0}.selectors[0].cel.expression": ""}, f"{R0}.selectors[0].cel.expression",
     "must not be empty"),
    ("expression length", "claim", {f"{R0}.selectors[0].cel.expression": "true" + " " * 10240},
     f"{R0}.selectors[0].cel.expression", "more than the limit of 10240"),
    ("allocation mode", "claim", {f"{R0}.allocationMode": "Some"}, f"{R0}.allocationMode", "is not an allocation mode"),
    ("count with All", "claim", {f"{R0}.allocationMode": "All", f"{R0}.count": 1}, f"{R0}.count",
     "must not be set when allocationMode is All"),
    ("count positive", "claim", {f"{R0}.count": -2}, f"{R0}.count", "must be greater than zero"),
    ("tolerations limit", "claim", {f"{R0}.tolerations": [{"operator": "Exists"}] * 17}, f"{R0}.tolerations",
     "more than the limit of 16"),
    ("toleration operator", "claim", {f"{R0}.tolerations": [{"key": "k", "operator": "In"}]},
     f"{R0}.tolerations[0].operator", "is not a toleration operator"),
    ("toleration Exists value", "claim", {f"{R0}.tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
     f"{R0}.tolerations[0].value", "must be empty when the operator is Exists"),
    ("toleration value", "claim", {f"{R0}.tolerations": [{"key": "k", "value": "a b"}]}, f"{R0}.tolerations[0].value",
     "not a valid label value"),
    ("toleration effect", "claim", {f"{R0}.tolerations": [{"key": "k", "effect": "PreferNoSchedule"}]},
     f"{R0}.tolerations[0].effect", "is not a device taint effect"),
    ("toleration key", "claim", {f"{R0}.tolerations": [{"key": "a b", "operator": "Exists"}]},
     f"{R0}.tolerations[0].key", "is not a valid key"),
    ("subrequests limit", "claim", {"spec.devices.requests[1].firstAvailable": many(9, lambda i: {
        "name": f"s{i}", "deviceClassName": "c"}), "spec.devices.constraints": []},
     "spec.devices.requests[1].firstAvailable", "more than the limit of 8"),
    ("subrequest name", "claim", {"spec.devices.requests[1].firstAvailable[0].name": "subReq-0",
                                  "spec.devices.constraints": []},
     "spec.devices.requests[1].firstAvailable[0].name", "must be a DNS label"),
    ("subrequest names unique", "claim", {"spec.devices.requests[1].firstAvailable[1].name": "fast"},
     "spec.devices.requests[1].firstAvailable[1]", 'duplicate subrequest name "fast"'),
    ("subrequest class", "claim", {"spec.devices.requests[1].firstAvailable[0].deviceClassName": ""},
     "spec.devices.requests[1].firstAvailable[0].deviceClassName", "a device class name is required"),
    ("derived limit", "claim", {f"{R0}.derivedAttributes": many(33, lambda i: {
        "name": "example.com/numa", "expression": "1"})}, f"{R0}.derivedAttributes", "more than the limit of 32"),
    ("derived qualified", "claim", {f"{R0}.derivedAttributes": [{"name": "numa", "expression": "1"}]},
     f"{R0}.derivedAttributes[0].name", "must be fully qualified"),
    ("derived used", "claim", {f"{R0}.derivedAttributes": [{"name": "derived/pcie", "expression": "1"}]},
     f"{R0}.derivedAttributes[0].name", "must be used by at least one matchAttribute or distinctAttribute"),
    ("derived unique", "claim", {f"{R0}.derivedAttributes": [{"name": "example.com/numa", "expression": "1"}] * 2},
     f"{R0}.derivedAttributes[1]", 'duplicate derived attribute name "example.com/numa"'),
    ("derived expression", "claim", {f"{R0}.derivedAttributes": [{"name": "example.com/numa", "expression": ""}]},
     f"{R0}.derivedAttributes[0].expression", "must not be empty"),
    # --- claims: constraints and config ------------------------------------------------------
    ("constraints limit", "claim", {"spec.devices.constraints": [{"matchAttribute": "a.com/b"}] * 33},
     "spec.devices.constraints", "more than the limit of 32"),
    ("constraint both", "claim", {"spec.devices.constraints[0].distinctAttribute": "a.com/b"},
     "spec.devices.constraints[0]", "but both are set"),
    ("constraint neither", "claim", {"spec.devices.constraints[0].matchAttribute": DELETE},
     "spec.devices.constraints[0]", "exactly one of `matchAttribute` or `distinctAttribute` is required"),
    ("match qualified", "claim", {"spec.devices.constraints[0].matchAttribute": "numa"},
     "spec.devices.constraints[0].matchAttribute", "must be fully qualified"),
    ("distinct qualified", "claim", {"spec.devices.constraints[0].matchAttribute": DELETE,
                                     "spec.devices.constraints[0].distinctAttribute": "a/b/c"},
     "spec.devices.constraints[0].distinctAttribute", "more than one '/'"),
    ("constraint unknown request", "claim", {"spec.devices.constraints[0].requests[1]": "nics"},
     "spec.devices.constraints[0].requests[1]", 'must name a request of this claim'),
    ("constraint unknown subrequest", "claim", {"spec.devices.constraints[0].requests[1]": "nic/slow"},
     "spec.devices.constraints[0].requests[1]", "must name a request of this claim"),
    ("constraint exact has no subrequests", "claim", {"spec.devices.constraints[0].requests[0]": "gpu/x"},
     "spec.devices.constraints[0].requests[0]", "must name a request of this claim"),
    ("constraint request unique", "claim", {"spec.devices.constraints[0].requests[1]": "gpu"},
     "spec.devices.constraints[0].requests[1]", 'duplicate request reference "gpu"'),
    ("constraint references limit", "claim", {"spec.devices.constraints[0].requests": ["gpu"] * 33},
     "spec.devices.constraints[0].requests", "more than the limit of 32"),
    ("config limit", "claim", {"spec.devices.config": [{"opaque": {"driver": "d", "parameters": {}}}] * 33},
     "spec.devices.config", "more than the limit of 32"),
    ("config opaque", "claim", {"spec.devices.config[0].opaque": DELETE}, "spec.devices.config[0].opaque",
     "needs opaque driver parameters"),
    ("config driver", "claim", {"spec.devices.config[0].opaque.driver": "a/b"}, "spec.devices.config[0].opaque.driver",
     "must be a DNS subdomain"),
    ("config parameters object", "claim", {"spec.devices.config[0].opaque.parameters": [1, 2]},
     "spec.devices.config[0].opaque.parameters", "must be a JSON object"),
    ("config parameters size", "claim", {"spec.devices.config[0].opaque.parameters": {"x": "y" * 10240}},
     "spec.devices.config[0].opaque.parameters", "more than the limit of 10240"),
    ("config requests", "claim", {"spec.devices.config[0].requests": ["tpu"]}, "spec.devices.config[0].requests[0]",
     "must name a request of this claim"),
    # --- claims: status ----------------------------------------------------------------------
    ("reserved limit", "allocated", {"status.reservedFor": many(257, lambda i: {
        "resource": "pods", "name": f"p{i}", "uid": f"u{i}"})}, "status.reservedFor", "more than the limit of 256"),
    ("reserved uid", "allocated", {"status.reservedFor[0].uid": ""}, "status.reservedFor[0].uid", "is required"),
    ("reserved unique", "allocated", {"status.reservedFor[1]": {"resource": "pods", "name": "q", "uid": "u-1"}},
     "status.reservedFor[1]", 'duplicate uid "u-1"'),
    ("reserved needs allocation", "allocated", {"status.allocation": DELETE, "status.devices": []},
     "status.reservedFor", "may only be set on an allocated claim"),
    ("results limit", "allocated", {"status.allocation.devices.results": many(33, lambda i: {
        "request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": f"gpu-{i}"})},
     "status.allocation.devices.results", "more than the limit of 32"),
    ("result request", "allocated", {f"{RESULT}.request": "tpu"}, f"{RESULT}.request",
     "must name a request of this claim"),
    ("result driver", "allocated", {f"{RESULT}.driver": "GPU driver"}, f"{RESULT}.driver", "must be a DNS subdomain"),
    ("result pool", "allocated", {f"{RESULT}.pool": "Node_1"}, f"{RESULT}.pool", "pool name part"),
    ("result device", "allocated", {f"{RESULT}.device": "GPU-0", f"{STATUS}.device": "GPU-0"},
     f"{RESULT}.device", "must be a DNS label"),
    ("share ID", "allocated", {"status.allocation.devices.results[1].shareID": "7F3C9A52-1B4E-4D6A-9E2F-3C5B7D9A1E40"},
     "status.allocation.devices.results[1].shareID", "lower-case hexadecimal"),
    ("result binding", "allocated", {f"{RESULT}.bindingConditions": ["a"]}, f"{RESULT}.bindingFailureConditions",
     "are required when bindingConditions are given"),
    ("result toleration", "allocated", {f"{RESULT}.tolerations": [{"key": "k", "operator": "Has"}]},
     f"{RESULT}.tolerations[0].operator", "is not a toleration operator"),
    ("result node operations", "allocated", {f"{RESULT}.skipNodeOperations": ["Reboot"]},
     f"{RESULT}.skipNodeOperations[0]", "is not a node operation"),
    ("allocation config source", "allocated", {"status.allocation.devices.config[0].source": "FromPod"},
     "status.allocation.devices.config[0].source", "must be FromClass or FromClaim"),
    ("allocation config limit", "allocated", {"status.allocation.devices.config": [
        {"source": "FromClass", "opaque": {"driver": "d", "parameters": {}}}] * 65},
     "status.allocation.devices.config", "more than the limit of 64"),
    ("allocation node selector", "allocated", {
        "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].operator": "Exists"},
     "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].operator", "use In or NotIn"),
    ("device status allocated", "allocated", {f"{STATUS}.device": "gpu-9"}, STATUS,
     "must be one allocated to this claim"),
    ("device status unique", "allocated", {"status.devices[1]": {"driver": "gpu.example.com", "pool": "node-1",
                                                                 "device": "gpu-0"}},
     "status.devices[1]", "duplicate device entry"),
    ("device conditions limit", "allocated", {f"{STATUS}.conditions": many(9, lambda i: CONDITION | {"type": f"T{i}"})},
     f"{STATUS}.conditions", "more than the limit of 8"),
    ("condition status", "allocated", {f"{STATUS}.conditions[0].status": "Yes"}, f"{STATUS}.conditions[0].status",
     "must be True, False or Unknown"),
    ("condition reason", "allocated", {f"{STATUS}.conditions[0].reason": "not ok"}, f"{STATUS}.conditions[0].reason",
     "must start with a letter"),
    ("condition time", "allocated", {f"{STATUS}.conditions[0].lastTransitionTime": DELETE},
     f"{STATUS}.conditions[0].lastTransitionTime", "is required"),
    ("condition types unique", "allocated", {f"{STATUS}.conditions[1]": CONDITION}, f"{STATUS}.conditions[1]",
     'duplicate condition type "Ready"'),
    ("device data", "allocated", {f"{STATUS}.data": {"blob": "x" * 10240}}, f"{STATUS}.data",
     "more than the limit of 10240"),
    ("interface name", "allocated", {f"{STATUS}.networkData.interfaceName": "e" * 257},
     f"{STATUS}.networkData.interfaceName", "no more than 256 bytes"),
    ("hardware address", "allocated", {f"{STATUS}.networkData.hardwareAddress": "a" * 129},
     f"{STATUS}.networkData.hardwareAddress", "no more than 128 bytes"),
    ("ips limit", "allocated", {f"{STATUS}.networkData.ips": [f"10.0.0.{i}/24" for i in range(17)]},
     f"{STATUS}.networkData.ips", "more than the limit of 16"),
    ("ip format", "allocated", {f"{STATUS}.networkData.ips[0]": "10.0.0.5"}, f"{STATUS}.networkData.ips[0]",
     "with a prefix length"),
    ("ips unique", "allocated", {f"{STATUS}.networkData.ips[1]": "10.0.0.5/24"}, f"{STATUS}.networkData.ips[1]",
     'duplicate IP address'),
    # --- classes, templates, taint rules --------------------------------------------------------
    ("class selectors", "class", {"spec.selectors": [{"cel": {"expression": "true"}}] * 33}, "spec.selectors",
     "more than the limit of 32"),
    ("class config limit", "class", {"spec.config": [{"opaque": {"driver": "d", "parameters": {}}}] * 33},
     "spec.config", "more than the limit of 32"),
    ("class config opaque", "class", {"spec.config": [{}]}, "spec.config[0].opaque", "needs opaque driver parameters"),
    ("extended resource domain", "class", {"spec.extendedResourceName": "gpu"}, "spec.extendedResourceName",
     "is not an extended resource name"),
    ("extended resource kubernetes.io", "class", {"spec.extendedResourceName": "kubernetes.io/gpu"},
     "spec.extendedResourceName", "is not an extended resource name"),
    ("template metadata fields", "template", {"spec.metadata.name": "x"}, "spec.metadata.name",
     "cannot be set for a resource claim template"),
    ("template metadata labels", "template", {'spec.metadata.labels["team"]': "a b"},
     'spec.metadata.labels["team"]', "not a valid label value"),
    ("template requests", "template", {"spec.spec.devices.requests[0].name": "GPU"},
     "spec.spec.devices.requests[0].name", "must be a DNS label"),
    ("rule driver", "rule", {"spec.deviceSelector.driver": "a_b"}, "spec.deviceSelector.driver",
     "must be a DNS subdomain"),
    ("rule pool", "rule", {"spec.deviceSelector.pool": ""}, "spec.deviceSelector.pool", "is required"),
    ("rule device", "rule", {"spec.deviceSelector.device": "GPU"}, "spec.deviceSelector.device", "must be a DNS label"),
    ("rule effect", "rule", {"spec.taint.effect": "Evict"}, "spec.taint.effect", "is not a device taint effect"),
    ("rule conditions", "rule", {"status": {"conditions": many(9, lambda i: CONDITION | {"type": f"T{i}"})}},
     "status.conditions", "more than the limit of 8"),
    # --- core kinds and pool status requests ----------------------------------------------------
    ("node taint effect", "node", {"spec.taints[0].effect": "None"}, "spec.taints[0].effect",
     "is not a node taint effect"),
    ("node name", "node", {"metadata.name": "Node 1"}, "metadata.name", "must be a DNS subdomain"),
    ("namespace name", "namespace", {"metadata.name": "team.ml"}, "metadata.name", "must be a DNS label"),
    ("pod containers", "pod", {"spec.containers": []}, "spec.containers", "at least one container is required"),
    ("pod container names", "pod", {"spec.initContainers": [{"name": "main"}]}, "spec[1]",
     'duplicate container name "main"'),
    ("pod claim use", "pod", {"spec.containers[0].resources.claims[0].name": "tpu"},
     "spec.containers[0].resources.claims[0].name", "must be the name of one of the pod's spec.resourceClaims"),
    ("pod claim source", "pod", {"spec.resourceClaims[0].resourceClaimName": "c"}, "spec.resourceClaims[0]",
     "but both are set"),
    ("pod claim no source", "pod", {"spec.resourceClaims[0].resourceClaimTemplateName": DELETE},
     "spec.resourceClaims[0]", "exactly one of `resourceClaimName` or `resourceClaimTemplateName`"),
    ("pod claim names", "pod", {"spec.resourceClaims[1]": {"name": "gpu", "resourceClaimName": "c"}},
     "spec.resourceClaims[1]", 'duplicate claim name "gpu"'),
    ("pod requests within limits", "pod", {'spec.containers[0].resources.requests["cpu"]': "3"},
     'spec.containers[0].resources.requests["cpu"]', "must not be more than the limit 2"),
    ("pod node name", "pod", {"spec.nodeName": "Node 1"}, "spec.nodeName", "must be a DNS subdomain"),
    ("pod node selector", "pod", {'spec.nodeSelector["zone"]': "a b"}, 'spec.nodeSelector["zone"]',
     "not a valid label value"),
    ("pod affinity", "pod", {"spec.affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]}}}},
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].values", "must be given when the operator is In"),
    ("pod group name", "pod", {"spec.schedulingGroup": {"podGroupName": "Group"}}, "spec.schedulingGroup.podGroupName",
     "must be a DNS label"),
    ("pod-level claim use", "pod", {"spec.resources": {"claims": [{"name": "tpu"}]}}, "spec.resources.claims[0].name",
     "must be the name of one of the pod's spec.resourceClaims"),
    ("pod group claims", "podgroup", {"spec.resourceClaims[0].resourceClaimName": DELETE},
     "spec.resourceClaims[0]", "exactly one of `resourceClaimName` or `resourceClaimTemplateName`"),
    ("pool request driver", "pool", {"spec.driver": "example.com/gpu"}, "spec.driver", "must be a DNS subdomain"),
    ("pool request pool", "pool", {"spec.poolName": ""}, "spec.poolName", "is required"),
    ("pool request limit low", "pool", {"spec.limit": 0}, "spec.limit", "between 1 and 1000"),
    ("pool request limit high", "pool", {"spec.limit": 1001}, "spec.limit", "between 1 and 1000"),
    ("pool request attribute", "pool", {"spec.defaultPartitionTypeAttribute": "profile"},
     "spec.defaultPartitionTypeAttribute", "must be fully qualified"),
    ("pool status counts", "pool", {"status": {"poolCount": 1, "pools": [{"driver": "gpu.example.com", "poolName": "p",
                                                                         "generation": 1, "totalDevices": -1}]}},
     "status.pools[0].totalDevices", "must not be negative"),
]


@pytest.mark.parametrize("base", sorted(BASES))
def test_base_objects_are_valid(base: str) -> None:
    assert [str(p) for p in problems(base, {})] == []


@pytest.mark.parametrize("base, edits, path, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(base: str, edits: Edits, path: str, words: str) -> None:
    found = problems(base, edits)
    at_path = [p.message for p in found if p.location.path == path]
    assert any(words in m for m in at_path), f"expected {words!r} at {path}; got {[str(p) for p in found]}"
    for problem in found:
        assert problem.location.file == "case.yaml" and problem.location.document == 0


def test_case_ids_are_unique() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_defaulted_fields_may_be_left_out() -> None:
    """No allocationMode, count 0 and no toleration operator are valid: the API server defaults them."""
    edits = {"spec.devices.requests[0].exactly.count": 0,
             "spec.devices.requests[0].exactly.tolerations": [{"key": "k", "value": "v"}]}
    assert problems("claim", edits) == []


def test_messages_name_file_document_object_and_field() -> None:
    (problem,) = problems("slice", {"spec.pool.resourceSliceCount": 0})
    assert str(problem) == ("case.yaml[0]: ResourceSlice/node-1-gpus: spec.pool.resourceSliceCount: "
                            "must be greater than zero")


def test_registered_checkers_run_after_the_rules_and_can_be_removed() -> None:
    def no_gpus(obj: TypedObject, where: Location) -> list[Problem]:
        return [Problem(where.child("metadata.name"), "gpus are forbidden")] if "gpu" in obj.name else []

    register_checker(no_gpus)
    try:
        assert [p.message for p in problems("slice", {})] == ["gpus are forbidden"]
    finally:
        unregister_checker(no_gpus)
    assert problems("slice", {}) == []


def test_a_failing_checker_becomes_a_problem() -> None:
    def broken(obj: TypedObject, where: Location) -> list[Problem]:
        raise ValueError("boom")

    register_checker(broken)
    try:
        (problem,) = problems("class", {})
    finally:
        unregister_checker(broken)
    assert "internal error in check" in problem.message and "boom" in problem.message


# --- which shared objects the Kubernetes API rejects -------------------------------------------------

_SUBREQUEST = "subrequest names like subReq-0 are not DNS labels"
_CAPACITY = "capacity names like capacity-0 are not C identifiers"
API_REJECTS = {
    "scenarios/perf/wide-16x16-64x4.yaml[2]": "256 devices in one slice (limit 128)",
    "scenarios/upstream/all-devices-no-slices-prioritized-list.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/all-devices-of-the-incomplete-pool.yaml[4]": "count with allocationMode All",
    "scenarios/upstream/all-devices-some-allocated-admin-access.yaml[4]": "count with allocationMode All",
    "scenarios/upstream/all-devices-some-allocated-prioritized-list.yaml[6]": _SUBREQUEST,
    "scenarios/upstream/all-devices-some-allocating-admin-access.yaml[4]": "count with allocationMode All",
    "scenarios/upstream/allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector.yaml[3]": _CAPACITY,
    "scenarios/upstream/allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable.yaml[3]":
        _CAPACITY + "; requestPolicy without allowMultipleAllocations",
    "scenarios/upstream/allow-multiple-allocations-with-partitionable-device.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/allow-multiple-allocations-with-shared-device-counter-cross-cycle.yaml[3]": _CAPACITY,
    "scenarios/upstream/check-combinations-with-backtracking-across-slices-and-pools.yaml[5]":
        "bindingConditions without bindingFailureConditions",
    "scenarios/upstream/claim-config-scoped-to-subrequests-of-one-request.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/consumable-capacity-dedicated-device-with-consumable-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-disabled-feature-with-prioritized-list.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-violates-zero-request-policy.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device.yaml[3]":
        _CAPACITY + "; validRange max above the capacity",
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-missing-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity.yaml[3]":
        _CAPACITY + "; validRange max above the capacity",
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-subrequest.yaml[3]":
        _CAPACITY + "; validRange max above the capacity",
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-subrequest.yaml[4]":
        _SUBREQUEST + "; two subrequests named subReq-1",
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-valid-values-policy.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-zero-request-policy.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-with-partitionable-device-multiple-capacity-pools.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-with-partitionable-device-multiple-capacity-pools.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint.yaml[3]": _CAPACITY,
    "scenarios/upstream/distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint.yaml[4]": _CAPACITY,
    "scenarios/upstream/invalid-cel-all-devices.yaml[4]": "count with allocationMode All",
    "scenarios/upstream/list-attributes-distinct-constaint-with-empty-or-unknown-type.yaml[3]":
        "an attribute without a value; an empty list attribute",
    "scenarios/upstream/list-attributes-match-constaint-list-of-string-values-without-common-elements.yaml[4]":
        "two requests named req-0",
    "scenarios/upstream/list-attributes-match-constaint-with-empty-or-unknown-type.yaml[3]":
        "an attribute without a value; an empty list attribute",
    "scenarios/upstream/partitionable-devices-devices-on-different-nodes-consume-same-counter-set.yaml[6]": _SUBREQUEST,
    "scenarios/upstream/partitionable-devices-multiple-capacity-pools.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/partitionable-devices-prioritized-list.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/partitionable-devices-same-counter-set-name-in-different-resource-slices.yaml[4]":
        "a counter set without counters",
    "scenarios/upstream/partitionable-devices-same-counter-set-name-in-different-resource-slices.yaml[6]":
        "a counter set without counters",
    "scenarios/upstream/prioritized-list-allocation-mode-all-multiple-requests.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-allocation-mode-all-with-selectors.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-device-config.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-disabled.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-max-allocation-allocation-mode-all.yaml[6]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-max-allocation-limit-request.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-non-available.yaml[6]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-subrequests-with-allocation-mode-all.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-subrequests-with-constraints-ref-parent-request.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-subrequests-with-constraints-ref-sub-request.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-too-many-in-first-subrequest.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-with-backtracking.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/tainted-prioritized-list.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/tainted-two-devices-prioritized-list-tolerated.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/unknown-selector.yaml[4]": "a selector without a CEL expression",
    "scenarios/upstream/with-distinct-constraints-unknown-type-attribute.yaml[3]": "an attribute without a value",
    "scenarios/upstream/with-distinct-constraints-with-subrequests.yaml[4]": _SUBREQUEST,
    "seeds/examples/seed000-05.yaml[0]": "attribute name supported-models is not a C identifier",
    "seeds/examples/seed000-11.yaml[0]": "nodeAllocatableResources mapping with capacityKey but no capacityMultiplier",
    "seeds/examples/seed000-14.yaml[0]": "driver example.com/gpu is not a DNS subdomain",
}


def _rejected_shared_objects() -> set[str]:
    rejected = set()
    for path in shared_files("scenarios/upstream", "scenarios/cel", "scenarios/perf", "seeds/examples"):
        where = str(path.relative_to(SHARED))
        for index, data in documents(path):
            info = lookup(str(data.get("apiVersion")), str(data.get("kind")))
            if info is not None and validate_object(info.model.model_validate(data)):
                rejected.add(f"{where}[{index}]")
    return rejected


@pytest.mark.skipif(not shared_available(), reason="shared/ (scenarios, seeds) is not available")
def test_exactly_the_objects_the_api_rejects_are_rejected() -> None:
    """The documented list: each of these breaks a Kubernetes validation rule; every other object is valid."""
    assert _rejected_shared_objects() == set(API_REJECTS)
