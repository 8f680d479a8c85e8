"""Objects from the official ``kubernetes`` client, accepted as they are.

Library users who already list objects with the client hold either its model objects
or their ``to_dict()`` (snake_case keys, ``None`` for every unset field, datetimes).
Neither is what the API server sends. The client itself knows how to turn its models
into the wire form (``sanitize_for_serialization``), so drasat asks it rather than
guessing field names: a ``to_dict()`` is read back into the client's model class for
its apiVersion and kind first.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import InputError
from .kinds import group_of

_MODEL_NAME = re.compile(r"(?:[A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)")
"""A client model class's name: an optional group prefix where names clash, the version, the kind
(``V1Node``, ``V1beta1ResourceSlice``, ``ResourceV1ResourceClaim``)."""


def wire_form(item: Any) -> Any:
    """The API's JSON form of ``item``: client models and ``to_dict()`` output are converted,
    anything else (already the wire form, or not an object at all) is returned unchanged."""
    if _is_client_model(item):
        return _typed(item, _api_client().sanitize_for_serialization(item))
    if isinstance(item, dict) and "api_version" in item and "apiVersion" not in item:
        model = _client_class(item.get("api_version"), item.get("kind"))
        try:
            parsed = model.model_validate(item)
        except ValueError as exc:
            raise InputError(
                f"{item.get('kind')} {_name(item)} from the kubernetes client's to_dict() "
                f"cannot be read back by the client: {exc}"
            ) from None
        return _api_client().sanitize_for_serialization(parsed)
    return item


def _typed(item: Any, data: Any) -> Any:
    """``data`` with the kind and apiVersion its model class stands for, where it has none: the API server
    leaves them out of a list's items, so ``list_node().items`` are V1Nodes without either."""
    named = _model_kind(item)
    if not isinstance(data, dict) or named is None or (data.get("kind") and data.get("apiVersion")):
        return data
    version, kind = named
    group = group_of(kind)
    if group is None:
        return data  # see unread_kind
    data.setdefault("kind", kind)
    data.setdefault("apiVersion", f"{group}/{version}" if group else version)
    return data


def unread_kind(item: Any) -> str | None:
    """The kind of a client model drasat does not read, given without its kind (a list's item): its group is
    not in the class's name, so it is skipped by its kind alone. None for anything else."""
    if not _is_client_model(item) or getattr(item, "kind", None):
        return None
    named = _model_kind(item)
    return named[1] if named is not None and group_of(named[1]) is None else None


def _model_kind(item: Any) -> tuple[str, str] | None:
    """The version and kind a client model's class name stands for (``V1beta1ResourceSlice``: v1beta1,
    ResourceSlice), or None for a name of another shape."""
    match = _MODEL_NAME.fullmatch(type(item).__name__)
    return None if match is None else (match[1].lower(), match[2])


def _is_client_model(item: Any) -> bool:
    return type(item).__module__.startswith("kubernetes.client.models.")


def _api_client() -> Any:
    from kubernetes.client import ApiClient

    return ApiClient()


def _client_class(api_version: Any, kind: Any) -> Any:
    """The client's model class: ``V1Node``, or ``ResourceV1ResourceClaim`` where names clash."""
    try:
        import kubernetes.client as client
    except ImportError:
        raise InputError(
            "objects given as the kubernetes client's to_dict() need the client installed: "
            "pip install 'drasat[cluster]'"
        ) from None
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise InputError("a to_dict() object without api_version and kind as text")
    group, _, version = api_version.rpartition("/")
    prefix = group.split(".")[0].capitalize() if group else "Core"
    for name in (f"{prefix}{version.capitalize()}{kind}", f"{version.capitalize()}{kind}"):
        model = getattr(client, name, None)
        if model is not None:
            return model
    raise InputError(f"the kubernetes client has no model of {api_version} {kind}")


def _name(item: dict[str, Any]) -> str:
    metadata = item.get("metadata") or {}
    return str(metadata.get("name") or "?") if isinstance(metadata, dict) else "?"
