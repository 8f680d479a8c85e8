"""``drasat preempt`` / ``preempt``: kube-scheduler's victims by hand, the fewest by brute force.

The brute force builds the cluster without each candidate set of victims (their pods and claims gone, as
the controller deletes a pod's generated claims) and asks the exhaustive oracle whether the pod fits.
"""

from __future__ import annotations

import json
from itertools import combinations
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli
from drasat.solver import preempt

from .capacity_factory import classes_and_templates, fits_on_node, partitioned_node, pending_pod, running
from .cluster_factory import make_cluster

# One GPU of 4 units: a half partition held at priority 5, two quarters at priority 1 — full.
HELD = {
    "h": ("gpu-0-half-0", "half", 5),
    "q1": ("gpu-0-quarter-2", "quarter", 1),
    "q2": ("gpu-0-quarter-3", "quarter", 1),
}


def _docs(held: dict[str, tuple[str, str, int]], labels: dict[str, dict] | None = None, extra: tuple = ()) -> list:
    out = [*classes_and_templates(), *partitioned_node("a")]
    for name, (device, profile, priority) in held.items():
        out += running("a", device, profile, priority, pod_name=name, labels=(labels or {}).get(name))
    return [*out, *extra, pending_pod("urgent", "half", priority=10)]


def _urgent(cluster: Any) -> Any:
    return next(p for p in cluster.pods if p.name == "urgent")


def _fewest_by_brute_force(held: dict[str, tuple[str, str, int]]) -> set[frozenset[str]]:
    """Every smallest set of lower-priority pods whose eviction lets the pod fit."""
    for size in range(len(held) + 1):
        found = set()
        for victims in combinations(sorted(held), size):
            kept = {n: v for n, v in held.items() if n not in victims}
            cluster = make_cluster(*_docs(kept))
            if fits_on_node(cluster, "a", [_urgent(cluster)]):
                found.add(frozenset(victims))
        if found:
            return found
    return set()


def test_kubernetes_evicts_two_small_pods_where_evicting_one_larger_pod_is_fewest() -> None:
    """Reprieving most important first keeps h (priority 5), so both quarters go; evicting h alone frees the
    two units the half partition needs."""
    result = preempt(make_cluster(*_docs(HELD)), _urgent(make_cluster(*_docs(HELD))))
    assert result.kubernetes is not None and result.fewest is not None
    assert (result.kubernetes.node, sorted(result.kubernetes.labels())) == ("a", ["default/q1", "default/q2"])
    assert {frozenset(p.name for p in result.fewest.pods)} <= _fewest_by_brute_force(HELD)
    assert result.fewest.labels() == ["default/h"] and result.proven
    assert "reprieves the most important pods first" in result.why


def test_a_disruption_budget_on_the_small_pods_makes_kubernetes_evict_the_larger_one() -> None:
    """The quarters' budget allows no disruption: they are reprieved first, and h becomes the victim."""
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "small", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "small"}}, "maxUnavailable": 0},
    }
    labels = {"q1": {"app": "small"}, "q2": {"app": "small"}}
    cluster = make_cluster(*_docs(HELD, labels, (budget,)))
    result = preempt(cluster, _urgent(cluster))
    assert result.kubernetes is not None and result.kubernetes.labels() == ["default/h"]
    assert result.kubernetes.violations == 0
    assert result.why == "kube-scheduler's victims are the fewest"


def test_only_lower_priority_pods_are_victims() -> None:
    held = {**HELD, "h": ("gpu-0-half-0", "half", 10)}  # as important as the pod: never a victim
    cluster = make_cluster(*_docs(held))
    result = preempt(cluster, _urgent(cluster))
    assert result.kubernetes is not None and sorted(result.kubernetes.labels()) == ["default/q1", "default/q2"]
    assert result.fewest is not None and len(result.fewest.pods) == 2


def test_a_pod_that_fits_already_needs_no_victims_and_one_that_never_fits_gets_none() -> None:
    cluster = make_cluster(*_docs({"q1": HELD["q1"]}))
    assert preempt(cluster, _urgent(cluster)).fits_now == "a"
    held = {n: (d, p, 20) for n, (d, p, _) in HELD.items()}  # all more important than the pod
    cluster = make_cluster(*_docs(held))
    result = preempt(cluster, _urgent(cluster))
    assert (result.helps, result.kubernetes, result.fewest) == (False, None, None)


def _write(tmp_path: Any, docs: list) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_the_command_prints_both_answers_in_each_form(tmp_path: Any) -> None:
    path = _write(tmp_path, _docs(HELD))
    runner = CliRunner()
    table = runner.invoke(cli, ["preempt", "default/urgent", path])
    assert table.exit_code == 0, table.output
    assert "the fewest victims proven" in table.stdout.splitlines()[0]
    rows = [line.split() for line in table.stdout.splitlines() if line.startswith(("kube-scheduler ", "fewest "))]
    assert rows == [
        ["kube-scheduler", "a", "default/q1", "1"],
        ["kube-scheduler", "a", "default/q2", "1"],
        ["fewest", "a", "default/h", "5"],
    ]
    data = json.loads(runner.invoke(cli, ["preempt", "-o", "json", "urgent", path]).stdout)
    assert [v["pod"] for v in data["fewest"]["victims"]] == ["default/h"]
    assert yaml.safe_load(runner.invoke(cli, ["preempt", "-o", "yaml", "urgent", path]).stdout)["proven"] is True


@pytest.mark.parametrize("name,message", [("nobody", "no Pod nobody"), ("default/h", "already bound to node a")])
def test_an_unknown_or_bound_pod_exits_2(tmp_path: Any, name: str, message: str) -> None:
    result = CliRunner().invoke(cli, ["preempt", name, _write(tmp_path, _docs(HELD))])
    assert result.exit_code == 2 and result.stdout == "" and message in result.stderr


def test_no_help_from_preemption_exits_1(tmp_path: Any) -> None:
    held = {n: (d, p, 20) for n, (d, p, _) in HELD.items()}
    result = CliRunner().invoke(cli, ["preempt", "urgent", _write(tmp_path, _docs(held))])
    assert result.exit_code == 1 and "no eviction" in result.stdout
