"""Shared vocabulary of the Kubernetes API: the model base class, ObjectMeta, NodeSelector, Condition.

Every API model derives from :class:`ApiModel`: Python attributes are snake_case,
the wire names are Kubernetes' camelCase, unknown fields are errors (a typo in a
manifest must not be silently dropped), and values are not coerced (``count: "2"``
is an error, as it is for the API server).
"""

# No ``from __future__ import annotations`` here: pydantic would compile every annotation string at each start.

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, model_validator
from pydantic.alias_generators import to_camel

from .wording import describe

BUILT_ON_FIRST_USE = ConfigDict(defer_build=True)
"""The ``model_config`` of the kinds few inputs carry (Namespace, PodGroup, DeviceTaintRule,
ResourcePoolStatusRequest) and of their parts: pydantic builds their validators when the first
such object is read rather than at every start (validation is the same either way). The common
kinds are built at import: building one at first use would build its parts again inside it."""


def empty_list() -> list[Any]:
    """A new empty list, the default of the models' list fields.

    Not the builtin ``list``: pydantic inspects each default factory's signature while it builds
    a model, which for a builtin means parsing its text signature (about 70 µs; 15 ms of every
    start over drasat's models), for a Python function a few µs.
    """
    return []


def empty_dict() -> dict[str, Any]:
    """A new empty dict, the default of the models' map fields (see :func:`empty_list`)."""
    return {}


class ApiModel(BaseModel):
    """Base of every API model: camelCase on the wire, strict, no unknown fields."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        strict=True,
        validate_default=False,
    )

    @model_validator(mode="before")
    @classmethod
    def _null_means_absent(cls, data: Any) -> Any:
        """Kubernetes reads ``field: null`` (YAML's bare ``field:``) as an absent field; so do we.

        Without this, an empty ``selectors:`` line, which ``kubectl apply`` accepts,
        would be a type error here.
        """
        if isinstance(data, dict) and None in data.values():
            return {key: value for key, value in data.items() if value is not None}
        return data

    def to_api(self) -> dict[str, Any]:
        """The object as the API server would print it: camelCase, only the fields that were set."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _timestamp(value: Any) -> str:
    """YAML turns RFC 3339 text into datetime objects; keep the API's text form either way."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, str):
        return value
    raise ValueError(f"a timestamp must be RFC 3339 text, not {describe(value)}")


Timestamp = Annotated[str, BeforeValidator(_timestamp), PlainSerializer(str)]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _fits_int64(value: int) -> int:
    """Kubernetes' int64 fields: the API server's decoder refuses a number beyond them, so must drasat.

    Python's ints have no limit; without this check ``count: 99999999999999999999`` or an
    attribute ``int`` beyond int64 would reach the solver and the CEL engines, which the API
    server never lets happen.
    """
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(
            f"{value} does not fit in a 64-bit integer (int64, {INT64_MIN} to {INT64_MAX}), "
            "so the API server cannot decode it"
        )
    return value


Int64 = Annotated[int, AfterValidator(_fits_int64)]
"""A whole number Kubernetes stores as int64 (the models are strict: no text, no floats)."""
JsonObject = Annotated[Any, Field(description="any JSON value, kept verbatim")]


class OwnerReference(ApiModel):
    """An object that owns this one (e.g. the pod a generated claim belongs to)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ManagedFieldsEntry(ApiModel):
    """Server-side apply bookkeeping, kept so objects round-trip unchanged."""

    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: Timestamp | None = None
    fields_type: str | None = None
    fields_v1: JsonObject | None = None
    subresource: str | None = None


class ObjectMeta(ApiModel):
    """``metadata`` as ``kubectl get -o yaml`` prints it."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: Int64 | None = None
    creation_timestamp: Timestamp | None = None
    deletion_timestamp: Timestamp | None = None
    deletion_grace_period_seconds: Int64 | None = None
    labels: dict[str, str] = Field(default_factory=empty_dict)
    annotations: dict[str, str] = Field(default_factory=empty_dict)
    owner_references: list[OwnerReference] = Field(default_factory=empty_list)
    finalizers: list[str] = Field(default_factory=empty_list)
    managed_fields: list[ManagedFieldsEntry] = Field(default_factory=empty_list)
    self_link: str | None = None


class ListMeta(ApiModel):
    """Metadata of a List (resourceVersion, continue token)."""

    resource_version: str | None = None
    continue_: str | None = Field(default=None, alias="continue")
    remaining_item_count: Int64 | None = None
    self_link: str | None = None
    shard_info: JsonObject | None = None


class Condition(ApiModel):
    """A status condition as metav1.Condition defines it."""

    type: str
    status: str
    observed_generation: Int64 | None = None
    last_transition_time: Timestamp | None = None
    reason: str | None = None
    message: str | None = None


class NodeSelectorRequirement(ApiModel):
    """One requirement of a node selector term: key, operator, values."""

    key: str
    operator: str
    values: list[str] = Field(default_factory=empty_list)


class NodeSelectorTerm(ApiModel):
    """Requirements that must all hold (label expressions and field expressions)."""

    match_expressions: list[NodeSelectorRequirement] = Field(default_factory=empty_list)
    match_fields: list[NodeSelectorRequirement] = Field(default_factory=empty_list)


class NodeSelector(ApiModel):
    """Terms of which one must hold: where a slice, device or allocation may be used."""

    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=empty_list)


class TypedObject(ApiModel):
    """A top-level object: apiVersion, kind, metadata."""

    api_version: str
    kind: str
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or ""
