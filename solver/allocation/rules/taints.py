"""Device taints and tolerations (DRADeviceTaints, DRADeviceTaintRules).

A device with a ``NoSchedule`` or ``NoExecute`` taint that the request does not tolerate
is never allocated for it. Taints come from the device itself and from DeviceTaintRules
(the inventory gathers both); nothing changes while searching.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from drasat.models.resource import DeviceTaint, DeviceToleration
from drasat.solver.allocation.planning.plan import Alternative

from .base import Found, Rule, Stage

if TYPE_CHECKING:
    from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice


class _Toleration(Protocol):
    """A device's or a pod's toleration: the fields ToleratesTaint reads."""

    @property
    def key(self) -> str | None: ...
    @property
    def operator(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str | None: ...


class _Taint(Protocol):
    """A device's or a node's taint: the fields ToleratesTaint reads."""

    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str | None: ...


def tolerates(toleration: _Toleration, taint: _Taint) -> bool:
    """Kubernetes' ToleratesTaint, for device and node taints alike: the effect (empty: any), the key
    (empty: any), then the operator (empty: Equal) on the value."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    return operator == "Exists" or (operator == "Equal" and (toleration.value or "") == (taint.value or ""))


def tolerated(taint: DeviceTaint, tolerations: Sequence[DeviceToleration]) -> bool:
    """Whether some toleration matches the taint (tolerationSeconds is irrelevant here)."""
    return any(tolerates(t, taint) for t in tolerations)


def taint_words(taint: DeviceTaint) -> str:
    """A taint as kubectl prints one: ``key=value:Effect``, or ``key:Effect`` without a value."""
    return f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"


def untolerated_taint(dev: InventoryDevice, tolerations: Sequence[DeviceToleration]) -> DeviceTaint | None:
    """The first NoSchedule or NoExecute taint of the device that no toleration matches."""
    for taint in dev.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerated(taint, tolerations):
            return taint
    return None


class Taints(Rule):
    """Device taints (DRADeviceTaints, DeviceTaintRules): untolerated devices are never candidates."""

    name = "taints"
    stage = Stage.BLOCK
    searched = False  # decided before any search: an untolerated device is never a candidate

    def excludes_any(self, inv: Inventory) -> bool:
        return inv.features.device_taints and inv.kinds.tainted

    def exclude(self, inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found) -> str:
        if not inv.features.device_taints:
            return ""
        taint = untolerated_taint(dev, alt.tolerations)
        if taint is None:
            return ""
        return f"has taint {taint_words(taint)} that the request does not tolerate"
