"""kubectl's output forms on the commands that answer with a report or write files (podresources, fit,
scale-up, preempt, defrag, metadata), as on solve and inventory (tests/test_kubectl_tables.py): -o table|wide|
yaml|json|name|jsonpath=|custom-columns=, --no-headers, whole cells within 80 columns, and --help teaching them.
The inputs are the README's real ones (docs/capacity/) and the NUMA and metadata test data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from .test_kubectl_tables import in_terminal, run

ROOT = Path(__file__).resolve().parents[1]
CAPACITY = ROOT / "docs" / "capacity"
COMMANDS = {
    "podresources": ["podresources", str(ROOT / "tests" / "data" / "topology" / "numa-nodes.yaml")],
    "fit": ["fit", str(CAPACITY / "web.yaml"), str(CAPACITY / "cluster.yaml")],
    "scale-up": ["scale-up", "--node-template", str(CAPACITY / "gpu-template.yaml"), str(CAPACITY / "pending.yaml")],
    "preempt": ["preempt", "default/urgent", str(CAPACITY / "preempt.yaml")],
    "defrag": ["defrag", "--moves", "2", str(CAPACITY / "cluster.yaml")],
    "metadata": ["metadata", "--out", "{out}", str(ROOT / "tests" / "data" / "metadata" / "gpu.yaml")],
}
HEADLINED = {"fit", "scale-up", "preempt", "defrag"}  # a sentence above the table: on stderr in other forms
HEADERS = {
    "podresources": (["POD", "CONTAINER", "CPUS", "MEMORY"], ["DEVICES", "CLAIMS", "DRIVERS"]),
    "fit": (["NODE", "PODS", "POD SETS"], ["DEVICES"]),
    "scale-up": (["NODE", "TEMPLATE", "PODS"], ["POD NAMES"]),
    "preempt": (["ANSWER", "NODE", "POD", "PRIORITY"], ["BUDGETS BROKEN"]),
    "defrag": (["STEP", "POD", "FROM", "TO"], ["DEVICES BEFORE", "DEVICES AFTER"]),
    "metadata": (["PATH", "CLAIM"], ["DEVICES"]),
}
NAMES = {
    "podresources": ["pod/trainer"],
    "fit": ["node/gpu-1"],
    "scale-up": ["node/gpu-template-new-0", "node/gpu-template-new-1"],
    "preempt": ["pod/batch-big"],
    "defrag": ["pod/infer-a", "pod/infer-b"],
    "metadata": ["resourceclaim.resource.k8s.io/pod0-gpu-2kqrd"],
}
KINDS = {
    "fit": ("WorkloadFit", "web"),
    "scale-up": ("ScaleUpPlan", "scale-up"),
    "preempt": ("PreemptionPlan", "urgent"),
    "defrag": ("DefragPlan", "defrag"),
}
COLUMNS = {  # a custom-columns spec and the rows it prints below its header
    "podresources": ("POD:.name,NS:.namespace,CPUS:.cpu_ids", [["trainer", "default", "<none>"]]),
    "fit": ("FIT:.fit,PROVEN:.proven,NODES:.nodes[*].node", [["4", "true", "gpu-1"]]),
    "scale-up": ("ADDED:.nodesAdded,COST:.cost,FFD:.firstFitDecreasing.nodesAdded", [["2", "3.0", "3"]]),
    "preempt": (
        "POD:.pod,NODE:.fewest.node,VICTIMS:.fewest.victims[*].pod",
        [["default/urgent", "gpu-2", "default/batch-big"]],
    ),
    "defrag": ("MOVED:.moves[*].pod,PROVEN:.proven", [["default/infer-a,default/infer-b", "true"]]),
    "metadata": ("CLAIM:.claim,KIND:.kind", [["gpu-test1/pod0-gpu-2kqrd", "DeviceMetadataFile"]]),
}


def _args(command: str, out: Path, *options: str) -> list[str]:
    """The command's line with ``options`` after its name and its --out (metadata) below ``out``."""
    name, *rest = COMMANDS[command]
    return [name, *options, *(a.replace("{out}", str(out / "meta")) for a in rest)]


def _answer(command: str, out: Path, *options: str) -> tuple[str, str]:
    code, stdout, stderr = run(*_args(command, out, *options))
    assert code == 0, (options, stderr)
    return stdout, stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_table_has_upper_case_headers_and_wide_adds_what_does_not_fit(command: str, tmp_path: Path) -> None:
    table, _ = _answer(command, tmp_path)
    wide, _ = _answer(command, tmp_path, "-o", "wide")
    shown, extra = HEADERS[command]
    header = [line for line in table.splitlines() if line.split("   ")[0] == shown[0]]
    assert [h.strip() for h in header[0].split("   ") if h] == shown, table
    wide_header = next(line for line in wide.splitlines() if line.split("   ")[0] == shown[0])
    assert [h.strip() for h in wide_header.split("   ") if h] == shown + extra, wide


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_headers_prints_the_rows_alone(command: str, tmp_path: Path) -> None:
    table, _ = _answer(command, tmp_path)
    bare, stderr = _answer(command, tmp_path, "--no-headers")
    lines = table.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split("   ")[0] == HEADERS[command][0][0])
    assert [line.split() for line in bare.splitlines()] == [line.split() for line in lines[at + 1 :]] and bare
    if command in HEADLINED:  # the headline is not a row: it goes where -o yaml sends it
        assert lines[0] in stderr.splitlines()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_yaml_and_json_are_one_document_and_name_lists_what_the_rows_are_about(command: str, tmp_path: Path) -> None:
    as_json, _ = _answer(command, tmp_path, "-o", "json")
    as_yaml, _ = _answer(command, tmp_path, "-o", "yaml")
    data = json.loads(as_json)
    assert yaml.safe_load(as_yaml).keys() == data.keys()  # (two runs: their "seconds" differ)
    if command in KINDS:  # one report object, as compare prints its comparison
        assert (data["apiVersion"], data["kind"], data["metadata"]["name"]) == ("drasat/v1alpha1", *KINDS[command])
    elif command == "metadata":
        assert (data["kind"], [i["kind"] for i in data["items"]]) == ("List", ["DeviceMetadataFile"])
    else:  # the kubelet's PodResources List response, as the kubelet gives it
        assert [p["name"] for p in data["pod_resources"]] == ["trainer"]
    names, _ = _answer(command, tmp_path, "-o", "name")
    assert names.splitlines() == NAMES[command]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_custom_columns_and_jsonpath_read_the_document(command: str, tmp_path: Path) -> None:
    spec, rows = COLUMNS[command]
    printed, _ = _answer(command, tmp_path, "-o", f"custom-columns={spec}")
    lines = printed.splitlines()
    assert lines[0].split() == [part.split(":")[0] for part in spec.split(",")]
    assert [line.split() for line in lines[1:]] == rows
    bare, _ = _answer(command, tmp_path, "--no-headers", "-o", f"custom-columns={spec}")
    assert [line.split() for line in bare.splitlines()] == rows
    first = spec.split(",")[0].split(":", 1)[1]
    path = f"{{.items[*]{first}}}" if command == "metadata" else f"{{.pod_resources[*]{first}}}"
    path = f"{{{first}}}" if command in KINDS else path
    printed, _ = _answer(command, tmp_path, "-o", f"jsonpath={path}")
    assert printed == ",".join(rows[0][0].split(",")).replace(",", " ")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_80_column_terminal_gets_the_piped_table_within_80_columns_a_cell_one_word(
    command: str, tmp_path: Path
) -> None:
    args = _args(command, tmp_path)
    code, shown = in_terminal(*args)
    piped, _ = _answer(command, tmp_path)
    assert code == 0 and shown == piped
    lines = shown.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split("   ")[0] == HEADERS[command][0][0])
    if command != "metadata":  # a path is as long as it is, and kept whole
        assert max(len(line) for line in lines[at:]) <= 80, shown
    assert all(len(row.split()) == len(HEADERS[command][0]) for row in lines[at + 1 :]), shown  # one piece for awk


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_teaches_every_form(command: str) -> None:
    code, text, _ = run(COMMANDS[command][0], "--help")
    assert code == 0
    for taught in ("wide:", "yaml/json:", "name:", "custom-columns=SPEC", "jsonpath=TEMPLATE", "--no-headers"):
        assert taught in text, taught


def test_metadata_writes_its_files_whatever_it_prints(tmp_path: Path) -> None:
    names, _ = _answer("metadata", tmp_path, "-o", "name")
    assert names and list((tmp_path / "meta").rglob("*-metadata.json"))
