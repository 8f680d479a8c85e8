"""Device taints and tolerations (DRADeviceTaints, DRADeviceTaintRules).

A device with a ``NoSchedule`` or ``NoExecute`` taint that the request does not tolerate
is never allocated for it. Taints come from the device itself and from DeviceTaintRules
(the inventory gathers both); nothing changes while searching.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from drasat.models.resource import DeviceTaint, DeviceToleration

from ..plan import Alternative
from .base import Found, Rule, Stage

if TYPE_CHECKING:
    from ..inventory import Inventory, InventoryDevice


def tolerated(taint: DeviceTaint, tolerations: Sequence[DeviceToleration]) -> bool:
    """Whether some toleration matches the taint (Kubernetes' rules; tolerationSeconds is irrelevant here)."""
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.key and t.key != taint.key:
            continue
        operator = t.operator or "Equal"
        if operator == "Exists" or (operator == "Equal" and (t.value or "") == (taint.value or "")):
            return True
    return False


def untolerated_taint(dev: InventoryDevice, tolerations: Sequence[DeviceToleration]) -> DeviceTaint | None:
    for taint in dev.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerated(taint, tolerations):
            return taint
    return None


class Taints(Rule):
    name = "taints"
    stage = Stage.BLOCK
    searched = False  # decided before any search: an untolerated device is never a candidate

    def excludes_any(self, inv: Inventory) -> bool:
        return inv.features.device_taints and any(dev.taints for dev in inv.devices)

    def exclude(self, inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found) -> str:
        if not inv.features.device_taints:
            return ""
        taint = untolerated_taint(dev, alt.tolerations)
        if taint is None:
            return ""
        return f"has taint {taint.key}={taint.value or ''}:{taint.effect} that the request does not tolerate"
