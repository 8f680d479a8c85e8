"""An independent verifier of proposed allocations: every rule an answer breaks, in plain words.

Tests run it on every answer of both solvers (CP-SAT and greedy). It deliberately
shares no code with them (no inventory, candidates, greedy or model module): pool
gathering, eligibility, counters, capacity and constraints are re-derived here from
``allocation-semantics.md``, so a bug in the solvers' shared code cannot hide itself.
Where upstream Kubernetes has a [bug-compatible] defect, the *intended* rule is checked.

It checks validity only, never preference: an answer that picks the second
``firstAvailable`` alternative while the first would also have fitted is valid here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from drasat.models.resource import (
    AllocationResult,
    DeviceAttribute,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaim,
)
from drasat.solver.allocation.problem import DeviceId, Problem, claim_key

from .amounts import (
    capacity_fits,
    compatibility_violations,
    counter_violations,
    pick_capacity_violations,
    shared_capacity_violations,
)
from .claim_rules import (
    RequestSpec,
    ResultEntry,
    config_key,
    constraint_violations,
    expected_config,
    expected_node_selector,
    selector_key,
    taint_violations,
)
from .pools import AllocatedState, PoolId, SeenDevice, SeenPool, allocated_state, device_text, gather_pools
from .requests import (
    MAX_RESULTS,
    find_request,
    request_violations,
    result_field_violations,
    share_id_violations,
    use_violations,
)

OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"  # a node declares it to run devices that skip them


class SelectorMatcher(Protocol):
    """What the verifier needs of a CEL engine (``drasat.solver.cel.SelectorEvaluator`` fits)."""

    def matches(self, expression: str, device: Any) -> bool: ...


def _default_cel(need_evaluator: bool = True) -> tuple[SelectorMatcher | None, Callable[..., Any]]:
    """drasat's CEL engine (unless the caller brings one) and its device carrier."""
    from drasat.solver.cel import CelDevice, SelectorEvaluator

    return (SelectorEvaluator() if need_evaluator else None), CelDevice


@dataclass
class World:
    """Everything the checks consult: the node's pools, the allocated state, classes and CEL."""

    problem: Problem
    pools: dict[PoolId, SeenPool]
    fatal: list[str]
    state: AllocatedState
    classes: dict[str, DeviceClass]
    evaluator: SelectorMatcher | None
    make_device: Callable[..., Any]
    _cel_cache: dict[tuple[DeviceId, str], bool | str] = field(default_factory=dict)
    _all_cache: dict[int, list[DeviceId] | str] = field(default_factory=dict)

    @classmethod
    def build(cls, problem: Problem, evaluator: SelectorMatcher | None) -> World:
        """Derive the node's view once; every check below only reads it."""
        pools, fatal = gather_pools(problem)
        default, make_device = _default_cel(evaluator is None)
        state = allocated_state(problem.allocated, problem.features)
        classes = {c.name: c for c in problem.classes}
        return cls(problem, pools, fatal, state, classes, evaluator or default, make_device)

    def selector(self, selector: DeviceSelector, seen: SeenDevice) -> bool | str:
        """True/False, or the text of the error evaluating the selector on the device."""
        if selector.cel is None:
            return "the selector has no CEL expression"
        key = (seen.id, selector.cel.expression)
        if key not in self._cel_cache:
            self._cel_cache[key] = self._evaluate(selector.cel.expression, seen)
        return self._cel_cache[key]

    def derived(self, pick: ResultEntry, name: str) -> DeviceAttribute | None | str:
        """The request's derived attribute ``name`` on the picked device (DRADerivedAttributes)."""
        if not self.problem.features.derived_attributes:
            return None
        spec = next((d for d in pick.spec.derived_attributes if d.name == name), None)
        if spec is None:
            return None
        if self.evaluator is None or not hasattr(self.evaluator, "value"):
            return "cannot evaluate CEL: drasat.solver.cel is not available"
        try:
            value = self.evaluator.value(
                spec.expression, self._cel_device(pick.seen), lists=self.problem.features.list_attributes
            )
        except Exception as exc:  # noqa: BLE001 - any failure is reported, never swallowed
            return f"CEL error: {exc}"
        return _as_attribute(value)

    def _cel_device(self, seen: SeenDevice) -> Any:
        dev = seen.device
        return self.make_device(
            key=seen.id,
            driver=seen.id[0],
            attributes={n: a.raw() for n, a in dev.attributes.items()},
            capacity={n: c.value for n, c in dev.capacity.items()},
            allow_multiple_allocations=bool(dev.allow_multiple_allocations),
        )

    def _evaluate(self, expression: str, seen: SeenDevice) -> bool | str:
        """Run CEL; a missing engine or a failing selector becomes a reported reason, never a pass."""
        if self.evaluator is None:
            return "cannot evaluate CEL: drasat.solver.cel is not available"
        cel_device = self._cel_device(seen)
        try:
            return bool(self.evaluator.matches(expression, cel_device))
        except Exception as exc:  # noqa: BLE001 - any failure is reported, never swallowed
            return f"CEL error: {exc}"

    def is_multi(self, seen: SeenDevice) -> bool:
        """Shared device (§6.1 step 1): allowMultipleAllocations only counts with ConsumableCapacity."""
        return self.problem.features.consumable_capacity and bool(seen.device.allow_multiple_allocations)

    def rejection(self, spec: RequestSpec, seen: SeenDevice) -> tuple[str, bool]:
        """Why the device is not selectable for the (sub)request (§6.2), and whether that is an
        error (a failing selector) rather than a plain "no"; ("", False) when it is selectable."""
        if seen.device.binding_conditions and not self.problem.features.binding_conditions:
            return "has binding conditions, but DRADeviceBindingConditions/DRAResourceClaimDeviceStatus is off", False
        cls = self.classes.get(spec.device_class_name)
        if cls is None:
            return f"device class {spec.device_class_name!r} does not exist", True
        for owner, selectors in ((f"class {cls.name}", cls.spec.selectors), ("request", spec.selectors)):
            for i, sel in enumerate(selectors):
                verdict = self.selector(sel, seen)
                if verdict is False:
                    return f"{owner} selector #{i} rejects it", False
                if verdict is not True:
                    return f"{owner} selector #{i} fails: {verdict}", True
        return "", False

    def all_devices(self, spec: RequestSpec) -> list[DeviceId] | str:
        """§4.3: the devices an All-mode (sub)request must get, or why no allocation can exist."""
        if id(spec) not in self._all_cache:
            self._all_cache[id(spec)] = self._all_devices(spec)
        return self._all_cache[id(spec)]

    def _all_devices(self, spec: RequestSpec) -> list[DeviceId] | str:
        """Selectable on-node devices of complete, valid pools, with the capacity prefilter; not
        filtered for use, taints or counters (those make the answer invalid instead)."""
        pools = sorted(self.pools.values(), key=lambda p: p.id)
        broken = next((p for p in pools if p.status != "usable"), None)
        if broken is not None:
            return f"resource pool {broken.text()} is {broken.status} ({broken.reason})"
        out: list[DeviceId] = []
        for seen in (s for pool in pools for s in pool.devices.values()):
            if seen.node_error:
                return f"device {device_text(seen.id)} has a node selector that does not parse"
            if not seen.on_node:
                continue
            why, fatal = self.rejection(spec, seen)
            if fatal:
                return f"device {device_text(seen.id)}: {why}"
            if why:
                continue
            if self.problem.features.consumable_capacity and not capacity_fits(
                seen, spec, self.state.capacity.get(seen.id, {}), self.problem.features
            ):
                continue
            out.append(seen.id)
        return out


def _as_attribute(value: Any) -> DeviceAttribute | str:
    """A derived value as an attribute: scalars by Python type, lists by their elements' type."""
    scalar = {bool: "bool", int: "int", str: "string"}
    if type(value) in scalar:
        return DeviceAttribute.model_validate({scalar[type(value)]: value})
    if type(value).__name__ == "Semver":
        return DeviceAttribute(version=str(value))
    if isinstance(value, list) and value and len({type(v) for v in value}) == 1:
        kind = type(value[0])
        if kind in scalar:
            return DeviceAttribute.model_validate({scalar[kind] + "s": list(value)})
        if kind.__name__ == "Semver":
            return DeviceAttribute(versions=[str(v) for v in value])
    return f"derived value {value!r} is not a string, int, bool, version or a list of one of those"


def verify(
    problem: Problem, allocations: Mapping[str, AllocationResult], *, evaluator: SelectorMatcher | None = None
) -> list[str]:
    """Every rule the proposed allocation breaks, in plain words naming claim/request/device; [] when it is valid.

    ``allocations`` are keyed as ``allocate`` keys its results: ``namespace/name`` (:func:`claim_key`).

    ``evaluator`` replaces the CEL engine (tests use a fake one); by default
    ``drasat.solver.cel`` is used, and when it is missing every selector that must be
    evaluated is reported as unverifiable instead of being silently accepted.
    """
    world = World.build(problem, evaluator)
    out = list(world.fatal)
    keys = [claim_key(c) for c in problem.claims]
    out += [f"claim {k}: no allocation proposed" for k in keys if k not in allocations]
    out += [f"allocation proposed for {k!r}, which is not a claim to allocate" for k in allocations if k not in keys]
    picks: list[ResultEntry] = []
    for claim, key in zip(problem.claims, keys):
        if key in allocations:
            claim_picks, problems = _verify_claim(world, claim, allocations[key])
            picks += claim_picks
            out += problems
    out += _cross_claim_violations(world, picks)
    return out


def check_or_raise(
    problem: Problem, allocations: Mapping[str, AllocationResult], *, evaluator: SelectorMatcher | None = None
) -> None:
    """For tests: raise AssertionError listing every violation, so a failure explains itself."""
    problems = verify(problem, allocations, evaluator=evaluator)
    if problems:
        raise AssertionError("invalid allocation:\n  - " + "\n  - ".join(problems))


def _verify_claim(
    world: World, claim: ResourceClaim, allocation: AllocationResult
) -> tuple[list[ResultEntry], list[str]]:
    """All per-claim rules; returns the resolved picks for the cross-claim checks."""
    results = allocation.devices.results
    out = request_violations(world, claim, results)
    picks: list[ResultEntry] = []
    for res in results:
        pick = _resolve(world, claim, res, out)
        if pick is not None:
            picks.append(pick)
            out += _pick_violations(world, pick)
    if len(results) > MAX_RESULTS:
        out.append(f"claim {claim_key(claim)}: {len(results)} results, more than the limit of {MAX_RESULTS}")
    out += constraint_violations(claim, picks, world.problem.features, world.derived)
    if len(picks) == len(results):
        out += _node_selector_violations(world, claim, picks, allocation)
    out += _config_violations(world, claim, results, allocation)
    if allocation.allocation_timestamp is not None and not world.problem.features.binding_conditions:
        out.append(
            f"claim {claim_key(claim)}: allocationTimestamp is set, but kube-scheduler only sets it when "
            "DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are on"
        )
    return picks, out


def _resolve_device(world: World, res: DeviceRequestAllocationResult) -> SeenDevice | str:
    """The device a result names, if the node really sees it in a usable pool (§3, §6.7)."""
    pool = world.pools.get((res.driver, res.pool))
    if pool is None:
        return f"pool {res.driver}/{res.pool} is not visible on node {world.problem.node.name} (unknown, obsolete or elsewhere)"
    if pool.status != "usable":
        return f"pool {pool.text()} is {pool.status} ({pool.reason})"
    seen = pool.devices.get(res.device)
    if seen is None:
        return f"pool {pool.text()} has no device {res.device} in a slice this node sees"
    if seen.node_error:
        return f"its per-device node selector does not parse ({seen.node_error})"
    if not seen.on_node:
        return f"its per-device node selection excludes node {world.problem.node.name}"
    node, skips = world.problem.node, seen.slice.spec.skip_node_operations
    if skips and world.problem.features["DRAOptionalNodeOperations"] and not node.declares(OPTIONAL_NODE_OPERATIONS):
        return f"its slice skips node operations, but node {node.name} does not declare {OPTIONAL_NODE_OPERATIONS}"
    return seen


def _resolve(
    world: World, claim: ResourceClaim, res: DeviceRequestAllocationResult, out: list[str]
) -> ResultEntry | None:
    """Tie a result entry to its (sub)request and device; report and drop it when either is unknown."""
    where = f"claim {claim_key(claim)}, request {res.request}: device {res.driver}/{res.pool}/{res.device}"
    found = find_request(claim, res.request)
    seen = _resolve_device(world, res)
    if isinstance(seen, str):
        out.append(f"{where}: {seen}")
    if isinstance(found, str):
        out.append(f"{where}: {found}")
    if isinstance(found, str) or isinstance(seen, str):
        return None
    req, spec = found
    admin = isinstance(spec, ExactDeviceRequest) and spec.admin_access is True
    sub = None if isinstance(spec, ExactDeviceRequest) else spec
    return ResultEntry(claim_key(claim), res, req, sub, spec, seen, world.is_multi(seen), admin)


def _pick_violations(world: World, pick: ResultEntry) -> list[str]:
    """Rules about one device for one request: eligibility, taints, capacity, result fields."""
    features = world.problem.features
    out = []
    why, _ = world.rejection(pick.spec, pick.seen)
    if why and pick.spec.device_class_name in world.classes:  # a missing class is reported per request
        out.append(f"{pick.where()} is not selectable: {why}")
    if pick.seen.device.consumes_counters and not features.partitionable:
        out.append(f"{pick.where()} consumes counters, but DRAPartitionableDevices is off")
    if features.device_taints:
        out += taint_violations(pick)
    if features.consumable_capacity:
        out += pick_capacity_violations(pick, world.state, features)
    out += result_field_violations(pick, features)
    return out


def _cross_claim_violations(world: World, picks: Sequence[ResultEntry]) -> list[str]:
    """Rules that span claims: use, shares, capacity sums, counters, compatibility groups."""
    features = world.problem.features
    out = use_violations(picks, world.state)
    out += share_id_violations(picks, world.state)
    if features.consumable_capacity:
        out += shared_capacity_violations(picks, world.state, features)
    if features.partitionable:
        out += counter_violations(picks, world.pools, world.state)
        if features.compatibility_groups:
            out += compatibility_violations(picks, world.pools, world.state)
    return out


def _node_selector_violations(
    world: World, claim: ResourceClaim, picks: Sequence[ResultEntry], allocation: AllocationResult
) -> list[str]:
    """§2.5.3: the written selector must equal the one derived from the devices (order aside)."""
    expected = expected_node_selector(claim_key(claim), picks, world.problem.node.name)
    if isinstance(expected, str):
        return [f"claim {claim_key(claim)}: no allocation is valid: {expected}"]
    if selector_key(expected) != selector_key(allocation.node_selector):
        want = expected.to_api() if expected is not None else None
        got = allocation.node_selector.to_api() if allocation.node_selector is not None else None
        return [f"claim {claim_key(claim)}: nodeSelector is {got} but must be {want}"]
    return []


def _config_violations(
    world: World, claim: ResourceClaim, results: Sequence[DeviceRequestAllocationResult], allocation: AllocationResult
) -> list[str]:
    """§2.5.2: the configuration must be exactly the one derived from the chosen alternatives."""
    chosen: dict[str, str] = {}
    for res in results:
        chosen.setdefault(res.request.partition("/")[0], res.request)
    if any(r.name not in chosen for r in claim.spec.devices.requests):
        return []  # a request without devices is reported already; its configs are undefined
    expected = expected_config(claim, chosen, world.classes)
    if config_key(expected) != config_key(allocation.devices.config):
        return [
            f"claim {claim_key(claim)}: devices.config is {config_key(allocation.devices.config)} "
            f"but must be {config_key(expected)}"
        ]
    return []


__all__ = ["verify", "check_or_raise", "SelectorMatcher", "World"]
