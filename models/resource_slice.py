"""``resource.k8s.io/v1`` ResourceSlice and DeviceTaintRule: the devices drivers publish, and taints on them.

Split from :mod:`.resource` (claims and classes) along the API's own seam: what drivers and
administrators write about devices here, what users ask for there. :mod:`.resource` names these
kinds too, so that the API group reads as one module to its users.
"""

# No ``from __future__ import annotations`` here: pydantic would compile every annotation string at each start.

from pydantic import Field, StrictBool, StrictStr

from .meta import (
    BUILT_ON_FIRST_USE,
    ApiModel,
    Condition,
    Int64,
    NodeSelector,
    Timestamp,
    TypedObject,
    empty_dict,
    empty_list,
)
from .quantity import Quantity

# --- slices -----------------------------------------------------------------------------------


class DeviceAttribute(ApiModel):
    """One attribute value: exactly one of the eight typed fields (checked by validation)."""

    int_: Int64 | None = Field(default=None, alias="int")
    bool_: StrictBool | None = Field(default=None, alias="bool")
    string: StrictStr | None = None
    version: StrictStr | None = None
    ints: list[Int64] | None = None
    bools: list[StrictBool] | None = None
    strings: list[StrictStr] | None = None
    versions: list[StrictStr] | None = None

    def raw(self) -> dict[str, object]:
        """The value as the API writes it (``{"int": 3}``), for the CEL layer and constraints.

        Written out by hand: it runs for every attribute of every device in a cluster.
        """
        out: dict[str, object] = {}
        for name, key in _ATTRIBUTE_KEYS:
            value = getattr(self, name)
            if value is not None:
                out[key] = list(value) if isinstance(value, list) else value
        return out


_ATTRIBUTE_KEYS = (
    ("int_", "int"),
    ("bool_", "bool"),
    ("string", "string"),
    ("version", "version"),
    ("ints", "ints"),
    ("bools", "bools"),
    ("strings", "strings"),
    ("versions", "versions"),
)


class CapacityRequestPolicyRange(ApiModel):
    """The range (min, max, step) a request for a shared capacity must fall in."""

    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(ApiModel):
    """How a shared capacity may be requested: a default, and valid values or a valid range."""

    default: Quantity | None = None
    valid_values: list[Quantity] | None = None
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(ApiModel):
    """One capacity of a device: its value, and for shared devices the request policy."""

    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


class Counter(ApiModel):
    """An amount in a counter set (e.g. memory of a physical GPU that partitions draw from)."""

    value: Quantity


class CounterSet(ApiModel):
    """Named counters a slice publishes, shared by the partitions that consume from them."""

    name: str
    counters: dict[str, Counter] = Field(default_factory=empty_dict)


class DeviceCounterConsumption(ApiModel):
    """What a device draws from one counter set when allocated (DRAPartitionableDevices)."""

    counter_set: str
    counters: dict[str, Counter] = Field(default_factory=empty_dict)
    compatibility_groups: list[str] | None = None


class DeviceTaint(ApiModel):
    """A taint on a device: NoSchedule or NoExecute keep untolerating requests away."""

    key: str
    value: str | None = None
    effect: str
    time_added: Timestamp | None = None


class NodeAllocatableMapping(ApiModel):
    """How a device maps onto a node-allocatable resource such as cpu (DRANodeAllocatableResources)."""

    capacity_key: str | None = None
    capacity_multiplier: Quantity | None = None
    device_multiplier: Quantity | None = None


class NodeAllocatableOverhead(ApiModel):
    """Node resources an allocated device costs on top of what it maps."""

    per_pod: Quantity | None = None
    per_container: Quantity | None = None


class NodeAllocatableResource(ApiModel):
    """A device's link to one node-allocatable resource: mapping and overhead."""

    mapping: NodeAllocatableMapping | None = None
    overhead: NodeAllocatableOverhead | None = None


class Device(ApiModel):
    """One published device: attributes, capacity, counters consumed, taints, node selection, conditions."""

    name: str
    attributes: dict[str, DeviceAttribute] = Field(default_factory=empty_dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=empty_dict)
    consumes_counters: list[DeviceCounterConsumption] = Field(default_factory=empty_list)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = Field(default_factory=empty_list)
    binds_to_node: bool | None = None
    binding_conditions: list[str] = Field(default_factory=empty_list)
    binding_failure_conditions: list[str] = Field(default_factory=empty_list)
    allow_multiple_allocations: bool | None = None
    node_allocatable_resources: dict[str, NodeAllocatableResource] = Field(default_factory=empty_dict)


class ResourcePool(ApiModel):
    """The pool a slice belongs to: name, generation, and how many slices make it complete."""

    name: str
    generation: Int64 = 0
    resource_slice_count: Int64 = 0


class ResourceSliceSpec(ApiModel):
    """A slice's driver, pool, node selection, devices and shared counters."""

    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] = Field(default_factory=empty_list)
    shared_counters: list[CounterSet] = Field(default_factory=empty_list)
    skip_node_operations: list[str] = Field(default_factory=empty_list)
    partition_type_attribute: str | None = None


class ResourceSlice(TypedObject):
    """resource.k8s.io/v1 ResourceSlice: devices (or counters) a driver publishes for some nodes."""

    spec: ResourceSliceSpec


# --- taint rules ----------------------------------------------------------------------------


class DeviceTaintSelector(ApiModel):
    """Which devices a DeviceTaintRule taints (driver, pool, device; none set: all)."""

    model_config = BUILT_ON_FIRST_USE

    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class DeviceTaintRuleSpec(ApiModel):
    """The taint a DeviceTaintRule adds, and the devices it adds it to."""

    model_config = BUILT_ON_FIRST_USE

    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint


class DeviceTaintRuleStatus(ApiModel):
    """Conditions the taint-eviction controller reports on a DeviceTaintRule."""

    model_config = BUILT_ON_FIRST_USE

    conditions: list[Condition] = Field(default_factory=empty_list)


class DeviceTaintRule(TypedObject):
    """resource.k8s.io/v1 DeviceTaintRule: an administrator's taint on selected devices."""

    model_config = BUILT_ON_FIRST_USE

    spec: DeviceTaintRuleSpec
    status: DeviceTaintRuleStatus | None = None
