"""The allocation map: one self-contained HTML page (inline CSS and SVG, no scripts, no fetches).

Each node is a card; inside, devices are boxes grouped by the counter set they draw
on (a physical device and its partitions) or standing alone; the colour is the
state, and hovering a box shows the device, its state and its claim (an SVG
``<title>``). Cards wrap in a grid, so a hundred nodes of eight GPUs stay readable.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

COLOURS = {
    "free": "#43a047",
    "allocated": "#1e88e5",
    "shared": "#8e24aa",
    "tainted": "#ef6c00",
    "blocked": "#9e9e9e",
    "incomplete": "#d7ccc8",
}
BOX_W, PART_W, BOX_H, GAP, PAD, PER_ROW, MAX_WIDTH, LABEL_H = 64, 46, 22, 3, 5, 7, 720, 15

CSS = """
body{font:13px/1.4 system-ui,sans-serif;margin:16px;background:#fafafa;color:#212121}
h1{font-size:18px;margin:0 0 8px}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px;border-radius:2px}
.nodes{display:flex;flex-wrap:wrap;align-items:flex-start;gap:10px;margin-top:12px}
.node{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px}
.node h2{font-size:14px;margin:0 0 4px}
.frag{font-size:11px;color:#555;max-width:720px}
svg text{font:10px system-ui,sans-serif}
.group text{font-size:9px}
.device rect{stroke:#fff;stroke-width:1}
.device text{fill:#fff;pointer-events:none}
.group>rect{fill:#f5f5f5;stroke:#bbb}
"""


def write_map(reports: Sequence[Any], path: str) -> None:
    """Render the page and write it atomically (a temporary file beside ``path``, then a rename)."""
    from drasat.cli.reporting import write_atomically

    write_atomically(path, render_map(reports))


def render_map(reports: Sequence[Any]) -> str:
    """The whole page as text."""
    from drasat.solver.report.device_states import fragmentation_line, states_count

    counts = states_count(reports)
    legend = "".join(
        f'<span><i style="background:{colour}"></i>{state} ({counts[state]})</span>'
        for state, colour in COLOURS.items()
    )
    cards = "".join(_card(r, fragmentation_line(r)) for r in reports)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>drasat allocation map</title>'
        f"<style>{CSS}</style></head><body><h1>DRA allocation map: {sum(counts.values())} devices on "
        f'{len(reports)} nodes</h1><div class="legend">{legend}</div><div class="nodes">{cards}</div>'
        "</body></html>\n"
    )


def _card(report: Any, fragmentation: str) -> str:
    svg = _node_svg(report)
    return (
        f'<section class="node" data-node="{html.escape(report.node)}"><h2>{html.escape(report.node)}</h2>'
        f'{svg}<div class="frag">{html.escape(fragmentation.split(": ", 1)[1])}</div></section>'
    )


def _groups(report: Any) -> list[tuple[str, list[Any]]]:
    """Devices by the first counter set they draw on (one physical device); devices without counters alone.

    A counter set is named by (driver, pool, counter set): two drivers may both call
    theirs node-a/gpu-0. The label shows the driver only where the rest would clash.
    """
    groups: dict[tuple[str, str, str], list[Any]] = {}
    loose: list[Any] = []
    for device in report.devices:
        if device.counter_sets:
            groups.setdefault((device.driver, device.pool, device.counter_sets[0]), []).append(device)
        else:
            loose.append(device)
    short = [f"{pool}/{counter_set}" for _, pool, counter_set in groups]
    labelled = [
        (
            f"{driver}: {pool}/{counter_set}" if short.count(f"{pool}/{counter_set}") > 1 else f"{pool}/{counter_set}",
            devices,
        )
        for (driver, pool, counter_set), devices in groups.items()
    ]
    return labelled + ([("", loose)] if loose else [])


def _node_svg(report: Any) -> str:
    parts: list[str] = []
    x = y = row_height = 0
    for label, devices in _groups(report):
        per_row = PER_ROW if label else max(1, (MAX_WIDTH - PAD) // (BOX_W + GAP))
        width, height, body = _group(label, devices, per_row)
        if x and x + width > MAX_WIDTH:
            x, y, row_height = 0, y + row_height + GAP, 0
        parts.append(f'<g class="group" transform="translate({x},{y})">{body}</g>')
        x += width + GAP
        row_height = max(row_height, height)
    total_w = max(MAX_WIDTH if y else x, 1)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{y + row_height}" '
        f'role="img" aria-label="devices of {html.escape(report.node)}">{"".join(parts)}</svg>'
    )


def _group(label: str, devices: list[Any], per_row: int) -> tuple[int, int, str]:
    """A framed group (a counter set, one row per partition type) or a plain row of devices."""
    rows = _rows(devices, per_row, by_type=bool(label))
    columns = max(len(row) for row in rows)
    top = LABEL_H if label else 0
    box = PART_W if label else BOX_W
    width = columns * (box + GAP) - GAP + 2 * PAD
    height = top + len(rows) * (BOX_H + GAP) - GAP + 2 * PAD
    body = []
    if label:
        body.append(
            f'<rect width="{width}" height="{height}" rx="4"/>'
            f'<text x="{PAD}" y="{PAD + 9}" fill="#555">{html.escape(label)}</text>'
        )
    for r, row in enumerate(rows):
        for c, device in enumerate(row):
            body.append(_device_box(device, PAD + c * (box + GAP), top + PAD + r * (BOX_H + GAP), box))
    return width, height, "".join(body)


def _rows(devices: list[Any], per_row: int, by_type: bool) -> list[list[Any]]:
    """Rows of at most ``per_row`` boxes; partitions of one type start their own row (nested by type)."""
    runs: dict[str, list[Any]] = {}
    for device in devices:
        runs.setdefault((device.partition_type or "") if by_type else "", []).append(device)
    return [run[i : i + per_row] for run in runs.values() for i in range(0, len(run), per_row)]


def shorten(name: str, room: int) -> str:
    """``name`` in at most ``room`` characters, cut in the middle: partitions share their start
    (gpu-0-1g-at-0, gpu-0-1g-at-1), so the end is what tells them apart."""
    if len(name) <= room:
        return name
    head = (room - 1) // 3
    return name[:head] + "…" + name[len(name) - (room - 1 - head) :]


def _device_box(device: Any, x: int, y: int, width: int) -> str:
    from drasat.cli.render.inventory import detail

    hover = f"{device.driver}/{device.pool}/{device.name}: {device.state}"
    why = detail(device)
    if why:
        hover += f" ({why})"
    name = shorten(device.name, width // 6)
    return (
        f'<g class="device" data-device="{html.escape(f"{device.driver}/{device.pool}/{device.name}")}" '
        f'data-state="{device.state}" transform="translate({x},{y})"><title>{html.escape(hover)}</title>'
        f'<rect width="{width}" height="{BOX_H}" rx="3" fill="{COLOURS[device.state]}"/>'
        f'<text x="3" y="14">{html.escape(name)}</text></g>'
    )
