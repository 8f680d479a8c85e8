"""``resource.k8s.io/v1`` kinds: DeviceClass, ResourceClaim(Template), ResourceSlice, DeviceTaintRule.

Field for field the Kubernetes 1.37 API (checked against the official client in the
tests). Defaults that the API server applies on write (allocationMode ExactCount,
count 1, toleration operator Equal) are applied by :func:`apply_defaults`, not at
parse time, so that dumping an object gives back what the user wrote.
"""

# No ``from __future__ import annotations`` here: pydantic would compile every annotation string at each start.

from typing import Literal

from pydantic import Field, StrictBool, StrictStr

from .meta import (
    BUILT_ON_FIRST_USE,
    ApiModel,
    Condition,
    Int64,
    JsonObject,
    NodeSelector,
    Timestamp,
    TypedObject,
    empty_dict,
    empty_list,
)
from .quantity import Quantity

API_VERSION = "resource.k8s.io/v1"

# --- selectors, configuration ------------------------------------------------------------


class CELDeviceSelector(ApiModel):
    """A CEL expression over one device (``device.driver``, ``device.attributes``, ...); true selects it."""

    expression: str


class DeviceSelector(ApiModel):
    """One selector of a class or request; only CEL exists in resource.k8s.io/v1."""

    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(ApiModel):
    """Driver-specific configuration: the driver's name and parameters drasat passes through unread."""

    driver: str
    parameters: JsonObject


class DeviceClassConfiguration(ApiModel):
    """Configuration a DeviceClass hands to every allocation of its devices."""

    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(ApiModel):
    """What a DeviceClass selects (all its selectors must hold), its configuration and extended resource."""

    selectors: list[DeviceSelector] = Field(default_factory=empty_list)
    config: list[DeviceClassConfiguration] = Field(default_factory=empty_list)
    extended_resource_name: str | None = None


class DeviceClass(TypedObject):
    """resource.k8s.io/v1 DeviceClass: a named set of devices that requests pick from."""

    spec: DeviceClassSpec = Field(default_factory=DeviceClassSpec)


# --- claims --------------------------------------------------------------------------------


class DeviceToleration(ApiModel):
    """A request's toleration of device taints (the same matching as pod tolerations of node taints)."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: Int64 | None = None


class CapacityRequirements(ApiModel):
    """The amounts of a shared device's capacities one request consumes (DRAConsumableCapacity)."""

    requests: dict[str, Quantity] = Field(default_factory=empty_dict)


class DeviceDerivedAttribute(ApiModel):
    """An attribute computed per device by a CEL expression, for constraints only (DRADerivedAttributes)."""

    name: str
    expression: str


class _RequestFields(ApiModel):
    """What an exact request and a subrequest have in common."""

    device_class_name: str = ""
    selectors: list[DeviceSelector] = Field(default_factory=empty_list)
    allocation_mode: str | None = None
    count: Int64 | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=empty_list)
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DeviceDerivedAttribute] = Field(default_factory=empty_list)


class ExactDeviceRequest(_RequestFields):
    """A request for devices of one class: a count (or all of them), selectors, tolerations, capacity."""

    admin_access: bool | None = None


class DeviceSubRequest(_RequestFields):
    """One alternative of a ``firstAvailable`` request (DRAPrioritizedList), tried in order."""

    name: str


class DeviceRequest(ApiModel):
    """One named request of a claim: ``exactly`` one shape, or ``firstAvailable`` alternatives."""

    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = Field(default_factory=empty_list)


class DeviceConstraint(ApiModel):
    """A matchAttribute or distinctAttribute over some (or all) requests of a claim."""

    requests: list[str] = Field(default_factory=empty_list)
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(ApiModel):
    """Configuration a claim hands to the devices allocated for some of its requests."""

    requests: list[str] = Field(default_factory=empty_list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(ApiModel):
    """A claim's device requests, constraints and configuration."""

    requests: list[DeviceRequest] = Field(default_factory=empty_list)
    constraints: list[DeviceConstraint] = Field(default_factory=empty_list)
    config: list[DeviceClaimConfiguration] = Field(default_factory=empty_list)


class ResourceClaimSpec(ApiModel):
    """What a ResourceClaim asks for (immutable once created)."""

    devices: DeviceClaim = Field(default_factory=DeviceClaim)


class DeviceRequestAllocationResult(ApiModel):
    """One allocated device: request, driver, pool, device, and share, capacity, conditions."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=empty_list)
    binding_conditions: list[str] = Field(default_factory=empty_list)
    binding_failure_conditions: list[str] = Field(default_factory=empty_list)
    share_id: str | None = Field(default=None, alias="shareID")
    consumed_capacity: dict[str, Quantity] = Field(default_factory=empty_dict)
    skip_node_operations: list[str] = Field(default_factory=empty_list)


class DeviceAllocationConfiguration(ApiModel):
    """Configuration recorded with an allocation, with where it came from (class or claim)."""

    source: str
    requests: list[str] = Field(default_factory=empty_list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(ApiModel):
    """The devices of one allocation and the configuration that goes with them."""

    results: list[DeviceRequestAllocationResult] = Field(default_factory=empty_list)
    config: list[DeviceAllocationConfiguration] = Field(default_factory=empty_list)


class AllocationResult(ApiModel):
    """A claim's allocation: its devices and the nodes that can use them (``nodeSelector``)."""

    devices: DeviceAllocationResult = Field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: Timestamp | None = None


class ResourceClaimConsumerReference(ApiModel):
    """Who uses an allocated claim (a pod or a pod group), as in ``status.reservedFor``."""

    api_group: str | None = None
    resource: str
    name: str
    uid: str


class NetworkDeviceData(ApiModel):
    """Network details a driver reports for an allocated device."""

    interface_name: str | None = None
    ips: list[str] = Field(default_factory=empty_list)
    hardware_address: str | None = None


class AllocatedDeviceStatus(ApiModel):
    """A driver's report on one allocated device (conditions, data, network)."""

    driver: str
    pool: str
    device: str
    share_id: str | None = Field(default=None, alias="shareID")
    conditions: list[Condition] = Field(default_factory=empty_list)
    data: JsonObject | None = None
    network_data: NetworkDeviceData | None = None


class ResourceClaimStatus(ApiModel):
    """A claim's allocation, its consumers and the drivers' device reports."""

    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = Field(default_factory=empty_list)
    devices: list[AllocatedDeviceStatus] = Field(default_factory=empty_list)


class ResourceClaim(TypedObject):
    """resource.k8s.io/v1 ResourceClaim: devices asked for; with ``status.allocation``, devices in use."""

    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus | None = None


class ResourceClaimTemplateSpec(ApiModel):
    """The claim a template stamps out for each pod (its metadata and spec)."""

    metadata: "ObjectMetaRef | None" = None
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)


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


from .meta import ObjectMeta as ObjectMetaRef  # noqa: E402  (template metadata is a plain ObjectMeta)

ResourceClaimTemplateSpec.model_rebuild()


class ResourceClaimTemplate(TypedObject):
    """resource.k8s.io/v1 ResourceClaimTemplate: the claim generated for each pod that names it."""

    spec: ResourceClaimTemplateSpec


AllocationModeName = Literal["ExactCount", "All"]
