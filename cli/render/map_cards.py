"""The node cards of the allocation map: a physical device (a counter set) per frame, its partitions in rows
labelled by partition type, bars of the counters it has used, each device shaded by whether it can still be
taken.

A device's shade is its state, with one more for free partitions: ``overlap`` when fewer of the free
partitions of its type on its counter set fit together than are free (four 4g placements of which one
fits: each is free, but taking one takes the others' room) — so a partition that only looks free is not
drawn as free. Names are never cut: a row shows what tells its devices apart (the end after the prefix they
share, cut at a ``-``, ``.`` or ``_``), the whole name is in the box's ``title`` and in the table below.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from drasat.models.quantity import Quantity

SHADES = {
    "free": ("#43a047", "free: can be taken now"),
    "overlap": ("#c5e1a5", "free, but overlaps other free partitions: not all of them fit"),
    "allocated": ("#1e88e5", "allocated"),
    "shared": ("#8e24aa", "shared (several allocations)"),
    "tainted": ("#ef6c00", "tainted (NoSchedule or NoExecute)"),
    "blocked": ("#9e9e9e", "blocked: its counters are used up"),
    "incomplete": ("#d7ccc8", "incomplete pool"),
}
"""Shade -> (colour, what it means): the legend, the boxes and the filters use these names."""


def shade(device: Any, report: Any) -> str:
    """``device``'s shade on the map: its state, or ``overlap`` for a free partition that may not fit."""
    if device.state == "free" and device.partition_type and len(device.counter_sets) == 1:
        if (device.driver, device.pool, device.counter_sets[0], device.partition_type) in report.set_fit:
            return "overlap"
    return str(device.state)


@dataclass(frozen=True)
class CounterBar:
    """Counters of one counter set with one base name summed ("slice-0".."slice-6" -> "slices")."""

    label: str
    used: Fraction
    capacity: Fraction
    text: str  # "6/7", or with units "40Gi/80Gi"


def counter_bars(counters: Sequence[Any]) -> list[CounterBar]:
    """The counters of one counter set, summed by base name (a trailing ``-N`` left out)."""
    groups: dict[str, list[Any]] = {}
    for c in counters:
        groups.setdefault(re.sub(r"[-_]?\d+$", "", c.counter) or c.counter, []).append(c)
    bars = []
    for base, members in groups.items():
        used = sum((c.used.value for c in members), Fraction(0))
        capacity = sum((c.capacity.value for c in members), Fraction(0))
        form = members[0].capacity.format
        text = f"{Quantity(used, form)}/{Quantity(capacity, form)}"
        label = members[0].counter if len(members) == 1 else base + "s"
        bars.append(CounterBar(label, used, capacity, text))
    return bars


def unit_bar(bars: Sequence[CounterBar]) -> CounterBar | None:
    """The counter that best counts a device's units: the smallest in total (slices, not bytes of memory)."""
    return min(bars, key=lambda b: b.capacity) if bars else None


def card(report: Any, hover: Any, extra: str = "") -> str:
    """One node's card: its name, a line of what it holds, its counter sets and its loose devices.
    ``hover(device)``: the full text of a device's title; ``extra``: HTML added under the name."""
    node = html.escape(report.node)
    groups = "".join(_group(label, devices, counters, report, hover) for label, devices, counters in _groups(report))
    return (
        f'<section class="node" id="{anchor(report.node)}" data-node="{node}"><h3>{node}</h3>{extra}'
        f'<div class="groups">{groups}</div></section>'
    )


def anchor(node: str) -> str:
    return "node-" + re.sub(r"[^A-Za-z0-9_.-]", "_", node)


def _groups(report: Any) -> list[tuple[str, list[Any], list[Any]]]:
    """(label, devices, counters) per counter set (named by driver, pool and set: two drivers may both call
    theirs dev-0; the driver is shown only where the rest would clash), then devices drawing on none."""
    groups: dict[tuple[str, str, str], list[Any]] = {}
    loose: list[Any] = []
    for device in report.devices:
        if device.counter_sets:
            groups.setdefault((device.driver, device.pool, device.counter_sets[0]), []).append(device)
        else:
            loose.append(device)
    for c in report.counters:  # a counter set nothing draws on yet is still a device with room
        groups.setdefault((c.driver, c.pool, c.counter_set), [])
    short = [f"{pool}/{name}" for _, pool, name in groups]
    labelled = [
        (
            f"{driver}: {pool}/{name}" if short.count(f"{pool}/{name}") > 1 else f"{pool}/{name}",
            devices,
            [c for c in report.counters if (c.driver, c.pool, c.counter_set) == (driver, pool, name)],
        )
        for (driver, pool, name), devices in groups.items()
    ]
    return labelled + ([("devices", loose, [])] if loose else [])


def _group(label: str, devices: list[Any], counters: list[Any], report: Any, hover: Any) -> str:
    bars = "".join(_bar(b) for b in counter_bars(counters))
    rows: dict[str, list[Any]] = {}
    for device in devices:
        kind = device.partition_type or ("whole" if counters or device.counter_sets else "")
        rows.setdefault(kind or f"driver:{device.driver}", []).append(device)  # loose devices: a row per driver
    body = "".join(_row(kind, members, report, hover) for kind, members in rows.items())
    return (
        f'<div class="group" data-group="{html.escape(label)}"><div class="head">'
        f'<span class="label" title="{html.escape(label)}">{html.escape(label)}</span>{bars}</div>{body}</div>'
    )


def _bar(bar: CounterBar) -> str:
    share = 0.0 if not bar.capacity else min(float(bar.used / bar.capacity), 1.0)
    full = " full" if bar.capacity and bar.used >= bar.capacity else ""
    text = html.escape(f"{bar.label} {bar.text}")
    return (
        f'<span class="bar{full}" title="{text} used"><span class="fill" style="width:{share * 100:.0f}%"></span>'
        f'<span class="text">{text}</span></span>'
    )


def _row(kind: str, devices: list[Any], report: Any, hover: Any) -> str:
    if kind.startswith("driver:"):
        kind = ""
    shown = distinguishing(devices)
    prefix = devices[0].name[: len(devices[0].name) - len(shown[0])] if len(devices) > 1 else ""
    free = [d for d in devices if d.state == "free"]
    fit = None
    if kind and free and len(free[0].counter_sets) == 1:
        fit = report.set_fit.get((free[0].driver, free[0].pool, free[0].counter_sets[0], kind))
    note = f" {fit}/{len(free)} fit" if fit is not None else ""
    title = (f"partition type {kind}: " if kind else "") + f"{len(free)} free"
    title += (f", only {fit} fit together" if fit is not None else "") + (f"; names {prefix}…" if prefix else "")
    boxes = "".join(_box(d, name, report, hover) for d, name in zip(devices, shown))
    label = html.escape(kind or prefix.rstrip("-._") or devices[0].driver.split(".")[0])
    return (
        f'<div class="row" data-type="{html.escape(kind)}"><span class="type" title="{html.escape(title)}">'
        f'{label}{html.escape(note)}</span><span class="boxes">{boxes}</span></div>'
    )


def _box(device: Any, name: str, report: Any, hover: Any) -> str:
    full = f"{device.driver}/{device.pool}/{device.name}"
    kind = shade(device, report)
    return (
        f'<span class="device {kind}" data-device="{html.escape(full)}" data-state="{device.state}" '
        f'data-shade="{kind}" title="{html.escape(hover(device, kind))}">{html.escape(name)}</span>'
    )


def distinguishing(devices: Sequence[Any]) -> list[str]:
    """What tells the devices of a row apart: each name without the prefix all share, cut after a ``-``, ``.``
    or ``_`` (gpu-0-1g-at-0, gpu-0-1g-at-1 -> 0, 1), so no name is cut inside a word; one device: its name."""
    names = [d.name for d in devices]
    if len(names) < 2:
        return names
    prefix = names[0]
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    cut = max(prefix.rfind(sep) for sep in "-._") + 1
    return [name[cut:] or name for name in names]
