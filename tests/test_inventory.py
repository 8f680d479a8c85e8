"""``drasat inventory``: every device state, counters used and left, the fragmentation line, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

CLUSTER = str(Path(__file__).parent / "data" / "pool_status" / "cluster.yaml")
PROFILE = "gpu.example.com/profile"


def run(*args: str, stdin: str | None = None):
    load_all_commands()
    return CliRunner().invoke(cli, ["inventory", *args], input=stdin, catch_exceptions=False)


def nodes(*args: str, stdin: str | None = None) -> dict:
    result = run("-o", "json", "--default-partition-type-attribute", PROFILE, *args, stdin=stdin)
    assert result.exit_code == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["kind"] == "List" and {i["kind"] for i in listing["items"]} <= {"NodeInventory"}
    return {n["metadata"]["name"]: n for n in listing["items"]}


def device(report: dict, name: str) -> dict:
    return next(d for d in report["devices"] if d["name"] == name)


def test_free_allocated_and_tainted():
    node_a = nodes(CLUSTER)["node-a"]
    assert device(node_a, "gpu-0")["state"] == "free"  # only an effect-None rule and an admin-access observer
    assert (device(node_a, "gpu-1")["state"], device(node_a, "gpu-1")["claims"]) == ("allocated", ["default/train"])
    assert device(node_a, "gpu-2")["state"] == "tainted"
    assert device(node_a, "gpu-2")["taints"] == ["example.com/overheating=true:NoSchedule"]
    assert device(node_a, "gpu-3")["taints"] == ["example.com/unhealthy=Broken:NoExecute"]  # from the rule
    assert [d["name"] for d in node_a["devices"]] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]  # generation 2 only


def test_shared_device_reports_shares_and_capacity_left():
    nic = device(nodes(CLUSTER)["node-c"], "nic-0")
    assert nic["state"] == "shared" and nic["claims"] == ["default/stream"]
    assert nic["capacityLeft"] == {"nic.example.com/bandwidth": "6Gi"}


def test_blocked_by_counters_and_incomplete_pool():
    worker = nodes(CLUSTER)["worker-1"]
    seven = device(worker, "7g")
    assert (seven["state"], seven["reason"]) == ("blocked", "not enough gpu-0/s6 left")
    assert {d["state"] for d in nodes(CLUSTER)["node-b"]["devices"]} == {"incomplete"}


def test_blocked_by_compatibility_groups():
    # the allocated 1g-at-6 declares group "mig"; the other 1g partitions declare none, so they cannot join it
    text = (
        Path(CLUSTER)
        .read_text()
        .replace(
            "      counters:\n        s6: {value: '1'}\n  - name: 7g",
            "      counters:\n        s6: {value: '1'}\n      compatibilityGroups: [mig]\n  - name: 7g",
        )
    )
    assert "compatibilityGroups" in text
    worker = nodes("-", stdin=text)["worker-1"]
    assert device(worker, "1g-at-0")["state"] == "blocked"
    assert device(worker, "1g-at-0")["reason"] == "compatibility groups of allocated devices exclude it"


def test_counters_used_and_left_and_fragmentation_line():
    worker = nodes(CLUSTER)["worker-1"]
    s6 = next(c for c in worker["counters"] if c["counter"] == "s6")
    assert (s6["capacity"], s6["used"], s6["left"]) == ("1", "1", "0")
    assert sum(1 for c in worker["counters"] if c["used"] == "0") == 6
    assert worker["largestFit"] == [
        {"driver": "gpu.example.com", "partitionType": "1g", "devices": 6},
        {"driver": "gpu.example.com", "partitionType": "2g", "devices": 3},
        {"driver": "gpu.example.com", "partitionType": "7g", "devices": 0},
    ]
    assert worker["fragmentation"] == "worker-1: largest request that still fits: gpu.example.com 1g×6, 2g×3, 7g×0"
    assert nodes(CLUSTER)["node-a"]["freeWholeDevices"] == {"gpu.example.com": 1}


def test_table_and_wide_output_for_one_node():
    table = run("--node", "node-a", CLUSTER)
    assert table.exit_code == 0 and "default/train" in table.stdout and "node-b" not in table.stdout
    fits = table.stdout.split("\n\n")[-1].splitlines()
    assert fits[0].split() == ["NODE", "DRIVER", "LARGEST", "FIT", "FREE", "WHOLE"]
    assert fits[1].split() == ["node-a", "gpu.example.com", "whole×1", "1"]  # no partitions: its whole devices
    assert "COUNTER SETS" not in table.stdout and "REASON" not in table.stdout
    wide = run("-o", "wide", "--node", "worker-1", "--default-partition-type-attribute", PROFILE, CLUSTER)
    assert "COUNTER SETS" in wide.stdout and "1g×6,2g×3,7g×0" in wide.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--node", "nowhere", CLUSTER], "--node: no device or counter set of any ResourceSlice is on node 'nowhere'"),
        (["missing.yaml"], "missing.yaml: no such file or directory"),
    ],
)
def test_bad_input_exits_2(args, message):
    result = run(*args)
    assert result.exit_code == 2 and result.stdout == "" and message in result.stderr


def test_over_committed_counter_blocks_every_partition_and_zeroes_headroom():
    # 2g-at-0 and 2g-at-1 are both allocated: s1 is used twice, so the pool is over-committed
    text = (
        Path(CLUSTER)
        .read_text()
        .replace(
            "device: 1g-at-6}",
            "device: 1g-at-6}\n      - {request: r, "
            "driver: gpu.example.com, pool: worker-1, device: 2g-at-0}\n      - {"
            "request: r, driver: gpu.example.com, pool: worker-1, device: 2g-at-1}",
        )
    )
    assert text.count("device: 2g-at-0}") == 1
    worker = nodes("-", stdin=text)["worker-1"]
    free = [d for d in worker["devices"] if d["state"] not in ("allocated",)]
    assert {d["state"] for d in free} == {"blocked"}
    assert {d["reason"] for d in free} == {"a counter of this pool is over-committed"}
    assert {f["devices"] for f in worker["largestFit"]} == {0}


def test_cluster_wide_slices_are_listed_under_all_nodes():
    text = (
        Path(CLUSTER)
        .read_text()
        .replace("  driver: nic.example.com\n  nodeName: node-c\n", "  driver: nic.example.com\n  allNodes: true\n")
    )
    assert "allNodes: true" in text
    found = nodes("-", stdin=text)
    assert [d["name"] for d in found["(all nodes)"]["devices"]] == ["nic-0", "nic-1"] and "node-c" not in found


INVENTORY_DATA = Path(__file__).parent / "data" / "inventory"


def test_shares_are_counted_per_allocation_result_not_per_claim():
    result = run("-o", "wide", str(INVENTORY_DATA / "three-shares-one-claim.yaml"))
    assert result.exit_code == 0, result.stderr
    assert "3 shares: a/s1; bandwidth 4Gi left" in result.stdout
    nic = device(nodes(str(INVENTORY_DATA / "three-shares-one-claim.yaml"))["node-c"], "nic-0")
    assert (nic["shares"], nic["claims"]) == (3, ["a/s1"])


def test_capacity_left_of_an_overconsumed_shared_device_is_zero_not_negative():
    nic = device(nodes(str(INVENTORY_DATA / "overcommitted-share.yaml"))["node-c"], "nic-0")
    assert nic["capacityLeft"] == {"bandwidth": "0"}


def test_free_whole_devices_count_overlapping_partitions_by_exact_headroom():
    """Without a partition type attribute the 7-slice GPU's partitions are untyped: 11 are free, but
    they overlap, and with 1g-at-6 allocated at most six more (the other 1g) fit together."""
    result = run("-o", "json", CLUSTER)
    assert result.exit_code == 0, result.stderr
    worker = {n["metadata"]["name"]: n for n in json.loads(result.stdout)["items"]}["worker-1"]
    assert worker["freeWholeDevices"] == {"gpu.example.com": 6}


def test_an_unknown_device_taint_effect_is_refused():
    text = Path(CLUSTER).read_text().replace("effect: NoSchedule}", "effect: Sometimes}", 1)
    result = run("-", stdin=text)
    assert result.exit_code == 2 and result.stdout == ""
    assert 'taints[0].effect: "Sometimes" is not a device taint effect' in result.stderr
