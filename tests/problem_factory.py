"""Random small DRA problems for property tests: devices, counters (with compatibility groups), shared devices
(with request policies), list attributes, per-device node selection, binding conditions, constraints,
alternatives.

Classes have no selectors, so these problems exercise the search, not CEL.
"""

from __future__ import annotations

from hypothesis import strategies as st

from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import Features, NodeInfo, Problem

NODE = NodeInfo("node-1", {"zone": "a"})


@st.composite
def capacity(draw) -> dict:
    """A consumable capacity of 10, maybe with a request policy (default, range with step, or values)."""
    policy = draw(st.sampled_from(["none", "range", "values"]))
    if policy == "range":
        return {
            "value": "10",
            "requestPolicy": {
                "default": "2",
                "validRange": {
                    "min": "2",
                    "step": draw(st.sampled_from(["1", "2", "3"])),
                    "max": draw(st.sampled_from(["6", "8"])),
                },
            },
        }
    if policy == "values":
        return {"value": "10", "requestPolicy": {"default": "1", "validValues": ["1", "3", "5"]}}
    return {"value": "10"}


@st.composite
def devices(draw, pool: int, counters: bool, per_device: bool = False) -> list[dict]:
    out = []
    for i in range(draw(st.integers(1, 5))):
        device: dict = {
            "name": f"dev-{pool}-{i}",
            "attributes": {
                "numa": {"int": draw(st.integers(0, 1))},
                "kind": {"string": draw(st.sampled_from(["a", "b", "c"]))},
            },
        }
        roots = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True))
        device["attributes"]["roots"] = {"ints": roots} if draw(st.booleans()) else {"int": roots[0]}
        if counters and draw(st.booleans()):
            device["consumesCounters"] = [
                {"counterSet": "mem", "counters": {"gib": {"value": str(draw(st.integers(1, 4)))}}}
            ]
            groups = draw(st.sampled_from([[], ["mig"], ["vgpu"], ["mig", "vgpu"]]))
            if groups:
                device["consumesCounters"][0]["compatibilityGroups"] = groups
        if draw(st.integers(0, 5)) == 0:
            device["allowMultipleAllocations"] = True
            device["capacity"] = {"bw": draw(capacity())}
        if draw(st.integers(0, 9)) == 0:
            device["bindingConditions"] = ["ready"]
            device["bindingFailureConditions"] = ["failed"]
        if per_device:
            device.update(draw(st.sampled_from([{"nodeName": NODE.name}, {"nodeName": "node-2"}, {"allNodes": True}])))
        if draw(st.integers(0, 7)) == 0:
            device["taints"] = [{"key": "maintenance", "effect": draw(st.sampled_from(["NoSchedule", "None"]))}]
        out.append(device)
    return out


@st.composite
def slices(draw) -> list[ResourceSlice]:
    out = []
    for pool in range(draw(st.integers(1, 2))):
        counters = draw(st.booleans())
        per_device = draw(st.integers(0, 3)) == 0
        spec: dict = {
            "driver": "d.example.com",
            "pool": {"name": f"pool-{pool}", "generation": 1, "resourceSliceCount": 2 if counters else 1},
            "devices": draw(devices(pool, counters, per_device)),
        }
        spec.update({"perDeviceNodeSelection": True} if per_device else {"nodeName": NODE.name})
        out.append(
            ResourceSlice.model_validate(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"slice-{pool}"},
                    "spec": spec,
                }
            )
        )
        if counters:
            out.append(
                ResourceSlice.model_validate(
                    {
                        "apiVersion": "resource.k8s.io/v1",
                        "kind": "ResourceSlice",
                        "metadata": {"name": f"counters-{pool}"},
                        "spec": {
                            "driver": "d.example.com",
                            "nodeName": NODE.name,
                            "pool": {"name": f"pool-{pool}", "generation": 1, "resourceSliceCount": 2},
                            "sharedCounters": [
                                {"name": "mem", "counters": {"gib": {"value": str(draw(st.integers(2, 8)))}}}
                            ],
                        },
                    }
                )
            )
    return out


@st.composite
def request(draw, index: int) -> dict:
    def body() -> dict:
        b: dict = {"deviceClassName": "any"}
        if draw(st.integers(0, 6)) == 0:
            b["allocationMode"] = "All"
        else:
            b["count"] = draw(st.integers(1, 3))
        if draw(st.integers(0, 4)) == 0:
            b["capacity"] = {"requests": {"bw": str(draw(st.integers(1, 6)))}}
        if draw(st.integers(0, 5)) == 0:
            b["tolerations"] = [{"key": "maintenance", "operator": "Exists"}]
        return b

    if draw(st.integers(0, 2)) == 0:
        return {"name": f"r{index}", "firstAvailable": [{"name": f"s{j}", **body()} for j in range(2)]}
    exact = body()
    if draw(st.integers(0, 6)) == 0:
        exact["adminAccess"] = True
    return {"name": f"r{index}", "exactly": exact}


@st.composite
def claims(draw) -> list[ResourceClaim]:
    out = []
    for c in range(draw(st.integers(1, 3))):
        requests = [draw(request(i)) for i in range(draw(st.integers(1, 2)))]
        constraints = []
        kind = draw(st.sampled_from(["none", "match", "distinct", "match-roots", "distinct-roots"]))
        if kind == "match":
            constraints.append({"matchAttribute": "d.example.com/numa"})
        elif kind == "distinct":
            constraints.append({"distinctAttribute": "d.example.com/kind"})
        elif kind == "match-roots":
            constraints.append({"matchAttribute": "d.example.com/roots"})
        elif kind == "distinct-roots":
            constraints.append({"distinctAttribute": "d.example.com/roots"})
        out.append(
            ResourceClaim.model_validate(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": f"claim-{c}"},
                    "spec": {"devices": {"requests": requests, "constraints": constraints}},
                }
            )
        )
    return out


@st.composite
def allocated(draw, slices: list[ResourceSlice]) -> list[ResourceClaim]:
    """Maybe one claim already holding a few devices (exclusively, or a share of a shared device)."""
    devices = [(s.spec.pool.name, d) for s in slices for d in s.spec.devices]
    held = draw(st.lists(st.sampled_from(devices), max_size=2, unique_by=lambda x: x[1].name)) if devices else []
    if not held:
        return []
    results = []
    for pool, device in held:
        result = {"request": "held", "driver": "d.example.com", "pool": pool, "device": device.name}
        if device.allow_multiple_allocations:
            result["shareID"] = "123e4567-e89b-12d3-a456-426614174000"
            result["consumedCapacity"] = {"bw": "4"}
        results.append(result)
    return [
        ResourceClaim.model_validate(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "already"},
                "spec": {"devices": {"requests": [{"name": "held", "exactly": {"deviceClassName": "any"}}]}},
                "status": {"allocation": {"devices": {"results": results}}},
            }
        )
    ]


@st.composite
def problems(draw) -> Problem:
    any_class = DeviceClass.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"}}
    )
    chosen = draw(slices())
    return Problem(
        node=NODE,
        slices=chosen,
        classes=[any_class],
        claims=draw(claims()),
        allocated=draw(allocated(chosen)),
        features=Features.from_mapping(
            {
                "DRAListTypeAttributes": draw(st.booleans()),
                "DRADeviceCompatibilityGroups": draw(st.booleans()),
                "DRADeviceBindingConditions": draw(st.integers(0, 3)) > 0,
            }
        ),
    )
