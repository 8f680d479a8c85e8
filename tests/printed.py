"""What the commands print, read back for the verifier: the allocations of a printed List of claims, keyed as
``allocate`` and ``verify`` key them (``namespace/name``; the bare name for a claim without a namespace)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from drasat.models.resource import AllocationResult


def printed_key(item: dict[str, Any]) -> str:
    """The claim key of one printed object."""
    meta = item["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


def printed_allocations(items: Iterable[dict[str, Any]]) -> dict[str, AllocationResult]:
    """Each printed ResourceClaim's ``status.allocation``, by claim key (other kinds are left out)."""
    return {
        printed_key(i): AllocationResult.model_validate(i["status"]["allocation"])
        for i in items
        if i.get("kind", "ResourceClaim") == "ResourceClaim" and (i.get("status") or {}).get("allocation")
    }
