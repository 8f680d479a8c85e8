"""Values named in messages the way YAML shows them, never by Python's type names."""

from __future__ import annotations

import json
from typing import Any


def describe(value: Any) -> str:
    """A value named the way YAML shows it: ``the text "2"``, ``the number 2``, ``a list``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return f"the text {json.dumps(text)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a value of an unknown kind"
