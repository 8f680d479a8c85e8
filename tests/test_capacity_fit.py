"""``drasat fit`` / ``fit_workload``: the most copies of a workload that fit, checked against brute force.

The oracle (``capacity_factory``) asks Kubernetes' exhaustive depth-first allocator node by node and
enumerates; every node's answer also goes through the verifier.
"""

from __future__ import annotations

import json
from itertools import product
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli
from drasat.models.errors import InputError, Location
from drasat.models.workloads import workload_from_data
from drasat.solver import fit_workload, verify
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

from .capacity_factory import (
    classes_and_templates,
    deployment,
    fits_on_node,
    most_on_node,
    partitioned_node,
    pending_pod,
    pod_spec,
)
from .cluster_factory import make_cluster


def _cluster(*docs: Any) -> Any:
    return make_cluster(*classes_and_templates(), *docs)


def _checked(result: Any) -> None:
    assert result.checks, "no node answered"
    assert [v for c in result.checks for v in verify(c.problem, c.allocations)] == []


def _pods_of(workload: Any, pod_set: int = 0):
    def make(i: int) -> Any:
        pod = workload.pod_sets[pod_set].pod.model_copy(deep=True)
        pod.metadata.name = f"oracle-{pod_set}-{i}"
        return pod

    return make


NODES = (
    partitioned_node("a", gpus=1),
    partitioned_node("b", gpus=2, taken=((0, "quarter", 0), (1, "half", 1))),
    partitioned_node("c", gpus=1, cpu="2", taken=((0, "quarter", 3),)),
)


@pytest.mark.parametrize("profile,cpu", [("half", None), ("quarter", "1"), ("full", None)])
def test_a_deployment_fits_as_many_replicas_as_brute_force_finds_node_by_node(profile: str, cpu: str | None) -> None:
    docs = [d for n in NODES for d in n]
    cluster = _cluster(*docs)
    workload = workload_from_data(deployment("web", profile, cpu), Location("web.yaml", 0))
    result = fit_workload(cluster, workload)
    expected = {n: most_on_node(cluster, n, _pods_of(workload)) for n in ("a", "b", "c")}
    assert result.copies == sum(expected.values())
    assert {n: sum(s.values()) for n, s in result.nodes.items()} == {n: k for n, k in expected.items() if k}
    assert result.proven and result.bound == result.copies
    _checked(result)


def _all_fit(cluster: Any, nodes: list[str], makers: list[Any], totals: list[int]) -> bool:
    """Brute force: some split of each pod set's ``totals`` pods over ``nodes`` fits on every node."""
    splits = [
        [s for s in product(range(t + 1), repeat=len(nodes)) if sum(s) == t] for t in totals
    ]  # per pod set, pods per node
    for choice in product(*splits):
        if all(
            fits_on_node(cluster, n, [makers[k](f"{n}-{i}") for k, s in enumerate(choice) for i in range(s[j])])
            for j, n in enumerate(nodes)
        ):
            return True
    return False


def test_a_kueue_workload_fits_whole_copies_split_over_nodes_as_brute_force_says() -> None:
    """One copy: a half partition and two quarters (a whole GPU's units). Node a has one whole GPU, node b two GPUs
    with a quarter taken on each: copies fit only with their pods split over GPUs and nodes."""
    docs = [
        *partitioned_node("a"),
        *partitioned_node("b", gpus=2, taken=((0, "quarter", 0), (1, "quarter", 0))),
    ]
    cluster = _cluster(*docs)
    kueue = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {
            "podSets": [
                {"name": "driver", "count": 1, "template": {"spec": pod_spec("half")}},
                {"name": "workers", "count": 2, "template": {"spec": pod_spec("quarter")}},
            ]
        },
    }
    workload = workload_from_data(kueue, Location("kueue.yaml", 0))
    result = fit_workload(cluster, workload)
    makers = [_pods_of(workload, 0), _pods_of(workload, 1)]
    best = max(c for c in range(4) if c == 0 or _all_fit(cluster, ["a", "b"], makers, [c, 2 * c]))
    assert result.copies == best and result.pods_per_copy == 3
    assert not _all_fit(cluster, ["a", "b"], makers, [best + 1, 2 * best + 2])
    assert sorted(p.pod_set for p in result.pods) == ["driver"] * best + ["workers"] * (2 * best)
    assert result.proven
    _checked(result)


def test_replicas_caps_the_count_and_is_proven_when_reached() -> None:
    cluster = _cluster(*partitioned_node("a"))
    workload = workload_from_data(deployment("web", "quarter"), Location("web.yaml", 0))
    capped = fit_workload(cluster, workload, replicas=2)
    assert (capped.copies, capped.proven, capped.fits) == (2, True, True)
    short = fit_workload(cluster, workload, replicas=9)
    assert (short.copies, short.proven, short.fits, short.bound) == (4, True, False, 4)
    _checked(short)


def test_with_pending_fits_on_what_the_pending_pods_leave() -> None:
    docs = [*partitioned_node("a"), pending_pod("p0", "quarter"), pending_pod("p1", "quarter")]
    cluster = _cluster(*docs)
    workload = workload_from_data(deployment("web", "quarter"), Location("web.yaml", 0))
    assert fit_workload(cluster, workload).copies == 4
    after = fit_workload(cluster, workload, with_pending=True)
    assert (after.copies, after.pending) == (2, (2, 2))
    _checked(after)


def test_a_short_timeout_still_answers_with_a_valid_count_and_says_whether_it_is_proven() -> None:
    docs = [d for n in NODES for d in n]
    cluster = _cluster(*docs)
    workload = workload_from_data(deployment("web", "quarter"), Location("web.yaml", 0))
    result = fit_workload(cluster, workload, options=AllocateOptions(time_limit=0.2))
    best = sum(most_on_node(cluster, n, _pods_of(workload)) for n in ("a", "b", "c"))
    assert result.copies <= best
    assert not result.proven or result.copies == best
    if result.checks:
        _checked(result)


@pytest.mark.parametrize(
    "kind,spec,pods",
    [
        (
            "JobSet",
            {
                "replicatedJobs": [
                    {
                        "name": "w",
                        "replicas": 2,
                        "template": {"spec": {"parallelism": 3, "template": {"spec": pod_spec("quarter")}}},
                    }
                ]
            },
            6,
        ),
        (
            "LeaderWorkerSet",
            {
                "leaderWorkerTemplate": {
                    "size": 4,
                    "leaderTemplate": {"spec": pod_spec(None)},
                    "workerTemplate": {"spec": pod_spec("quarter")},
                }
            },
            4,
        ),
        ("StatefulSet", {"template": {"spec": pod_spec("half")}}, 1),
        ("Job", {"template": {"spec": pod_spec("half")}}, 1),
    ],
)
def test_each_workload_kind_gives_its_pod_sets(kind: str, spec: dict[str, Any], pods: int) -> None:
    workload = workload_from_data({"kind": kind, "metadata": {"name": "w"}, "spec": spec}, Location("w.yaml", 0))
    assert workload.pods_per_copy == pods


# --- the command line ------------------------------------------------------------------------------------


def _files(tmp_path: Any, workload: dict[str, Any], *docs: Any) -> tuple[str, str]:
    w, c = tmp_path / "workload.yaml", tmp_path / "cluster.yaml"
    w.write_text(yaml.safe_dump(workload))
    c.write_text(yaml.safe_dump_all([*classes_and_templates(), *docs]))
    return str(w), str(c)


def test_the_command_prints_a_table_yaml_and_json_and_exits_by_whether_the_replicas_fit(tmp_path: Any) -> None:
    w, c = _files(tmp_path, deployment("web", "half"), *partitioned_node("a"), *partitioned_node("b"))
    runner = CliRunner()
    table = runner.invoke(cli, ["fit", w, c])
    assert table.exit_code == 0, table.output
    assert "fit: 4 copies of Deployment/default/web fit; proven the most" in table.stdout
    assert [line.split()[:2] for line in table.stdout.splitlines()[2:]] == [["a", "2"], ["b", "2"]]
    data = json.loads(runner.invoke(cli, ["fit", "-o", "json", w, c]).stdout)
    assert (data["fit"], data["proven"], [n["pods"] for n in data["nodes"]]) == (4, True, [2, 2])
    assert all(p["devices"] for p in data["pods"])
    short = runner.invoke(cli, ["fit", "--replicas", "5", "-o", "yaml", w, c])
    assert short.exit_code == 1 and yaml.safe_load(short.stdout)["fit"] == 4


@pytest.mark.parametrize(
    "workload,where",
    [
        (
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 1}},
            "Deployment/web: spec.template",
        ),
        (
            {
                "kind": "Workload",
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "metadata": {"name": "k"},
                "spec": {"podSets": [{"name": "a", "count": -1, "template": {"spec": pod_spec(None)}}]},
            },
            "Workload/k: spec.podSets[0].count: Invalid value: -1",
        ),
        (deployment("web", "eighth"), "spec.template.spec.resourceClaims[0].resourceClaimTemplateName"),
        ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}, "holds no workload"),
    ],
)
def test_bad_input_exits_2_naming_file_object_and_field_with_nothing_on_stdout(
    tmp_path: Any, workload: dict[str, Any], where: str
) -> None:
    w, c = _files(tmp_path, workload, *partitioned_node("a"))
    result = CliRunner().invoke(cli, ["fit", w, c])
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert "workload.yaml" in result.stderr and where in result.stderr


def test_with_pending_on_the_command_line_and_zero_replicas(tmp_path: Any) -> None:
    docs = [*partitioned_node("a"), pending_pod("p0", "quarter"), pending_pod("p1", "quarter")]
    w, c = _files(tmp_path, deployment("web", "quarter"), *docs)
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["fit", "--with-pending", "-o", "json", w, c]).stdout)
    assert (data["fit"], data["pendingPlaced"], data["pending"]) == (2, 2, 2)
    assert runner.invoke(cli, ["fit", "--replicas", "0", w, c]).exit_code == 0


def test_huge_replicas_are_refused(tmp_path: Any) -> None:
    w, c = _files(tmp_path, deployment("web", "half"), *partitioned_node("a"))
    result = CliRunner().invoke(cli, ["fit", "--replicas", "100000000", w, c])
    assert result.exit_code == 2 and result.stdout == "" and "--replicas" in result.stderr
    with pytest.raises(InputError):
        workload_from_data(
            {"kind": "Workload", "metadata": {"name": "k"}, "spec": {"podSets": [{"count": 10**9, "template": {}}]}},
            Location("k.yaml", 0),
        )
