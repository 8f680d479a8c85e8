"""``drasat explain``'s text for people: the funnel, then the cause, the conflict or the choice, then fixes.

A funnel is shown for every alternative when there are few; with many, only for those that
matter — alternatives that fall short, and those of the claims in the conflict — and the rest
are counted (``-o json`` has them all). A feasible input with many requests shows only the choice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drasat.solver.explanation.explain import Explanation, Funnel
    from drasat.solver.scheduling.pod_explanation import PodExplanation

ALL_FUNNELS = 10  # up to this many alternatives, every funnel is shown
PODS_NAMED = 5  # pods named per node that took a pending pod's room (-o json names them all)


def pod_text(found: PodExplanation) -> str:
    """One pod: the scheduler's summary (or its node and devices), then each node class's explanation."""
    lines = [f"pod {found.pod}: {found.summary}" + _after(found)]
    lines.extend(f"  - claim {c.claim}, request {c.request}: {c.device}" for c in found.choice)
    lines.extend(_queue_lines(found))
    for node_class in found.classes:
        more = f" and {node_class.more_nodes} more" if node_class.more_nodes else ""
        lines.append(f"  on node(s) {', '.join(node_class.nodes)}{more} the devices cannot be allocated:")
        lines.extend("    " + line for line in explanation_text(node_class.explanation).splitlines())
    if found.unexplained_nodes:
        lines.append(f"  ({found.unexplained_nodes} more node(s) fail on devices in other ways, not explained here)")
    return "\n".join(lines)


def _after(found: PodExplanation) -> str:
    """A placed pod: how many pods the queue placed before it ("" for none)."""
    if not found.feasible or not found.placed_before:
        return ""
    return f" (in the queue's order, after {_pods(found.placed_before)} placed before it)"


def _pods(count: int) -> str:
    return f"{count} pod{'s' if count != 1 else ''}"


def _queue_lines(found: PodExplanation) -> list[str]:
    """A pod left pending: whether the pods before it are why (and which, on which node), and what
    ``schedule --batch`` does with it."""
    lines = []
    story = found.queue
    if story is not None:
        before = f"  pending in the queue's order, after {_pods(found.placed_before)} placed before it; "
        lines.append(
            before + "as the input was before them, no node takes it either"
            if story.alone is None
            else before + f"as the input was before them, node {story.alone} would take it"
        )
        for took in story.took_room:
            them = "them" if len(took.pods) > 1 else "it"
            more = len(took.pods) - PODS_NAMED
            named = ", ".join(took.pods[:PODS_NAMED]) + (f" and {more} more" if more > 0 else "")
            lines.append(
                f"  on node {took.node}, {named} (placed before it) took the room: without {them} the pod fits there"
            )
        if story.nodes_unchecked:
            lines.append(f"  ({story.nodes_unchecked} more node(s) got pods before it, not checked)")
    joint = found.batch
    if joint is not None:
        sure = (
            "its answer proven optimal"
            if joint.proven
            else f"its best answer within {joint.seconds:.1f} s; raise --timeout"
        )
        where = f"would place it on node {joint.node}" if joint.node else "would leave it pending too"
        lines.append(f"  drasat schedule --batch {where} ({joint.placed}/{joint.pods} pods placed jointly, {sure})")
    return lines


def explanation_text(found: Explanation) -> str:
    """One explanation for one node, as lines of text."""
    lines: list[str] = []
    shown = _shown(found)
    for f in shown:
        needs = "all matching devices" if f.needs == "all" else f"{f.needs} device(s)"
        lines.append(
            f"claim {f.claim}, request {f.request}: needs {needs}; {f.candidates} of the {f.offered} "
            "device(s) seen are candidates"
        )
        for step in f.steps:
            named = ", ".join(step.devices) + (", ..." if step.removed > len(step.devices) else "")
            lines.append(f"  - {step.removed} removed: {step.reason} ({named})")
        lines.extend(f"  - note: {note}" for note in f.notes)
        if f.blocked:
            lines.append(f"  - allocationMode All cannot be met: {f.blocked}")
    if len(shown) < len(found.funnel):
        lines.append(
            f"({len(found.funnel) - len(shown)} other request alternative(s) have candidates enough; "
            "-o json shows every funnel)"
        )
    if found.feasible:
        lines.append(
            "feasible: the claims can be allocated together; drasat solve would choose:"
            if found.exact
            else "feasible: the claims can be allocated together, for example so (time ran out before the "
            "first-fit choice was proved; raise --timeout for drasat solve's own):"
        )
        lines.extend(f"  - claim {c.claim}, request {c.request}: {c.device}" for c in found.choice)
    elif found.short_requests:
        lines.append("cause: too few candidates for " + "; ".join(found.short_requests))
    elif found.conflict:
        lines.extend(_conflict_lines(found))
    if found.timed_out:
        lines.append(found.timed_out)
    if found.fixes:
        lines.append("what would fix it:")
        lines.extend(f"  - {fix.text}" for fix in found.fixes)
    return "\n".join(lines)


def _conflict_lines(found: Explanation) -> list[str]:
    """Each independent conflict with its members, then what dropping them was shown to do."""
    from drasat.solver.explanation.wording import conflict_blocks, conflict_closing, conflict_intro

    lines = [line for line in [conflict_intro(found)] if line]
    for head, members in conflict_blocks(found):
        lines.append(head + ":")
        lines.extend(f"  - {words}" for words in members)
    return lines + conflict_closing(found)


def _shown(found: Explanation) -> list[Funnel]:
    if len(found.funnel) <= ALL_FUNNELS:
        return found.funnel
    if found.feasible:
        return []
    claims = {rule.claim for rule in found.conflict_rules}
    every = None in claims  # a member naming no claim (a device, a counter set) may involve any of them
    return [f for f in found.funnel if f.short or f.notes or (found.conflict_rules and (every or f.claim in claims))]
