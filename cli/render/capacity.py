"""Human and machine rendering of the capacity commands' answers (fit, scale-up), apart from their logic."""

from __future__ import annotations

import json
from typing import Any

import yaml

from .tables import TextTable, table_text


def report_text(data: dict[str, Any], output: str) -> str:
    """A report's data as YAML or JSON (the forms tools read)."""
    if output == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False)


def fit_headline(result: Any) -> str:
    """One line: how many copies fit, of how many asked, and whether that is proven the most."""
    copies = f"{result.copies} cop{'y' if result.copies == 1 else 'ies'}"
    unit = "" if result.pods_per_copy == 1 else f" ({result.pods_per_copy} pods each)"
    asked = f" of {result.wanted} asked" if result.wanted is not None else ""
    if result.proven:
        how = "proven the most" if result.wanted is None or result.copies < result.wanted else "all asked for"
    elif result.bound is not None:
        how = f"not proven: CP-SAT's bound is {result.bound}"
    else:
        how = "not proven (no bound for the whole cluster)"
    return f"fit: {copies}{unit} of {result.workload} fit{asked}; {how}"


def fit_table(result: Any) -> str:
    """One row per node that takes pods of the workload: its pods, per pod set, and their devices."""
    table = TextTable()
    for column in ("node", "pods", "pod sets", "devices"):
        table.add_column(column, overflow="fold")
    devices: dict[str, list[str]] = {}
    for pod in result.pods:
        devices.setdefault(pod.node, []).extend(pod.devices)
    for node, sets in sorted(result.nodes.items()):
        text = ", ".join(f"{name}={n}" for name, n in sets.items())
        table.add_row(node, str(sum(sets.values())), text, ", ".join(devices.get(node, [])))
    return str(table_text(table))


def _by_template(counts: dict[str, int]) -> str:
    return ", ".join(f"{name}×{n}" for name, n in sorted(counts.items())) or "none"


def scale_up_headline(result: Any) -> str:
    """Nodes to add, their cost and standing; and what first-fit-decreasing would add."""
    added = len(result.added)
    head = (
        f"scale-up: add {added} node{'s' * (added != 1)} ({_by_template(result.per_template())}), cost {result.cost:g}"
    )
    if result.proven:
        head += ", proven optimal"
    elif result.cost_bound is not None:
        head += f", not proven: no answer costs less than {result.cost_bound:g}"
    else:
        head += ", not proven"
    new = {a.node for a in result.added}
    existing = sum(1 for node, _ in result.placed.values() if node not in new)
    if existing:
        head += f"; {existing} pending pod{'s' * (existing != 1)} fit on existing nodes"
    if result.pending:
        head += f"; {len(result.pending)} pods {'fit nowhere' if result.proven else 'not placed'}"
    ffd = result.ffd
    if ffd is not None:
        counts = {t: len(v) for t, v in ffd.nodes.items()}
        left = f", {len(ffd.pending)} pods left pending" if ffd.pending else ""
        left += " (cut by --timeout: the estimate is partial)" if ffd.cut else ""
        head += (
            f"\nfirst-fit-decreasing (cluster-autoscaler's estimator) would add {ffd.added} ({_by_template(counts)}), "
            f"cost {ffd.cost:g}{left}"
        )
    return head


def scale_up_table(result: Any) -> str:
    """One row per node added: its template and the pods it takes."""
    table = TextTable()
    for column in ("node", "template", "pods"):
        table.add_column(column, overflow="fold")
    for a in result.added:
        table.add_row(a.node, a.template, ", ".join(a.pods))
    return str(table_text(table)) if result.added else ""


def _victims_line(who: str, victims: Any) -> str:
    if victims is None:
        return f"{who}: no victims"
    pods = ", ".join(f"{label} (priority {p})" for label, p in zip(victims.labels(), victims.priorities()))
    broken = f"; {victims.violations} PodDisruptionBudget breaks" if victims.violations else ""
    return f"{who}: evict on {victims.node}: {pods}{broken}"


def preempt_text(result: Any) -> str:
    """kube-scheduler's victims, the fewest, and why they differ: a few lines."""
    if result.fits_now is not None:
        return f"preempt: {result.pod} fits on {result.fits_now} without evicting anything\n"
    if result.kubernetes is None and result.fewest is None:
        return f"preempt: no eviction of lower-priority pods makes {result.pod} fit\n"
    proof = "proven" if result.proven else "not proven: the time ran out"
    lines = [
        f"preempt: {result.pod} (priority {result.priority})",
        _victims_line("kube-scheduler", result.kubernetes),
        _victims_line(f"fewest ({proof})", result.fewest),
    ]
    if result.why:
        lines.append(f"why: {result.why}")
    return "\n".join(lines) + "\n"


def defrag_text(result: Any) -> str:
    """The plan's headline, then its steps in order."""
    b, a = result.before, result.after
    proof = "proven" if result.proven else "not proven: the time ran out"
    lines = [
        f"defrag: {len(result.moves)} move{'s' * (len(result.moves) != 1)}; whole devices free {b.whole} -> {a.whole}; "
        f"largest free GPU share, summed over nodes, {float(b.largest):g} -> {float(a.largest):g}; {proof}"
    ]
    for i, m in enumerate(result.moves, 1):
        lines.append(f"{i}. move {m.pod} from {m.source} ({', '.join(m.before)}) to {m.target} ({', '.join(m.after)})")
    return "\n".join(lines) + "\n"
