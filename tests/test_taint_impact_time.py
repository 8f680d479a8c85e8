"""``drasat taint-impact`` over time and by effect, as the device taint eviction controller works.

claimEvictionTime: a pod is deleted at the taint's timeAdded plus the shortest NoExecute
tolerationSeconds of its claim's result; the rule's condition is worded per effect (None: the
dry run; NoExecute: "N pods need to be evicted in M namespaces."; others: "Eviction only happens
for the NoExecute effect."). CEL that taint-impact runs is refused where ``drasat validate`` refuses it.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

from .test_taint_impact import CLUSTER, data, impact, rule


def _timed(effect: str = "NoExecute", added: str = "2026-12-02T18:00:00Z") -> str:
    return (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: maint}\nspec:\n"
        "  deviceSelector: {driver: gpu.example.com}\n"
        f"  taint: {{key: example.com/unhealthy, value: Broken, effect: {effect}, timeAdded: '{added}'}}\n"
    )


def test_delays_count_from_time_added(tmp_path: Path):
    result = impact(tmp_path, _timed(), "-o", "json", "--now", "2026-12-02T18:02:00Z")
    assert result.exit_code == 0, result.stderr
    found = {e["pod"]: e for e in json.loads(result.stdout)["evictedPods"]}
    # p3 tolerates the taint for 300 s: deleted at timeAdded + 300 s, 180 s after --now
    assert found["team-a/p3"]["evictionTime"] == "2026-12-02T18:05:00Z"
    assert found["team-a/p3"]["dueInSeconds"] == 180
    assert found["team-a/p1"]["evictionTime"] == "2026-12-02T18:00:00Z"  # no toleration: at timeAdded
    assert found["team-a/p1"]["dueInSeconds"] == 0
    later = impact(tmp_path, _timed(), "--now", "2026-12-02T18:10:00Z")
    line = next(x for x in later.stdout.splitlines() if "team-a/p3" in x)
    assert line == "  evicts pod team-a/p3 at 2026-12-02T18:05:00Z (timeAdded + 300 s tolerationSeconds; due now)"


def test_each_effect_is_worded_as_the_controller_words_it(tmp_path: Path):
    no_execute = data(tmp_path, _timed())
    assert no_execute["reason"] == "PodsPendingEviction"
    assert no_execute["message"] == "4 pods need to be evicted in 2 different namespaces."
    no_schedule = impact(tmp_path, _timed("NoSchedule"))
    assert (
        no_schedule.stdout.splitlines()[0] == "DeviceTaintRule maint: Eviction only happens for the NoExecute effect."
    )
    assert "no pod is evicted" in no_schedule.stdout and "team-a/p1" not in no_schedule.stdout
    assert json.loads(impact(tmp_path, _timed("NoSchedule"), "-o", "json").stdout)["evictedPods"] == []
    nothing = data(tmp_path, rule("{driver: no-such.example.com}", effect="NoExecute"))
    assert (nothing["reason"], nothing["message"]) == ("NotStarted", "")


def test_a_no_execute_rule_that_evicts_nothing_still_counts_what_it_selects(tmp_path: Path):
    """The controller writes no message for NotStarted; the text still says what the rule selects, in the
    words of its dry run, rather than "(no message)"."""
    (tmp_path / "rule.yaml").write_text(
        rule("{driver: gpu.example.com, pool: gpu-node-2}", effect="NoExecute", name="drain-gpu0")
    )
    load_all_commands()
    examples = str(Path(__file__).resolve().parents[1] / "examples")
    result = CliRunner().invoke(cli, ["taint-impact", str(tmp_path / "rule.yaml"), examples])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "DeviceTaintRule drain-gpu0: NotStarted (no pod needs to be evicted)",
        "  4 published devices selected. 1 allocated device selected.",
    ]
    no_schedule = impact(tmp_path, _timed("NoSchedule"))
    assert no_schedule.stdout.splitlines()[1].endswith("allocated devices selected.")


def test_a_device_class_selector_validate_refuses_is_refused(tmp_path: Path):
    docs = list(yaml.safe_load_all(Path(CLUSTER).read_text()))
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "broken"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver =="}}]},
        }
    )
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(docs))
    text = rule("{deviceClassName: broken}")
    (tmp_path / "r.yaml").write_text(text)
    load_all_commands()
    result = CliRunner().invoke(cli, ["taint-impact", str(tmp_path / "r.yaml"), str(cluster)], catch_exceptions=False)
    assert result.exit_code == 2 and result.stdout == ""
    assert "DeviceClass/broken: spec.selectors[0].cel.expression: CEL compile error" in result.stderr
    validated = CliRunner().invoke(cli, ["validate", str(cluster)], catch_exceptions=False)
    assert "CEL compile error" in validated.stdout  # the same refusal
