"""What a DeviceTaintRule would do: the dry run Kubernetes reports for ``effect: None``.

Kubernetes' device taint eviction controller, for a rule with ``effect: None``,
pretends the effect were NoExecute and writes into the rule's status how many
published devices the rule selects, how many allocated devices, and how many pods
would be evicted in how many namespaces. This module computes the same numbers
offline, for a rule of any effect, with the controller's wording.

Selection: the rule's driver, pool and device names (all optional, ANDed; as
upstream's ruleMatchesDevice, a rule without ``deviceSelector`` selects nothing and
an empty ``deviceSelector: {}`` selects every device), and, from the older API versions that had them, a
DeviceClass (every selector of the class must accept the device) and CEL
selectors (all must accept it). A pod would be evicted when one of its claims is
allocated a selected device and that result's tolerations do not tolerate the
taint as NoExecute; a toleration with ``tolerationSeconds`` only delays eviction.
As the controller, only scheduled pods (``spec.nodeName``) that the claim's
``status.reservedFor`` lists count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

from drasat.models.core import Pod
from drasat.models.errors import EvaluationError, InputError
from drasat.models.resource import (
    Device,
    DeviceClass,
    DeviceTaint,
    DeviceToleration,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceSlice,
)
from drasat.solver.allocation.rules.taints import tolerates
from drasat.solver.cel import CelDevice

from .pool_usage import gather_pools

DeviceKey = tuple[str, str, str]


class Matcher(Protocol):
    """What taint-impact needs of a CEL engine: whether a selector accepts a device."""

    def matches(self, expression: str, device: CelDevice) -> bool: ...


@dataclass(frozen=True)
class RuleSelector:
    """A rule's device selector: names of the v1 API, and the class and CEL selectors of older versions."""

    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    device_class: str | None = None
    cel: tuple[str, ...] = ()
    given: bool = True  # False: the rule has no deviceSelector at all, which selects nothing


@dataclass
class Impact:
    """The dry run's numbers, the pods behind them, and the controller's condition message."""

    rule: str
    published: list[DeviceKey] = field(default_factory=list)
    allocated: int = 0
    evicted: list[str] = field(default_factory=list)  # namespace/name
    delayed: dict[str, int] = field(default_factory=dict)  # pod -> seconds its tolerations grant
    effect: str = "None"  # the rule's taint effect: the controller words its condition by it
    added: datetime | None = None  # the taint's timeAdded (the API server sets it when it is left out)

    @property
    def namespaces(self) -> int:
        return len({pod.split("/")[0] for pod in self.evicted})

    def eviction_time(self, pod: str) -> datetime | None:
        """When the controller deletes ``pod``: the taint's timeAdded plus the shortest tolerationSeconds
        (claimEvictionTime), or None without a timeAdded."""
        return None if self.added is None else self.added + timedelta(seconds=self.delayed.get(pod, 0))

    def message(self) -> str:
        """Word for word the eviction controller's condition message for the rule's effect (pods evicted
        since the controller started are not known offline, so that sentence never appears)."""
        if self.effect == "NoExecute":
            return self._pending_message()
        if self.effect != "None":
            return "Eviction only happens for the NoExecute effect."
        return (
            f"{self.selected()} "
            f"{_count(len(self.evicted), 'pod')} would be evicted in "
            f"{'1 namespace' if self.namespaces == 1 else f'{self.namespaces} different namespaces'} "
            "if the effect was NoExecute. This information will not be updated again. "
            "Recreate the DeviceTaintRule to trigger an update."
        )

    def selected(self) -> str:
        """The devices the rule selects, in the controller's words for its dry run ("4 published devices
        selected. 1 allocated device selected."): the controller writes them for effect None only, and a
        NoExecute or NoSchedule rule is worth the same count (what it drains, what it keeps new pods off)."""
        return f"{_count(len(self.published), 'published device')} selected. {_count(self.allocated, 'allocated device')} selected."

    def reason(self) -> str:
        """The condition's reason: NoEffect, PodsPendingEviction, NotStarted or OtherEffect."""
        if self.effect == "None":
            return "NoEffect"
        if self.effect == "NoExecute":
            return "PodsPendingEviction" if self.evicted else "NotStarted"
        return "OtherEffect"

    def _pending_message(self) -> str:
        if not self.evicted:
            return ""
        pods = "1 pod needs" if len(self.evicted) == 1 else f"{len(self.evicted)} pods need"
        where = "1 namespace" if self.namespaces == 1 else f"{self.namespaces} different namespaces"
        return f"{pods} to be evicted in {where}."


def _count(n: int, noun: str) -> str:
    return f"1 {noun}" if n == 1 else f"{n} {noun}s"


def taint_impact(
    name: str,
    selector: RuleSelector,
    taint: DeviceTaint,
    slices: Sequence[ResourceSlice],
    claims: Sequence[ResourceClaim],
    pods: Sequence[Pod],
    classes: Sequence[DeviceClass],
    matcher: Matcher,
    now: datetime | None = None,
) -> Impact:
    """Which published and allocated devices the rule selects, and which pods NoExecute would evict and when.
    ``now`` stands for a timeAdded the rule leaves out (the API server stamps it on create)."""
    class_selectors = _class_selectors(name, selector, classes)
    added = _time_added(name, taint) or now
    impact = Impact(name, effect=taint.effect, added=added)
    published: dict[DeviceKey, Device] = {}
    for pool in gather_pools(slices):
        for _, device in pool.devices:
            key = (pool.driver, pool.name, device.name)
            published[key] = device
            if _selects(name, selector, class_selectors, key, device, matcher):
                impact.published.append(key)
    chosen = set(impact.published)
    evicting: dict[tuple[str, str], int | None] = {}  # claim -> seconds until eviction (None: at once)
    for claim in claims:
        for result in claim.status.allocation.devices.results if claim.status and claim.status.allocation else []:
            key = (result.driver, result.pool, result.device)
            if key in chosen or (
                key not in published
                and not class_selectors
                and not selector.cel
                and selector.given
                and _names_match(selector, key)
            ):
                impact.allocated += 1
                delay = _eviction_delay(result.tolerations, taint)
                if delay != -1:
                    previous = evicting.get((claim.namespace, claim.name), delay)
                    evicting[(claim.namespace, claim.name)] = _sooner(previous, delay)
    _pods(impact, pods, evicting, _reservations(claims))
    return impact


def _time_added(name: str, taint: DeviceTaint) -> datetime | None:
    if taint.time_added is None:
        return None
    try:
        moment = datetime.fromisoformat(taint.time_added.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"DeviceTaintRule/{name}: spec.taint.timeAdded: {taint.time_added!r} is not an RFC 3339 timestamp"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _class_selectors(name: str, selector: RuleSelector, classes: Sequence[DeviceClass]) -> list[str]:
    if not selector.device_class:
        return []
    for cls in classes:
        if cls.name == selector.device_class:
            return [s.cel.expression for s in cls.spec.selectors if s.cel is not None]
    raise InputError(
        f"DeviceTaintRule/{name}: spec.deviceSelector.deviceClassName: no DeviceClass named "
        f"{selector.device_class!r} in the input"
    )


def _names_match(selector: RuleSelector, key: DeviceKey) -> bool:
    return all(
        want is None or want == have for want, have in zip((selector.driver, selector.pool, selector.device), key)
    )


def _selects(
    name: str, selector: RuleSelector, class_selectors: list[str], key: DeviceKey, device: Device, matcher: Matcher
) -> bool:
    if not selector.given or not _names_match(selector, key):
        return False
    expressions = [*class_selectors, *selector.cel]
    if not expressions:
        return True
    cel = CelDevice(
        key=key,
        driver=key[0],
        attributes={k: v.raw() for k, v in device.attributes.items()},
        capacity={k: v.value for k, v in device.capacity.items()},
        allow_multiple_allocations=bool(device.allow_multiple_allocations),
    )
    for expression in expressions:
        try:
            if not matcher.matches(expression, cel):
                return False
        except EvaluationError as exc:
            raise EvaluationError(
                f"DeviceTaintRule {name}: selector {expression!r} failed on device {'/'.join(key)}: {exc}"
            ) from None
    return True


def _eviction_delay(tolerations: Iterable[DeviceToleration], taint: DeviceTaint) -> int | None:
    """-1: tolerated for good (no eviction); None: evicted at once; n: evicted after n seconds.

    As upstream's claimEvictionTime: a matching toleration without ``tolerationSeconds``
    wins outright; otherwise the SHORTEST matching ``tolerationSeconds`` (negative as 0).
    """
    shortest: int | None = None
    for toleration in tolerations:
        if not _tolerates(toleration, taint):
            continue
        if toleration.toleration_seconds is None:
            return -1
        seconds = max(0, toleration.toleration_seconds)
        shortest = seconds if shortest is None else min(shortest, seconds)
    return shortest


def _tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """Whether the toleration counts against the taint simulated as NoExecute.

    claimEvictionTime only honours tolerations whose effect IS NoExecute (an empty
    effect does not count there), then applies ToleratesTaint: an empty key matches
    every key, whatever the operator; Equal (also when empty) compares the values;
    Exists matches every value; any other operator matches nothing.
    """
    return toleration.effect == "NoExecute" and tolerates(toleration, taint.model_copy(update={"effect": "NoExecute"}))


def _sooner(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else min(a, b)


def _pods(
    impact: Impact,
    pods: Sequence[Pod],
    evicting: dict[tuple[str, str], int | None],
    reserved: dict[tuple[str | None, str | None], list[ResourceClaimConsumerReference]],
) -> None:
    """Pods the controller would evict: scheduled, not being deleted, and using an evicting claim reserved for them.

    As upstream's podEvictionTime: a pod without ``spec.nodeName`` is not evicted ("not
    scheduled yet"), nor one its claim's ``status.reservedFor`` does not list (perhaps a
    replacement under the same name).
    """
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None or not pod.spec.node_name:
            continue
        generated = {s.name: s.resource_claim_name for s in (pod.status.resource_claim_statuses if pod.status else [])}
        delays = [
            evicting[(pod.namespace, claim)]
            for claim in _claim_names(pod, generated)
            if (pod.namespace, claim) in evicting and _is_reserved_for(pod, reserved[(pod.namespace, claim)])
        ]
        if not delays:
            continue
        who = f"{pod.namespace}/{pod.name}"
        impact.evicted.append(who)
        soonest = delays[0]
        for delay in delays[1:]:
            soonest = _sooner(soonest, delay)
        if soonest is not None:
            impact.delayed[who] = soonest


def _reservations(
    claims: Sequence[ResourceClaim],
) -> dict[tuple[str | None, str | None], list[ResourceClaimConsumerReference]]:
    return {(claim.namespace, claim.name): claim.status.reserved_for if claim.status else [] for claim in claims}


def _is_reserved_for(pod: Pod, consumers: list[ResourceClaimConsumerReference]) -> bool:
    """Upstream's IsReservedForPod compares UIDs; a pod written without one is matched by name."""
    return any(
        ref.resource == "pods"
        and not ref.api_group
        and (ref.uid == pod.metadata.uid if pod.metadata.uid else ref.name == pod.name)
        for ref in consumers
    )


def _claim_names(pod: Pod, generated: dict[str, str | None]) -> list[str]:
    names = []
    for ref in pod.spec.resource_claims:
        name = ref.resource_claim_name or generated.get(ref.name)
        if name:
            names.append(name)
    return names
