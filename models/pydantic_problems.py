"""Pydantic's validation errors retold as Kubernetes field paths and plain words.

Pydantic reports ``('spec', 'devices', 3, 'attributes', 'x/y', 'int')`` and
"Input should be a valid integer"; a user needs
``spec.devices[3].attributes["x/y"].int: must be a whole number, not the text "4"``.
The path is rebuilt by walking the model's field types alongside pydantic's
location, so that map keys (quoted) and field names (dotted) are told apart.
Unknown fields get a "did you mean" hint when a known field is close.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import InputProblem, Location
from .wording import describe

_SIMPLE = {
    "string_type": "must be text",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be a mapping (key: value pairs)",
    "model_type": "must be a mapping of fields",
    "model_attributes_type": "must be a mapping of fields",
    "float_type": "must be a number",
}


def problems_from(error: ValidationError, model: type[BaseModel], location: Location) -> list[InputProblem]:
    """One problem per pydantic error, at the field path inside ``location``."""
    problems = []
    for item in error.errors(include_url=False):
        path, owner = _path(model, item["loc"])
        problems.append(InputProblem(location.child(path) if path else location, _message(item, owner)))
    return problems


def _path(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[str, type[BaseModel] | None]:
    """The API path of a pydantic location, and the model that owns its last field."""
    path = ""
    current: Any = model
    owner: type[BaseModel] | None = model
    for step in loc:
        target = _unwrap(current)
        if isinstance(target, type) and issubclass(target, BaseModel) and isinstance(step, str):
            owner = target
            field = _field(target, step)
            path += ("." if path else "") + step
            current = field.annotation if field is not None else None
            continue
        origin = typing.get_origin(target)
        if step == "[key]":
            continue
        if origin is dict:
            path += f"[{json.dumps(str(step))}]"
            current = _arg(target, 1)
        elif isinstance(step, int):
            path += f"[{step}]"
            current = _arg(target, 0) if origin in (list, tuple) else None
        elif not any(c in str(step) for c in "[("):  # pydantic's own tags (union members, validators) are skipped
            path += ("." if path else "") + str(step)
            current = None
        owner = None
    return path, owner


def _unwrap(annotation: Any) -> Any:
    """``X | None`` and ``Annotated[X, ...]`` → ``X``."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _arg(annotation: Any, position: int) -> Any:
    args = typing.get_args(annotation)
    return args[position] if len(args) > position else None


def _field(model: type[BaseModel], wire_name: str) -> Any:
    for name, field in model.model_fields.items():
        if (field.alias or name) == wire_name:
            return field
    return None


def _message(item: Any, owner: type[BaseModel] | None) -> str:
    kind, value = item["type"], item.get("input")
    if item["loc"] and item["loc"][-1] == "[key]":
        return f"keys here must be text, not {describe(value)}"
    if kind == "missing":
        return "is required but missing"
    if kind == "extra_forbidden":
        return _unknown_field(str(item["loc"][-1]), owner)
    if kind in _SIMPLE:
        return f"{_SIMPLE[kind]}, not {describe(value)}"
    if kind == "value_error":
        error = (item.get("ctx") or {}).get("error")
        return str(error) if error is not None else item["msg"]
    if kind == "recursion_loop":
        return "refers to itself (a YAML alias inside its own anchor)"
    return f"{item['msg']} (got {describe(value)})"


def _unknown_field(name: str, owner: type[BaseModel] | None) -> str:
    import difflib  # only for a misspelt field: a start with valid input pays nothing for it

    message = f"is not a field Kubernetes knows here (unknown field {json.dumps(name)})"
    if owner is None:
        return message
    known = [field.alias or key for key, field in owner.model_fields.items()]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75) or [
        k for k in known if k.lower() == name.replace("_", "").lower()
    ]
    return message + (f"; did you mean {json.dumps(close[0])}?" if close else "")
