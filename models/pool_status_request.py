"""``resource.k8s.io/v1alpha3`` ResourcePoolStatusRequest: a one-shot question about pool availability.

A user creates one naming a driver (and optionally a pool); a controller answers
once in ``status`` with device counts per pool, a partition summary for
partitionable pools and a shareable-capacity summary. drasat reads both halves so
that ``kubectl get -o yaml`` output of answered requests loads too. Field for
field the Kubernetes 1.37 API (checked against the official client in the tests).
"""

# No ``from __future__ import annotations`` here: pydantic would compile every annotation string at each start.

from pydantic import Field

from .meta import BUILT_ON_FIRST_USE, ApiModel, Condition, TypedObject, empty_list
from .quantity import Quantity

API_VERSION = "resource.k8s.io/v1alpha3"
LIMIT_DEFAULT = 100
LIMIT_MAX = 1000


class ResourcePoolStatusRequestSpec(ApiModel):
    """Which pools to report: a driver, optionally one pool, at most ``limit`` of them."""

    model_config = BUILT_ON_FIRST_USE

    driver: str
    pool_name: str | None = None
    limit: int | None = None
    default_partition_type_attribute: str | None = None


class PartitionTypeStatus(ApiModel):
    """How many devices of one partition type exist and how many more could be allocated."""

    model_config = BUILT_ON_FIRST_USE

    attribute: str
    type: str
    total: int
    allocatable: int


class ShareableCapacityStatus(ApiModel):
    """Total, consumed and available amount of one shareable capacity across a pool."""

    model_config = BUILT_ON_FIRST_USE

    name: str
    total: Quantity
    consumed: Quantity
    available: Quantity


class ShareableSummaryStatus(ApiModel):
    """How many shares of shareable devices a pool has and has left (DRAResourcePoolStatus)."""

    model_config = BUILT_ON_FIRST_USE

    fully_available_devices: int
    partially_available_devices: int
    capacity: list[ShareableCapacityStatus] = Field(default_factory=empty_list)


class PoolStatus(ApiModel):
    """One pool's device counts; counts may be unset when ``validationError`` explains why."""

    model_config = BUILT_ON_FIRST_USE

    driver: str
    pool_name: str
    node_name: str | None = None
    generation: int
    resource_slice_count: int | None = None
    total_devices: int | None = None
    allocated_devices: int | None = None
    available_devices: int | None = None
    unavailable_devices: int | None = None
    validation_error: str | None = None
    partition_summary: list[PartitionTypeStatus] = Field(default_factory=empty_list)
    shareable_summary: ShareableSummaryStatus | None = None


class ResourcePoolStatusRequestStatus(ApiModel):
    """The answer a ResourcePoolStatusRequest gets: its pools' summaries and conditions."""

    model_config = BUILT_ON_FIRST_USE

    pool_count: int
    pools: list[PoolStatus] = Field(default_factory=empty_list)
    conditions: list[Condition] = Field(default_factory=empty_list)


class ResourcePoolStatusRequest(TypedObject):
    """A request for pool availability and, once answered, its status."""

    model_config = BUILT_ON_FIRST_USE

    spec: ResourcePoolStatusRequestSpec
    status: ResourcePoolStatusRequestStatus | None = None
