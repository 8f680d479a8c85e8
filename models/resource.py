"""``resource.k8s.io/v1`` kinds: DeviceClass, ResourceClaim(Template), ResourceSlice, DeviceTaintRule.

Field for field the Kubernetes 1.37 API (checked against the official client in the
tests). Defaults that the API server applies on write (allocationMode ExactCount,
count 1, toleration operator Equal) are applied by :func:`apply_defaults`, not at
parse time, so that dumping an object gives back what the user wrote.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, StrictStr

from .meta import ApiModel, Condition, Int64, JsonObject, NodeSelector, Timestamp, TypedObject
from .quantity import Quantity

API_VERSION = "resource.k8s.io/v1"

# --- selectors, configuration ------------------------------------------------------------


class CELDeviceSelector(ApiModel):
    expression: str


class DeviceSelector(ApiModel):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(ApiModel):
    driver: str
    parameters: JsonObject


class DeviceClassConfiguration(ApiModel):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(ApiModel):
    selectors: list[DeviceSelector] = Field(default_factory=list)
    config: list[DeviceClassConfiguration] = Field(default_factory=list)
    extended_resource_name: str | None = None


class DeviceClass(TypedObject):
    spec: DeviceClassSpec = Field(default_factory=DeviceClassSpec)


# --- claims --------------------------------------------------------------------------------


class DeviceToleration(ApiModel):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: Int64 | None = None


class CapacityRequirements(ApiModel):
    requests: dict[str, Quantity] = Field(default_factory=dict)


class DeviceDerivedAttribute(ApiModel):
    name: str
    expression: str


class _RequestFields(ApiModel):
    """What an exact request and a subrequest have in common."""

    device_class_name: str = ""
    selectors: list[DeviceSelector] = Field(default_factory=list)
    allocation_mode: str | None = None
    count: Int64 | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=list)
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DeviceDerivedAttribute] = Field(default_factory=list)


class ExactDeviceRequest(_RequestFields):
    admin_access: bool | None = None


class DeviceSubRequest(_RequestFields):
    name: str


class DeviceRequest(ApiModel):
    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = Field(default_factory=list)


class DeviceConstraint(ApiModel):
    requests: list[str] = Field(default_factory=list)
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(ApiModel):
    requests: list[str] = Field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(ApiModel):
    requests: list[DeviceRequest] = Field(default_factory=list)
    constraints: list[DeviceConstraint] = Field(default_factory=list)
    config: list[DeviceClaimConfiguration] = Field(default_factory=list)


class ResourceClaimSpec(ApiModel):
    devices: DeviceClaim = Field(default_factory=DeviceClaim)


class DeviceRequestAllocationResult(ApiModel):
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=list)
    binding_conditions: list[str] = Field(default_factory=list)
    binding_failure_conditions: list[str] = Field(default_factory=list)
    share_id: str | None = Field(default=None, alias="shareID")
    consumed_capacity: dict[str, Quantity] = Field(default_factory=dict)
    skip_node_operations: list[str] = Field(default_factory=list)


class DeviceAllocationConfiguration(ApiModel):
    source: str
    requests: list[str] = Field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(ApiModel):
    results: list[DeviceRequestAllocationResult] = Field(default_factory=list)
    config: list[DeviceAllocationConfiguration] = Field(default_factory=list)


class AllocationResult(ApiModel):
    devices: DeviceAllocationResult = Field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: Timestamp | None = None


class ResourceClaimConsumerReference(ApiModel):
    api_group: str | None = None
    resource: str
    name: str
    uid: str


class NetworkDeviceData(ApiModel):
    interface_name: str | None = None
    ips: list[str] = Field(default_factory=list)
    hardware_address: str | None = None


class AllocatedDeviceStatus(ApiModel):
    driver: str
    pool: str
    device: str
    share_id: str | None = Field(default=None, alias="shareID")
    conditions: list[Condition] = Field(default_factory=list)
    data: JsonObject | None = None
    network_data: NetworkDeviceData | None = None


class ResourceClaimStatus(ApiModel):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = Field(default_factory=list)
    devices: list[AllocatedDeviceStatus] = Field(default_factory=list)


class ResourceClaim(TypedObject):
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus | None = None


class ResourceClaimTemplateSpec(ApiModel):
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


_ATTRIBUTE_KEYS = (("int_", "int"), ("bool_", "bool"), ("string", "string"), ("version", "version"),
                   ("ints", "ints"), ("bools", "bools"), ("strings", "strings"), ("versions", "versions"))


class CapacityRequestPolicyRange(ApiModel):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(ApiModel):
    default: Quantity | None = None
    valid_values: list[Quantity] | None = None
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(ApiModel):
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


class Counter(ApiModel):
    value: Quantity


class CounterSet(ApiModel):
    name: str
    counters: dict[str, Counter] = Field(default_factory=dict)


class DeviceCounterConsumption(ApiModel):
    counter_set: str
    counters: dict[str, Counter] = Field(default_factory=dict)
    compatibility_groups: list[str] | None = None


class DeviceTaint(ApiModel):
    key: str
    value: str | None = None
    effect: str
    time_added: Timestamp | None = None


class NodeAllocatableMapping(ApiModel):
    capacity_key: str | None = None
    capacity_multiplier: Quantity | None = None
    device_multiplier: Quantity | None = None


class NodeAllocatableOverhead(ApiModel):
    per_pod: Quantity | None = None
    per_container: Quantity | None = None


class NodeAllocatableResource(ApiModel):
    mapping: NodeAllocatableMapping | None = None
    overhead: NodeAllocatableOverhead | None = None


class Device(ApiModel):
    name: str
    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=dict)
    consumes_counters: list[DeviceCounterConsumption] = Field(default_factory=list)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = Field(default_factory=list)
    binds_to_node: bool | None = None
    binding_conditions: list[str] = Field(default_factory=list)
    binding_failure_conditions: list[str] = Field(default_factory=list)
    allow_multiple_allocations: bool | None = None
    node_allocatable_resources: dict[str, NodeAllocatableResource] = Field(default_factory=dict)


class ResourcePool(ApiModel):
    name: str
    generation: Int64 = 0
    resource_slice_count: Int64 = 0


class ResourceSliceSpec(ApiModel):
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] = Field(default_factory=list)
    shared_counters: list[CounterSet] = Field(default_factory=list)
    skip_node_operations: list[str] = Field(default_factory=list)
    partition_type_attribute: str | None = None


class ResourceSlice(TypedObject):
    spec: ResourceSliceSpec


# --- taint rules ----------------------------------------------------------------------------


class DeviceTaintSelector(ApiModel):
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class DeviceTaintRuleSpec(ApiModel):
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint


class DeviceTaintRuleStatus(ApiModel):
    conditions: list[Condition] = Field(default_factory=list)


class DeviceTaintRule(TypedObject):
    spec: DeviceTaintRuleSpec
    status: DeviceTaintRuleStatus | None = None


from .meta import ObjectMeta as ObjectMetaRef  # noqa: E402  (template metadata is a plain ObjectMeta)

ResourceClaimTemplateSpec.model_rebuild()


class ResourceClaimTemplate(TypedObject):
    spec: ResourceClaimTemplateSpec


AllocationModeName = Literal["ExactCount", "All"]
