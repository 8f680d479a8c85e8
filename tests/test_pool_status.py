"""``drasat pool-status``: every status field, the seed's two requests through the command, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.models.pool_status_request import ResourcePoolStatusRequestSpec
from drasat.models.resource import DeviceTaintRule, ResourceClaim, ResourceSlice
from drasat.solver.report.pool_status import PoolInputs, pool_status

from .shared_inputs import SHARED

CLUSTER = str(Path(__file__).parent / "data" / "pool_status" / "cluster.yaml")
PROFILE = "gpu.example.com/profile"
EXAMPLES = SHARED / "seeds" / "examples"
needs_seeds = pytest.mark.usefixtures("shared")  # skips with the one shared-inputs reason


def run(*args: str, stdin: str | None = None):
    load_all_commands()
    return CliRunner().invoke(cli, ["pool-status", *args], input=stdin, catch_exceptions=False)


def cluster() -> PoolInputs:
    bundle = load_paths([CLUSTER])
    return PoolInputs(bundle.of_kind(ResourceSlice), bundle.of_kind(ResourceClaim), bundle.of_kind(DeviceTaintRule))


def pools(**spec) -> dict:
    status = pool_status(ResourcePoolStatusRequestSpec(**spec), cluster())
    return {p["poolName"]: p for p in status.to_api()["pools"]} | {"": status.to_api()}


def test_counts_of_a_plain_pool():
    node_a = pools(driver="gpu.example.com")["node-a"]
    # generation 2 only (the generation-1 slice with gpu-9 is ignored); gpu-1 allocated (the admin-access
    # result on gpu-0 observes and does not count); gpu-2 NoSchedule taint, gpu-3 NoExecute rule (the
    # effect None rule on gpu-0 does not make it unavailable).
    assert node_a == {
        "driver": "gpu.example.com",
        "poolName": "node-a",
        "nodeName": "node-a",
        "generation": 2,
        "resourceSliceCount": 1,
        "totalDevices": 4,
        "allocatedDevices": 1,
        "availableDevices": 1,
        "unavailableDevices": 2,
    }


def test_incomplete_pool_has_validation_error_and_no_counts():
    node_b = pools(driver="gpu.example.com")["node-b"]
    assert node_b == {
        "driver": "gpu.example.com",
        "poolName": "node-b",
        "nodeName": "node-b",
        "generation": 1,
        "validationError": "PoolIncomplete: pool gpu.example.com/node-b is incomplete: observed "
        "1/2 slices at generation 1",
    }


def test_partition_summary_is_the_exact_maximum_not_a_device_count():
    worker = pools(driver="gpu.example.com", default_partition_type_attribute="gpu.example.com/profile")["worker-1"]
    # 7 memory slices; 1g-at-6 is allocated. Five 2g placements are free and each fits alone, a greedy
    # count in slice order finds 2, the exact maximum is 3 (0-1, 2-3, 4-5). The 7g needs slot 6: 0.
    assert worker["partitionSummary"] == [
        {"attribute": "gpu.example.com/profile", "type": "1g", "total": 7, "allocatable": 6},
        {"attribute": "gpu.example.com/profile", "type": "2g", "total": 5, "allocatable": 3},
        {"attribute": "gpu.example.com/profile", "type": "7g", "total": 1, "allocatable": 0},
    ]
    assert (worker["totalDevices"], worker["allocatedDevices"], worker["availableDevices"]) == (13, 1, 12)


def test_default_attribute_applies_only_where_the_slice_names_none():
    text = (
        Path(CLUSTER)
        .read_text()
        .replace(
            "metadata: {name: worker-1-devices}\nspec:\n",
            "metadata: {name: worker-1-devices}\nspec:\n  partitionTypeAttribute: gpu.example.com/model\n",
        )
    )
    # the slice's own attribute wins over the request's default; these devices have no "model" attribute
    bundle = load_paths(["-"], stdin=_stdin(text))
    status = pool_status(
        ResourcePoolStatusRequestSpec(
            driver="gpu.example.com", pool_name="worker-1", default_partition_type_attribute="gpu.example.com/profile"
        ),
        PoolInputs(bundle.of_kind(ResourceSlice), bundle.of_kind(ResourceClaim)),
    )
    pool = status.pools[0]
    assert pool.partition_summary == [] and pool.total_devices == 13
    assert pool.validation_error == (
        "PartitionTypeMissing: device '2g-at-1' in pool gpu.example.com/worker-1 does "
        "not carry partition type attribute 'gpu.example.com/model'"
    )


def test_without_any_attribute_there_is_no_partition_summary():
    assert "partitionSummary" not in pools(driver="gpu.example.com", pool_name="worker-1")["worker-1"]


def test_non_string_partition_attribute_is_a_validation_error():
    text = Path(CLUSTER).read_text().replace("profile: {string: 7g}", "profile: {int: 7}")
    bundle = load_paths(["-"], stdin=_stdin(text))
    status = pool_status(
        ResourcePoolStatusRequestSpec(
            driver="gpu.example.com", pool_name="worker-1", default_partition_type_attribute="gpu.example.com/profile"
        ),
        PoolInputs(bundle.of_kind(ResourceSlice)),
    )
    assert status.pools[0].validation_error == (
        "PartitionTypeMissing: device '7g' in pool gpu.example.com/worker-1:"
        " partition type attribute 'gpu.example.com/profile' is an int, not "
        "a string"
    )
    assert status.pools[0].partition_summary == []


def test_only_pool_incomplete_errors_count_as_incomplete_in_the_condition():
    """A partition-type error leaves the pool's counts in place: it is not an incomplete pool."""
    text = Path(CLUSTER).read_text().replace("profile: {string: 7g}", "profile: {int: 7}")
    bundle = load_paths(["-"], stdin=_stdin(text))
    status = pool_status(
        ResourcePoolStatusRequestSpec(
            driver="gpu.example.com", default_partition_type_attribute="gpu.example.com/profile"
        ),
        PoolInputs(bundle.of_kind(ResourceSlice)),
    )
    assert [p.pool_name for p in status.pools if p.validation_error] == ["node-b", "worker-1"]
    assert status.conditions[0].message == "Calculated status for 3 pools (1 incomplete)"


def test_shareable_summary():
    nic = pools(driver="nic.example.com")["node-c"]
    assert nic["shareableSummary"] == {
        "fullyAvailableDevices": 1,
        "partiallyAvailableDevices": 1,
        "capacity": [{"name": "nic.example.com/bandwidth", "total": "20Gi", "consumed": "4Gi", "available": "16Gi"}],
    }
    assert "shareableSummary" not in pools(driver="gpu.example.com")["node-a"]


def test_pool_count_limit_filter_and_condition():
    everything = pools(driver="gpu.example.com", limit=2)[""]
    assert everything["poolCount"] == 3
    assert [p["poolName"] for p in everything["pools"]] == ["node-a", "node-b"]
    condition = everything["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == ("Complete", "True", "CalculationComplete")
    assert condition["message"] == "Calculated status for 2 pools (1 incomplete)"
    one = pools(driver="gpu.example.com", pool_name="node-a")[""]
    assert one["poolCount"] == 1 and one["conditions"][0]["message"] == "Calculated status for 1 pools"


@needs_seeds
def test_seed_check_gpus_request_through_the_command():
    result = run("-o", "json", str(EXAMPLES / "seed000-14.yaml"), CLUSTER)
    assert result.exit_code == 0, result.stderr
    answered = json.loads(result.stdout)
    assert answered["metadata"]["name"] == "check-gpus" and answered["spec"] == {"driver": "example.com/gpu"}
    # "example.com/gpu" is not a valid driver name (the seed's typo): no pool can match, and stderr says so
    assert answered["status"]["poolCount"] == 0 and answered["status"]["pools"] == []
    assert "not a valid driver name" in result.stderr


@needs_seeds
def test_seed_partition_request_through_the_command():
    result = run(str(EXAMPLES / "seed000-16.yaml"), CLUSTER)
    assert result.exit_code == 0, result.stderr
    answered = yaml.safe_load(result.stdout)
    assert answered["kind"] == "ResourcePoolStatusRequest"
    status = answered["status"]
    assert status["poolCount"] == 3
    worker = next(p for p in status["pools"] if p["poolName"] == "worker-1")
    assert {p["type"]: p["allocatable"] for p in worker["partitionSummary"]} == {"1g": 6, "2g": 3, "7g": 0}


def test_flags_and_table_output():
    result = run(
        "--driver",
        "gpu.example.com",
        "--pool",
        "worker-1",
        "--default-partition-type-attribute",
        "gpu.example.com/profile",
        "-o",
        "table",
        CLUSTER,
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[1].split() == ["worker-1", "13", "1", "12", "1g=6/7,2g=3/5,7g=0/1"]


def test_two_requests_give_a_list():
    request = (
        "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourcePoolStatusRequest\nmetadata: {name: %s}\n"
        "spec: {driver: %s}\n---\n"
    )
    text = request % ("gpus", "gpu.example.com") + request % ("nics", "nic.example.com")
    result = run("-o", "json", "-", CLUSTER, stdin=text)
    assert result.exit_code == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["kind"] == "List" and [i["status"]["poolCount"] for i in listing["items"]] == [3, 1]


@pytest.mark.parametrize(
    "args, stdin, message",
    [
        (["--limit", "1001", "--driver", "d.example.com", CLUSTER], None, "--limit: must be between 1 and 1000"),
        ([CLUSTER], None, "no ResourcePoolStatusRequest in the input"),
        (["--pool", "x", CLUSTER], None, "need --driver"),
        (
            ["-", CLUSTER],
            "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourcePoolStatusRequest\nmetadata: {name: big}\n"
            "spec: {driver: gpu.example.com, limit: 5000}\n",
            "<stdin>[0]: ResourcePoolStatusRequest/big: spec.limit: must be between 1 and 1000, not 5000",
        ),
        (
            ["-"],
            "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourcePoolStatusRequest\nmetadata: {name: typo}\n"
            "spec: {drivr: gpu.example.com}\n",
            "ResourcePoolStatusRequest/typo: spec",
        ),
        (
            ["--driver", "gpu.example.com", "--default-partition-type-attribute", "bad attr!", CLUSTER],
            None,
            '--default-partition-type-attribute: "bad attr!" must be fully qualified',
        ),
        (
            ["--driver", "gpu.example.com", "--default-partition-type-attribute", "profile", CLUSTER],
            None,
            '--default-partition-type-attribute: "profile" must be fully qualified',
        ),
        (
            ["-", CLUSTER],
            "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourcePoolStatusRequest\nmetadata: {name: q}\n"
            "spec: {driver: gpu.example.com, defaultPartitionTypeAttribute: gpu.example.com/bad-name}\n",
            '<stdin>[0]: ResourcePoolStatusRequest/q: spec.defaultPartitionTypeAttribute: name "bad-name" must be a C '
            "identifier",
        ),
    ],
)
def test_bad_input_exits_2_with_nothing_on_stdout(args, stdin, message):
    result = run(*args, stdin=stdin)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in result.stderr


def _stdin(text: str):
    import io

    return io.StringIO(text)


def test_over_committed_pool_has_no_headroom():
    text = (
        Path(CLUSTER)
        .read_text()
        .replace(
            "device: 1g-at-6}",
            "device: 1g-at-6}\n      - {request: r, driver: gpu.example.com, pool: worker-1, device: 7g}",
        )
    )
    bundle = load_paths(["-"], stdin=_stdin(text))
    status = pool_status(
        ResourcePoolStatusRequestSpec(
            driver="gpu.example.com", pool_name="worker-1", default_partition_type_attribute=PROFILE
        ),
        PoolInputs(bundle.of_kind(ResourceSlice), bundle.of_kind(ResourceClaim)),
    )
    pool = status.pools[0]
    assert pool.allocated_devices == 2  # 7g and 1g-at-6 both draw on s6: over-committed
    assert [(p.type, p.allocatable) for p in pool.partition_summary] == [("1g", 0), ("2g", 0), ("7g", 0)]


def test_available_counts_never_go_below_zero():
    text = (
        Path(CLUSTER)
        .read_text()
        .replace(
            "consumedCapacity: {nic.example.com/bandwidth: 4Gi}", "consumedCapacity: {nic.example.com/bandwidth: 30Gi}"
        )
    )
    text = text.replace(
        "deviceSelector: {driver: gpu.example.com, pool: node-a, device: gpu-3}",
        "deviceSelector: {driver: gpu.example.com, pool: node-a}",
    )  # all four tainted NoExecute
    bundle = load_paths(["-"], stdin=_stdin(text))
    cluster = PoolInputs(bundle.of_kind(ResourceSlice), bundle.of_kind(ResourceClaim), bundle.of_kind(DeviceTaintRule))
    node_a = pool_status(ResourcePoolStatusRequestSpec(driver="gpu.example.com", pool_name="node-a"), cluster).pools[0]
    assert (node_a.total_devices, node_a.allocated_devices, node_a.unavailable_devices) == (4, 1, 4)
    assert node_a.available_devices == 0  # 4 - 1 - 4, clamped as the controller does
    nic = pool_status(ResourcePoolStatusRequestSpec(driver="nic.example.com"), cluster).pools[0]
    capacity = nic.shareable_summary.capacity[0] if nic.shareable_summary else None
    assert capacity is not None and (str(capacity.consumed), str(capacity.available)) == ("30Gi", "0")


def test_partition_summary_is_sorted_by_attribute_then_type():
    result = run(
        "--driver",
        "gpu.example.com",
        "-o",
        "json",
        str(Path(__file__).parent / "data" / "pool_status" / "two-attributes.yaml"),
    )
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)["status"]["pools"][0]["partitionSummary"]
    assert [(s["attribute"], s["type"]) for s in summary] == [
        ("gpu.example.com/profile", "b"),
        ("gpu.example.com/zzz", "a"),
    ]


def test_an_unknown_taint_effect_is_refused():
    text = Path(CLUSTER).read_text().replace("value: Broken, effect: NoExecute}", "value: Broken, effect: Bogus}")
    result = run("--driver", "gpu.example.com", "-", stdin=text)
    assert result.exit_code == 2 and result.stdout == ""
    assert (
        "DeviceTaintRule" in result.stderr
        and 'spec.taint.effect: "Bogus" is not a device taint effect' in result.stderr
    )


def test_an_allocated_tainted_device_counts_as_allocated_and_as_unavailable():
    """Issue 26 asked that such a device not be counted twice; the controller (calculatePoolStatus:
    ``max(0, totalDevices - allocDeviceCount - unavailDevices)``) and the API's own field doc ("This equals
    TotalDevices - AllocatedDevices - UnavailableDevices") count it in both, and so does drasat."""
    text = Path(CLUSTER).read_text()
    text = text.replace(
        "deviceSelector: {driver: gpu.example.com, pool: node-a, device: gpu-3}",
        "deviceSelector: {driver: gpu.example.com, pool: node-a, device: gpu-1}",
    )  # the NoExecute rule now taints the allocated gpu-1 instead of the free gpu-3
    bundle = load_paths(["-"], stdin=_stdin(text))
    cluster = PoolInputs(bundle.of_kind(ResourceSlice), bundle.of_kind(ResourceClaim), bundle.of_kind(DeviceTaintRule))
    node_a = pool_status(ResourcePoolStatusRequestSpec(driver="gpu.example.com", pool_name="node-a"), cluster).pools[0]
    assert (node_a.total_devices, node_a.allocated_devices, node_a.unavailable_devices) == (4, 1, 2)
    assert node_a.available_devices == 1  # gpu-0 and gpu-3 are free and untainted, yet 4 - 1 - 2 = 1
