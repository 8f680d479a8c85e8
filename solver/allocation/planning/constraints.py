"""matchAttribute and distinctAttribute as sets of labels, one meaning for every solver.

Each device taking part in a constraint gets a set of *labels*:

* scalar mode (DRAListTypeAttributes off): its typed scalar value; a list-only value
  has no label for ``match`` (such a device can only stand alone) and the shared
  label ``no-scalar`` for ``distinct`` (at most one such device);
* set mode: one label per typed element (a scalar is a one-element set).

Then ``match`` holds when a single device is chosen or all chosen devices share a
label, and ``distinct`` holds when no two chosen devices share one — the intended
semantics, including across the requests of a claim (Kubernetes' own bookkeeping
forgets devices; see the semantics reference, §6.9). A device without the
attribute cannot take part in either.
"""

from __future__ import annotations

from collections.abc import Hashable

from drasat.models.resource import DeviceAttribute

from .attributes import scalar_key, typed_set

Label = Hashable
NO_SCALAR: Label = ("no-scalar",)
NO_SET: Label = ("no-set",)


def labels(attr: DeviceAttribute | None, kind: str, list_mode: bool) -> frozenset[Label] | None:
    """The device's labels for a constraint of ``kind``; None when it cannot take part at all."""
    if attr is None:
        return None
    if list_mode:
        typed = typed_set(attr)
        if typed is None:
            return None if kind == "match" else frozenset([NO_SET])
        type_name, values = typed
        return frozenset((type_name, v) for v in values)
    key = scalar_key(attr)
    if key is None:
        return frozenset() if kind == "match" else frozenset([NO_SCALAR])
    return frozenset([key])


def match_holds(chosen: list[frozenset[Label]]) -> bool:
    """One device alone always matches itself; more must share a label."""
    return len(chosen) <= 1 or bool(frozenset.intersection(*chosen))


def distinct_holds(chosen: list[frozenset[Label]]) -> bool:
    """No two chosen devices share a label (each group is one device's labels)."""
    seen: set[Label] = set()
    for group in chosen:
        if seen & group:
            return False
        seen |= group
    return True
