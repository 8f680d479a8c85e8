"""One deadline for the whole joint placement (``--timeout``): stages stop where they are, say so, and the
answer so far stays valid. The clock is replaced by a counter, so where the time runs out is fixed."""

from __future__ import annotations

import itertools

import pytest

from drasat.solver.batch import budget
from drasat.solver.batch.passes import NOT_TRIED, group_of
from drasat.solver.batch.placement import schedule_batch
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.verification.verifier import verify

from .cluster_factory import device_class, gpu_slice, make_cluster, node, pod, template, violations


class _Clock:
    """``time.monotonic`` that moves one second each time it is read."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def monotonic(self) -> float:
        return float(next(self._ticks))


@pytest.fixture
def clock(monkeypatch):
    monkeypatch.setattr(budget, "time", _Clock())


def _cluster():
    """Three nodes of two GPUs, eight pods of one GPU each."""
    nodes = [doc for n in range(3) for doc in (node(f"n{n}"), gpu_slice(f"n{n}", 2))]
    pods = [pod(f"p{i}", claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]) for i in range(8)]
    return make_cluster(device_class(), template("one-gpu"), *nodes, *pods)


def test_a_spent_budget_tries_nothing_and_says_where_it_stopped(clock):
    result = schedule_batch(_cluster(), options=AllocateOptions(time_limit=0.5))
    assert [p.node for p in result.placements] == [None] * 8
    assert {p.reason for p in result.placements} == {NOT_TRIED}
    notes = [n for n in result.summary.notes if n.startswith("time ran out (--timeout 0.5 s for the whole run)")]
    assert any("the pass in the scheduler's order" in n and n.endswith(": 8 pods not tried") for n in notes), notes
    assert any("the last one-by-one pass: 8 pods not tried" in n for n in notes), result.summary.notes


@pytest.mark.parametrize("seconds", [3, 6, 10, 14])  # a whole run reads the clock about 25 times
def test_time_running_out_midway_keeps_a_valid_answer_and_notes_what_was_cut(clock, seconds):
    result = schedule_batch(_cluster(), options=AllocateOptions(time_limit=seconds))
    untried = [p for p in result.placements if p.reason == NOT_TRIED]
    cut = [n for n in result.summary.notes if n.startswith("time ran out")]
    assert cut, result.summary.notes
    assert untried or any("configurations" in n or "per-node" in n or "joint model" in n for n in cut)
    assert violations(result.placements) == []
    assert [v for c in result.nodes for v in verify(c.problem, c.allocations)] == []
    assert len({group_of(p.pod) for p in result.placements}) == 1  # no PodGroups here: nothing to split


def test_enough_time_cuts_nothing():
    result = schedule_batch(_cluster(), options=AllocateOptions(time_limit=60))
    assert not [n for n in result.summary.notes if n.startswith("time ran out")]
    assert sum(1 for p in result.placements if p.node) == 6  # three nodes of two GPUs, one GPU a pod
    assert violations(result.placements) == []


def test_the_command_line_keeps_the_answer_so_far_and_says_what_time_cut(clock):
    from click.testing import CliRunner

    from drasat.cli.main import cli, load_all_commands

    from .scenario_runner import OWN

    load_all_commands()
    out = CliRunner().invoke(
        cli, ["schedule", "--batch", "--timeout", "1", "-o", "table", str(OWN / "batch-gang-whole-or-half.yaml")]
    )
    pending = out.stdout.count("<pending>")
    assert out.exit_code == (1 if pending else 0), out.stderr
    assert "time ran out (--timeout 1 s for the whole run)" in out.stderr
    assert out.stdout.count("\n") >= 3 and "Traceback" not in out.stderr  # the header and both pods, as found
