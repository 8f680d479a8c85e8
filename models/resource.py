"""``resource.k8s.io/v1`` kinds: DeviceClass, ResourceClaim(Template), ResourceSlice, DeviceTaintRule.

Field for field the Kubernetes 1.37 API (checked against the official client in the
tests). Defaults that the API server applies on write (allocationMode ExactCount,
count 1, toleration operator Equal) are applied by :func:`apply_defaults`, not at
parse time, so that dumping an object gives back what the user wrote.
"""

# No ``from __future__ import annotations`` here: pydantic would compile every annotation string at each start.

from typing import Literal

from pydantic import Field

from .meta import (
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

# The slice kinds live in their own module; named here too (``X as X``: re-exported), so that the API
# group reads as one module to its users.
from .resource_slice import (
    CapacityRequestPolicy as CapacityRequestPolicy,
)
from .resource_slice import (
    CapacityRequestPolicyRange as CapacityRequestPolicyRange,
)
from .resource_slice import (
    Counter as Counter,
)
from .resource_slice import (
    CounterSet as CounterSet,
)
from .resource_slice import (
    Device as Device,
)
from .resource_slice import (
    DeviceAttribute as DeviceAttribute,
)
from .resource_slice import (
    DeviceCapacity as DeviceCapacity,
)
from .resource_slice import (
    DeviceCounterConsumption as DeviceCounterConsumption,
)
from .resource_slice import (
    DeviceTaint as DeviceTaint,
)
from .resource_slice import (
    DeviceTaintRule as DeviceTaintRule,
)
from .resource_slice import (
    DeviceTaintRuleSpec as DeviceTaintRuleSpec,
)
from .resource_slice import (
    DeviceTaintRuleStatus as DeviceTaintRuleStatus,
)
from .resource_slice import (
    DeviceTaintSelector as DeviceTaintSelector,
)
from .resource_slice import (
    NodeAllocatableMapping as NodeAllocatableMapping,
)
from .resource_slice import (
    NodeAllocatableOverhead as NodeAllocatableOverhead,
)
from .resource_slice import (
    NodeAllocatableResource as NodeAllocatableResource,
)
from .resource_slice import (
    ResourcePool as ResourcePool,
)
from .resource_slice import (
    ResourceSlice as ResourceSlice,
)
from .resource_slice import (
    ResourceSliceSpec as ResourceSliceSpec,
)

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


from .meta import ObjectMeta as ObjectMetaRef  # noqa: E402  (template metadata is a plain ObjectMeta)

ResourceClaimTemplateSpec.model_rebuild()


class ResourceClaimTemplate(TypedObject):
    """resource.k8s.io/v1 ResourceClaimTemplate: the claim generated for each pod that names it."""

    spec: ResourceClaimTemplateSpec


AllocationModeName = Literal["ExactCount", "All"]
