"""``drasat scale-up`` / ``scale_up``: the fewest, cheapest nodes from templates, checked against brute force,
beside cluster-autoscaler's first-fit-decreasing estimate (which adds more nodes on the bin-packing cases)."""

from __future__ import annotations

import json
from itertools import product
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli
from drasat.solver import node_templates, scale_up, verify
from drasat.solver.capacity.scale_up import with_copies
from drasat.solver.scheduling.pods import pending_pods

from .capacity_factory import DRIVER, fits_on_node
from .cluster_factory import make_cluster, node, pod

SIZES = {"four": 4, "three": 3, "two": 2}  # a 9-unit GPU's partitions, two or more of each


def _gpu_node(name: str, cpu: str = "16", **annotations: str) -> list[dict[str, Any]]:
    """A Node with one 9-unit partitionable GPU: partitions of 4, 3 and 2 units (enough devices of each)."""
    pool = {"name": name, "generation": 1, "resourceSliceCount": 2}
    devices = [
        {
            "name": f"{size}-{i}",
            "attributes": {"size": {"string": size}},
            "consumesCounters": [{"counterSet": "gpu-0", "counters": {"units": {"value": str(units)}}}],
        }
        for size, units in SIZES.items()
        for i in range(9 // units)
    ]
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = {f"capacity.drasat.io/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return [
        {**node(name, cpu=cpu), "metadata": meta},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-counters"},
            "spec": {
                "driver": DRIVER,
                "nodeName": name,
                "pool": pool,
                "sharedCounters": [{"name": "gpu-0", "counters": {"units": {"value": "9"}}}],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": pool, "devices": devices},
        },
    ]


def _classes() -> list[dict[str, Any]]:
    out = []
    for size in SIZES:
        expression = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].size == "{size}"'
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": size},
                "spec": {"selectors": [{"cel": {"expression": expression}}]},
            }
        )
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": size, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": size}}]}}},
            }
        )
    return out


def _partition_pod(name: str, size: str) -> dict[str, Any]:
    return pod(name, claims=[{"name": "gpu", "resourceClaimTemplateName": size}])


def _templates(*docs: Any) -> list:
    cluster = make_cluster(*docs)
    return node_templates([*cluster.nodes, *cluster.slices], lambda _: None)


def _all_fit(cluster: Any, nodes: list[str]) -> bool:
    """Brute force: the pending pods placed, one node each, every node's share checked by the exhaustive oracle
    (pods tried in order, each on every node where the pods so far still fit: backtracking over all assignments)."""
    pods = pending_pods(cluster)
    memo: dict[tuple[str, frozenset[int]], bool] = {}

    def fits(n: str, chosen: frozenset[int]) -> bool:
        if (n, chosen) not in memo:
            memo[n, chosen] = fits_on_node(cluster, n, [pods[i] for i in sorted(chosen)])
        return memo[n, chosen]

    def place(i: int, shares: dict[str, frozenset[int]]) -> bool:
        if i == len(pods):
            return True
        for n in nodes:
            grown = shares[n] | {i}
            if fits(n, grown) and place(i + 1, {**shares, n: grown}):
                return True
        return False

    return place(0, {n: frozenset() for n in nodes})


def _fewest_by_brute_force(cluster: Any, templates: list, counts: list[range]) -> tuple[float, int]:
    """The least (cost, nodes) of copies per template (``counts``) with which every pending pod fits."""
    best = None
    for chosen in product(*counts):
        cost = sum(float(t.cost) * k for t, k in zip(templates, chosen))
        key = (cost, sum(chosen))
        if best is not None and key >= best:
            continue
        grown, _ = with_copies(cluster, [_with_count(t, k) for t, k in zip(templates, chosen)])
        nodes = [n.name for n in grown.nodes]
        if _all_fit(grown, nodes):
            best = key
    assert best is not None
    return best


def _with_count(template: Any, k: int) -> Any:
    from dataclasses import replace

    return replace(template, max_count=k)


def _checked(result: Any) -> None:
    assert [v for c in result.checks for v in verify(c.problem, c.allocations)] == []


BIN_PACKING = [4, 4, 3, 3, 2, 2]  # first fit decreasing: 3 bins of 9; the optimum: 2 (4+3+2 twice)


def test_on_cpu_first_fit_decreasing_adds_three_nodes_where_two_suffice() -> None:
    docs = [node("existing", cpu="1"), *[pod(f"p{i}", requests={"cpu": str(c)}) for i, c in enumerate(BIN_PACKING)]]
    cluster = make_cluster(*docs)
    templates = _templates(node("big", cpu="9"))
    result = scale_up(cluster, templates, max_nodes=4)
    assert (len(result.added), result.proven, result.pending) == (2, True, [])
    assert result.ffd is not None and result.ffd.added == 3
    assert _fewest_by_brute_force(cluster, templates, [range(4)]) == (2.0, 2)
    _checked(result)


def test_on_partitionable_gpus_first_fit_decreasing_adds_three_nodes_where_two_suffice() -> None:
    """The same bin packing in GPU partitions: one 9-unit GPU a node, pods asking for 4, 4, 3, 3, 2 and 2 units."""
    names = {4: "four", 3: "three", 2: "two"}
    docs = [*_classes(), *[_partition_pod(f"p{i}", names[u]) for i, u in enumerate(BIN_PACKING)]]
    cluster = make_cluster(*docs)
    templates = _templates(*_classes(), *_gpu_node("gpu-node"))
    result = scale_up(cluster, templates, max_nodes=4)
    assert (len(result.added), result.proven, result.cost_bound) == (2, True, 2.0)
    assert result.ffd is not None and (result.ffd.added, result.ffd.pending) == (3, [])
    assert _fewest_by_brute_force(cluster, templates, [range(4)]) == (2.0, 2)
    assert all(devices for _, devices in result.placed.values())
    _checked(result)


def test_the_cheapest_mix_of_templates_is_chosen_as_brute_force_chooses_it() -> None:
    """Three pods of 4 cpu: a small node (4 cpu, cost 1, at most 2) or a big one (9 cpu, cost 2.5)."""
    docs = [pod(f"p{i}", requests={"cpu": "4"}) for i in range(3)]
    cluster = make_cluster(*docs)
    small = {
        **node("small", cpu="4"),
        "metadata": {"name": "small", "annotations": {"capacity.drasat.io/max-count": "2"}},
    }
    big = {**node("big", cpu="9"), "metadata": {"name": "big", "annotations": {"capacity.drasat.io/cost": "2.5"}}}
    templates = _templates(small, big)
    result = scale_up(cluster, templates, max_nodes=4)
    expected = _fewest_by_brute_force(cluster, templates, [range(3), range(3)])
    assert (result.cost, len(result.added)) == expected == (3.5, 2)
    assert result.per_template() == {"small": 1, "big": 1} and result.proven


def test_existing_room_is_used_first_and_a_pod_too_big_for_any_template_stays_pending() -> None:
    docs = [node("existing", cpu="4"), pod("fits", requests={"cpu": "3"}), pod("huge", requests={"cpu": "64"})]
    result = scale_up(make_cluster(*docs), _templates(node("big", cpu="9")), max_nodes=3)
    assert (result.added, result.pending, result.placed["default/fits"][0]) == ([], ["default/huge"], "existing")


# --- the command line ------------------------------------------------------------------------------------


def _write(tmp_path: Any, name: str, docs: list[dict[str, Any]]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_the_command_prints_the_answer_and_first_fit_decreasing_in_each_form(tmp_path: Any) -> None:
    names = {4: "four", 3: "three", 2: "two"}
    cluster = _write(
        tmp_path, "c.yaml", [*_classes(), *[_partition_pod(f"p{i}", names[u]) for i, u in enumerate(BIN_PACKING)]]
    )
    template = _write(tmp_path, "t.yaml", _gpu_node("gpu-node", cost="2"))
    runner = CliRunner()
    table = runner.invoke(cli, ["scale-up", "--node-template", template, "--max-nodes", "4", cluster])
    assert table.exit_code == 0, table.output
    assert "add 2 nodes (gpu-node×2), cost 4, proven optimal" in table.stdout
    assert "would add 3 (gpu-node×3), cost 6" in table.stdout
    data = json.loads(runner.invoke(cli, ["scale-up", "--node-template", template, "-o", "json", cluster]).stdout)
    assert (data["nodesAdded"], data["firstFitDecreasing"]["nodesAdded"], len(data["pods"])) == (2, 3, 6)
    flagged = runner.invoke(
        cli, ["scale-up", "--node-template", template, "--cost", "gpu-node=1", "-o", "yaml", cluster]
    )
    assert yaml.safe_load(flagged.stdout)["cost"] == 2


def test_a_pod_that_fits_nowhere_exits_1(tmp_path: Any) -> None:
    cluster = _write(tmp_path, "c.yaml", [pod("huge", requests={"cpu": "64"})])
    template = _write(tmp_path, "t.yaml", [node("big", cpu="9")])
    result = CliRunner().invoke(cli, ["scale-up", "--node-template", template, cluster])
    assert result.exit_code == 1 and "pod default/huge fits nowhere" in result.stderr


@pytest.mark.parametrize(
    "template,where",
    [
        (
            lambda: [
                *_gpu_node("gpu-node")[:2],
                {**_gpu_node("gpu-node")[2], "spec": {**_gpu_node("gpu-node")[2]["spec"], "nodeName": "other"}},
            ],
            "ResourceSlice/gpu-node-gpu: spec.nodeName: names other",
        ),
        (
            lambda: _gpu_node("gpu-node", cost="cheap"),
            "Node/gpu-node: metadata.annotations[capacity.drasat.io/cost]: Invalid value: 'cheap'",
        ),
        (lambda: _gpu_node("gpu-node", max_count="-3"), "metadata.annotations[capacity.drasat.io/max-count]"),
    ],
)
def test_bad_templates_exit_2_naming_file_object_and_field(tmp_path: Any, template: Any, where: str) -> None:
    cluster = _write(tmp_path, "c.yaml", [*_classes(), _partition_pod("p", "two")])
    path = _write(tmp_path, "t.yaml", template())
    result = CliRunner().invoke(cli, ["scale-up", "--node-template", path, cluster])
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "t.yaml" in result.stderr and where in result.stderr


def test_a_bad_cost_flag_exits_2(tmp_path: Any) -> None:
    cluster = _write(tmp_path, "c.yaml", [pod("p")])
    template = _write(tmp_path, "t.yaml", [node("big")])
    for flag in (["--cost", "big"], ["--cost", "big=-1"], ["--max-count", "nope=2"]):
        result = CliRunner().invoke(cli, ["scale-up", "--node-template", template, *flag, cluster])
        assert result.exit_code == 2 and result.stdout == "", (flag, result.output)


def test_a_flag_naming_no_template_says_which_flag_and_the_templates(tmp_path: Any) -> None:
    cluster = _write(tmp_path, "c.yaml", [pod("p")])
    template = _write(tmp_path, "t.yaml", [node("big"), node("small")])
    flags = ["--cost", "nosuch=2.5", "--max-count", "other=3", "--cost", "big=1"]
    result = CliRunner().invoke(cli, ["scale-up", "--node-template", template, *flags, cluster])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: --cost nosuch=2.5: no node template is named nosuch; --max-count other=3: no node template is "
        "named other (templates: big, small)\n"
    )


def test_a_gang_is_placed_whole_or_not_at_all() -> None:
    """Two whole-GPU pods in a gang PodGroup, one GPU a template node: two nodes, or with one node allowed none
    of the gang (one pod alone would not run)."""
    from .capacity_factory import classes_and_templates, partitioned_node, pending_pod

    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }
    pods = [{**pending_pod(f"t{i}", "full")} for i in range(2)]
    for p in pods:
        p["spec"]["schedulingGroup"] = {"podGroupName": "train"}
    cluster = make_cluster(*classes_and_templates(), group, *pods)
    templates = _templates(*classes_and_templates(), *partitioned_node("gpu-node"))
    both = scale_up(cluster, templates, max_nodes=3)
    assert (len(both.added), both.pending, both.proven) == (2, [], True)
    _checked(both)
    one = scale_up(cluster, templates, max_nodes=1)
    assert (one.added, sorted(one.pending)) == ([], ["default/t0", "default/t1"])


def test_when_the_model_is_cut_short_first_fit_decreasings_answer_is_kept_and_verified() -> None:
    """The model's answer, as if time had cut it at four nodes: the estimate's three nodes win, not proven."""
    from dataclasses import replace

    from drasat.solver.capacity.scale_up import Added, _better, _from_estimate

    docs = [*[pod(f"p{i}", requests={"cpu": str(c)}) for i, c in enumerate(BIN_PACKING)]]
    result = scale_up(make_cluster(*docs), _templates(node("big", cpu="9")), max_nodes=4)
    assert result.ffd is not None and not _better(result.ffd, result)
    worse = replace(result, added=[*result.added, Added("big-new-2", "big"), Added("big-new-3", "big")], cost=4.0)
    assert _better(result.ffd, worse)
    kept = _from_estimate(result.ffd, worse)
    assert (len(kept.added), kept.cost, kept.proven, len(kept.placed)) == (3, 3.0, False, 6)
    assert "first-fit-decreasing's" in kept.standing.notes[-1]
    _checked(kept)
