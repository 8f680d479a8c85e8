"""Whole numbers beyond 64 bits, which the API server cannot even decode.

Every integer field of the Kubernetes API is an ``int64`` (or narrower): ``count``,
``generation``, ``resourceSliceCount``, integer attributes, ``tolerationSeconds``...
The API server's JSON decoder refuses a number outside that range before any
validation runs ("cannot unmarshal number ... of type int64"), so drasat refuses it
while loading, wherever it appears -- except inside opaque driver parameters, which
Kubernetes keeps as raw JSON, and where a quantity is expected (a bare number there is
a quantity of any size).
"""

from __future__ import annotations

from typing import Any

from .errors import InputProblem, Location
from .validation.formats import key

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_QUANTITIES = frozenset(
    {"value", "default", "min", "max", "step", "validValues", "allocatable", "capacity", "limits", "consumedCapacity"}
)
_MAPS = frozenset(
    {
        "attributes",
        "capacity",
        "counters",
        "labels",
        "annotations",
        "allocatable",
        "limits",
        "requests",
        "consumedCapacity",
        "nodeSelector",
    }
)


def int64_problems(data: Any, where: Location) -> list[InputProblem]:
    """A problem at each whole number of ``data`` that does not fit in an int64."""
    if not _any_beyond_int64(data):
        return []  # the usual case, told without naming every field on the way
    problems = []
    stack: list[tuple[Any, Location, str]] = [(data, where, "")]
    while stack:
        value, at, field = stack.pop()
        if field in _QUANTITIES or (field == "requests" and isinstance(value, dict)):
            continue  # quantities (resources.requests is a map of them; a claim's requests are a list)
        if isinstance(value, dict):
            if field == "parameters":  # opaque driver configuration: raw JSON, not decoded
                continue
            for name, item in value.items():
                here = key(at, name) if field in _MAPS else at.child(str(name))
                stack.append((item, here, str(name)))
        elif isinstance(value, list):
            stack.extend((item, at.child(f"[{i}]"), "[]") for i, item in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
            problems.append(
                InputProblem(
                    at,
                    f"{value} does not fit in a 64-bit integer ({INT64_MIN} to {INT64_MAX}); "
                    "the API server cannot decode it",
                )
            )
    return problems


def _any_beyond_int64(data: Any) -> bool:
    """Whether any whole number anywhere in ``data`` (quantities and driver parameters too) is beyond int64.

    Reading a big cluster walks every value of every object here: this walk only looks at types,
    and the walk that names where a number is (and skips the fields that may hold big ones) runs
    only when it says yes."""
    stack = [data]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        value = pop()
        kind = type(value)
        if kind is dict:
            extend(value.values())
        elif kind is list:
            extend(value)
        elif kind is int:
            if not INT64_MIN <= value <= INT64_MAX:
                return True
        elif isinstance(value, (dict, list)):  # a subclass (a parser's own mapping type)
            push(list(value.values()) if isinstance(value, dict) else list(value))
        elif isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
            return True
    return False
