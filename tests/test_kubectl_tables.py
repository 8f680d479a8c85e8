"""Tables as kubectl prints them, on every command: the same text on an 80-column terminal (a real pty) as
through a pipe, whole names, one line per row, upper-case headers, the rest in -o wide, --no-headers,
-o custom-columns=, and -o yaml|json|name everywhere."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")
TABLES = {
    "solve": ["solve", "--node", "gpu-node-1", "-o", "table", EXAMPLES],
    "schedule": ["schedule", "-o", "table", EXAMPLES],
    "inventory": ["inventory", EXAMPLES],
    "pool-status": ["pool-status", "--driver", "gpu.example.com", "-o", "table", EXAMPLES],
    "compare": ["compare", "--node", "gpu-node-1", EXAMPLES],
}
WHOLE = {  # names each table must show whole, on one line
    "solve": ["default/notebook-0-extended-resources-vqtlt", "container-0-request-1", "default/trainer-0-gpu-and-nic"],
    "schedule": ["default/notebook-0", "gpu-node-2", "container-0-request-1=gpu-1"],
    "inventory": ["default/inference-gpu", "gpu-node-2", "gpu.example.com"],
    "pool-status": ["gpu-node-1", "gpu-node-2"],
    "compare": ["default/notebook-0-extended-resources-vqtlt", "container-0-request-1"],
}
FITS_80 = {"solve", "schedule", "inventory", "pool-status"}  # compare's claim and request names are 85 wide


def in_terminal(*args: str, columns: int = 80, program: tuple[str, ...] = ("-m", "drasat.cli")) -> tuple[int, str]:
    """The command's stdout written to a pseudo-terminal ``columns`` wide (stderr apart, to a pipe)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "24", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    with subprocess.Popen([sys.executable, *program, *args], stdout=child, stderr=subprocess.PIPE, env=env) as process:
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    os.close(main)
    return process.returncode, b"".join(chunks).decode().replace("\r\n", "\n")


def piped(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drasat.cli", *args], capture_output=True, text=True, timeout=120, env=os.environ
    )


def test_the_pseudo_terminal_is_a_terminal_of_80_columns() -> None:
    probe = "import os, shutil, sys; print(sys.stdout.isatty(), os.get_terminal_size(1).columns)"
    assert in_terminal(program=("-c", probe)) == (0, "True 80\n")


@pytest.mark.parametrize("command", sorted(TABLES))
def test_an_80_column_terminal_gets_whole_names_one_line_per_row_and_the_piped_text(command: str) -> None:
    code, shown = in_terminal(*TABLES[command])
    through_a_pipe = piped(*TABLES[command])
    assert code == through_a_pipe.returncode == 0, through_a_pipe.stderr
    lines = shown.splitlines()
    untimed = [line for line in lines if not line.startswith("wall time")]  # compare's clock differs per run
    assert untimed == [line for line in through_a_pipe.stdout.splitlines() if not line.startswith("wall time")]
    assert "\x1b" not in shown and not any(c in shown for c in "┃│┏━")
    if command in FITS_80:
        assert max(len(line) for line in lines) <= 80, shown
    for name in WHOLE[command]:
        assert any(name in line for line in lines), (name, shown)
    header = lines[0].split("   ")
    assert lines[0] == lines[0].upper() and all(h.strip() for h in header if h)


def test_each_row_is_one_line() -> None:
    _, shown = in_terminal(*TABLES["solve"])
    assert len(shown.splitlines()) == 1 + 3  # the header, three devices allocated
    _, shown = in_terminal(*TABLES["schedule"])
    assert len(shown.splitlines()) == 1 + 2  # the header, two pods


def run(*args: str) -> tuple[int, str, str]:
    load_all_commands()
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


WIDE_ONLY = {
    "solve": ["DRIVER", "POOL", "SHARE ID", "NODE SELECTOR"],
    "schedule": ["CLAIM", "DRIVER", "REASON"],
    "inventory": ["DRIVER", "POOL", "REASON", "COUNTER SETS"],
    "pool-status": ["REQUEST", "SLICES", "UNAVAILABLE", "VALIDATION ERROR"],
}


@pytest.mark.parametrize("command", sorted(WIDE_ONLY))
def test_the_columns_that_do_not_fit_are_in_wide(command: str) -> None:
    args = TABLES[command]
    _, table, _ = run(*args)
    wide_args = [a if a != "table" else "wide" for a in args]
    if "-o" not in wide_args:
        wide_args[1:1] = ["-o", "wide"]
    code, wide, err = run(*wide_args)
    assert code == 0, err
    for header in WIDE_ONLY[command]:
        assert header in wide.splitlines()[0] and header not in table.splitlines()[0], header


@pytest.mark.parametrize("command", sorted(TABLES))
def test_no_headers_leaves_out_the_header_row_only(command: str) -> None:
    _, table, _ = run(*TABLES[command])
    code, bare, err = run(*TABLES[command][:1], "--no-headers", *TABLES[command][1:])
    assert code == 0, err
    headers = [line for line in table.splitlines() if line.strip() and line == line.upper()]
    assert headers and not any(h in bare.splitlines() for h in headers)
    kept = [line for line in table.splitlines() if line not in headers]
    assert [line.split()[:3] for line in bare.splitlines() if not line.startswith("wall time")] == [
        line.split()[:3] for line in kept if not line.startswith("wall time")
    ]


def test_schedule_wide_names_the_claim_with_its_namespace_as_solve_does() -> None:
    code, out, err = run("schedule", "-o", "wide", EXAMPLES)
    assert code == 0, err
    claims = {line.split()[2] for line in out.splitlines()[1:]}
    assert claims == {"default/trainer-0-gpu-and-nic-kmq86", "default/notebook-0-extended-resources-vqtlt"}


CLUSTER_ONLY = str(Path(EXAMPLES) / "cluster.yaml")  # no pending pod, no pending claim
NO_DEVICES = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"}}
EMPTY_TABLES = {
    "solve": ["solve", "--node", "gpu-node-1", "-o", "table", CLUSTER_ONLY],
    "schedule": ["schedule", "-o", "table", CLUSTER_ONLY],
    "schedule wide": ["schedule", "-o", "wide", CLUSTER_ONLY],
    "inventory": ["inventory", "NO_DEVICES"],
    "pool-status": ["pool-status", "--driver", "other.example.com", "-o", "table", CLUSTER_ONLY],
    "podresources": ["podresources", "NO_DEVICES"],
}


@pytest.mark.parametrize("command", sorted(EMPTY_TABLES))
def test_a_table_without_rows_prints_nothing_and_says_no_resources_found(command: str, tmp_path: Path) -> None:
    """kubectl get prints no lone header: nothing on stdout, "No resources found" on stderr."""
    (tmp_path / "node.yaml").write_text(json.dumps(NO_DEVICES))
    args = [a if a != "NO_DEVICES" else str(tmp_path / "node.yaml") for a in EMPTY_TABLES[command]]
    code, out, err = run(*args)
    assert (code, out) == (0, "") and err.splitlines()[-1] == "No resources found", err


def test_no_resources_found_names_the_namespace_asked_for() -> None:
    code, out, err = run("schedule", "-o", "table", "-n", "team-a", CLUSTER_ONLY)
    assert (code, out) == (0, "") and err.splitlines()[-1] == "No resources found in team-a namespace."


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_an_empty_answer_in_yaml_or_json_is_an_empty_list(form: str) -> None:
    code, out, err = run("schedule", "-o", form, CLUSTER_ONLY)
    assert code == 0 and yaml.safe_load(out) == {"apiVersion": "v1", "kind": "List", "items": []}
    assert "No resources found" not in err


def test_custom_columns_as_kubectl_reads_them() -> None:
    spec = "NAME:.metadata.name,Devices:.status.allocation.devices.results[*].device,ADMIN:{.spec.nothing}"
    code, out, err = run("solve", "--node", "gpu-node-1", "-o", f"custom-columns={spec}", EXAMPLES)
    assert code == 0, err
    assert [line.split() for line in out.splitlines()] == [
        ["NAME", "Devices", "ADMIN"],  # headers as written
        ["trainer-0-gpu-and-nic-kmq86", "gpu-0,nic-0", "<none>"],  # several values joined by commas
        ["notebook-0-extended-resources-vqtlt", "gpu-1", "<none>"],
    ]
    code, out, _ = run("schedule", "--no-headers", "-o", "custom-columns=KIND:kind,NAME:.metadata.name", EXAMPLES)
    assert code == 0 and out.splitlines()[0].split() == ["Pod", "trainer-0"]


@pytest.mark.parametrize("spec", ["NAME", "NAME:", ":.metadata.name", "A:.x,B", "A:.items[?"])
def test_a_bad_custom_columns_spec_is_refused_before_reading(spec: str) -> None:
    code, out, err = run("inventory", "-o", f"custom-columns={spec}", EXAMPLES)
    assert code == 2 and out == "" and "custom-columns" in err and "Traceback" not in err


EVERY_COMMAND = {
    "solve": ["solve", "--node", "gpu-node-1", EXAMPLES],
    "schedule": ["schedule", EXAMPLES],
    "inventory": ["inventory", EXAMPLES],
    "pool-status": ["pool-status", "--driver", "gpu.example.com", EXAMPLES],
    "compare": ["compare", "--node", "gpu-node-1", EXAMPLES],
    "compare --schedule": ["compare", "--schedule", EXAMPLES],
    "explain": ["explain", "--node", "gpu-node-1", EXAMPLES],
    "validate": ["validate", EXAMPLES],
}
NAMES = {
    "solve": "resourceclaim.resource.k8s.io/notebook-0-extended-resources-vqtlt",
    "schedule": "pod/trainer-0",
    "inventory": "nodeinventory.drasat/gpu-node-2",
    "pool-status": "resourcepoolstatusrequest.resource.k8s.io/drasat",
    "compare": "resourceclaim.resource.k8s.io/trainer-0-gpu-and-nic-kmq86",
    "compare --schedule": "pod/notebook-0",
    "explain": "resourceclaim.resource.k8s.io/trainer-0-gpu-and-nic-kmq86",
    "validate": "deviceclass.resource.k8s.io/gpu.example.com",
}


@pytest.mark.parametrize("command", sorted(EVERY_COMMAND))
def test_every_command_prints_yaml_json_and_name(command: str) -> None:
    args = EVERY_COMMAND[command]
    outputs = {}
    for form in ("yaml", "json", "name"):
        code, out, err = run(*args[:1], "-o", form, *args[1:])
        assert code in (0, 1), (form, err)
        outputs[form] = out
    data = json.loads(outputs["json"])
    assert yaml.safe_load(outputs["yaml"]).keys() == data.keys()
    names = outputs["name"].splitlines()
    assert NAMES[command] in names and all("/" in n and " " not in n for n in names)


def test_inventory_json_is_a_list_of_node_inventories() -> None:
    _, out, _ = run("inventory", "-o", "json", EXAMPLES)
    listing = json.loads(out)
    assert listing["apiVersion"] == "v1" and listing["kind"] == "List"
    assert [(i["kind"], i["metadata"]["name"]) for i in listing["items"]] == [
        ("NodeInventory", "gpu-node-1"),
        ("NodeInventory", "gpu-node-2"),
    ]
    allocated = [d for d in listing["items"][1]["devices"] if d["state"] == "allocated"]
    assert [(d["name"], d["claims"]) for d in allocated] == [("gpu-0", ["default/inference-gpu"])]
    code, out, _ = run("inventory", "-o", "jsonpath={.items[*].metadata.name}", EXAMPLES)
    assert code == 0 and out == "gpu-node-1 gpu-node-2"


def test_validate_json_names_the_kind_and_name_of_an_unreadable_object(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "kind: ResourceClaim\nmetadata: {name: c, namespace: d}\nspec: {}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: [1]\n"
    )
    code, out, _ = run("validate", "-o", "json", str(tmp_path))
    records = json.loads(out)["objects"]
    assert code == 2 and [(r["kind"], r["name"], r["readable"]) for r in records] == [
        ("ResourceClaim", "d/c", False),
        ("Pod", "p", False),
    ]
    code, names, err = run("validate", "-o", "name", str(tmp_path))
    assert code == 2 and names == ""  # kubectl's -o name lists what succeeded: neither is valid
    assert f"error: {tmp_path / 'bad.yaml'}[0]: ResourceClaim/d/c: " in err
    assert f"error: {tmp_path / 'bad.yaml'}[1]: Pod/p: spec: " in err
    _, table, _ = run("validate", str(tmp_path))
    assert f"error  {tmp_path / 'bad.yaml'}[0]: ResourceClaim/d/c: " in table


def test_taint_impact_prints_yaml_json_and_the_pods_it_would_evict(tmp_path: Path) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text(
        "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: drain}\nspec:\n"
        "  deviceSelector: {driver: gpu.example.com, pool: gpu-node-2}\n"
        "  taint: {key: example.com/maintenance, effect: NoExecute}\n"
    )
    code, out, err = run("taint-impact", "-o", "json", str(rule), EXAMPLES)
    assert code == 0, err
    data = json.loads(out)
    assert (data["kind"], data["metadata"]["name"], data["rule"]) == ("DeviceTaintRuleImpact", "drain", "drain")
    assert yaml.safe_load(run("taint-impact", "-o", "yaml", str(rule), EXAMPLES)[1]) == data
    _, names, _ = run("taint-impact", "-o", "name", str(rule), EXAMPLES)
    assert names == "".join(f"pod/{p['pod'].rsplit('/', 1)[-1]}\n" for p in data["evictedPods"])


@pytest.mark.parametrize("command", ["schedule", "compare"])
def test_html_beside_the_answer_refuses_stdout_not_a_file_named_dash(command: str, tmp_path: Path) -> None:
    """schedule and compare --schedule print their answer on stdout: the page cannot go there too (as
    --output-state -); inventory --html - writes the page alone to stdout (tests/test_first_contact.py)."""
    os.chdir(tmp_path)
    args = [command, "--html", "-", *(["--schedule"] if command == "compare" else []), EXAMPLES]
    code, out, err = run(*args)
    assert code == 2 and out == "" and "standard output carries the answer already" in err, err
    assert os.listdir(tmp_path) == []
