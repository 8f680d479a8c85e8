"""``drasat taint-impact``: each selector kind, tolerations, the controller's exact wording, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

from .shared_inputs import SHARED

CLUSTER = str(Path(__file__).parent / "data" / "taint_impact" / "cluster.yaml")
SEED_RULE = SHARED / "seeds" / "examples" / "seed000-24.yaml"
TAIL = (
    "if the effect was NoExecute. This information will not be updated again. "
    "Recreate the DeviceTaintRule to trigger an update."
)


def rule(selector: str, effect: str = "None", name: str = "dry-run") -> str:
    return (
        f"apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {{name: {name}}}\nspec:\n"
        f"  deviceSelector: {selector}\n"
        f"  taint: {{key: example.com/unhealthy, value: Broken, effect: {effect}}}\n"
    )


def _who(found: dict) -> list[dict]:
    """The evicted pods with their toleration delay (the eviction moment is tested on its own)."""
    return [{k: v for k, v in entry.items() if k in ("pod", "afterSeconds")} for entry in found["evictedPods"]]


def impact(tmp_path: Path, text: str, *extra: str):
    path = tmp_path / "rule.yaml"
    path.write_text(text)
    load_all_commands()
    return CliRunner().invoke(cli, ["taint-impact", *extra, str(path), CLUSTER], catch_exceptions=False)


def data(tmp_path: Path, text: str) -> dict:
    result = impact(tmp_path, text, "-o", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_cel_selector_gives_the_seeds_message_word_for_word(tmp_path: Path):
    t4 = 'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "T4"'
    result = impact(tmp_path, rule(f"{{selectors: [{{cel: {{expression: '{t4}'}}}}]}}"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "DeviceTaintRule dry-run: 3 published devices selected. 1 allocated device selected. 1 pod would be "
        f"evicted in 1 namespace {TAIL}",
        "  would evict pod team-b/p2",
    ]


def test_driver_selector_counts_pods_across_namespaces_and_spares_the_tolerating_one(tmp_path: Path):
    found = data(tmp_path, rule("{driver: gpu.example.com}"))
    assert (found["publishedDevices"], found["allocatedDevices"], found["pods"], found["namespaces"]) == (6, 4, 4, 2)
    # p4's claim tolerates every taint without a time limit; p3's tolerates it for 300 s: delayed, still evicted
    assert _who(found) == [
        {"pod": "team-a/p1"},
        {"pod": "team-a/p6"},
        {"pod": "team-b/p2"},
        {"pod": "team-a/p3", "afterSeconds": 300},
    ]
    assert found["message"] == (
        "6 published devices selected. 4 allocated devices selected. 4 pods would be "
        f"evicted in 2 different namespaces {TAIL}"
    )


def test_pool_selector(tmp_path: Path):
    found = data(tmp_path, rule("{pool: node-2}"))
    assert found["devices"] == [
        "gpu.example.com/node-2/gpu-0",
        "gpu.example.com/node-2/gpu-1",
        "gpu.example.com/node-2/gpu-2",
    ]
    assert (found["allocatedDevices"], _who(found)) == (1, [{"pod": "team-a/p3", "afterSeconds": 300}])


def test_device_selector_matches_the_name_in_every_pool(tmp_path: Path):
    found = data(tmp_path, rule("{device: gpu-0}"))
    assert found["devices"] == ["gpu.example.com/node-1/gpu-0", "gpu.example.com/node-2/gpu-0"]
    assert [p["pod"] for p in found["evictedPods"]] == ["team-a/p1", "team-a/p6", "team-a/p3"]
    assert found["message"].startswith(
        "2 published devices selected. 2 allocated devices selected. 3 pods would be evicted in 1 namespace if"
    )


def test_device_class_selector(tmp_path: Path):
    found = data(tmp_path, rule("{deviceClassName: big-gpu}"))
    assert found["devices"] == [
        "gpu.example.com/node-1/gpu-0",
        "gpu.example.com/node-1/gpu-1",
        "gpu.example.com/node-2/gpu-0",
    ]
    assert found["allocatedDevices"] == 3 and found["pods"] == 3


def test_template_claim_pods_are_found_through_their_status(tmp_path: Path):
    found = data(tmp_path, rule("{driver: nic.example.com}", effect="NoExecute"))
    assert _who(found) == [{"pod": "team-c/px"}]
    # a NoExecute rule is worded as the controller words one: the pods pending eviction, not a dry run
    assert (found["reason"], found["message"]) == ("PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.")


def test_no_selector_selects_nothing(tmp_path: Path):
    found = data(tmp_path, rule("{}").replace("  deviceSelector: {}\n", ""))
    assert found["message"] == (
        "0 published devices selected. 0 allocated devices selected. 0 pods would be "
        f"evicted in 0 different namespaces {TAIL}"
    )


def test_empty_selector_selects_every_device_as_pool_status_does(tmp_path: Path):
    """Upstream ruleMatchesDevice: only a missing selector matches nothing; {} matches every device."""
    found = data(tmp_path, rule("{}", effect="NoSchedule"))
    assert (found["publishedDevices"], found["allocatedDevices"]) == (7, 5)
    load_all_commands()
    status = CliRunner().invoke(
        cli,
        ["pool-status", "--driver", "gpu.example.com", "-o", "json", CLUSTER, str(tmp_path / "rule.yaml")],
        catch_exceptions=False,
    )
    assert status.exit_code == 0, status.stderr
    pools = json.loads(status.stdout)["status"]["pools"]
    assert [(p["availableDevices"], p["unavailableDevices"]) for p in pools] == [(0, 3), (0, 3)]


@pytest.mark.usefixtures("shared")  # skips with the one shared-inputs reason
def test_seed_rule_for_another_driver_selects_nothing_here(tmp_path: Path):
    found = data(tmp_path, SEED_RULE.read_text())
    assert (found["rule"], found["publishedDevices"], found["pods"]) == ("example", 0, 0)


@pytest.mark.parametrize(
    "selector, message",
    [
        (
            "{deviceClassName: missing}",
            "rule.yaml: DeviceTaintRule/dry-run: spec.deviceSelector.deviceClassName: no "
            "DeviceClass named 'missing' in the input",
        ),
        (
            "{selectors: [{cel: {}}]}",
            "rule.yaml[0]: DeviceTaintRule/dry-run: spec.deviceSelector.selectors[0].cel."
            "expression: required: a CEL expression",
        ),
        (
            "{selectors: [{cel: {expression: 'device.nope =='}}]}",
            "rule.yaml: DeviceTaintRule/dry-run: spec.deviceSelector.selectors[0].cel.expression: CEL compile error",
        ),
        ("{drivr: gpu.example.com}", "spec.deviceSelector.drivr"),
        (
            '{selectors: [{cel: {expression: \'device.attributes["gpu.example.com"].model == "T4"\'}}]}',
            'DeviceTaintRule dry-run: selector \'device.attributes["gpu.example.com"].model == "T4"\' failed on device '
            "nic.example.com/node-1/eth0: no such key: model",
        ),
    ],
)
def test_bad_rules_exit_2_with_nothing_on_stdout(tmp_path: Path, selector: str, message: str):
    result = impact(tmp_path, rule(selector))
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr


CASES = str(Path(__file__).parent / "data" / "taint_impact" / "eviction-cases.yaml")
MAINT = (
    "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: maint}\nspec:\n"
    "  deviceSelector: {pool: node-a}\n  taint: {key: maint, value: 'yes', effect: None}\n"
)


def evicted_cases(tmp_path: Path) -> dict[str, int | None]:
    """pod -> afterSeconds (None: at once) for the eviction-cases cluster under the maint rule."""
    path = tmp_path / "maint.yaml"
    path.write_text(MAINT)
    load_all_commands()
    result = CliRunner().invoke(cli, ["taint-impact", "-o", "json", str(path), CASES], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return {entry["pod"]: entry.get("afterSeconds") for entry in json.loads(result.stdout)["evictedPods"]}


def test_unscheduled_pods_and_pods_their_claim_is_not_reserved_for_are_not_evicted(tmp_path: Path):
    evicted = evicted_cases(tmp_path)
    assert "ns1/p-pending" not in evicted and "ns2/p-replaced" not in evicted
    assert "ns6/p-no-uid" in evicted  # no UID on the pod: reservedFor matched by name


def test_the_shortest_matching_toleration_seconds_sets_the_delay(tmp_path: Path):
    assert evicted_cases(tmp_path)["ns3/p-timed"] == 60  # tolerations of 600 s and 60 s


def test_tolerations_count_only_with_effect_no_execute_and_match_as_tolerates_taint(tmp_path: Path):
    evicted = evicted_cases(tmp_path)
    assert evicted["ns4/p-no-effect"] is None  # Exists without effect: NoExecute does not protect
    assert "ns5/p-any-key" not in evicted  # Equal with an empty key tolerates any key with that value


def test_an_unknown_taint_effect_is_refused_in_the_rule_and_in_a_slice(tmp_path: Path):
    result = impact(tmp_path, rule("{driver: gpu.example.com}", effect="Bogus"))
    assert result.exit_code == 2 and result.stdout == ""
    assert (
        'rule.yaml[0]: DeviceTaintRule/dry-run: spec.taint.effect: "Bogus" is not a device taint effect'
        in result.stderr
    )
    (tmp_path / "rule.yaml").write_text(rule("{driver: gpu.example.com}"))
    slices = tmp_path / "slices.yaml"
    pool_cluster = Path(__file__).parent / "data" / "pool_status" / "cluster.yaml"
    slices.write_text(pool_cluster.read_text().replace("effect: NoSchedule}", "effect: Sometimes}", 1))
    load_all_commands()
    result = CliRunner().invoke(cli, ["taint-impact", str(tmp_path / "rule.yaml"), str(slices)], catch_exceptions=False)
    assert result.exit_code == 2 and result.stdout == ""
    assert (
        'slices.yaml[1]: ResourceSlice/node-a-gpus: spec.devices[2].taints[0].effect: "Sometimes" is not a '
        "device taint effect"
    ) in result.stderr
