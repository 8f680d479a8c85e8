"""One test per Kubernetes validation rule: a valid object, one change, the exact field and the message.

Every case starts from a valid base object (checked valid below), makes one
change, and expects a problem at exactly that field path whose message contains
the given words. A rule that stops firing, fires at the wrong field, or fires on
a valid object fails here.
"""

from __future__ import annotations

import pytest

from drasat.models.errors import InputProblem, Location
from drasat.models.meta import TypedObject
from drasat.models.validation import register_checker, unregister_checker

from .helpers_models import BASES, DELETE, SHARED_DEVICE, TAINT, Edits, device, many, problems

D0 = "spec.devices[0]"
CAP = f'{D0}.capacity["bandwidth"]'
POLICY = f"{CAP}.requestPolicy"
POLICY_AT = f"{D0}.capacity[bandwidth].requestPolicy"  # where problems are: Kubernetes writes map keys unquoted

# (id, base, edits, expected path, words in the message)
CASES: list[tuple[str, str, Edits, str, str]] = [
    # --- metadata -------------------------------------------------------------------------
    ("name required", "slice", {"metadata.name": DELETE}, "metadata.name", "name or generateName is required"),
    ("name subdomain", "slice", {"metadata.name": "Node_1"}, "metadata.name", "must be a DNS subdomain"),
    ("name too long", "class", {"metadata.name": "a" * 254}, "metadata.name", "no more than 253 characters"),
    ("namespace label", "claim", {"metadata.namespace": "ml.team"}, "metadata.namespace", "must be a DNS label"),
    ("label key", "node", {'metadata.labels["-zone"]': "a"}, "metadata.labels[-zone]", "is not a valid key"),
    (
        "label key prefix",
        "node",
        {'metadata.labels["Ex_ample.com/zone"]': "a"},
        "metadata.labels[Ex_ample.com/zone]",
        "prefix must be a DNS subdomain",
    ),
    ("label value", "node", {'metadata.labels["zone"]': "a b"}, "metadata.labels[zone]", "not a valid label value"),
    (
        "label value length",
        "node",
        {'metadata.labels["zone"]': "a" * 64},
        "metadata.labels[zone]",
        "no more than 63 characters",
    ),
    (
        "annotation key",
        "slice",
        {"metadata.annotations": {"a/b/c": "x"}},
        "metadata.annotations[a/b/c]",
        "is not a valid key",
    ),
    (
        "annotations size",
        "slice",
        {"metadata.annotations": {"big": "x" * (256 * 1024)}},
        "metadata.annotations",
        "Too long: may not be more than 262144 bytes",
    ),
    # --- slice: driver, pool, node selection ----------------------------------------------
    ("driver format", "slice", {"spec.driver": "GPU_driver"}, "spec.driver", "must be a DNS subdomain"),
    (
        "driver length",
        "slice",
        {"spec.driver": "a" * 60 + ".com"},
        "spec.driver",
        "Too long: may not be more than 63 bytes",
    ),
    ("driver empty", "slice", {"spec.driver": ""}, "spec.driver", "the driver name is required"),
    ("pool name part", "slice", {"spec.pool.name": "a//b"}, "spec.pool.name", 'pool name part ""'),
    (
        "pool name length",
        "slice",
        {"spec.pool.name": "a." * 127},
        "spec.pool.name",
        "Too long: may not be more than 253 bytes",
    ),
    (
        "slice count",
        "slice",
        {"spec.pool.resourceSliceCount": 0},
        "spec.pool.resourceSliceCount",
        "must be greater than zero",
    ),
    ("generation", "slice", {"spec.pool.generation": -1}, "spec.pool.generation", "must not be negative"),
    ("no node selection", "slice", {"spec.nodeName": DELETE}, "spec", "exactly one of `nodeName`, `nodeSelector`"),
    ("two node selections", "slice", {"spec.allNodes": True}, "spec", "but `nodeName`, `allNodes` are set"),
    ("empty node name", "slice", {"spec.nodeName": ""}, "spec.nodeName", "either unset or a node name"),
    ("node name format", "slice", {"spec.nodeName": "Node 1"}, "spec.nodeName", "must be a DNS subdomain"),
    (
        "allNodes false",
        "slice",
        {"spec.nodeName": DELETE, "spec.allNodes": False},
        "spec.allNodes",
        "must be either unset or true",
    ),
    (
        "selector terms",
        "slice",
        {
            "spec.nodeName": DELETE,
            "spec.nodeSelector": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}] * 2
            },
        },
        "spec.nodeSelector.nodeSelectorTerms",
        "exactly one node selector term",
    ),
    (
        "selector no terms",
        "slice",
        {"spec.nodeName": DELETE, "spec.nodeSelector": {"nodeSelectorTerms": []}},
        "spec.nodeSelector.nodeSelectorTerms",
        "at least one node selector term",
    ),
    (
        "selector operator",
        "slice",
        {
            "spec.nodeName": DELETE,
            "spec.nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Has"}]}]},
        },
        "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator",
        "is not an operator",
    ),
    (
        "selector In needs values",
        "slice",
        {
            "spec.nodeName": DELETE,
            "spec.nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]},
        },
        "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values",
        "must be given when the operator is In",
    ),
    (
        "selector Exists no values",
        "slice",
        {
            "spec.nodeName": DELETE,
            "spec.nodeSelector": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}]
            },
        },
        "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values",
        "must be empty",
    ),
    (
        "selector Gt one value",
        "slice",
        {
            "spec.nodeName": DELETE,
            "spec.nodeSelector": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1", "2"]}]}]
            },
        },
        "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values",
        "exactly one value",
    ),
    (
        "selector field key",
        "slice",
        {
            "spec.nodeName": DELETE,
            "spec.nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]}]
            },
        },
        "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].key",
        "use metadata.name",
    ),
    (
        "selector field values",
        "slice",
        {
            "spec.nodeName": DELETE,
            "spec.nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}
                ]
            },
        },
        "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].values",
        "exactly one value",
    ),
    (
        "devices and counters",
        "slice",
        {"spec.sharedCounters": [{"name": "s", "counters": {"c": {"value": "1"}}}]},
        "spec",
        "only one of `sharedCounters` or `devices`",
    ),
    # --- slice: devices ---------------------------------------------------------------------
    (
        "128 devices",
        "slice",
        {"spec.devices": many(129, device)},
        "spec.devices",
        "Too many: 129: must have at most 128 items",
    ),
    (
        "64 with taints",
        "slice",
        {"spec.devices": many(65, lambda i: device(i, taints=[TAINT]))},
        "spec.devices",
        "Too many: 65: must have at most 64 items",
    ),
    (
        "64 with counters",
        "slice",
        {
            "spec.devices": many(
                65, lambda i: device(i, consumesCounters=[{"counterSet": "s", "counters": {"c": {"value": "1"}}}])
            )
        },
        "spec.devices",
        "Too many: 65: must have at most 64 items",
    ),
    (
        "64 with lists",
        "slice",
        {"spec.devices": many(65, lambda i: device(i, attributes={"l": {"ints": [1]}}))},
        "spec.devices",
        "Too many: 65: must have at most 64 items",
    ),
    (
        "duplicate device",
        "slice",
        {"spec.devices": [device(0), device(0)]},
        "spec.devices[1]",
        'Duplicate value: "d-0"',
    ),
    ("device name", "slice", {f"{D0}.name": "GPU-0"}, f"{D0}.name", "must be a DNS label"),
    (
        "32 attributes and capacities",
        "slice",
        {f"{D0}.attributes": {f"a{i}": {"int": i} for i in range(32)}},
        D0,
        "Invalid value: 33: the total number of attributes and capacities must not exceed 32",
    ),
    (
        "48 attribute values",
        "slice",
        {f"{D0}.attributes": {"a": {"ints": list(range(47))}, "b": {"ints": [1, 2]}}},
        D0,
        "Invalid value: 49: the total number of attribute values must not exceed 48",
    ),
    (
        "attribute name slashes",
        "slice",
        {f'{D0}.attributes["a/b/c"]': {"int": 1}},
        f"{D0}.attributes[a/b/c]",
        "more than one '/'",
    ),
    (
        "attribute C identifier",
        "slice",
        {f'{D0}.attributes["x.com/supported-models"]': {"int": 1}},
        f"{D0}.attributes[x.com/supported-models]",
        "must be a C identifier",
    ),
    (
        "attribute identifier length",
        "slice",
        {f'{D0}.attributes["{"a" * 33}"]': {"int": 1}},
        f"{D0}.attributes[{'a' * 33}]",
        "Too long: may not be more than 32 bytes",
    ),
    (
        "attribute domain",
        "slice",
        {f'{D0}.attributes["Bad_Domain/x"]': {"int": 1}},
        f"{D0}.attributes[Bad_Domain/x]",
        "must be a DNS subdomain",
    ),
    (
        "attribute empty domain",
        "slice",
        {f'{D0}.attributes["/x"]': {"int": 1}},
        f"{D0}.attributes[/x]",
        "domain before '/' must not be empty",
    ),
    (
        "capacity name",
        "slice",
        {f'{D0}.capacity["capacity-0"]': {"value": "1"}},
        f"{D0}.capacity[capacity-0]",
        "must be a C identifier",
    ),
    (
        "attribute two values",
        "slice",
        {f'{D0}.attributes["model"]': {"string": "x", "int": 1}},
        f"{D0}.attributes[model]",
        "exactly one value must be given",
    ),
    (
        "attribute no value",
        "slice",
        {f'{D0}.attributes["model"]': {}},
        f"{D0}.attributes[model]",
        "exactly one value must be given",
    ),
    (
        "string length",
        "slice",
        {f'{D0}.attributes["model"]': {"string": "x" * 65}},
        f"{D0}.attributes[model].string",
        "Too long: may not be more than 64 bytes",
    ),
    (
        "version semver",
        "slice",
        {f'{D0}.attributes["model"]': {"version": "v1.2"}},
        f"{D0}.attributes[model].version",
        "is not a semantic version",
    ),
    (
        "versions semver",
        "slice",
        {f'{D0}.attributes["model"]': {"versions": ["1.0.0", "01.0.0"]}},
        f"{D0}.attributes[model].versions[1]",
        "is not a semantic version",
    ),
    (
        "empty list",
        "slice",
        {f'{D0}.attributes["model"]': {"strings": []}},
        f"{D0}.attributes[model].strings",
        "must not be empty when given",
    ),
    (
        "strings length",
        "slice",
        {f'{D0}.attributes["model"]': {"strings": ["a", "b" * 65]}},
        f"{D0}.attributes[model].strings[1]",
        "Too long: may not be more than 64 bytes",
    ),
    # --- slice: consumable capacity -------------------------------------------------------------
    (
        "policy needs multiple allocations",
        "slice",
        {"spec.devices[0]": SHARED_DEVICE | {"allowMultipleAllocations": False}},
        POLICY_AT,
        "only allowed on devices with allowMultipleAllocations: true",
    ),
    ("policy values and range", "slice", {D0: SHARED_DEVICE, f"{POLICY}.validValues": ["10"]}, POLICY_AT, "not both"),
    (
        "valid values default",
        "slice",
        {
            D0: SHARED_DEVICE,
            f"{POLICY}.validRange": DELETE,
            f"{POLICY}.validValues": ["10"],
            f"{POLICY}.default": DELETE,
        },
        f"{POLICY_AT}.default",
        "is required when validValues",
    ),
    (
        "valid values sorted",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE, f"{POLICY}.validValues": ["20", "10"]},
        f"{POLICY_AT}.validValues[1]",
        "ascending order",
    ),
    (
        "valid values limit",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE, f"{POLICY}.validValues": [str(i) for i in range(1, 12)]},
        f"{POLICY_AT}.validValues",
        "Too many: 11: must have at most 10 items",
    ),
    (
        "valid value above capacity",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE, f"{POLICY}.validValues": ["10", "200"]},
        f"{POLICY_AT}.validValues[1]",
        "larger than the capacity value 100",
    ),
    (
        "valid values duplicate",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE, f"{POLICY}.validValues": ["10", "10"]},
        f"{POLICY_AT}.validValues[1]",
        'Duplicate value: "10"',
    ),
    (
        "default among values",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": DELETE, f"{POLICY}.validValues": ["20", "30"]},
        f"{POLICY_AT}.validValues",
        "does not contain the default 10",
    ),
    (
        "range default",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.default": DELETE},
        f"{POLICY_AT}.default",
        "is required when validRange",
    ),
    (
        "range min",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange.min": DELETE},
        f"{POLICY_AT}.validRange.min",
        "is required when validRange",
    ),
    (
        "range min above capacity",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "200"}, f"{POLICY}.default": "200"},
        f"{POLICY_AT}.validRange.min",
        "larger than the capacity value",
    ),
    (
        "range default below min",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.default": "5"},
        f"{POLICY_AT}.default",
        "less than the minimum 10",
    ),
    (
        "range max below min",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "10", "max": "5"}},
        f"{POLICY_AT}.validRange.max",
        "the minimum 10 is larger than the maximum 5",
    ),
    (
        "range max above capacity",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange.max": "110"},
        f"{POLICY_AT}.validRange.max",
        "larger than the capacity value",
    ),
    (
        "range default above max",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "10", "max": "50"}, f"{POLICY}.default": "60"},
        f"{POLICY_AT}.default",
        "more than the maximum 50",
    ),
    (
        "range step positive",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange.step": "0"},
        f"{POLICY_AT}.validRange.step",
        "must be greater than zero",
    ),
    (
        "range one step",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "10", "step": "95"}},
        f"{POLICY_AT}.validRange.step",
        "one step from the minimum",
    ),
    (
        "range default on step",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.default": "15"},
        f"{POLICY_AT}.validRange.step",
        "15 is not the minimum 10 plus a multiple of the step 10",
    ),
    (
        "range fractional step",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange": {"min": "500m", "step": "250m"}, f"{POLICY}.default": "600m"},
        f"{POLICY_AT}.validRange.step",
        "600m is not the minimum 500m plus a multiple of the step 250m",
    ),
    (
        "range beyond thousandths",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange.min": "10500u"},
        f"{POLICY_AT}.validRange.min",
        "cannot be represented in thousandths",
    ),
    (
        "range max on step",
        "slice",
        {D0: SHARED_DEVICE, f"{POLICY}.validRange.max": "95"},
        f"{POLICY_AT}.validRange.step",
        "95 is not the minimum",
    ),
    # --- slice: taints, counters, node selection per device ------------------------------------
    (
        "taints limit",
        "slice",
        {f"{D0}.taints": [TAINT] * 17},
        f"{D0}.taints",
        "Too many: 17: must have at most 16 items",
    ),
    (
        "taint effect",
        "slice",
        {f"{D0}.taints": [{"key": "k", "effect": "PreferNoSchedule"}]},
        f"{D0}.taints[0].effect",
        "is not a device taint effect",
    ),
    (
        "taint effect required",
        "slice",
        {f"{D0}.taints": [{"key": "k", "effect": ""}]},
        f"{D0}.taints[0].effect",
        "is required",
    ),
    (
        "taint key",
        "slice",
        {f"{D0}.taints": [{"key": "a b", "effect": "None"}]},
        f"{D0}.taints[0].key",
        "is not a valid key",
    ),
    (
        "taint value",
        "slice",
        {f"{D0}.taints": [{"key": "k", "value": "a b", "effect": "None"}]},
        f"{D0}.taints[0].value",
        "not a valid label value",
    ),
    (
        "consumptions limit",
        "slice",
        {f"{D0}.consumesCounters": many(3, lambda i: {"counterSet": f"s{i}", "counters": {"c": {"value": "1"}}})},
        f"{D0}.consumesCounters",
        "Too many: 3: must have at most 2 items",
    ),
    (
        "consumption set unique",
        "slice",
        {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}] * 2},
        f"{D0}.consumesCounters[1]",
        'Duplicate value: "s"',
    ),
    (
        "consumption counters",
        "slice",
        {f"{D0}.consumesCounters": [{"counterSet": "s"}]},
        f"{D0}.consumesCounters[0].counters",
        "at least one counter is required",
    ),
    (
        "consumption counters limit",
        "slice",
        {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}]},
        f"{D0}.consumesCounters[0].counters",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "counter name",
        "slice",
        {f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"Mem": {"value": "1"}}}]},
        f"{D0}.consumesCounters[0].counters[Mem]",
        "must be a DNS label",
    ),
    (
        "counter set name",
        "slice",
        {f"{D0}.consumesCounters": [{"counterSet": "S", "counters": {"c": {"value": "1"}}}]},
        f"{D0}.consumesCounters[0].counterSet",
        "must be a DNS label",
    ),
    (
        "compatibility groups limit",
        "slice",
        {
            f"{D0}.consumesCounters": [
                {"counterSet": "s", "counters": {"c": {"value": "1"}}, "compatibilityGroups": ["a", "b", "c"]}
            ]
        },
        f"{D0}.consumesCounters[0].compatibilityGroups",
        "Too many: 3: must have at most 2 items",
    ),
    (
        "compatibility groups unique",
        "slice",
        {
            f"{D0}.consumesCounters": [
                {"counterSet": "s", "counters": {"c": {"value": "1"}}, "compatibilityGroups": ["mig", "mig"]}
            ]
        },
        f"{D0}.consumesCounters[0].compatibilityGroups[1]",
        'Duplicate value: "mig"',
    ),
    (
        "compatibility group name",
        "slice",
        {
            f"{D0}.consumesCounters": [
                {"counterSet": "s", "counters": {"c": {"value": "1"}}, "compatibilityGroups": ["MIG"]}
            ]
        },
        f"{D0}.consumesCounters[0].compatibilityGroups[0]",
        "must be a DNS label",
    ),
    (
        "counter sets limit",
        "slice",
        {
            "spec.devices": DELETE,
            "spec.sharedCounters": many(9, lambda i: {"name": f"s{i}", "counters": {"c": {"value": "1"}}}),
        },
        "spec.sharedCounters",
        "Too many: 9: must have at most 8 items",
    ),
    (
        "counter set needs counters",
        "slice",
        {"spec.devices": DELETE, "spec.sharedCounters": [{"name": "s"}]},
        "spec.sharedCounters[0].counters",
        "at least one counter is required",
    ),
    (
        "counters per set",
        "slice",
        {
            "spec.devices": DELETE,
            "spec.sharedCounters": [{"name": "s", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}],
        },
        "spec.sharedCounters[0].counters",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "counter sets unique",
        "slice",
        {"spec.devices": DELETE, "spec.sharedCounters": [{"name": "s", "counters": {"c": {"value": "1"}}}] * 2},
        "spec.sharedCounters[1]",
        'Duplicate value: "s"',
    ),
    (
        "counter set name format",
        "slice",
        {"spec.devices": DELETE, "spec.sharedCounters": [{"name": "gpu_0", "counters": {"c": {"value": "1"}}}]},
        "spec.sharedCounters[0].name",
        "must be a DNS label",
    ),
    (
        "device node needs per-device",
        "slice",
        {f"{D0}.nodeName": "node-1"},
        D0,
        "may only be set when the slice sets perDeviceNodeSelection",
    ),
    (
        "per-device needs one",
        "slice",
        {"spec.nodeName": DELETE, "spec.perDeviceNodeSelection": True},
        D0,
        "exactly one of `nodeName`, `nodeSelector` or `allNodes` is required",
    ),
    (
        "per-device only one",
        "slice",
        {
            "spec.nodeName": DELETE,
            "spec.perDeviceNodeSelection": True,
            f"{D0}.nodeName": "node-1",
            f"{D0}.allNodes": True,
        },
        D0,
        "but 2 are set",
    ),
    (
        "per-device node name",
        "slice",
        {"spec.nodeName": DELETE, "spec.perDeviceNodeSelection": True, f"{D0}.nodeName": ""},
        f"{D0}.nodeName",
        "must not be empty",
    ),
    (
        "per-device false",
        "slice",
        {"spec.perDeviceNodeSelection": False},
        "spec.perDeviceNodeSelection",
        "must be either unset or true",
    ),
    # --- slice: binding conditions, node allocatable resources, partitions, node operations ---
    (
        "binding conditions limit",
        "slice",
        {f"{D0}.bindingConditions": [f"c{i}" for i in range(5)], f"{D0}.bindingFailureConditions": ["f"]},
        f"{D0}.bindingConditions",
        "Too many: 5: must have at most 4 items",
    ),
    (
        "binding duplicates",
        "slice",
        {f"{D0}.bindingConditions": ["a", "a"], f"{D0}.bindingFailureConditions": ["f"]},
        f"{D0}.bindingConditions[1]",
        'Duplicate value: "a"',
    ),
    (
        "binding overlap",
        "slice",
        {f"{D0}.bindingConditions": ["a"], f"{D0}.bindingFailureConditions": ["a"]},
        f"{D0}.bindingFailureConditions[0]",
        "must not overlap",
    ),
    (
        "binding needs failure",
        "slice",
        {f"{D0}.bindingConditions": ["a"]},
        f"{D0}.bindingFailureConditions",
        "are required when bindingConditions are given",
    ),
    (
        "failure needs binding",
        "slice",
        {f"{D0}.bindingFailureConditions": ["a"]},
        f"{D0}.bindingConditions",
        "are required when bindingFailureConditions are given",
    ),
    (
        "binding condition format",
        "slice",
        {f"{D0}.bindingConditions": ["is ready"], f"{D0}.bindingFailureConditions": ["f"]},
        f"{D0}.bindingConditions[0]",
        "is not a valid key",
    ),
    (
        "node resource name",
        "slice",
        {f"{D0}.nodeAllocatableResources": {"example.com/gpu": {"overhead": {"perPod": "1"}}}},
        f"{D0}.nodeAllocatableResources[example.com/gpu]",
        "is not a node allocatable resource",
    ),
    (
        "node resource empty",
        "slice",
        {f"{D0}.nodeAllocatableResources": {"memory": {}}},
        f"{D0}.nodeAllocatableResources[memory]",
        "at least one of `mapping` or `overhead`",
    ),
    (
        "mapping capacity key",
        "slice",
        {f"{D0}.nodeAllocatableResources": {"cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "1"}}}},
        f"{D0}.nodeAllocatableResources[cpu].mapping.capacityKey",
        "is not a capacity of this device",
    ),
    (
        "mapping multiplier required",
        "slice",
        {f"{D0}.nodeAllocatableResources": {"memory": {"mapping": {"capacityKey": "memory"}}}},
        f"{D0}.nodeAllocatableResources[memory].mapping.capacityMultiplier",
        "is required when capacityKey is set",
    ),
    (
        "mapping key required",
        "slice",
        {f"{D0}.nodeAllocatableResources": {"memory": {"mapping": {"capacityMultiplier": "2"}}}},
        f"{D0}.nodeAllocatableResources[memory].mapping.capacityKey",
        "is required when capacityMultiplier is set",
    ),
    (
        "mapping positive",
        "slice",
        {f"{D0}.nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "0"}}}},
        f"{D0}.nodeAllocatableResources[cpu].mapping.deviceMultiplier",
        "must be positive",
    ),
    (
        "overhead empty",
        "slice",
        {f"{D0}.nodeAllocatableResources": {"memory": {"overhead": {}}}},
        f"{D0}.nodeAllocatableResources[memory].overhead",
        "at least one of `perPod` or `perContainer`",
    ),
    (
        "overhead negative",
        "slice",
        {f"{D0}.nodeAllocatableResources": {"memory": {"overhead": {"perPod": "-1Gi"}}}},
        f"{D0}.nodeAllocatableResources[memory].overhead.perPod",
        "must not be negative",
    ),
    (
        "partition type needs counters",
        "slice",
        {"spec.partitionTypeAttribute": "gpu.example.com/profile"},
        "spec.partitionTypeAttribute",
        "may only be set on a slice with devices that consume counters",
    ),
    (
        "partition type qualified",
        "slice",
        {
            "spec.partitionTypeAttribute": "profile",
            f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}],
        },
        "spec.partitionTypeAttribute",
        "must be fully qualified",
    ),
    (
        "partition attribute present",
        "slice",
        {
            "spec.partitionTypeAttribute": "gpu.example.com/profile",
            f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}],
        },
        f"{D0}.attributes[gpu.example.com/profile]",
        "is required: the device consumes counters",
    ),
    (
        "partition attribute string",
        "slice",
        {
            "spec.partitionTypeAttribute": "gpu.example.com/model",
            f'{D0}.attributes["model"]': {"int": 1},
            f"{D0}.consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}],
        },
        f"{D0}.attributes[gpu.example.com/model]",
        "must be a string value",
    ),
    (
        "skip operation value",
        "slice",
        {"spec.skipNodeOperations": ["NodeStart"]},
        "spec.skipNodeOperations[0]",
        "is not a node operation",
    ),
    (
        "skip prepare alone",
        "slice",
        {"spec.skipNodeOperations": ["NodePrepareResources"]},
        "spec.skipNodeOperations",
        "only be skipped together with NodeUnprepareResources",
    ),
    (
        "skip duplicates",
        "slice",
        {"spec.skipNodeOperations": ["*", "*"]},
        "spec.skipNodeOperations[1]",
        'Duplicate value: "*"',
    ),
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
    edits = {
        "spec.devices.requests[0].exactly.count": 0,
        "spec.devices.requests[0].exactly.tolerations": [{"key": "k", "value": "v"}],
    }
    assert problems("claim", edits) == []


def test_messages_name_file_document_object_and_field() -> None:
    (problem,) = problems("slice", {"spec.pool.resourceSliceCount": 0})
    assert str(problem) == (
        "case.yaml[0]: ResourceSlice/node-1-gpus: spec.pool.resourceSliceCount: must be greater than zero"
    )


def test_registered_checkers_run_after_the_rules_and_can_be_removed() -> None:
    def no_gpus(obj: TypedObject, where: Location) -> list[InputProblem]:
        return [InputProblem(where.child("metadata.name"), "gpus are forbidden")] if "gpu" in obj.name else []

    register_checker(no_gpus)
    try:
        assert [p.message for p in problems("slice", {})] == ["gpus are forbidden"]
    finally:
        unregister_checker(no_gpus)
    assert problems("slice", {}) == []


def test_a_failing_checker_becomes_a_problem() -> None:
    def broken(obj: TypedObject, where: Location) -> list[InputProblem]:
        raise ValueError("boom")

    register_checker(broken)
    try:
        (problem,) = problems("class", {})
    finally:
        unregister_checker(broken)
    assert "internal error in check" in problem.message and "boom" in problem.message


def test_fractional_ranges_count_in_thousandths() -> None:
    """DRAFractionalCapacityRange (on by default in 1.37): 0.5 + 2 × 0.25 = 1 is on the grid."""
    edits = {
        "spec.devices[0]": SHARED_DEVICE,
        f"{POLICY}.validRange": {"min": "500m", "max": "1", "step": "250m"},
        f"{POLICY}.default": "750m",
    }
    assert problems("slice", edits) == []
