"""DynamicResources' device binding conditions over time (seed 000, "Device Binding Conditions").

A device published with ``bindingConditions`` holds its pod in the PreBind phase until every
condition is True in the claim's ``status.devices`` entry for that device; a
``bindingFailureConditions`` condition True, or conditions still unmet ``bindingTimeout``
(600 s by default, DynamicResourcesArgs) after ``allocationTimestamp``, makes the claim
unavailable on every node (Filter), and PostFilter then deallocates it — when nobody but this
pod has it reserved — so that the next attempt allocates anew and the pod goes elsewhere.

This follows kube-scheduler's code rather than the seed's wording: the seed says the
conditions are read from the claim's ``status.conditions``, but a v1 ResourceClaim has no such
field, and ``isClaimReadyForBinding`` reads the allocated device's entry in ``status.devices``
(matched by driver, pool and device). Checks stop at the first result that is not ready, as
upstream's do. Time is a :class:`BindingClock` so that ``--now`` makes what-ifs reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import Enum

from drasat.models.core import Pod
from drasat.models.errors import InputError
from drasat.models.resource import AllocationResult, DeviceRequestAllocationResult, ResourceClaim, ResourceClaimStatus
from drasat.solver.allocation.features import Features

from ..cluster import Cluster, ObjectKey, key_of, label_of

DEFAULT_BINDING_TIMEOUT = timedelta(seconds=600)  # DynamicResourcesArgs.bindingTimeout's default
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class BindingClock:
    """The moment the scheduler looks, and how long PreBind waits for binding conditions."""

    now: datetime
    timeout: timedelta = DEFAULT_BINDING_TIMEOUT

    def __post_init__(self) -> None:
        if self.timeout <= timedelta(0):
            raise InputError(f"bindingTimeout must be positive, not {self.timeout.total_seconds():g} s")
        if self.now.tzinfo is None:
            object.__setattr__(self, "now", self.now.replace(tzinfo=UTC))

    @classmethod
    def current(cls, timeout: timedelta = DEFAULT_BINDING_TIMEOUT) -> BindingClock:
        """The wall clock, to the second (as the API stores timestamps)."""
        return cls(datetime.now(UTC).replace(microsecond=0), timeout)

    @property
    def stamp(self) -> str:
        """``now`` as the API writes ``allocationTimestamp``."""
        return self.now.astimezone(UTC).strftime(TIMESTAMP_FORMAT)


def parse_timestamp(text: str, where: str) -> datetime:
    """RFC 3339 text (``2026-12-02T18:00:00Z``) as an aware datetime; ``where`` names the field for errors."""
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise InputError(f"{where}: {text!r} is not an RFC 3339 timestamp (like 2026-12-02T18:00:00Z)") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class BindingState(Enum):
    """Where a claim stands with its binding conditions, as DynamicResources sees it."""

    NONE = "none"  # no allocated device has binding conditions (or the gates are off)
    READY = "ready"  # every binding condition True, no failure condition True
    WAITING = "waiting"  # not ready yet, the timeout not reached: PreBind waits
    FAILED = "failed"  # a bindingFailureConditions condition is True
    TIMED_OUT = "timed out"  # not ready bindingTimeout after allocationTimestamp

    @property
    def gives_up(self) -> bool:
        """Filter marks the claim unavailable on every node; PostFilter may deallocate it."""
        return self in (BindingState.FAILED, BindingState.TIMED_OUT)


@dataclass(frozen=True)
class BindingVerdict:
    """One claim's binding state, with upstream's words for a failure and the moment PreBind gives up."""

    claim: str  # namespace/name
    state: BindingState
    detail: str = ""  # kube-scheduler's error text after "claim X " ("binding failed: reason=..., message=...")
    deadline: datetime | None = None  # allocationTimestamp (or now) + bindingTimeout
    unmet: tuple[str, ...] = ()  # "condition on driver/pool/device" still not True

    def describe(self) -> str:
        """One line for people."""
        if self.state is BindingState.WAITING:
            until = self.deadline.strftime(TIMESTAMP_FORMAT) if self.deadline else "?"
            return f"claim {self.claim}: binding conditions not yet True ({', '.join(self.unmet)}); " + (
                f"the scheduler gives up at {until}"
            )
        return f"claim {self.claim}: {self.detail}"


def binding_verdict(claim: ResourceClaim, clock: BindingClock | None, features: Features) -> BindingVerdict:
    """``isClaimReadyForBinding`` then ``isClaimTimeout`` for an allocated claim."""
    allocation = claim.status.allocation if claim.status else None
    label = label_of(claim)
    if allocation is None or not features.binding_conditions:
        return BindingVerdict(label, BindingState.NONE)
    waiting = [r for r in allocation.devices.results if r.binding_conditions]
    if not waiting:
        return BindingVerdict(label, BindingState.NONE)
    clock = clock or BindingClock.current()
    for result in waiting:
        unmet = _unmet(claim, result)
        if isinstance(unmet, BindingVerdict):
            return unmet
        if unmet:
            return _not_ready(claim, allocation, clock, unmet)
    return BindingVerdict(label, BindingState.READY)


def _unmet(claim: ResourceClaim, result: DeviceRequestAllocationResult) -> tuple[str, ...] | BindingVerdict:
    """The conditions of one result not yet True, or the failure verdict when a failure condition is True."""
    device = f"{result.driver}/{result.pool}/{result.device}"
    status = next(
        (
            d
            for d in (claim.status.devices if claim.status else [])
            if (d.driver, d.pool, d.device) == (result.driver, result.pool, result.device)
        ),
        None,
    )
    if status is None:
        return tuple(f"{c} on {device} (no status.devices entry yet)" for c in result.binding_conditions)
    conditions = {c.type: c for c in status.conditions}
    for failure in result.binding_failure_conditions:
        found = conditions.get(failure)
        if found is not None and found.status == "True":
            return BindingVerdict(
                label_of(claim),
                BindingState.FAILED,
                f'binding failed: reason={found.reason or ""}, message="{found.message or ""}" '
                f"({failure} is True on {device})",
            )
    return tuple(
        f"{c} on {device}"
        for c in result.binding_conditions
        if conditions.get(c) is None or conditions[c].status != "True"
    )


def _not_ready(
    claim: ResourceClaim, allocation: AllocationResult, clock: BindingClock, unmet: tuple[str, ...]
) -> BindingVerdict:
    stamp = allocation.allocation_timestamp
    started = (
        parse_timestamp(stamp, f"ResourceClaim {label_of(claim)}: status.allocation.allocationTimestamp")
        if stamp
        else None
    )
    # Without a timestamp Filter never times the claim out; PreBind's own wait starts now.
    deadline = (started or clock.now) + clock.timeout
    if started is not None and deadline < clock.now:
        return BindingVerdict(
            label_of(claim),
            BindingState.TIMED_OUT,
            f"binding timeout (allocated at {stamp}, bindingTimeout "
            f"{clock.timeout.total_seconds():g} s; still not True: {', '.join(unmet)})",
            deadline,
            unmet,
        )
    return BindingVerdict(label_of(claim), BindingState.WAITING, deadline=deadline, unmet=unmet)


def deallocated(claim: ResourceClaim) -> ResourceClaim:
    """The claim as PostFilter writes it back: no reservation, no allocation, no device status."""
    return claim.model_copy(update={"status": ResourceClaimStatus()})


def stamped(allocation: AllocationResult, clock: BindingClock | None) -> AllocationResult:
    """A new allocation with ``allocationTimestamp`` at the clock's moment (kept as is without a clock, or
    when the allocator wrote none: the gates are off)."""
    if clock is None or allocation.allocation_timestamp is None:
        return allocation
    return allocation.model_copy(update={"allocation_timestamp": clock.stamp})


def waiting_with(
    claim: ResourceClaim, allocation: AllocationResult, clock: BindingClock | None, features: Features
) -> BindingVerdict | None:
    """The wait a new allocation of ``claim`` starts (None when its devices have no binding conditions)."""
    status = (claim.status or ResourceClaimStatus()).model_copy(update={"allocation": allocation})
    verdict = binding_verdict(claim.model_copy(update={"status": status}), clock, features)
    return verdict if verdict.state is BindingState.WAITING else None


def waiting_in_prebind(claims: Sequence[ResourceClaim], cluster: Cluster) -> list[BindingVerdict]:
    """The pod's claims PreBind would wait for (binding conditions not yet True, the timeout not reached)."""
    verdicts = [binding_verdict(c, cluster.clock, cluster.features) for c in claims]
    return [v for v in verdicts if v.state is BindingState.WAITING]


@dataclass
class Recovery:
    """The cluster after PostFilter's deallocations, and which claims were deallocated for which pod."""

    cluster: Cluster
    deallocated: dict[str, list[BindingVerdict]] = field(default_factory=dict)  # by pod label
    keys: set[ObjectKey] = field(default_factory=set)  # the claims deallocated or deleted
    released: list[str] = field(default_factory=list)  # what the resourceclaim controller did for finished pods

    def notes(self) -> list[str]:
        """One line per change, for stderr."""
        deallocations = [deallocation_note(pod, v) for pod, verdicts in self.deallocated.items() for v in verdicts]
        return self.released + deallocations


def deallocation_note(pod: str, verdict: BindingVerdict) -> str:
    """What PostFilter did for ``pod``, in one line."""
    return f"pod {pod}: {verdict.describe()}: the scheduler deallocated the claim (PostFilter) and tried the pod again"


def recover(cluster: Cluster, pods: Sequence[Pod]) -> Recovery:
    """The cluster as the scheduler finds it for ``pods``: first the resourceclaim controller's work for
    finished pods (:mod:`..claim_controller`), then PostFilter for each pod in turn: its claims that failed
    binding or timed out, and that no one else has reserved, deallocated (upstream frees one per
    scheduling attempt and retries; the end is the same). A claim others still use stays allocated:
    Filter keeps refusing it on every node."""
    from ..claim_controller import release_finished
    from ..pods import not_schedulable_now, resolve_pod_claims

    released = release_finished(cluster)
    book = {k: c for k, c in cluster.claims_by_key.items() if released.claims.get(k, c) is not None}
    book.update({k: c for k, c in released.claims.items() if c is not None})
    recovery = Recovery(cluster, keys=set(released.claims), released=released.notes)
    if released.claims:
        cluster = replace(cluster, claims=list(book.values()))
    given_up = {k for k, c in book.items() if binding_verdict(c, cluster.clock, cluster.features).state.gives_up}
    if not given_up:  # the usual cluster: no pod's claims to look at (resolving them all costs 1 ms a pod)
        if recovery.keys:
            recovery.cluster = cluster
        return recovery
    for pod in pods:
        if not_schedulable_now(pod):
            continue
        for use in resolve_pod_claims(pod, cluster, book).uses:
            status = use.claim.status
            if status is None or status.allocation is None:
                continue
            verdict = binding_verdict(use.claim, cluster.clock, cluster.features)
            reserved = [r.uid for r in status.reserved_for]
            if verdict.state.gives_up and reserved in ([], [use.consumer.uid]):
                book[key_of(use.claim)] = deallocated(use.claim)
                recovery.keys.add(key_of(use.claim))
                recovery.deallocated.setdefault(label_of(pod), []).append(verdict)
    if recovery.keys:
        recovery.cluster = replace(cluster, claims=list(book.values()))
    return recovery
