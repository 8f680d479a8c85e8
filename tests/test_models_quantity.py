"""Quantities print in Kubernetes' canonical form (apimachinery's CanonicalizeBytes)."""

from __future__ import annotations

import pytest

from drasat.models.quantity import Quantity


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("0", "0"),
        ("1", "1"),
        ("1000", "1k"),
        ("1024", "1024"),
        ("1500", "1500"),
        ("1.5", "1500m"),
        ("0.1", "100m"),
        ("100m", "100m"),
        ("1000m", "1"),
        ("1Ki", "1Ki"),
        ("1024Ki", "1Mi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("0.5Ki", "512"),  # binary below 1024 is shown as decimal, without rounding
        ("1.1Ki", "1126400m"),  # a fraction of a byte is not rounded into binary form either
        ("5e3", "5e3"),
        ("1.1e3", "1100"),
        ("1e-3", "1e-3"),
        ("12e6", "12e6"),
        ("40000000e18", "40e24"),
        ("4e25", "40e24"),  # every factor of ten moves into the exponent
        ("1E", "1E"),
        ("1000P", "1E"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    assert str(Quantity.parse(text)) == canonical
    assert str(Quantity.parse(canonical)) == canonical  # canonical forms are fixed points
