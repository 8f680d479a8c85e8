"""Kubernetes feature gates that change how devices are allocated.

Names and defaults are Kubernetes' own (1.37 development cycle), so that
``--feature-gates DRAPrioritizedList=false`` means exactly what it means for
kube-scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

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
    "TopologyAwareWorkloadScheduling": False,  # KEP-5732 (PodGroup schedulingConstraints), as the workload API
}
_DEFAULT_GATES: Mapping[str, bool] = MappingProxyType(dict(DEFAULTS))  # read-only: every default Features shares it


@dataclass(frozen=True)
class Features:
    """The feature gates in force for one allocation; unknown names are refused.

    ``gates`` may name only some gates: the others keep Kubernetes' defaults, so ``Features(gates)`` and
    :meth:`from_mapping` mean the same. It is kept as a read-only mapping, because the allocator's switches
    below are derived from it once, and a gate changed afterwards would leave them saying otherwise."""

    gates: Mapping[str, bool] = field(default_factory=lambda: _DEFAULT_GATES)

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, bool] | None = None) -> Features:
        return cls(overrides) if overrides else cls()

    @classmethod
    def parse(cls, text: str) -> Features:
        """Parse kube-scheduler's ``--feature-gates`` syntax: ``A=true,B=false``; errors name the flag, since
        that is where the text came from."""
        overrides: dict[str, bool] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, value = item.partition("=")
            if not sep or value.strip().lower() not in ("true", "false"):
                raise InputError(f"--feature-gates: {item!r} must be written NAME=true or NAME=false")
            overrides[name.strip()] = value.strip().lower() == "true"
        try:
            return cls.from_mapping(overrides)
        except InputError as exc:
            raise InputError(f"--feature-gates: {exc}") from None

    def with_gates(self, **overrides: bool) -> Features:
        return replace(self, gates={**self.gates, **overrides})

    def __getitem__(self, name: str) -> bool:
        return self.gates[name]

    # The allocator's own feature switches, derived from the gates as kube-scheduler derives them: plain
    # attributes set once (the stages ask them many times per call, and a property costs a call each time).
    admin_access: bool = field(init=False, repr=False, compare=False)
    prioritized_list: bool = field(init=False, repr=False, compare=False)
    device_taints: bool = field(init=False, repr=False, compare=False)
    taint_rules: bool = field(init=False, repr=False, compare=False)
    partitionable: bool = field(init=False, repr=False, compare=False)
    consumable_capacity: bool = field(init=False, repr=False, compare=False)
    binding_conditions: bool = field(init=False, repr=False, compare=False)
    list_attributes: bool = field(init=False, repr=False, compare=False)
    compatibility_groups: bool = field(init=False, repr=False, compare=False)
    derived_attributes: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        gates, put = self.gates, object.__setattr__
        if gates is not _DEFAULT_GATES:
            gates = _complete(gates)
            put(self, "gates", gates)
        put(self, "admin_access", gates["DRAAdminAccess"])
        put(self, "prioritized_list", gates["DRAPrioritizedList"])
        put(self, "device_taints", gates["DRADeviceTaints"])
        put(self, "taint_rules", gates["DRADeviceTaintRules"] and gates["DRADeviceTaints"])
        put(self, "partitionable", gates["DRAPartitionableDevices"])
        put(self, "consumable_capacity", gates["DRAConsumableCapacity"])
        put(self, "binding_conditions", gates["DRADeviceBindingConditions"] and gates["DRAResourceClaimDeviceStatus"])
        put(self, "list_attributes", gates["DRAListTypeAttributes"])
        put(self, "compatibility_groups", gates["DRADeviceCompatibilityGroups"])
        put(self, "derived_attributes", gates["DRADerivedAttributes"])

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied as the plain gates (a read-only mapping itself cannot be pickled)."""
        return type(self), (dict(self.gates),)


def _complete(overrides: Mapping[str, bool]) -> Mapping[str, bool]:
    """Kubernetes' defaults with ``overrides`` applied, read-only; an unknown gate or a value that is not a
    boolean is refused (a misspelt gate would otherwise be silently ignored)."""
    gates = dict(DEFAULTS)
    for name, value in overrides.items():
        if name not in DEFAULTS:
            known = ", ".join(sorted(DEFAULTS))
            raise InputError(f"unknown feature gate {name!r} (known gates: {known})")
        if not isinstance(value, bool):
            raise InputError(f"feature gate {name} must be true or false, not {value!r}")
        gates[name] = value
    return MappingProxyType(gates)
