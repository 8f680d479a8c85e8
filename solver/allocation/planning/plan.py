"""The plan both searches read: claims, requests, alternatives with their candidates, and picks.

Everything here is frozen once planning is done, so the depth-first search, the CP-SAT
model and a later explanation all read the same values and none can change them for
the others. An alternative is named by its :class:`AltId` (claim, request, rank) — a
value, not an object identity — so maps keyed by it survive copies and read well in dumps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from drasat.models.errors import DrasatError
from drasat.models.quantity import Quantity
from drasat.models.resource import (
    DeviceAttribute,
    DeviceClass,
    DeviceDerivedAttribute,
    DeviceToleration,
    ResourceClaim,
)
from drasat.models.trusted import dict_setter

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

MAX_RESULTS = 32  # AllocationResultsMaxSize

Share = Mapping[str, Fraction]


class AltId(NamedTuple):
    """Which alternative: claim index, request index, rank among ``firstAvailable`` entries (0 for ``exactly``).

    A named tuple: hashed at C speed, because the depth-first search keys its caches by it."""

    claim: int
    request: int
    rank: int


class Candidates(NamedTuple):
    """What candidate selection found for one alternative: devices it may take, and why the others not.

    ``share`` holds the amounts taken of shared devices; ``errors`` the selector errors that
    Kubernetes raises only when its search reaches the device; ``blocked`` (All mode) why the
    fixed list can never be allocated, and ``blocked_at`` the list position where that shows.
    A named tuple, not a frozen dataclass: planning makes one per alternative on every call, made and
    unpacked at C speed (:meth:`Alternative.fill`).
    """

    devices: tuple[int, ...] = ()
    share: Mapping[int, Share] = MappingProxyType({})
    errors: Mapping[int, DrasatError] = MappingProxyType({})
    excluded: Mapping[int, str] = MappingProxyType({})
    blocked: str = ""
    blocked_at: int = -1


def body_field(request: int, rank: int, has_sub: bool) -> str:
    """Where a request's (or subrequest's) body sits in its claim: the field an error names."""
    return f"spec.devices.requests[{request}]." + (f"firstAvailable[{rank}]" if has_sub else "exactly")


@dataclass(frozen=True)
class Alternative:
    """One way to satisfy a request: the request itself, or one ``firstAvailable`` entry, with its candidates."""

    claim: int
    request: int
    rank: int
    request_name: str
    sub_name: str | None
    claim_label: str
    device_class: DeviceClass
    mode: str
    count: int
    admin: bool
    tolerations: tuple[DeviceToleration, ...]
    capacity: Mapping[str, Quantity]
    selectors: tuple[str, ...]
    candidates: tuple[int, ...] = ()
    share: Mapping[int, Share] = field(default_factory=dict)
    errors: Mapping[int, DrasatError] = field(default_factory=dict)
    excluded: Mapping[int, str] = field(default_factory=dict)
    blocked: str = ""
    blocked_at: int = -1
    derived_specs: tuple[DeviceDerivedAttribute, ...] = ()
    derived: Mapping[int, Mapping[str, DeviceAttribute]] = field(default_factory=dict)

    def body_field(self) -> str:
        """Where this alternative's body sits in its claim: the field an error names."""
        return body_field(self.request, self.rank, self.sub_name is not None)

    @classmethod
    def planned(
        cls,
        claim: int,
        request: int,
        rank: int,
        request_name: str,
        sub_name: str | None,
        claim_label: str,
        device_class: DeviceClass,
        mode: str,
        count: int,
        admin: bool,
        tolerations: tuple[DeviceToleration, ...],
        capacity: Mapping[str, Quantity],
        selectors: tuple[str, ...],
        derived_specs: tuple[DeviceDerivedAttribute, ...] = (),
    ) -> Alternative:
        """An alternative as planning makes it, before :meth:`fill` gives it its candidates (before anyone else
        sees it). Built without the frozen ``__init__`` (planning makes one per request and subrequest on every
        call), but with the constructor's own parameters (planning passes them by position: a keyword call of
        fourteen costs twice a positional one), so a missing or unknown field is the interpreter's ``TypeError``
        (checking a ``**fields`` dict against the field names cost a quarter of this method). The instance's
        dict is written as one literal; the fields candidate selection fills hold immutable values until then
        (shared empty maps: sharing them is safe), and tests/test_fast_records.py checks both are whole."""
        alt = _new(cls)
        _set_alt_dict(
            alt,
            {
                "claim": claim,
                "request": request,
                "rank": rank,
                "request_name": request_name,
                "sub_name": sub_name,
                "claim_label": claim_label,
                "device_class": device_class,
                "mode": mode,
                "count": count,
                "admin": admin,
                "tolerations": tolerations,
                "capacity": capacity,
                "selectors": selectors,
                "candidates": (),
                "share": _EMPTY,
                "errors": _EMPTY,
                "excluded": _EMPTY,
                "blocked": "",
                "blocked_at": -1,
                "derived_specs": derived_specs,
                "derived": _EMPTY,
                "id": _tuple_new(AltId, (claim, request, rank)),
            },
        )  # the id asked at once: no lock
        return alt

    @cached_property
    def id(self) -> AltId:
        return AltId(self.claim, self.request, self.rank)

    @property
    def result_name(self) -> str:
        return self.request_name if self.sub_name is None else f"{self.request_name}/{self.sub_name}"

    @property
    def own_name(self) -> str:
        """The name Kubernetes' error messages use: the subrequest's own name for subrequests."""
        return self.sub_name or self.request_name

    def fill(self, found: Candidates) -> Alternative:
        """This alternative, just made by :meth:`planned` and held by no one else yet, with what candidate
        selection found (an All-mode one counts its whole list). Filled in place: planning makes one per
        request, and building each twice (planned, then a copy with candidates) cost a tenth of a small call."""
        fields = self.__dict__
        if fields["share"] is not _EMPTY:
            raise RuntimeError(
                f"alternative {self.id} was filled already: a frozen record is filled once, when planned"
            )
        devices, fields["share"], fields["errors"], fields["excluded"], fields["blocked"], fields["blocked_at"] = found
        fields["candidates"] = devices
        if self.mode == "All":
            fields["count"] = len(devices)
        return self


class _ReadOnlyEmpty(dict[Any, Any]):
    """An empty mapping nothing can write to. Every unfilled alternative of every call and thread shares it
    (``derived`` stays it for good when there are no derived attributes), so a write would leak across them.
    A ``dict`` underneath, so reading it costs what reading a dict costs; pickled and copied as itself."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("the empty mapping alternatives share is read-only")

    __setitem__ = __delitem__ = __ior__ = setdefault = update = pop = popitem = clear = _refuse

    def __reduce__(self) -> str:
        return "_EMPTY"


_EMPTY: Mapping[Any, Any] = _ReadOnlyEmpty()
EMPTY_MAPPING = _EMPTY  # for other stages' shared empty maps (the inventory's nothing-in-use)


@dataclass(frozen=True)
class Pick:
    """One device allocated for one alternative (``share`` for shared devices). The depth-first search makes
    one for every device it adds, without the frozen ``__init__`` (:meth:`~.state.SearchState.try_add`;
    tests/test_fast_records.py checks it is whole)."""

    alt: Alternative
    device: int
    share: Share | None = None


_new, _set_alt_dict = object.__new__, dict_setter(Alternative)  # see models.trusted.dict_setter
_tuple_new = tuple.__new__  # a named tuple made without its Python-level __new__


@dataclass(frozen=True)
class RequestPlan:
    """One request of a claim and its alternatives (one, or the ``firstAvailable`` entries in order)."""

    index: int
    name: str
    alternatives: tuple[Alternative, ...]
    first_available: bool


@dataclass(frozen=True)
class ConstraintPlan:
    """A matchAttribute or distinctAttribute constraint and the requests it covers (none named: all)."""

    index: int
    kind: str  # "match" | "distinct"
    attribute: str
    requests: frozenset[str]

    def applies(self, alt: Alternative) -> bool:
        if not self.requests:
            return True
        return alt.request_name in self.requests or (alt.sub_name is not None and alt.result_name in self.requests)


@dataclass(frozen=True)
class ClaimPlan:
    """One claim ready to search: its label, requests with candidates, and constraints."""

    index: int
    claim: ResourceClaim
    label: str
    requests: tuple[RequestPlan, ...]
    constraints: tuple[ConstraintPlan, ...]

    def alternatives(self) -> list[Alternative]:
        return [alt for req in self.requests for alt in req.alternatives]


@dataclass(frozen=True)
class AltVars:
    """The CP-SAT variables of one alternative: whether it is used, and how many of each class it takes.

    Upper bounds are kept beside the variables (never read back out of the model's proto).
    """

    alt: Alternative
    use: cp_model.IntVar
    takes: Mapping[int, cp_model.IntVar]  # device class -> count
    tops: Mapping[int, int]  # device class -> the count's upper bound


def alternatives(plans: list[ClaimPlan]) -> list[Alternative]:
    """Every alternative of every claim, in search order."""
    return [alt for plan in plans for alt in plan.alternatives()]
