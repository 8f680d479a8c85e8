"""Which nodes a pod is asked about, in which order, and where it lands.

Three searches, the same answers: on a big cluster kube-scheduler's sampled search (nodes from where
the last pod stopped until enough pass, :mod:`.sampling`); else every node, either lazily (best score
first, the first whose devices pass wins — when the devices cannot change the ranking) or
exhaustively (every node's devices asked, then ranked).
"""

from __future__ import annotations

from typing import Any

from .binding import commit
from .cycle import Cycle
from .devices_step import Devices
from .node_outcomes import ClassKeys, Outcome, prepared_one
from .placement import Placement
from .plugins.dynamic_resources import AllocateOptions, DraVerdict
from .plugins.node_filters import REASON_DRA, REASON_PINNED
from .ranking import devices_scored, lazy_order, ranked

Passed = list[tuple[str, Outcome]]
Reasons = dict[str, list[str]]


def filtered(names: list[str], keys: dict[str, tuple | None], outcomes: dict[tuple, Outcome]) -> tuple[Reasons, Passed]:
    """The filters' verdict per node, from its class's outcome: why each refused node fails, and the nodes
    that pass (in node order) with their outcome."""
    reasons: Reasons = {}
    passed: Passed = []
    for name in names:
        key = keys[name]
        outcome = Outcome([REASON_PINNED]) if key is None else outcomes[key]
        if outcome.reasons:
            reasons[name] = outcome.reasons
        else:
            passed.append((name, outcome))
    return reasons, passed


def everywhere(
    devices: Devices, keys: dict[str, tuple | None], passed: Passed, reasons: Reasons, fixed: bool
) -> Placement:
    """Every feasible node scored (fewer than 100 nodes, or a percentage that covers them all): lazily where
    the devices cannot change the ranking, else exhaustively, then once more without skipping failed nodes
    when no node took the pod (so that the reasons are today's)."""
    placement = lazily(devices, keys, passed, reasons) if fixed else None
    if placement is None:
        placement = exhaustively(devices, keys, passed, reasons, skip_failed=True)
    if placement is None:
        placement = exhaustively(devices, keys, passed, reasons, skip_failed=False)
    assert placement is not None  # without skipping, a placement or why not
    return placement


def sampled(cycle: Cycle, options: AllocateOptions, cache: dict[tuple, Any], want: int) -> tuple[Placement, Reasons]:
    """kube-scheduler's search on a big cluster (:mod:`.sampling`): nodes in its order from where the last
    pod's search stopped, each filtered (its class's outcome, worked out when first met) and its devices
    asked until ``want`` pass; only those are scored. The placement, and why each node looked at refused."""
    state = cycle.state
    keys = ClassKeys(cycle)
    outcomes: dict[tuple, Outcome] = {}
    firsts: dict[tuple, str] = {}
    devices = Devices(cycle, options, cache, firsts)
    reasons: Reasons = {}
    complete: dict[str, Outcome] = {}

    def feasible(name: str) -> bool:
        key = keys.of(name)
        if key is None:
            reasons[name] = [REASON_PINNED]
            return False
        done = devices.known(key, name)
        if done is None:
            if key not in outcomes:
                firsts[key] = name
                outcomes[key] = prepared_one(cycle, key, state.loads[name].node, cache)
            done = outcomes[key] if outcomes[key].reasons else devices.outcome(key, outcomes[key], on=name)
            devices.keep(key, name, done)
        if done.reasons:
            reasons[name] = done.reasons
            return False
        complete[name] = done
        return True

    for name, verdict in ranked([(name, complete[name]) for name in state.rotation.scan(want, feasible)]):
        placement = committed(devices, name, verdict, reasons)
        if placement is not None:
            return placement, reasons
    return Placement(cycle.pod), reasons


def exhaustively(
    devices: Devices, keys: dict[str, tuple | None], passed: Passed, reasons: Reasons, skip_failed: bool
) -> Placement | None:
    """Every node that passed the filters asked about its devices, then ranked by the full score. With
    ``skip_failed``, nodes where the pod's claims found no devices before are passed over (they would fail
    again, and fail nodes count for nothing in the scores); None if then no node takes the pod."""
    complete = []
    passed_over = False
    for name, outcome in passed:
        key = keys[name]
        assert key is not None  # pinned-away nodes never pass
        if skip_failed and devices.failed_before(name):
            passed_over = True
            continue
        done = devices.outcome(key, outcome)
        if done.reasons:
            reasons[name] = done.reasons
        else:
            complete.append((name, done))
    for name, verdict in ranked(complete):
        placement = committed(devices, name, verdict, reasons)
        if placement is not None:
            return placement
    return None if passed_over else Placement(devices.pc.pod)


def lazily(devices: Devices, keys: dict[str, tuple | None], passed: Passed, reasons: Reasons) -> Placement | None:
    """When the devices cannot change the ranking (no devices score, no per-node preference to normalise, no
    pack tie-break), nodes are asked about their devices best score first and the first that passes
    wins: the same node the exhaustive ranking picks, with a devices step for few nodes instead of all.
    A node where the pod's claims already found no devices is passed over without asking again (placements
    only fill nodes). None when a devices answer carries a score after all, or when no node takes the
    pod and some were passed over (then every node is asked: the reasons are today's)."""
    passed_over = False
    for name, outcome in lazy_order(passed):
        key = keys[name]
        assert key is not None  # pinned-away nodes never pass
        if devices.failed_before(name):
            passed_over = True
            continue
        done = devices.outcome(key, outcome, on=name)
        if done.reasons:
            reasons[name] = done.reasons
            continue
        assert done.verdict is not None  # nodes pass with a verdict
        if devices_scored(done.verdict):
            return None
        placement = committed(devices, name, done.verdict, reasons)
        if placement is not None:
            return placement
    return None if passed_over else Placement(devices.pc.pod)


def committed(devices: Devices, name: str, verdict: DraVerdict, reasons: Reasons) -> Placement | None:
    """The pod bound to ``name``; or None, with the node's reason noted, when its devices fail for this pod
    (a verdict kept from another node or pod of its class does not hold here)."""
    placement = commit(devices.state, devices.pc, name, verdict, devices.options)
    if placement is None:
        reasons[name] = [REASON_DRA]
    return placement
