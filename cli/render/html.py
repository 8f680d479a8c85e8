"""The allocation map: one self-contained HTML page an operator opens (inline CSS and script, nothing fetched).

On top, the fleet: per node its physical devices, units used and free (slices of partitioned devices,
whole devices otherwise), the largest free partition, and the pending pods that could go there (or,
from ``schedule --html``, the pods placed there). Then a card per node in a grid as wide as the window
(:mod:`.map_cards`), then every device with its full name, state and claim in a table, then — from
``schedule --html`` and ``compare --schedule --html`` — the placements, one by one beside batch, and the
pending pods with the scheduler's reasons. Filters by node and by state hide cards and rows at once; the
page reads them from its address too (``map.html#node=gpu-1&state=free,overlap``), to link to a view.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .map_cards import SHADES, anchor, card, counter_bars, shade, unit_bar

CSS = """
body{font:13px/1.4 system-ui,sans-serif;margin:16px;background:#fafafa;color:#212121}
h1{font-size:18px;margin:0 0 8px}h2{font-size:15px;margin:18px 0 6px}h3{font-size:14px;margin:0 0 4px}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px;border-radius:2px}
.filters{margin:8px 0;display:flex;flex-wrap:wrap;gap:10px;align-items:center}
.nodes{display:grid;grid-template-columns:repeat(auto-fill,minmax(360px,1fr));gap:10px;align-items:start}
.node{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px;min-width:0}
.group{border:1px solid #ccc;border-radius:4px;padding:4px;margin:4px 0;background:#f7f7f7}
.head{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-bottom:2px}
.label{font-weight:600;font-size:12px}
.bar{position:relative;display:inline-block;width:120px;height:15px;background:#e0e0e0;border-radius:3px;
overflow:hidden;font-size:10px;line-height:15px}
.bar .fill{position:absolute;left:0;top:0;bottom:0;background:#7986cb}.bar.full .fill{background:#e57373}
.bar .text{position:relative;padding-left:4px;color:#000;white-space:nowrap}
.row{display:flex;align-items:flex-start;gap:4px;margin:2px 0}
.type{flex:0 0 74px;font-size:11px;color:#555;white-space:nowrap}
.boxes{display:flex;flex-wrap:wrap;gap:3px}
.device{display:inline-block;min-width:22px;padding:1px 5px;border-radius:3px;color:#fff;font-size:11px;
text-align:center;white-space:nowrap}
.device.overlap,.device.incomplete{color:#1b3d1b}
.dim{opacity:.15}.hidden{display:none!important}
table{border-collapse:collapse;background:#fff;margin-bottom:8px}
th,td{border-bottom:1px solid #eee;padding:2px 8px;text-align:left;white-space:nowrap;vertical-align:top}
th{background:#eee}td.reason{white-space:normal;max-width:70ch}
"""
CSS += "".join(f".device.{name}{{background:{colour}}}" for name, (colour, _) in SHADES.items())

SCRIPT = """
(function(){
var node=document.getElementById('f-node'),states=[].slice.call(document.querySelectorAll('.f-state'));
function apply(){
 var text=node.value.trim().toLowerCase(),on={},all=true;
 states.forEach(function(b){on[b.value]=b.checked;all=all&&b.checked;});
 [].forEach.call(document.querySelectorAll('.device'),function(d){d.classList.toggle('dim',!on[d.dataset.shade]);});
 [].forEach.call(document.querySelectorAll('[data-node]'),function(e){
  var hit=e.dataset.node.toLowerCase().indexOf(text)>=0;
  if(e.classList.contains('node')&&!all){hit=hit&&e.querySelector('.device:not(.dim)')!==null;}
  if(e.dataset.shade){hit=hit&&on[e.dataset.shade];}
  e.classList.toggle('hidden',!hit);
 });
}
var hash=new URLSearchParams(location.hash.slice(1));
if(hash.has('node')){node.value=hash.get('node');}
if(hash.has('state')){var want=hash.get('state').split(',');states.forEach(function(b){b.checked=want.indexOf(b.value)>=0;});}
node.addEventListener('input',apply);states.forEach(function(b){b.addEventListener('change',apply);});
apply();
})();
"""


@dataclass(frozen=True)
class PlacedSide:
    """One way of placing the pending pods (``one-by-one`` or ``batch``) and what it decided per pod."""

    method: str
    placements: Sequence[Any]


@dataclass(frozen=True)
class MapExtras:
    """What the page shows beside the devices: per node the pending pods that could go there (inventory),
    or the placements of ``schedule --html`` / ``compare --schedule --html``."""

    fitting: Mapping[str, Sequence[str]] | None = None
    sides: Sequence[PlacedSide] = field(default_factory=tuple)


def write_map(reports: Sequence[Any], path: str, extras: MapExtras | None = None) -> None:
    """Render the page and write it to ``path`` as :func:`~drasat.cli.output_file.write_output` does."""
    from drasat.cli.output_file import write_output

    write_output(path, render_map(reports, extras))


def render_map(reports: Sequence[Any], extras: MapExtras | None = None) -> str:
    """The whole page as text."""
    extras = extras or MapExtras()
    counts = {name: 0 for name in SHADES}
    for report in reports:
        for device in report.devices:
            counts[shade(device, report)] += 1
    placed = _placed_per_node(extras.sides)
    cards = "".join(card(r, _hover, _card_line(r, extras, placed)) for r in reports)
    title = f"DRA allocation map: {sum(counts.values())} devices on {len(reports)} nodes"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>"
        f"{_legend(counts)}{_filters()}<h2>Fleet</h2>{_fleet(reports, extras, placed)}"
        f'<h2>Nodes</h2><div class="nodes">{cards}</div>{_placements(extras.sides)}'
        f"<h2>Devices</h2>{_device_table(reports)}<script>{SCRIPT}</script></body></html>\n"
    )


def _legend(counts: dict[str, int]) -> str:
    return (
        '<div class="legend">'
        + "".join(
            f'<span title="{html.escape(meaning)}"><i style="background:{colour}"></i>{name} ({counts[name]})</span>'
            for name, (colour, meaning) in SHADES.items()
        )
        + "</div>"
    )


def _filters() -> str:
    boxes = "".join(
        f'<label><input type="checkbox" class="f-state" value="{name}" checked> {name}</label>' for name in SHADES
    )
    return (
        '<div class="filters"><label>Node <input id="f-node" type="search" placeholder="part of a node name">'
        f"</label><span>State:</span>{boxes}</div>"
    )


def _hover(device: Any, kind: str) -> str:
    """A device's title: its full name, its state and why."""
    from .inventory import detail

    text = f"{device.driver}/{device.pool}/{device.name}: {SHADES[kind][1]}"
    if device.partition_type:
        text += f"; partition type {device.partition_type}"
    why = detail(device)
    return text + (f" ({why})" if why else "")


def node_units(report: Any) -> tuple[int, int, int]:
    """(physical devices, units used, units free): a counter set is one physical device whose units are its
    smallest counter (slices); a device drawing on no counter set is one unit."""
    physical = used = free = 0
    seen: set[tuple[str, str, str]] = set()
    for c in report.counters:
        key = (c.driver, c.pool, c.counter_set)
        if key in seen:
            continue
        seen.add(key)
        unit = unit_bar(counter_bars([x for x in report.counters if (x.driver, x.pool, x.counter_set) == key]))
        physical += 1
        if unit is not None:
            used += int(unit.used)
            free += int(unit.capacity - unit.used)
    for device in report.devices:
        if not device.counter_sets:
            physical += 1
            used += device.state in ("allocated", "shared")
            free += device.state == "free"
    return physical, used, free


def largest_free(report: Any) -> str:
    """The biggest partition type with room left (by the number its name starts with: 7g > 3g > 1g), and how
    many of it fit; else the whole devices left."""
    fits = [(kind, n) for (_, kind), n in report.largest_fit.items() if n > 0]
    if fits:
        kind, n = max(fits, key=lambda f: (_leading_number(f[0]), f[0]))
        return f"{kind} ×{n}"
    whole = sum(report.free_whole.values())
    return f"whole ×{whole}" if whole else "none"


def _leading_number(text: str) -> float:
    found = re.match(r"\d+(\.\d+)?", text)
    return float(found.group()) if found else 0.0


def _placed_per_node(sides: Sequence[PlacedSide]) -> dict[str, dict[str, list[str]]]:
    """method -> node -> the pods it placed there."""
    return {
        side.method: {
            node: [p.label for p in side.placements if p.node == node]
            for node in {p.node for p in side.placements if p.node}
        }
        for side in sides
    }


def _card_line(report: Any, extras: MapExtras, placed: dict[str, dict[str, list[str]]]) -> str:
    physical, used, free = node_units(report)
    parts = [f"{physical} devices; units: {used} used, {free} free; largest free: {largest_free(report)}"]
    if extras.fitting is not None and extras.fitting.get(report.node):
        parts.append("could take: " + ", ".join(extras.fitting[report.node]))
    for method, nodes in placed.items():
        if nodes.get(report.node):
            parts.append(f"placed {method}: " + ", ".join(nodes[report.node]))
    return "".join(f'<div class="line">{html.escape(p)}</div>' for p in parts)


def _fleet(reports: Sequence[Any], extras: MapExtras, placed: dict[str, dict[str, list[str]]]) -> str:
    headers = ["Node", "Physical devices", "Units used", "Units free", "Largest free partition"]
    if extras.fitting is not None:
        headers.append("Pending pods that could go there")
    headers += [f"Placed {method}" for method in placed]
    rows = []
    for r in reports:
        physical, used, free = node_units(r)
        cells = [f'<a href="#{anchor(r.node)}">{html.escape(r.node)}</a>', str(physical), str(used), str(free)]
        cells.append(html.escape(largest_free(r)))
        if extras.fitting is not None:
            cells.append(html.escape(", ".join(extras.fitting.get(r.node, ())) or "-"))
        cells += [html.escape(", ".join(nodes.get(r.node, ())) or "-") for nodes in placed.values()]
        rows.append(f'<tr data-node="{html.escape(r.node)}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return _table(headers, rows, "fleet")


def _table(headers: Sequence[str], rows: Sequence[str], name: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    return f'<table class="{name}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _device_table(reports: Sequence[Any]) -> str:
    from .inventory import detail

    rows = []
    for r in reports:
        for d in r.devices:
            kind = shade(d, r)
            cells = [r.node, d.driver, d.pool, d.name, kind, d.partition_type or "", ", ".join(d.claims)]
            cells.append(detail(d) if d.state not in ("allocated", "free") else "")
            rows.append(
                f'<tr data-node="{html.escape(r.node)}" data-shade="{kind}">'
                + "".join(f"<td>{html.escape(c)}</td>" for c in cells[:-1])
                + f'<td class="reason">{html.escape(cells[-1])}</td></tr>'
            )
    return _table(["Node", "Driver", "Pool", "Device", "State", "Type", "Claims", "Reason"], rows, "devices")


def _placements(sides: Sequence[PlacedSide]) -> str:
    """The pods, one column pair per method (node, devices), then the pods left pending and why."""
    if not sides:
        return ""
    by_pod: dict[str, dict[str, Any]] = {}
    for side in sides:
        for p in side.placements:
            by_pod.setdefault(p.label, {})[side.method] = p
    headers = ["Pod"] + [f"{h} ({side.method})" for side in sides for h in ("Node", "Devices")]
    rows = []
    for pod, outcome in by_pod.items():
        cells = [html.escape(pod)]
        for side in sides:
            p = outcome.get(side.method)
            cells += [html.escape(p.node or "pending") if p else "-", html.escape(_devices(p)) if p else ""]
        node = next((p.node for p in outcome.values() if p.node), "")
        rows.append(
            f'<tr data-node="{html.escape(node or "")}">'
            + "".join(
                f'<td class="reason">{c}</td>' if i % 2 == 0 and i else f"<td>{c}</td>" for i, c in enumerate(cells)
            )
            + "</tr>"
        )
    pending = [
        f'<tr data-node=""><td>{html.escape(p.label)}</td><td>{html.escape(side.method)}</td>'
        f'<td class="reason">{html.escape(p.reason)}{_node_reasons(p)}</td></tr>'
        for side in sides
        for p in side.placements
        if p.node is None
    ]
    text = "<h2>Placements</h2>" + _table(headers, rows, "placements")
    if pending:
        text += "<h2>Pending pods</h2>" + _table(["Pod", "Method", "Reason"], pending, "pending")
    return text


def _node_reasons(placement: Any) -> str:
    """Why each node refused a pending pod, folded (the scheduler's per-node reasons, as ``schedule -v``)."""
    reasons = getattr(placement, "node_reasons", None) or {}
    if not reasons:
        return ""
    items = "".join(
        f"<li>{html.escape(node)}: {html.escape('; '.join(why))}</li>" for node, why in sorted(reasons.items())
    )
    return f"<details><summary>per node</summary><ul>{items}</ul></details>"


def _devices(placement: Any) -> str:
    results = [
        f"{r.request}={r.driver}/{r.pool}/{r.device}"
        for c in placement.claims
        for r in (c.status.allocation.devices.results if c.status and c.status.allocation else [])
    ]
    return ", ".join(results)


def html_option(help: str, *, to_stdout: bool = False) -> Any:
    """``--html FILE``. Where the page is the command's whole output (``inventory --html``, ``to_stdout``),
    ``-`` is standard output, as kubectl reads it; where the page is written beside the answer on stdout
    (``schedule``, ``compare --schedule``), ``-`` is refused as ``--output-state -`` is: the two would
    interleave. Never a file named ``-``."""
    import click

    def refuse_stdout(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
        if value == "-" and not to_stdout:
            raise click.BadParameter(
                "standard output carries the answer already: give a file name such as map.html, not -"
            )
        return value

    return click.option(
        "--html", "html_file", metavar="FILE", type=click.Path(dir_okay=False), callback=refuse_stdout, help=help
    )
