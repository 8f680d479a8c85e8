"""``schedule``'s shortcuts change no answer, on clusters with taints, affinity, pins, namespaces,
extended resources, shared, pre-allocated and PodGroup claims (``schedule_mix``).

The shortcuts: nodes asked about their devices best score first when the devices cannot
change the ranking (``_scores_fixed``); nodes where a claim shape found no devices before
passed over (``Devices.failed_before``); a spec's filters and scores per node class kept
across pods (``_prepared``). With all three off every node is asked, as before them. And
``ClusterState.snapshot``/``restore`` (the batch's gangs tried and undone) leave nothing
behind: placements made and undone change no later answer.
"""

from __future__ import annotations

import os
import random
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasat.solver.cel import SelectorEvaluator
from drasat.solver.scheduling import devices_step, node_outcomes, one_by_one
from drasat.solver.scheduling.cluster import Cluster
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement, schedule, schedule_one
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.pods import pending_pods

from .cluster_factory import make_cluster, violations
from .schedule_mix import mixed_cluster

settings.register_profile(
    "schedule-shortcuts", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
FUZZ = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "schedule-shortcuts"))


def _outcome(placements: list[Placement]) -> list[tuple]:
    return [
        (
            p.label,
            p.node,
            p.reason,
            sorted(p.node_reasons.items()),
            sorted((name, r.request, r.pool, r.device) for name, a in p.allocations.items() for r in a.devices.results),
            sorted((c.name, [u.name for u in c.status.reserved_for] if c.status else []) for c in p.claims),
        )
        for p in placements
    ]


def _cluster(r: random.Random) -> Cluster:
    docs, gates = mixed_cluster(r)
    return make_cluster(*docs, gates=gates)


def _every_node_asked(cycle: Any, firsts: dict[tuple, Any], cache: dict[tuple, Any]) -> dict:
    return {key: node_outcomes.scored(cycle, node) for key, node in firsts.items()}


@FUZZ
@given(st.randoms(use_true_random=False))
def test_shortcuts_change_no_node_device_or_reason(r):
    cluster = _cluster(r)
    fast = schedule(cluster)
    with (
        mock.patch.object(one_by_one, "_scores_fixed", return_value=False),
        mock.patch.object(devices_step.Devices, "failed_before", return_value=False),
        mock.patch.object(one_by_one, "_prepared", _every_node_asked),
    ):
        slow = schedule(cluster)
    assert _outcome(fast) == _outcome(slow)
    assert violations(fast) == []


@FUZZ
@given(st.randoms(use_true_random=False))
def test_placements_undone_by_restore_change_no_later_answer(r):
    cluster = _cluster(r)
    fresh = schedule(cluster)
    state, cache = ClusterState(cluster), {}
    options = AllocateOptions(evaluator=SelectorEvaluator())
    queue = pending_pods(cluster)
    before = state.snapshot()
    for pod in r.sample(queue, r.randint(0, len(queue))):  # tried and undone, as a gang that does not fit
        schedule_one(state, pod, options, cache)
    state.restore(before)
    again = [schedule_one(state, pod, options, cache) for pod in queue]
    assert _outcome(again) == _outcome(fresh)


@pytest.mark.parametrize("seed", range(3))
def test_the_mixed_clusters_place_some_pods_and_refuse_others(seed):
    """The generator is itself checked: its clusters are valid input, and place pods and leave some pending."""
    outcomes = [
        p.node is not None for s in range(seed * 20, seed * 20 + 20) for p in schedule(_cluster(random.Random(s)))
    ]
    assert any(outcomes) and not all(outcomes)
