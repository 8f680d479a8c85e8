"""Kubernetes' name formats and shared structures: the building blocks of every validation rule.

Each ``check_*`` function looks at one value and appends plain-word problems to
a :class:`Findings`; it never raises. Formats follow
``k8s.io/apimachinery/pkg/util/validation`` (DNS labels and subdomains, label
keys and values, C identifiers) and ``pkg/apis/resource/validation`` (driver,
pool, attribute names); limits are the ones of Kubernetes 1.37.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sized
from typing import Any

from drasat.models.errors import InputProblem, Location
from drasat.models.meta import Condition, NodeSelector, NodeSelectorRequirement, ObjectMeta
from drasat.models.wording import describe

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63
C_IDENTIFIER_MAX = 32
ANNOTATIONS_MAX_BYTES = 256 * 1024
CONDITION_MESSAGE_MAX = 32768
CONDITION_REASON_MAX = 1024

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_LABEL = re.compile(rf"^{_LABEL}$")
_DNS_SUBDOMAIN = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_QUALIFIED_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_CONDITION_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")

_LABEL_WORDS = "lower case letters, digits and '-', starting and ending with a letter or digit"


class Findings:
    """Problems collected while checking one object, each at a field of it."""

    def __init__(self) -> None:
        self.problems: list[InputProblem] = []

    def add(self, where: Location, message: str) -> None:
        self.problems.append(InputProblem(where, message))

    def extend(self, problems: Iterable[InputProblem]) -> None:
        self.problems.extend(problems)


def index(where: Location, i: int) -> Location:
    """``where[i]``."""
    return where.child(f"[{i}]")


def key(where: Location, name: object) -> Location:
    """``where[name]``, as Kubernetes' ``field.Path.Key`` writes a map key (unquoted): the path a user searches for."""
    return where.child(f"[{name}]")


def show(value: object) -> str:
    """A value as it appears in a message: quoted, shortened when very long."""
    text = json.dumps(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else text[:60] + "…" + text[-10:]


def byte_length(text: str) -> int:
    """A string's length as the API server measures it (Go's ``len``): UTF-8 bytes, not characters."""
    return len(text.encode("utf-8", "surrogatepass"))


def too_long(limit: int) -> str:
    """Kubernetes' ``field.TooLong`` wording."""
    return f"Too long: may not be more than {limit} bytes"


def too_many(actual: int, limit: int) -> str:
    """Kubernetes' ``field.TooMany`` wording."""
    return f"Too many: {actual}: must have at most {limit} items"


# --- names ------------------------------------------------------------------------------------


def dns_label_errors(value: str) -> list[str]:
    """Why ``value`` is not an RFC 1123 DNS label ([] when it is)."""
    errors = []
    if byte_length(value) > DNS1123_LABEL_MAX:
        errors.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS_LABEL.match(value):
        errors.append(f"must be a DNS label: {_LABEL_WORDS}")
    return errors


def dns_subdomain_errors(value: str) -> list[str]:
    """Why ``value`` is not an RFC 1123 DNS subdomain ([] when it is)."""
    errors = []
    if byte_length(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS_SUBDOMAIN.match(value):
        errors.append(f"must be a DNS subdomain: {_LABEL_WORDS}, in parts separated by '.'")
    return errors


def check_required(out: Findings, where: Location, value: str | None, what: str = "") -> bool:
    """True if the value is there; otherwise a 'required' problem."""
    if value:
        return True
    out.add(where, f"{what or 'this field'} is required" + ("" if value is None else " and must not be empty"))
    return False


def check_dns_label(out: Findings, where: Location, value: str | None) -> None:
    """A required RFC 1123 DNS label."""
    if check_required(out, where, value):
        for message in dns_label_errors(value or ""):
            out.add(where, f"{show(value)} {message}")


def check_dns_subdomain(out: Findings, where: Location, value: str | None) -> None:
    """A required RFC 1123 DNS subdomain."""
    if check_required(out, where, value):
        for message in dns_subdomain_errors(value or ""):
            out.add(where, f"{show(value)} {message}")


def check_driver_name(out: Findings, where: Location, value: str | None) -> None:
    """A DRA driver name: a DNS subdomain (any case) of at most 63 characters, like a CSI driver."""
    if not check_required(out, where, value, "the driver name"):
        return
    text = value or ""
    if byte_length(text) > DRIVER_NAME_MAX:
        out.add(where, too_long(DRIVER_NAME_MAX))
    for message in dns_subdomain_errors(text.lower()):
        out.add(where, f"driver name {show(text)} {message}")


def check_pool_name(out: Findings, where: Location, value: str | None) -> None:
    """One or more DNS subdomains separated by '/', at most 253 characters in all."""
    if not check_required(out, where, value, "the pool name"):
        return
    text = value or ""
    if byte_length(text) > POOL_NAME_MAX:
        out.add(where, too_long(POOL_NAME_MAX))
    for part in text.split("/"):
        for message in dns_subdomain_errors(part):
            out.add(where, f"pool name part {show(part)} {message}")


def check_node_name(out: Findings, where: Location, value: str) -> None:
    """A node name (a DNS subdomain, as the API server requires)."""
    for message in dns_subdomain_errors(value):
        out.add(where, f"node name {show(value)} {message}")


def check_uuid(out: Findings, where: Location, value: str) -> None:
    """A UUID in its canonical text form (share IDs)."""
    if not _UUID.match(value):
        out.add(
            where,
            f"{show(value)} must be a UUID in RFC 4122 form with lower-case hexadecimal digits "
            "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
        )


def check_c_identifier(out: Findings, where: Location, value: str, what: str = "name") -> None:
    """A C identifier (capacity, counter and attribute names)."""
    if byte_length(value) > C_IDENTIFIER_MAX:
        out.add(where, too_long(C_IDENTIFIER_MAX))
    if not _C_IDENTIFIER.match(value):
        out.add(
            where, f"{what} {show(value)} must be a C identifier: letters, digits and '_', not starting with a digit"
        )


def check_qualified_name(out: Findings, where: Location, name: str) -> None:
    """An attribute or capacity name: ``identifier`` or ``domain/identifier`` (domain like a driver name)."""
    parts = name.split("/")
    if len(parts) > 2:
        out.add(where, f"{show(name)} must not contain more than one '/'")
        return
    if len(parts) == 2:
        if parts[0]:
            check_driver_name(out, where, parts[0])
        else:
            out.add(where, f"{show(name)}: the domain before '/' must not be empty")
    identifier = parts[-1]
    if identifier:
        check_c_identifier(out, where, identifier)
    else:
        out.add(where, f"{show(name)}: the name after the domain must not be empty")


def check_fully_qualified_name(out: Findings, where: Location, name: str | None) -> None:
    """A qualified name that must carry its domain (``dra.example.com/numa``)."""
    if not check_required(out, where, name, "the attribute name"):
        return
    check_qualified_name(out, where, name or "")
    if "/" not in (name or ""):
        out.add(
            where,
            f"{show(name)} must be fully qualified: a domain and a name separated by '/' "
            "(for example dra.example.com/numa)",
        )


def label_key_errors(value: str) -> list[str]:
    """Errors of a label key / taint key: ``[prefix/]name``, prefix a DNS subdomain, name ≤ 63."""
    if not value:
        return ["must not be empty"]
    prefix, _, name = value.rpartition("/")
    errors = []
    if "/" in value and not prefix:
        errors.append("has an empty prefix before '/'")
    elif prefix:
        errors.extend(f"prefix {message}" for message in dns_subdomain_errors(prefix))
    if byte_length(name) > QUALIFIED_NAME_MAX:
        errors.append(f"name part must be no more than {QUALIFIED_NAME_MAX} characters")
    if not _QUALIFIED_PART.match(name):
        errors.append(
            "name part must consist of letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        )
    return errors


def check_label_key(out: Findings, where: Location, value: str | None) -> None:
    """A label key: an optional DNS-subdomain prefix and a qualified name."""
    for message in label_key_errors(value or ""):
        out.add(where, f"{show(value or '')} is not a valid key: {message}")


def check_label_value(out: Findings, where: Location, value: str) -> None:
    """A label value: at most 63 characters, alphanumeric at both ends."""
    if byte_length(value) > LABEL_VALUE_MAX:
        out.add(where, f"{show(value)} must be no more than {LABEL_VALUE_MAX} characters")
    if value and not _QUALIFIED_PART.match(value):
        out.add(
            where,
            f"{show(value)} is not a valid label value: letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit",
        )


def check_unique(out: Findings, where: Location, values: list[Any]) -> None:
    """Each value once; duplicates are reported at their index, as ``field.Duplicate`` words them."""
    seen: set[Any] = set()
    for i, value in enumerate(values):
        if value in seen:
            out.add(index(where, i), f"Duplicate value: {show(value)}")
        seen.add(value)


def check_max_items(out: Findings, where: Location, items: Sized, limit: int) -> bool:
    """True when within the limit; otherwise one problem (the items are then not checked one by one, as the
    API server stops there too)."""
    if len(items) <= limit:
        return True
    out.add(where, too_many(len(items), limit))
    return False


def check_json_object(out: Findings, where: Location, value: Any, limit: int) -> None:
    """Opaque data (driver parameters, device data): a JSON object of at most ``limit`` bytes, measured as the
    bytes sent (compact UTF-8 JSON), not as ASCII-escaped JSON: 10,228 bytes of "é" are 10,228, not 30,668."""
    if not isinstance(value, dict):
        out.add(where, f"must be a JSON object (a mapping), not {describe(value)}")
        return
    size = byte_length(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str))
    if size > limit:
        out.add(where, too_long(limit))


# --- shared structures ------------------------------------------------------------------------


def check_object_meta(out: Findings, where: Location, meta: ObjectMeta, name_format: str = "subdomain") -> None:
    """metadata: a name (or generateName) in the kind's format, valid labels and annotations."""
    check_name_given(out, where, meta)
    if meta.name:
        check = check_dns_label if name_format == "label" else check_dns_subdomain
        check(out, where.child("name"), meta.name)
    if meta.namespace:
        check_dns_label(out, where.child("namespace"), meta.namespace)
    for label, value in meta.labels.items():
        check_label_key(out, key(where.child("labels"), label), label)
        check_label_value(out, key(where.child("labels"), label), value)
    check_annotations(out, where.child("annotations"), meta.annotations)


def check_name_given(out: Findings, where: Location, meta: ObjectMeta) -> None:
    """No object is stored without a name: the API server fills in generateName's, or refuses."""
    if not meta.name and not meta.generate_name:
        out.add(where.child("name"), "name or generateName is required")


def check_annotations(out: Findings, where: Location, annotations: dict[str, str]) -> None:
    """Annotations: valid keys, at most 256 KiB in all."""
    size = 0
    for name, value in annotations.items():
        check_label_key(out, key(where, name), name.lower())
        size += byte_length(name) + byte_length(value)
    if size > ANNOTATIONS_MAX_BYTES:
        out.add(where, too_long(ANNOTATIONS_MAX_BYTES))


def check_template_meta(out: Findings, where: Location, meta: ObjectMeta) -> None:
    """A claim template's metadata may carry labels and annotations, nothing else."""
    for label, value in meta.labels.items():
        check_label_key(out, key(where.child("labels"), label), label)
        check_label_value(out, key(where.child("labels"), label), value)
    check_annotations(out, where.child("annotations"), meta.annotations)
    for field in sorted(meta.model_fields_set - {"labels", "annotations"}):
        alias = ObjectMeta.model_fields[field].alias or field
        out.add(where.child(alias), "cannot be set for a resource claim template (only labels and annotations)")


def check_node_selector(out: Findings, where: Location, selector: NodeSelector) -> None:
    """A node selector: terms, operators and values as the API server accepts them."""
    terms_at = where.child("nodeSelectorTerms")
    if not selector.node_selector_terms:
        out.add(terms_at, "must have at least one node selector term")
    for t, term in enumerate(selector.node_selector_terms):
        term_at = index(terms_at, t)
        for r, requirement in enumerate(term.match_expressions):
            _check_label_requirement(out, index(term_at.child("matchExpressions"), r), requirement)
        for r, requirement in enumerate(term.match_fields):
            _check_field_requirement(out, index(term_at.child("matchFields"), r), requirement)


def _check_label_requirement(out: Findings, where: Location, requirement: NodeSelectorRequirement) -> None:
    operator, values = requirement.operator, requirement.values
    if operator in ("In", "NotIn") and not values:
        out.add(where.child("values"), f"must be given when the operator is {operator}")
    elif operator in ("Exists", "DoesNotExist") and values:
        out.add(where.child("values"), f"must be empty when the operator is {operator}")
    elif operator in ("Gt", "Lt") and len(values) != 1:
        out.add(where.child("values"), f"must be exactly one value when the operator is {operator}")
    elif operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        out.add(
            where.child("operator"),
            f"{show(operator)} is not an operator: use In, NotIn, Exists, DoesNotExist, Gt or Lt",
        )
    check_label_key(out, where.child("key"), requirement.key)
    for v, value in enumerate(values):
        check_label_value(out, index(where.child("values"), v), value)


def _check_field_requirement(out: Findings, where: Location, requirement: NodeSelectorRequirement) -> None:
    if requirement.operator not in ("In", "NotIn"):
        out.add(
            where.child("operator"), f"{show(requirement.operator)} is not an operator for node fields: use In or NotIn"
        )
    elif len(requirement.values) != 1:
        out.add(where.child("values"), "must be exactly one value for a node field selector")
    if requirement.key != "metadata.name":
        out.add(
            where.child("key"),
            f"{show(requirement.key)} is not a node field drasat or Kubernetes can select on: use metadata.name",
        )
        return
    for v, value in enumerate(requirement.values):
        check_node_name(out, index(where.child("values"), v), value)


def check_conditions(out: Findings, where: Location, conditions: list[Condition], limit: int) -> None:
    """Conditions as metav1 validates them: unique qualified types, True/False/Unknown, reason format."""
    if not check_max_items(out, where, conditions, limit):
        return
    check_unique(out, where, [c.type for c in conditions])
    for i, condition in enumerate(conditions):
        at = index(where, i)
        check_label_key(out, at.child("type"), condition.type)
        if condition.status not in ("True", "False", "Unknown"):
            out.add(at.child("status"), f"{show(condition.status)} must be True, False or Unknown")
        if condition.observed_generation is not None and condition.observed_generation < 0:
            out.add(at.child("observedGeneration"), "must not be negative")
        if condition.last_transition_time is None:
            out.add(at.child("lastTransitionTime"), "is required")
        if not condition.reason:
            out.add(at.child("reason"), "is required")
        elif byte_length(condition.reason) > CONDITION_REASON_MAX or not _CONDITION_REASON.match(condition.reason):
            out.add(
                at.child("reason"),
                f"{show(condition.reason)} must start with a letter and consist of "
                "letters, digits, '_', ',' or ':' (at most 1024 characters)",
            )
        if condition.message and byte_length(condition.message) > CONDITION_MESSAGE_MAX:
            out.add(at.child("message"), too_long(CONDITION_MESSAGE_MAX))
