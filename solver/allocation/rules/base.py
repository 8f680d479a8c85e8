"""What every DRA rule declares, in one place, for both searches.

A rule is one concern of the allocation semantics (exclusivity, counters, capacity, ...).
It says

* what it excludes statically — a device it can never admit for an alternative, with the
  reason in words (:meth:`Rule.exclude`, run by candidate selection at its :class:`Stage`);
* which device properties tell devices apart for it (:meth:`Rule.signature`,
  :meth:`Rule.device_signature`, :meth:`Rule.single`): equivalence classes merge only
  devices that every rule sees alike;
* its depth-first side: :meth:`Rule.fits`, :meth:`Rule.apply`, :meth:`Rule.undo` on its own
  slice of search state (:meth:`Rule.start` makes a fresh one);
* its CP-SAT side: :meth:`Rule.encode`, which guards every constraint of one rule instance
  with one assumption literal from :meth:`Encoding.guard`, and records what it means;
  :meth:`Rule.encode_counts` is the same lifted to counts of claims (joint placement, where one
  alternative stands for the claims of many pods).
* its words for an explanation: :meth:`Rule.describe`, the numbers behind one of its instances
  that is a member of a conflict.

The drivers (candidates, state, classes, model, the explanation) loop over the registered rules
and know nothing of any one of them.
"""

from __future__ import annotations

from collections.abc import Container, Hashable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from drasat.solver.allocation.planning.plan import Alternative, AltId, AltVars, ClaimPlan, Pick

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from drasat.solver.allocation.planning.equivalence import DeviceClassGroup
    from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice


class Stage(Enum):
    """When candidate selection asks a rule's static exclusion (Kubernetes' order of checks).

    EARLY and BLOCK rules make an ``allocationMode: All`` list impossible (the device is
    listed but can never be allocated); SELECTION and FILTER rules only keep a device off
    the list. EARLY runs before the selectors (a CEL error on such a device never shows);
    SELECTION right after them, and its reason wins over "not selected"; FILTER and BLOCK
    after that, in that order.
    """

    EARLY = "early"
    SELECTION = "selection"
    FILTER = "filter"
    BLOCK = "block"


class Found:
    """Candidate selection's scratch record for one alternative; a rule may note a device's share.

    A plain class with a slot: planning makes one per alternative on every call."""

    __slots__ = ("share",)

    def __init__(self) -> None:
        self.share: dict[int, dict] = {}


@dataclass
class RuleContext:
    """What rules read while planning is over: the inventory, the plans, and per-rule caches."""

    inv: Inventory
    plans: list[ClaimPlan]
    cache: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Assumption:
    """One assumption literal and what it stands for, in words and as ids (for explanations)."""

    literal: cp_model.IntVar
    rule: str
    meaning: str
    claim: int | None = None
    request: int | None = None
    constraint: int | None = None
    counter_set: tuple[str, str, str] | None = None
    devices: tuple[int, ...] = ()  # the devices (inventory indexes) a per-device rule instance is about


@dataclass
class Encoding:
    """The CP-SAT model under construction, as rules see it: variables per alternative and per class."""

    model: cp_model.CpModel
    ctx: RuleContext
    groups: list[DeviceClassGroup]
    class_of: dict[int, int]
    vars: dict[AltId, AltVars] = field(default_factory=dict)
    by_class: dict[int, list[tuple[Alternative, cp_model.IntVar]]] = field(default_factory=dict)
    assumptions: list[Assumption] = field(default_factory=list)
    tops: dict[int, int] = field(default_factory=dict)  # variable index -> upper bound, for derived variables
    claims: dict[AltId, int] = field(default_factory=dict)  # a merged alternative -> the claims it stands for
    # A merged alternative under a match constraint -> per class, the count of its claims under the class's label.
    per_label: dict[AltId, dict[int, cp_model.IntVar]] = field(default_factory=dict)
    # A counted alternative (joint placement) -> how many claims take it: a variable, each claim wanting alt.count.
    multiplicity: dict[AltId, cp_model.IntVar] = field(default_factory=dict)

    @property
    def inv(self) -> Inventory:
        return self.ctx.inv

    def guard(self, rule: str, meaning: str, **ids: Any) -> cp_model.IntVar:
        """A fresh assumption literal for one rule instance; every constraint of it is enforced by it."""
        literal = self.model.new_bool_var(f"assume[{rule}: {meaning}]")
        self.assumptions.append(Assumption(literal, rule, meaning, **ids))
        return literal

    def int_var(self, low: int, high: int, name: str) -> cp_model.IntVar:
        var = self.model.new_int_var(low, high, name)
        self.tops[var.index] = high
        return var

    def top(self, var: cp_model.IntVar) -> int:
        """The upper bound the variable was made with."""
        return self.tops[var.index]


class Rule:
    """A DRA rule; the defaults say "nothing to check here", so a rule overrides only what it has."""

    name = "rule"
    stage = Stage.BLOCK
    searched = True  # has a depth-first side (fits/apply/undo)

    # --- static exclusion ------------------------------------------------------------------
    def excludes_any(self, inv: Inventory) -> bool:
        """Whether :meth:`exclude` can refuse anything on this inventory (else candidate selection skips it)."""
        return True

    def exclude(self, inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found) -> str:
        """Why ``dev`` can never be allocated for ``alt`` by this rule; "" when it can."""
        return ""

    # --- equivalence classes ---------------------------------------------------------------
    def single_device(self, ctx: RuleContext, dev: InventoryDevice) -> bool:
        """Whether the device must be a class of its own (its bookkeeping is per device)."""
        return False

    def single_for(self, ctx: RuleContext, alt: Alternative) -> bool:
        """Whether every device ``alt`` may take must be a class of its own (per-device bookkeeping)."""
        return False

    def signature(self, ctx: RuleContext, plan: ClaimPlan, alt: Alternative, device: int) -> Hashable:
        """What this rule sees of ``device`` when ``alt`` takes it; devices that differ here never merge."""
        return None

    def device_signature(self, ctx: RuleContext, device: int) -> Hashable:
        """What this rule sees of ``device`` whoever takes it."""
        return None

    def view(self, ctx: RuleContext, plan: ClaimPlan, alt: Alternative) -> Hashable:
        """What of ``alt`` decides :meth:`signature`: two alternatives with the same candidates and an
        equal view see every device alike, so equivalence classes ask :meth:`signature` for one of them
        only. The default (the alternative itself) is always safe; a rule whose signature depends on a
        few properties of the alternative names them, and a wide input is then read once, not per claim."""
        return alt.id

    # --- depth-first side ------------------------------------------------------------------
    def active(self, ctx: RuleContext) -> bool:
        """Whether the rule can refuse anything in this input (an inactive rule is skipped by the search)."""
        return self.searched

    def start(self, ctx: RuleContext) -> Any:
        """A fresh slice of search state for this rule."""
        return None

    def taken(self, state: Any, claim: int, alt: Alternative, dev: InventoryDevice) -> bool:
        """Whether this search already holds the device in a way that skips it before its selectors."""
        return False

    def taken_sets(self, state: Any, claim: int, alt: Alternative) -> tuple[Container[int], ...]:
        """The devices :meth:`taken` says yes to (shared devices never among them), as sets to test
        membership in. The rule updates these very sets in place as picks come and go, so the search
        asks once per alternative and keeps them."""
        return ()

    def fits(self, state: Any, claim: int, alt: Alternative, dev: InventoryDevice, must: bool) -> bool:
        """Whether adding the device keeps the rule; ``must`` (All mode) turns a refusal into an error
        where Kubernetes reports one."""
        return True

    def apply(self, state: Any, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        """Record the pick (only called after :meth:`fits` said yes)."""

    def undo(self, state: Any, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        """Forget the pick exactly (the last one applied for this claim)."""

    # --- CP-SAT side -----------------------------------------------------------------------
    def encode(self, enc: Encoding) -> None:
        """Post this rule's constraints, each rule instance under one :meth:`Encoding.guard` literal."""

    def encode_counts(self, enc: Encoding) -> bool:
        """Post this rule on a counting encoding, whose alternatives each stand for a variable number of claims
        (``enc.multiplicity``), their takes summed over those claims. A rule that only sums devices per class
        (most: exclusivity, counters) posts what :meth:`encode` posts, and it counts exactly. A rule that must
        see each claim on its own posts what it can count and returns False: the model is then a relaxation
        (it admits every real placement, and maybe more), and the joint placement checks each node's answer
        by allocating it."""
        self.encode(enc)
        return True

    # --- explanation -----------------------------------------------------------------------
    def describe(self, inv: Inventory, plans: list[ClaimPlan], member: Assumption) -> str:
        """The numbers behind ``member``, one of this rule's instances in a minimal conflict ("" when there is
        nothing to add). Its meaning says *what* cannot hold; the operator also wants to see *why* (how
        much is left, who else wants the devices), counted over candidates — devices free and admitted by
        every static check — so that the numbers are what the allocation could still choose from."""
        return ""
