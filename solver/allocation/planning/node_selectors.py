"""Node selectors, matched exactly as Kubernetes' node affinity matches them.

Slices and devices say where they are reachable (``nodeName``, ``nodeSelector``,
``allNodes``); allocation only considers what the chosen node can reach. A selector
that does not parse is an error for the whole allocation, as it is upstream.
"""

from __future__ import annotations

import re
from functools import lru_cache

from drasat.models.errors import AllocationError, SelectorParseError
from drasat.models.meta import NodeSelector, NodeSelectorRequirement
from drasat.solver.allocation.problem import NodeInfo

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def reaches(node: NodeInfo, node_name: str | None, all_nodes: bool | None, selector: NodeSelector | None) -> bool:
    """Whether an object restricted by these fields is reachable from ``node`` (name first, then all, then selector)."""
    if node_name:
        return node_name == node.name
    if all_nodes:
        return True
    if selector is not None:
        return selector_matches(node, selector)
    return False


def selector_matches(node: NodeInfo, selector: NodeSelector) -> bool:
    """Terms are ORed; inside a term every requirement must hold. Any parse error fails the whole selector, so
    every requirement of every term is checked (in one pass with the matching: most selectors have one term)."""
    matched = False
    for term in selector.node_selector_terms:
        holds = bool(term.match_expressions or term.match_fields)
        for req in term.match_expressions:
            problem = _expression_problem(req.key, req.operator, tuple(req.values))  # remembered: no parse each call
            if problem:
                raise SelectorParseError(problem)
            holds = holds and _label_matches(node, req)
        for req in term.match_fields:
            _check_field(req)
            holds = holds and _field_matches(node, req)
        matched = matched or holds
    return matched


def checked_reaches(
    node: NodeInfo, what: str, node_name: str | None, all_nodes: bool | None, selector: NodeSelector | None
) -> bool:
    """:func:`reaches`, with a parse error turned into Kubernetes' allocation error naming ``what``."""
    try:
        return reaches(node, node_name, all_nodes, selector)
    except SelectorParseError as exc:
        raise parse_failure(what, exc) from None


def parse_failure(what: str, exc: SelectorParseError) -> AllocationError:
    """Kubernetes' allocation error for a node selector of ``what`` that does not parse."""
    return AllocationError(
        f"gather pool information: failed to perform node selection for {what}: failed to parse node selector: {exc}"
    )


def _valid_key(key: str) -> bool:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return bool(name) and len(name) <= 63 and bool(_LABEL_NAME.match(name))


@lru_cache(maxsize=4096)
def _expression_problem(key: str, op: str, values: tuple[str, ...]) -> str:
    """Why Kubernetes would refuse to parse the requirement ("" when it parses). A pure function of its text,
    remembered: a node's slices repeat a few requirements, and the check ran for every slice on every call."""
    if not _valid_key(key):
        return f"invalid label key {key!r}"
    if op in ("In", "NotIn"):
        if not values:
            return f"for 'in', 'notin' operators, values set can't be empty ({key})"
    elif op in ("Exists", "DoesNotExist"):
        if values:
            return f"values set must be empty for exists and does not exist ({key})"
    elif op in ("Gt", "Lt"):
        if len(values) != 1 or not re.fullmatch(r"[+-]?[0-9]+", values[0]):
            return f"for 'Gt', 'Lt' operators, exactly one integer value is required ({key})"
    else:
        return f"{op!r} is not a valid label selector operator"
    for value in values:
        if op not in ("Gt", "Lt") and (len(value) > 63 or not _LABEL_VALUE.match(value)):
            return f"invalid label value {value!r}"
    return ""


def _check_field(req: NodeSelectorRequirement) -> None:
    if req.key != "metadata.name":
        raise SelectorParseError(f"field {req.key!r} is not a supported node field selector")
    if req.operator not in ("In", "NotIn") or len(req.values) != 1:
        raise SelectorParseError("node field selectors take In or NotIn with exactly one value")


def _label_matches(node: NodeInfo, req: NodeSelectorRequirement) -> bool:
    present = req.key in node.labels
    value = node.labels.get(req.key, "")
    match req.operator:
        case "In":
            return present and value in req.values
        case "NotIn":
            return not present or value not in req.values
        case "Exists":
            return present
        case "DoesNotExist":
            return not present
        case "Gt" | "Lt":
            if not present or not re.fullmatch(r"[+-]?[0-9]+", value):
                return False
            have, want = int(value), int(req.values[0])
            return have > want if req.operator == "Gt" else have < want
    return False


def _field_matches(node: NodeInfo, req: NodeSelectorRequirement) -> bool:
    if not node.name:
        return True
    inside = node.name in req.values
    return inside if req.operator == "In" else not inside
