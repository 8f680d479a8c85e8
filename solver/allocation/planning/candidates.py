"""Stage 2 (per device): whether a device can serve one (sub)request, and if not, why.

Checks run in Kubernetes' order — binding-condition gate, in use, class selectors,
request selectors, node, capacity, counters, taints — so that the first reason recorded
is the one Kubernetes would stop at, and a CEL error is only raised for a device
Kubernetes would actually evaluate. Every check but the gate and the selectors belongs
to a rule (``rules/``); each rule's :class:`~.rules.base.Stage` places it in that order.
"""

from __future__ import annotations

from fractions import Fraction

from drasat.models.errors import DrasatError, EvaluationError, Location, SelectorError
from drasat.models.resource import DeviceAttribute
from drasat.solver.allocation.rules.base import Found, Rule, Stage
from drasat.solver.allocation.rules.capacity import capacity_share
from drasat.solver.allocation.rules.counters import compatible
from drasat.solver.allocation.rules.registry import RULES
from drasat.solver.allocation.rules.taints import tolerated, untolerated_taint
from drasat.solver.cel import CelCompileError, CelRuntimeError, SelectorEvaluator

from .attributes import derived_attribute
from .inventory import Inventory, InventoryDevice
from .plan import Alternative, Candidates

__all__ = [
    "Alternative",
    "Candidates",
    "capacity_share",
    "compatible",
    "evaluate_all",
    "evaluate_derived",
    "evaluate_exact",
    "selectable",
    "static_block",
    "tolerated",
    "untolerated_taint",
]

NOT_SELECTED = "not selected by the class or request selectors"


_EXCLUDERS = tuple((rule, rule.stage) for rule in RULES if type(rule).exclude is not Rule.exclude)
"""The registered rules with static exclusions of their own (the base's says "" to everything), and when."""
_EARLY, _SELECTION, _FILTER = Stage.EARLY, Stage.SELECTION, Stage.FILTER  # an Enum member is a slow look-up


class StaticChecks:
    """The registered rules' static exclusions, by stage, that can refuse anything on one inventory."""

    def __init__(self, inv: Inventory) -> None:
        early: list[Rule] = []
        selection: list[Rule] = []
        filter_: list[Rule] = []
        blocks: list[Rule] = []
        for rule, stage in _EXCLUDERS:  # one pass: planning makes one of these per call, however small the input
            if not rule.excludes_any(inv):
                continue  # none on this inventory
            if stage is _SELECTION:
                selection.append(rule)
            elif stage is _FILTER:
                filter_.append(rule)
            elif stage is _EARLY:  # before the selectors, and a block of All-mode lists too
                early.append(rule)
                blocks.append(rule)
            else:
                blocks.append(rule)
        self.early, self.selection, self.filter, self.blocks = (
            tuple(early),
            tuple(selection),
            tuple(filter_),
            tuple(blocks),
        )
        self.after = bool(selection or filter_ or blocks)  # any rule to ask once the selectors said yes or no


def selectable(ev: SelectorEvaluator, alt: Alternative, dev: InventoryDevice) -> bool:
    """Class selectors, then the request's own, as Kubernetes evaluates them; errors carry its wording.

    The loop asks the evaluator directly (once per device and alternative on every call); on an error it
    asks again selector by selector, and the evaluator, which remembers errors too, raises the same one
    where its wording is known."""
    matches, cel = ev.matches, dev.cel
    try:
        for sel in alt.device_class.spec.selectors:
            if not matches(sel.cel.expression if sel.cel else "", cel):
                return False
        for expression in alt.selectors:
            if not matches(expression, cel):
                return False
    except (CelCompileError, CelRuntimeError):
        return _worded(ev, alt, dev)
    return True


def _worded(ev: SelectorEvaluator, alt: Alternative, dev: InventoryDevice) -> bool:
    """:func:`selectable` selector by selector, so that an error names the selector's owner and index."""
    for i, sel in enumerate(alt.device_class.spec.selectors):
        if not _one(ev, sel.cel.expression if sel.cel else "", dev, alt, True, i):
            return False
    for i, expression in enumerate(alt.selectors):
        if not _one(ev, expression, dev, alt, False, i):
            return False
    return True


def _one(
    ev: SelectorEvaluator, expression: str, dev: InventoryDevice, alt: Alternative, of_class: bool, index: int
) -> bool:
    """One selector on one device. Messages start as Kubernetes' do (the class or the claim), then name
    the claim, request and expression, so the user can find what failed without the source at hand."""
    try:
        return ev.matches(expression, dev.cel)
    except CelCompileError as exc:
        owner, _ = _where(alt, of_class)
        raise SelectorError(f"{owner}: selector #{index}: CEL compile error: {exc.detail}") from None
    except CelRuntimeError as exc:
        owner, context = _where(alt, of_class)
        raise EvaluationError(
            f"{owner}: selector #{index} on device {dev.label()}: CEL runtime error: "
            f"{exc.detail} ({context}, expression: {expression})",
            _selector_field(alt, of_class, index),
        ) from None


def _where(alt: Alternative, of_class: bool) -> tuple[str, str]:
    """Whose selector failed, and where it was asked (worded only when one fails: most never do)."""
    if of_class:
        return f"class {alt.device_class.name}", f"claim {alt.claim_label}, request {alt.result_name}"
    return f"claim {alt.claim_label}", f"request {alt.result_name}"


def _selector_field(alt: Alternative, of_class: bool, index: int) -> Location:
    """The object and field of a selector that failed: the class's own, or the request's."""
    if of_class:
        return Location(kind="DeviceClass", name=alt.device_class.name, path=f"spec.selectors[{index}].cel.expression")
    path = f"{alt.body_field()}.selectors[{index}].cel.expression"
    return Location(kind="ResourceClaim", name=alt.claim_label, path=path)


def _derived_field(alt: Alternative, index: int) -> Location:
    path = f"{alt.body_field()}.derivedAttributes[{index}].expression"
    return Location(kind="ResourceClaim", name=alt.claim_label, path=path)


def static_block(
    inv: Inventory,
    alt: Alternative,
    dev: InventoryDevice,
    found: Found | None = None,
    checks: StaticChecks | None = None,
) -> str:
    """Why the device can never be allocated for ``alt`` whatever else is chosen; "" when it can."""
    found = found or Found()
    for rule in (checks or StaticChecks(inv)).blocks:
        reason = rule.exclude(inv, alt, dev, found)
        if reason:
            return reason
    return ""


def _filtered(
    inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found, selected: bool, checks: StaticChecks
) -> str:
    """Why the device is not on the alternative's list at all (off node, unselected, no capacity); "" if it is."""
    for rule in checks.selection:
        reason = rule.exclude(inv, alt, dev, found)
        if reason:
            return reason
    if not selected:
        return NOT_SELECTED
    for rule in checks.filter:
        reason = rule.exclude(inv, alt, dev, found)
        if reason:
            return reason
    return ""


def _gated(inv: Inventory, dev: InventoryDevice) -> bool:
    return not inv.features.binding_conditions and bool(dev.device.binding_conditions)


def evaluate_exact(
    inv: Inventory, ev: SelectorEvaluator, alt: Alternative, checks: StaticChecks | None = None
) -> Candidates:
    """``alt``'s candidates, shares, exclusion reasons and deferred CEL errors (ExactCount)."""
    checks = checks or StaticChecks(inv)
    devices: list[int] = []
    excluded: dict[int, str] = {}
    errors: dict[int, DrasatError] = {}
    gated, early, after = not inv.features.binding_conditions, checks.early, checks.after
    found = Found()
    for dev in inv.devices:
        reason = ""
        if early or (gated and dev.device.binding_conditions):  # the usual device: no gate, no EARLY rule
            reason = _before_selectors(inv, alt, dev, found, checks)
        if not reason:
            try:
                selected = selectable(ev, alt, dev)
            except DrasatError as exc:
                errors[dev.index] = exc
                reason = f"selector error: {exc}"
            else:
                if after:  # no rule excludes anything after the selectors on most inventories
                    reason = _after_selectors(inv, alt, dev, found, selected, checks)
                elif not selected:
                    reason = NOT_SELECTED
        if reason:
            excluded[dev.index] = reason
        else:
            devices.append(dev.index)
    return _candidates(
        Candidates, (tuple(devices), _shares(found, devices) if found.share else {}, errors, excluded, "", -1)
    )


def _before_selectors(
    inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found, checks: StaticChecks
) -> str:
    """Why the device is refused before its selectors run (the binding-condition gate, EARLY rules); "" if not."""
    if dev.device.binding_conditions and not inv.features.binding_conditions:
        return "has binding conditions, but DRADeviceBindingConditions is disabled"
    for rule in checks.early:
        reason = rule.exclude(inv, alt, dev, found)
        if reason:
            return reason
    return ""


def _after_selectors(
    inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found, selected: bool, checks: StaticChecks
) -> str:
    """Why the rules after the selectors keep the device off ``alt``'s list; "" when none does."""
    return _filtered(inv, alt, dev, found, selected, checks) or static_block(inv, alt, dev, found, checks)


def evaluate_all(
    inv: Inventory, ev: SelectorEvaluator, alt: Alternative, checks: StaticChecks | None = None
) -> Candidates:
    """The fixed device list of an ``allocationMode: All`` (sub)request; CEL errors abort at once.

    Like Kubernetes, the list ignores use, taints and counters; a listed device that
    cannot be allocated makes the whole alternative impossible (``blocked``). Its list
    position (``blocked_at``) matters: Kubernetes allocates the list in order, so a
    constraint that an earlier device breaks is still the fatal error it reports.
    """
    checks = checks or StaticChecks(inv)
    devices: list[int] = []
    found = Found()
    blocked, blocked_at = "", -1
    for dev in inv.devices:
        if _gated(inv, dev) or _filtered(inv, alt, dev, found, selectable(ev, alt, dev), checks):
            continue
        devices.append(dev.index)
        reason = static_block(inv, alt, dev, checks=checks)
        if reason and not blocked:
            blocked, blocked_at = f"device {dev.label()} {reason}", len(devices) - 1
    if not devices:
        blocked, blocked_at = "no device matches (allocationMode All needs at least one)", 0
    return Candidates(tuple(devices), _shares(found, devices), {}, {}, blocked, blocked_at)


_candidates = tuple.__new__  # a named tuple made without its Python-level __new__: one per alternative, every call


def _shares(found: Found, devices: list[int]) -> dict[int, dict[str, Fraction]]:
    if not found.share:
        return {}
    listed = set(devices)
    return {device: share for device, share in found.share.items() if device in listed}


def evaluate_derived(inv: Inventory, ev: SelectorEvaluator, alt: Alternative) -> dict[int, dict[str, DeviceAttribute]]:
    """Each candidate's derived attributes (DRADerivedAttributes): evaluated after the selectors,
    visible only to constraints, where they shadow a driver attribute of the same name.
    A failing expression aborts the allocation, as the seed specifies."""
    lists = inv.features.list_attributes
    derived: dict[int, dict[str, DeviceAttribute]] = {}
    for device in alt.candidates:
        dev = inv.devices[device]
        values: dict[str, DeviceAttribute] = {}
        for k, spec in enumerate(alt.derived_specs):
            where = f"claim {alt.claim_label}, request {alt.own_name}, derived attribute {spec.name}"
            try:
                value = ev.value(spec.expression, dev.cel, lists=lists)
            except CelCompileError as exc:
                raise SelectorError(f"{where}: CEL compile error: {exc.detail}") from None
            except CelRuntimeError as exc:
                raise EvaluationError(
                    f"{where} on device {dev.label()}: CEL runtime error: {exc.detail}", _derived_field(alt, k)
                ) from None
            attribute = derived_attribute(value)
            if attribute is None:
                raise EvaluationError(
                    f"{where} on device {dev.label()}: the value {value!r} is not a string, "
                    "int, bool, version or a list of one of those"
                )
            values[spec.name] = attribute
        derived[device] = values
    return derived
