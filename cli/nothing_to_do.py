"""What the allocating commands say when the input leaves them nothing to do.

``solve``, ``explain`` and ``compare`` (and ``schedule``, ``explain --pods``, ``compare --schedule`` for
pods) answer an input without pending claims or pods the same way: one notice on stderr, in the same
words, exit 0, and on stdout only what kubectl would print for an empty answer (an empty List for
yaml/json, nothing for a table) — never an error, never a table comparing nothing.
"""

from __future__ import annotations

from typing import Any

from drasat.cli.render.text import echo


def say_nothing_to_allocate(objects: list[Any], claims: str | None) -> None:
    """The notice for no claim to allocate, and why: --claims named none, no pending pod needs one, or the
    input has no claim without an allocation."""
    echo(f"notice: nothing to allocate: {_because(objects, claims)}", err=True)


def _because(objects: list[Any], claims: str | None) -> str:
    if claims is not None:
        return "--claims names no claim"
    if any(o.kind == "Pod" for o in objects):
        return "no pending Pod needs a claim (claims no pod uses are left alone unless named with --claims)"
    return "the input has no ResourceClaim without status.allocation"


def say_no_pending_pods(namespace: str | None = None) -> None:
    """The notice for no pod to place."""
    where = f" in namespace {namespace}" if namespace else " in the input"
    echo(f"notice: no pending pods{where} (pods without spec.nodeName)", err=True)
