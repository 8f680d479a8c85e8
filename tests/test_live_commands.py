"""Every command reads a live cluster as it reads files (issue 24, item 3), against a loopback API server.

The same answer from ``--kubeconfig`` as from the example files, for each command; with no FILE at all the
current context of ``$KUBECONFIG`` or ``~/.kube/config`` is read; resource.k8s.io is read at the newest version
served (v1, else v1beta2, else v1beta1); a kind the command needs that the credentials may not list is an
error (exit 2, nothing on stdout), one it can do without a notice.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands

from .loopback_api import EXAMPLES, Server, serve, served_as

pytest.importorskip("kubernetes", reason="the kubernetes client (drasat[cluster]) is not installed")
load_all_commands()

RULE = """\
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: drain-gpus}
spec:
  deviceSelector: {driver: gpu.example.com}
  taint: {key: maintenance, effect: NoExecute}
"""


@pytest.fixture
def api_server(tmp_path: Path) -> Iterator[tuple[Server, str]]:
    yield from serve(tmp_path)


def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def _same_from_cluster_and_files(kubeconfig: str, *args: str) -> Result:
    """The command on the live cluster, and on the files: equal stdout and exit code; the live result."""
    live = run(*args, "--kubeconfig", kubeconfig)
    files = run(*args, str(EXAMPLES))
    assert live.exit_code == files.exit_code, (live.stderr, files.stderr)
    assert _timeless(live.stdout) == _timeless(files.stdout) and live.stdout
    return live


def _timeless(text: str) -> str:
    """Output with the times an answer is stamped with (a condition's lastTransitionTime) taken out."""
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", text)


COMMANDS = {
    "solve": ["solve", "--node", "gpu-node-1", "-o", "json"],
    "schedule": ["schedule", "-o", "json"],
    "explain": ["explain", "--node", "gpu-node-1", "--claims", "default/two-gpus"],
    "inventory": ["inventory", "-o", "json"],
    "pool-status": ["pool-status", "--driver", "gpu.example.com", "-o", "json"],
    "validate": ["validate", "-q"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_reads_the_cluster_as_it_reads_the_files(api_server: tuple[Server, str], command: str) -> None:
    _, kubeconfig = api_server
    live = _same_from_cluster_and_files(kubeconfig, *COMMANDS[command])
    assert "Traceback" not in live.output
    assert "does not serve podgroups (tried v1beta1, v1alpha3); read without them" in live.stderr


def test_compare_and_taint_impact_and_metadata_read_the_cluster(api_server: tuple[Server, str], tmp_path: Path) -> None:
    _, kubeconfig = api_server
    live = run("compare", "--node", "gpu-node-1", "-o", "json", "--kubeconfig", kubeconfig)
    files = run("compare", "--node", "gpu-node-1", "-o", "json", str(EXAMPLES))
    assert live.exit_code == files.exit_code == 0, live.stderr
    assert json.loads(live.stdout)["cpSat"]["devices"] == json.loads(files.stdout)["cpSat"]["devices"]
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE)
    impact = _same_from_cluster_and_files(kubeconfig, "taint-impact", "-o", "json", str(rule))
    assert json.loads(impact.stdout)["allocatedDevices"] >= 1
    live = run("metadata", "--out", str(tmp_path / "live"), "--kubeconfig", kubeconfig)
    files = run("metadata", "--out", str(tmp_path / "files"), str(EXAMPLES))
    assert live.exit_code == files.exit_code == 0, live.stderr
    written = sorted(p.relative_to(tmp_path / "live") for p in (tmp_path / "live").rglob("*.json"))
    assert written and written == sorted(
        p.relative_to(tmp_path / "files") for p in (tmp_path / "files").rglob("*.json")
    )
    for path in written:
        assert (tmp_path / "live" / path).read_text() == (tmp_path / "files" / path).read_text()


def test_with_no_file_the_current_context_is_read(api_server: tuple[Server, str], tmp_path: Path) -> None:
    server, kubeconfig = api_server
    files = run("schedule", "-o", "json", str(EXAMPLES))
    by_variable = run("schedule", "-o", "json", env={"KUBECONFIG": kubeconfig})
    assert by_variable.exit_code == files.exit_code and files.stdout
    assert _timeless(by_variable.stdout) == _timeless(files.stdout)
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    shutil.copy(kubeconfig, home / ".kube" / "config")
    before = len(server.requests)
    by_home = run("inventory", "-o", "json", env={"KUBECONFIG": None, "HOME": str(home)})
    assert by_home.exit_code == 0, by_home.stderr
    assert by_home.stdout == run("inventory", "-o", "json", str(EXAMPLES)).stdout
    assert len(server.requests) > before  # it was the cluster that answered
    nowhere = run("validate", env={"KUBECONFIG": None, "HOME": str(tmp_path)})
    assert nowhere.exit_code == 2 and nowhere.stdout == ""
    assert "nothing to read" in nowhere.stderr and "~/.kube/config (none of them is there)" in nowhere.stderr


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_resource_kinds_are_read_at_the_newest_version_served(api_server: tuple[Server, str], version: str) -> None:
    server, kubeconfig = api_server
    served_as(server, version)
    live = _same_from_cluster_and_files(kubeconfig, "solve", "--node", "gpu-node-1", "-o", "json")
    assert json.loads(live.stdout)["items"]
    asked = [r.split("?")[0] for r in server.requests if "/resourceslices" in r]
    tried = ["v1", "v1beta2", "v1beta1"]
    assert asked == [f"/apis/resource.k8s.io/{v}/resourceslices" for v in tried[: tried.index(version) + 1]]


def test_a_cluster_without_dra_is_an_error_for_an_allocation(api_server: tuple[Server, str]) -> None:
    server, kubeconfig = api_server
    for path in [p for p in server.collections if "resource.k8s.io" in p]:
        del server.collections[path]
    result = run("solve", "--node", "gpu-node-1", "--kubeconfig", kubeconfig)
    assert result.exit_code == 2 and result.stdout == ""
    assert "the cluster does not serve deviceclasses (tried v1, v1beta2, v1beta1), which this command needs" in (
        result.stderr
    )


def test_a_kind_the_command_needs_but_may_not_list_is_an_error(api_server: tuple[Server, str], tmp_path: Path) -> None:
    server, kubeconfig = api_server
    server.status["/api/v1/pods"] = 403
    forbidden = "cannot list pods (403 Forbidden: /api/v1/pods is forbidden), which this command needs"
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE)
    for args in (
        ["schedule"],
        ["solve", "--node", "gpu-node-1", "--pods", "default/trainer-0"],
        ["explain", "--pods", "default/trainer-0"],
        ["compare", "--schedule"],
        ["taint-impact", str(rule)],
        ["metadata", "--out", str(tmp_path / "out")],
    ):
        result = run(*args, "--kubeconfig", kubeconfig)
        assert result.exit_code == 2 and result.stdout == "", (args, result.output)
        assert forbidden in result.stderr, args
    assert not (tmp_path / "out").exists()
    solve = run("solve", "--node", "gpu-node-1", "-o", "json", "--kubeconfig", kubeconfig)  # claims only: no pods
    assert solve.exit_code == 0, solve.stderr
    assert "notice: cluster http://127.0.0.1" in solve.stderr and "cannot list pods (403 Forbidden" in solve.stderr


def test_namespace_options_of_the_reporting_commands(api_server: tuple[Server, str], tmp_path: Path) -> None:
    _, kubeconfig = api_server
    everything = run("validate", "-o", "json", "--kubeconfig", kubeconfig)
    default = run("validate", "-o", "json", "-n", "default", "--kubeconfig", kubeconfig)
    elsewhere = run("validate", "-o", "json", "-n", "nowhere", "--kubeconfig", kubeconfig)
    counts = [json.loads(r.stdout)["summary"]["valid"] for r in (everything, default, elsewhere)]
    assert counts[0] >= counts[1] > counts[2] > 0  # the cluster-scoped ones stay in every namespace
    names = [o["name"] for o in json.loads(elsewhere.stdout)["objects"]]
    assert "gpu-node-1" in names and not any("/" in n for n in names)
    out = tmp_path / "out"
    result = run("metadata", "--out", str(out), "-n", "nowhere", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0 and "no allocated ResourceClaim" in result.stderr
    both = run("inventory", "-n", "default", "-A", "--kubeconfig", kubeconfig)
    assert both.exit_code == 2 and "exclude each other" in both.stderr


def test_the_map_and_the_kubectl_forms_from_the_cluster(api_server: tuple[Server, str], tmp_path: Path) -> None:
    """The allocation map and the kubectl output forms (a List, -o name, custom-columns) of a live read are
    those of the files: where the objects come from changes nothing in what is drawn or printed."""
    _, kubeconfig = api_server
    page = _same_from_cluster_and_files(kubeconfig, "inventory", "--html", "-")
    assert page.stdout.startswith("<!DOCTYPE html>") and 'data-state="free"' in page.stdout
    listing = json.loads(_same_from_cluster_and_files(kubeconfig, "inventory", "-o", "json").stdout)
    assert listing["kind"] == "List" and {i["kind"] for i in listing["items"]} == {"NodeInventory"}
    names = _same_from_cluster_and_files(kubeconfig, "inventory", "-o", "name").stdout.split()
    assert names == [f"nodeinventory.drasat/{i['metadata']['name']}" for i in listing["items"]] and names
    columns = _same_from_cluster_and_files(kubeconfig, "schedule", "-o", "custom-columns=POD:.metadata.name")
    assert columns.stdout.splitlines()[:2] == ["POD", "trainer-0"]
    for side in ("live", "files"):
        (tmp_path / side).mkdir()
    live = run("schedule", "--html", str(tmp_path / "live" / "map.html"), "--kubeconfig", kubeconfig)
    files = run("schedule", "--html", str(tmp_path / "files" / "map.html"), str(EXAMPLES))
    assert live.exit_code == files.exit_code, live.stderr
    assert (tmp_path / "live" / "map.html").read_text() == (tmp_path / "files" / "map.html").read_text()


@pytest.mark.parametrize("command", ["inventory", "schedule", "validate"])
def test_a_kubeconfig_that_is_not_yaml_is_bad_input_not_a_traceback(command: str, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "k"
    kubeconfig.write_text("garbage: [\n")
    result = run(command, "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 2 and result.stdout == ""
    assert f"error loading config file {kubeconfig}: not valid YAML at line 2" in result.stderr
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.stderr
