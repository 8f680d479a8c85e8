"""The Score extension point: nodes that passed, best first, by the registry's weighted, normalised scores.

Each scoring plugin's raw scores over the nodes that passed are normalised as the plugin says
(upstream's NormalizeScore), weighted and summed; ties go by node name (upstream breaks them at
random: drasat's runs are reproducible). With the pack objective, nodes of equal score are ordered
by the footprint of their allocation first (fewest devices and GPUs newly touched: whole ones stay
free); the scheduler's score itself is never overridden.
"""

from __future__ import annotations

from drasat.solver.allocation.options import CAPABILITIES

from .cycle import Cycle
from .node_outcomes import Outcome
from .plugins import registry
from .plugins.dynamic_resources import AllocateOptions, DraVerdict
from .plugins.registry import Normalization


def ranked(passed: list[tuple[str, Outcome]]) -> list[tuple[str, DraVerdict]]:
    """Nodes that passed (each with a verdict), best first by the default profile's weighted sum, then by
    the pack footprint (``()`` unless packing), then by name. A score equal on every node adds the same to
    every total, so it is left out (the order is the same; most pods have no preference to normalise)."""
    profile = registry.PROFILE
    totals = [0] * len(passed)
    columns = [(p, [o.raw[i] for _, o in passed]) for i, p in enumerate(profile.node_scores)]
    columns += [(p, [p.score_devices(o.verdict) if o.verdict else 0 for _, o in passed]) for p in profile.device_scores]
    for plugin, raw in columns:
        if raw and min(raw) == max(raw):
            continue
        for n, score in enumerate(plugin.normalization.apply(raw)):
            totals[n] += plugin.weight * score
    verdicts: dict[str, DraVerdict] = {}
    order = []
    for total, (name, outcome) in zip(totals, passed):
        assert outcome.verdict is not None  # nodes pass with a verdict
        verdicts[name] = outcome.verdict
        order.append((-total, outcome.verdict.footprint, name))  # names are unique: never compared further
    order.sort()
    return [(name, verdicts[name]) for _, _, name in order]


def scores_fixed(cycle: Cycle, passed: list[tuple[str, Outcome]], options: AllocateOptions) -> bool:
    """Whether the scores the devices step could change are the same on every node that passes it: each
    devices score is constant for the pod (the DRA score is 0 without firstAvailable requests); normalised
    node scores are equal when the raw ones are equal on all nodes that passed the filters; the pack
    tie-break never is."""
    return (
        not CAPABILITIES[options.objective].packs
        and all(plugin.devices_score_constant(cycle) for plugin in registry.PROFILE.device_scores)
        and all(
            len({o.raw[i] for _, o in passed}) <= 1
            for i, plugin in enumerate(registry.PROFILE.node_scores)
            if plugin.normalization is not Normalization.NONE
        )
    )


def lazy_order(passed: list[tuple[str, Outcome]]) -> list[tuple[str, Outcome]]:
    """Nodes by the weighted sum of the scores that need no normalisation (the others are equal on every
    node when :func:`scores_fixed`), then by name: the exhaustive ranking's order."""

    def key(item: tuple[str, Outcome]) -> tuple[int, str]:
        raw = item[1].raw
        total = sum(
            p.weight * raw[i]
            for i, p in enumerate(registry.PROFILE.node_scores)
            if p.normalization is Normalization.NONE
        )
        return -total, item[0]

    return sorted(passed, key=key)


def devices_scored(verdict: DraVerdict) -> bool:
    """Whether the devices' answer carries a score after all (then the lazy search gives way)."""
    return any(plugin.score_devices(verdict) for plugin in registry.PROFILE.device_scores)
