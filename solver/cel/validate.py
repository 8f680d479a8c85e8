"""``drasat validate``'s CEL check: every expression of an object must compile, as the API server demands.

The built-in rules (:mod:`drasat.models.validation.claims`) check that a CEL expression is
present and not too long; whether it compiles is this module's job, because only the
CEL layer can tell. ``drasat validate`` imports the module (see
``CHECKER_MODULES`` in ``cli/commands/validate.py``), which registers :func:`check_cel`.

What is compiled, with the default engine:

* DeviceClass ``spec.selectors[i].cel.expression``;
* ResourceClaim ``spec.devices.requests[i]`` and ResourceClaimTemplate
  ``spec.spec.devices.requests[i]``: ``exactly.selectors[j].cel.expression`` and
  ``exactly.derivedAttributes[j].expression``, and the same under ``firstAvailable[k]``.

An expression that compiles must also stay within Kubernetes' estimated cost limit
(:mod:`.cost`), or the API server refuses it as "too complex". Selectors must be bool; derived attributes follow the value rules of :mod:`.values`
with list values allowed (the API server accepts what a cluster with
DRAListTypeAttributes accepts; the allocator applies the gate when it evaluates).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from drasat.models.errors import InputProblem, Location
from drasat.models.meta import TypedObject
from drasat.models.resource import (
    DeviceClaim,
    DeviceClass,
    DeviceSelector,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimTemplate,
)
from drasat.models.validation import register_checker
from drasat.models.validation.formats import index, too_long

from .analysis import MEMORY_GUARD
from .cost import cost_problem
from .errors import MAX_EXPRESSION_BYTES, CelCompileError
from .evaluator import SelectorEvaluator

#: ``drasat validate`` prints a problem after ``"       - "``; the source line and caret of
#: a compile error are indented as far, so they stay under their problem on stdout.
CONTINUATION = " " * 9


class Expression(NamedTuple):
    """One CEL expression of an object, where it sits, and which result rule applies."""

    at: Location
    text: str
    derived: bool


@register_checker
def check_cel(obj: TypedObject, where: Location) -> list[InputProblem]:
    """A problem at the field of every CEL expression of ``obj`` that does not compile."""
    expressions = [e for e in _expressions(obj, where) if _checkable(e.text)]
    if not expressions:
        return []
    evaluator = SelectorEvaluator()
    problems = []
    for expression in expressions:
        problem = expression_problem(expression.text, evaluator, derived=expression.derived)
        if problem is not None:
            problems.append(InputProblem(expression.at, problem))
    return problems


def expression_problem(text: str, evaluator: SelectorEvaluator, derived: bool = False) -> str | None:
    """Why the API server refuses one CEL expression (empty, too long, does not compile, too costly); None when
    it accepts it. Every command that takes CEL from its user refuses what ``drasat validate`` refuses."""
    if not text:
        return "a CEL expression is required and must not be empty"
    if len(text.encode()) > MAX_EXPRESSION_BYTES:
        return too_long(MAX_EXPRESSION_BYTES)
    try:
        if derived:
            evaluator.compile_value(text, lists=True)
        else:
            evaluator.compile(text)
    except CelCompileError as exc:
        too_costly = cost_problem(text) if MEMORY_GUARD in exc.detail else None
        return too_costly or message(exc.detail)
    return cost_problem(text)


def message(detail: str) -> str:
    """A compile error's engine-neutral detail as a problem message, its caret lines indented."""
    return "CEL compile error: " + detail.replace("\n", "\n" + CONTINUATION)


def _checkable(text: str) -> bool:
    """Empty and over-long expressions are the built-in rules' problems; reporting them twice helps no one."""
    return bool(text) and len(text.encode()) <= MAX_EXPRESSION_BYTES


def _expressions(obj: TypedObject, where: Location) -> Iterator[Expression]:
    if isinstance(obj, DeviceClass):
        yield from _selectors(where.child("spec.selectors"), obj.spec.selectors)
    elif isinstance(obj, ResourceClaim):
        yield from _claim(where.child("spec.devices"), obj.spec.devices)
    elif isinstance(obj, ResourceClaimTemplate):
        yield from _claim(where.child("spec.spec.devices"), obj.spec.spec.devices)


def _claim(at: Location, claim: DeviceClaim) -> Iterator[Expression]:
    for i, request in enumerate(claim.requests):
        here = index(at.child("requests"), i)
        if request.exactly is not None:
            yield from _request(here.child("exactly"), request.exactly)
        for k, sub in enumerate(request.first_available):
            yield from _request(index(here.child("firstAvailable"), k), sub)


def _request(at: Location, request: ExactDeviceRequest | DeviceSubRequest) -> Iterator[Expression]:
    """An exact request or a subrequest (both have selectors and derived attributes)."""
    yield from _selectors(at.child("selectors"), request.selectors)
    for i, derived in enumerate(request.derived_attributes):
        yield Expression(index(at.child("derivedAttributes"), i).child("expression"), derived.expression, True)


def _selectors(at: Location, selectors: list[DeviceSelector]) -> Iterator[Expression]:
    for i, selector in enumerate(selectors):
        if selector.cel is not None:
            yield Expression(index(at, i).child("cel.expression"), selector.cel.expression, False)
