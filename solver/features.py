"""Kubernetes feature gates that change how devices are allocated.

Names and defaults are Kubernetes' own (1.37 development cycle), so that
``--feature-gates DRAPrioritizedList=false`` means exactly what it means for
kube-scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

from drasat.models.errors import InputError

DEFAULTS: Mapping[str, bool] = {
    "DRAAdminAccess": True,
    "DRAPrioritizedList": True,
    "DRADeviceTaints": True,
    "DRADeviceTaintRules": True,
    "DRAPartitionableDevices": True,
    "DRAConsumableCapacity": True,
    "DRADeviceBindingConditions": True,
    "DRAResourceClaimDeviceStatus": True,
    "DRAListTypeAttributes": False,
    "DRADeviceCompatibilityGroups": False,
    "DRADerivedAttributes": False,
    "DRANodeAllocatableResources": False,
    "DRAOptionalNodeOperations": False,
    "DRAFractionalCapacityRange": True,
    "DRAResourcePoolStatus": False,
    "DynamicResourceAllocation": True,
    # Scheduling pods (drasat schedule, and solve with Pods in the input):
    "DRAExtendedResource": True,
    "DRAWorkloadResourceClaims": False,
    "PodLevelResources": True,
}


@dataclass(frozen=True)
class Features:
    """The feature gates in force for one allocation; unknown names are refused."""

    gates: Mapping[str, bool] = field(default_factory=lambda: dict(DEFAULTS))

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, bool] | None = None) -> "Features":
        gates = dict(DEFAULTS)
        for name, value in (overrides or {}).items():
            if name not in DEFAULTS:
                known = ", ".join(sorted(DEFAULTS))
                raise InputError(f"unknown feature gate {name!r} (known gates: {known})")
            if not isinstance(value, bool):
                raise InputError(f"feature gate {name} must be true or false, not {value!r}")
            gates[name] = value
        return cls(gates)

    @classmethod
    def parse(cls, text: str) -> "Features":
        """Parse kube-scheduler's ``--feature-gates`` syntax: ``A=true,B=false``."""
        overrides: dict[str, bool] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, value = item.partition("=")
            if not sep or value.strip().lower() not in ("true", "false"):
                raise InputError(f"feature gate {item!r} must be written NAME=true or NAME=false")
            overrides[name.strip()] = value.strip().lower() == "true"
        return cls.from_mapping(overrides)

    def with_gates(self, **overrides: bool) -> "Features":
        return replace(self, gates={**self.gates, **overrides})

    def __getitem__(self, name: str) -> bool:
        return self.gates[name]

    # The allocator's own feature switches, derived from the gates as kube-scheduler derives them.
    @property
    def admin_access(self) -> bool:
        return self.gates["DRAAdminAccess"]

    @property
    def prioritized_list(self) -> bool:
        return self.gates["DRAPrioritizedList"]

    @property
    def device_taints(self) -> bool:
        return self.gates["DRADeviceTaints"]

    @property
    def taint_rules(self) -> bool:
        return self.gates["DRADeviceTaintRules"] and self.gates["DRADeviceTaints"]

    @property
    def partitionable(self) -> bool:
        return self.gates["DRAPartitionableDevices"]

    @property
    def consumable_capacity(self) -> bool:
        return self.gates["DRAConsumableCapacity"]

    @property
    def binding_conditions(self) -> bool:
        return self.gates["DRADeviceBindingConditions"] and self.gates["DRAResourceClaimDeviceStatus"]

    @property
    def list_attributes(self) -> bool:
        return self.gates["DRAListTypeAttributes"]

    @property
    def compatibility_groups(self) -> bool:
        return self.gates["DRADeviceCompatibilityGroups"]

    @property
    def derived_attributes(self) -> bool:
        return self.gates["DRADerivedAttributes"]
