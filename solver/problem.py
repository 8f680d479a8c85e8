"""The question drasat answers, as one plain value: what to allocate, where, from what.

Every solver stage takes a :class:`Problem` (or something derived from it); the
command line builds one from files, library users build one from objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from drasat.models.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice

from .features import Features


@dataclass(frozen=True)
class NodeInfo:
    """What allocation needs of a Node: its name and labels (node selectors match these)."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Problem:
    """Claims to allocate together on one node, and everything that constrains them.

    ``claims`` are allocated in the order given (it matters: first-fit gives earlier
    claims the earlier devices). ``allocated`` are claims that already hold devices.
    """

    node: NodeInfo
    slices: Sequence[ResourceSlice]
    classes: Sequence[DeviceClass]
    claims: Sequence[ResourceClaim]
    allocated: Sequence[ResourceClaim] = ()
    taint_rules: Sequence[DeviceTaintRule] = ()
    features: Features = field(default_factory=Features)

    def device_class(self, name: str) -> DeviceClass | None:
        for cls in self.classes:
            if cls.metadata.name == name:
                return cls
        return None
