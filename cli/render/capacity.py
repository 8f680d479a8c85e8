"""The capacity commands' answers (fit, scale-up, preempt, defrag) in kubectl's forms, apart from their logic.

Each is a headline (the answer in a sentence: on stdout above a table, on stderr otherwise) and an
:class:`~.kubectl.Answer`: a table of its rows (cells joined by commas, whole, one piece for awk; lists that
grow with the cluster only in ``-o wide``), the report as one object for yaml/json/jsonpath/custom-columns,
and for ``-o name`` the Kubernetes objects each row is about."""

from __future__ import annotations

from typing import Any

from .kubectl import Answer, named_object, render_answer, report_answer
from .tables import HEADERS, rows_table
from .text import echo


def print_answer(answer: Answer, output: str, headline: str) -> None:
    """The answer on stdout in ``output``, its headline above a table that has its header; otherwise (yaml,
    json, name, custom-columns, --no-headers) the headline goes to stderr, leaving stdout to what scripts read."""
    echo(headline, err=output not in ("table", "wide") or not HEADERS.get())
    echo(render_answer(answer, output), nl=False)


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


FIT_COLUMNS = (("node", False), ("pods", False), ("pod sets", False), ("devices", True))


def fit_answer(result: Any) -> Answer:
    """A row per node that takes pods of the workload: its pods, per pod set, and (wide) their devices;
    -o name: those nodes."""
    devices: dict[str, list[str]] = {}
    for pod in result.pods:
        devices.setdefault(pod.node, []).extend(pod.devices)
    rows = [
        (node, str(sum(sets.values())), ",".join(f"{k}={n}" for k, n in sets.items()), ",".join(devices.get(node, [])))
        for node, sets in sorted(result.nodes.items())
    ]
    name = result.workload.rsplit("/", 1)[-1]
    named = [named_object("Node", row[0]) for row in rows]
    return report_answer("WorkloadFit", name, result.to_data(), lambda wide: rows_table(FIT_COLUMNS, rows, wide), named)


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


SCALE_UP_COLUMNS = (("node", False), ("template", False), ("pods", False), ("pod names", True))


def scale_up_answer(result: Any) -> Answer:
    """A row per node added: its template, how many pods it takes and (wide) which; -o name: those nodes."""
    rows = [(a.node, a.template, str(len(a.pods)), ",".join(a.pods)) for a in result.added]
    named = [named_object("Node", a.node) for a in result.added]
    return report_answer(
        "ScaleUpPlan", "scale-up", result.to_data(), lambda wide: rows_table(SCALE_UP_COLUMNS, rows, wide), named
    )


PREEMPT_COLUMNS = (("answer", False), ("node", False), ("pod", False), ("priority", False), ("budgets broken", True))


def preempt_headline(result: Any) -> str:
    """Whether the pod fits as it is, whether any eviction helps, or whose victims follow and why they differ."""
    if result.fits_now is not None:
        return f"preempt: {result.pod} fits on {result.fits_now} without evicting anything"
    if result.kubernetes is None and result.fewest is None:
        return f"preempt: no eviction of lower-priority pods makes {result.pod} fit"
    proof = "proven" if result.proven else "not proven: the time ran out"
    head = f"preempt: {result.pod} (priority {result.priority}); the fewest victims {proof}"
    return head + (f"\nwhy: {result.why}" if result.why else "")


def preempt_answer(result: Any) -> Answer:
    """A row per victim, kube-scheduler's then the fewest (wide: the PodDisruptionBudgets each answer breaks);
    -o name: the fewest victims (drasat's answer), or kube-scheduler's when drasat has none."""
    rows = []
    for answer, victims in (("kube-scheduler", result.kubernetes), ("fewest", result.fewest)):
        if victims is not None:
            for label, priority in zip(victims.labels(), victims.priorities()):
                rows.append((answer, victims.node, label, str(priority), str(victims.violations)))
    chosen = result.fewest or result.kubernetes
    named = [named_object("Pod", label) for label in (chosen.labels() if chosen else [])]
    name = result.pod.rsplit("/", 1)[-1]
    return report_answer(
        "PreemptionPlan", name, result.to_data(), lambda wide: rows_table(PREEMPT_COLUMNS, rows, wide), named
    )


DEFRAG_COLUMNS = (
    ("step", False),
    ("pod", False),
    ("from", False),
    ("to", False),
    ("devices before", True),
    ("devices after", True),
)


def defrag_headline(result: Any) -> str:
    """How many moves, the whole devices free and the largest free share before and after, and the proof; a
    cluster without partitionable devices (no counter set) has no share to free, and says so instead of 0 -> 0."""
    b, a = result.before, result.after
    proof = "proven" if result.proven else "not proven: the time ran out"
    shares = (
        f"largest free GPU share, summed over nodes, {float(b.largest):g} -> {float(a.largest):g}"
        if b.counter_sets or a.counter_sets
        else "no partitionable device (no counter set): whole devices only"
    )
    moves = f"{len(result.moves)} move{'s' * (len(result.moves) != 1)}"
    return f"defrag: {moves}; whole devices free {b.whole} -> {a.whole}; {shares}; {proof}"


def defrag_answer(result: Any) -> Answer:
    """A row per step of the plan, in order (wide: the pod's devices before and after); -o name: the pods moved."""
    rows = [
        (str(i), m.pod, m.source, m.target, ",".join(m.before), ",".join(m.after))
        for i, m in enumerate(result.moves, 1)
    ]
    named = [named_object("Pod", m.pod) for m in result.moves]
    return report_answer(
        "DefragPlan", "defrag", result.to_data(), lambda wide: rows_table(DEFRAG_COLUMNS, rows, wide), named
    )
