"""Where commands read from, the kubectl way: FILE arguments, -f/--filename, -R, stdin once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(*args: str, stdin: str | None = None) -> Result:
    load_all_commands()
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def test_filename_options_add_to_file_arguments() -> None:
    by_argument = run(
        "compare", "--node", "gpu-node-1", "-o", "json", str(EXAMPLES / "cluster.yaml"), str(EXAMPLES / "claims.yaml")
    )
    by_option = run(
        "compare",
        "--node",
        "gpu-node-1",
        "-o",
        "json",
        "-R",
        "-f",
        str(EXAMPLES / "cluster.yaml"),
        "--filename",
        str(EXAMPLES / "claims.yaml"),
    )
    mixed = run(
        "compare",
        "--node",
        "gpu-node-1",
        "-o",
        "json",
        str(EXAMPLES / "cluster.yaml"),
        "-f",
        "-",
        stdin=(EXAMPLES / "claims.yaml").read_text(),
    )
    assert by_argument.exit_code == by_option.exit_code == mixed.exit_code == 0, by_option.stderr
    devices = [json.loads(r.stdout)["cpSat"]["devices"] for r in (by_argument, by_option, mixed)]
    assert devices[0] == devices[1] == devices[2] and devices[0]


def test_stdin_twice_and_nothing_at_all_are_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config, no $KUBECONFIG: no cluster to read either
    monkeypatch.delenv("KUBECONFIG", raising=False)
    twice = run("compare", "-", "-f", "-", stdin="")
    assert twice.exit_code == 2 and twice.stdout == ""
    assert "standard input (-) is given more than once" in twice.stderr
    nothing = run("compare")
    assert nothing.exit_code == 2 and nothing.stdout == ""
    assert "nothing to read: give FILE..." in nothing.stderr
    assert "--kubeconfig PATH, $KUBECONFIG or ~/.kube/config (none of them is there)" in nothing.stderr


def test_kubectl_plugin_entry_point_names_itself_kubectl_drasat() -> None:
    import subprocess
    import sys

    plugin = Path(sys.executable).parent / "kubectl-drasat"  # pip installs it beside python and drasat
    assert plugin.exists()
    result = subprocess.run([plugin, "compare", "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.startswith("Usage: kubectl drasat compare")


def _two_namespaces() -> str:
    """The example cluster plus a copy of its claims in namespace team-b."""
    claims = (EXAMPLES / "claims.yaml").read_text()
    return (
        (EXAMPLES / "cluster.yaml").read_text()
        + "\n---\n"
        + claims
        + "\n---\n"
        + claims.replace("namespace: default", "namespace: team-b")
    )


def test_namespace_scopes_the_question_not_the_state() -> None:
    text = _two_namespaces()
    team_b = run("solve", "--node", "gpu-node-1", "-n", "team-b", "-o", "name", "-", stdin=text)
    assert team_b.exit_code == 0, team_b.stderr
    assert team_b.stdout.split() == [
        "resourceclaim.resource.k8s.io/single-gpu",
        "resourceclaim.resource.k8s.io/two-gpus",
        "resourceclaim.resource.k8s.io/gpu-with-nic",
    ]
    bare = run("solve", "--node", "gpu-node-1", "-n", "team-b", "--claims", "two-gpus", "-o", "json", "-", stdin=text)
    assert bare.exit_code == 0 and json.loads(bare.stdout)["items"][0]["metadata"]["namespace"] == "team-b"
    both = run("solve", "-n", "team-b", "-A", "-", stdin=text)
    assert both.exit_code == 2 and "exclude each other" in both.stderr


def test_namespace_on_schedule_places_only_its_pods() -> None:
    placed = run("schedule", "-n", "default", "-o", "name", str(EXAMPLES))
    assert placed.exit_code == 0 and "pod/trainer-0" in placed.stdout
    elsewhere = run("schedule", "-n", "nobody-here", "-o", "name", str(EXAMPLES))
    assert elsewhere.exit_code == 0 and elsewhere.stdout == ""


def test_a_fifo_inside_a_folder_is_skipped_with_a_notice(tmp_path: Path) -> None:
    """A FIFO (or socket, device) in a folder would be read without end: it is passed over, by name."""
    import os
    import shutil
    import subprocess
    import sys

    folder = tmp_path / "manifests"
    shutil.copytree(EXAMPLES, folder)
    os.mkfifo(folder / "pipe.yaml")
    drasat = Path(sys.executable).parent / "drasat"
    result = subprocess.run(
        [drasat, "validate", "-q", str(folder)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 0, result.stderr
    assert (
        f"notice: {folder / 'pipe.yaml'}: skipped, not a regular file (a FIFO, socket or device may never end); "
        "name it on the command line to read it"
    ) in result.stderr


def test_a_fifo_named_on_the_command_line_is_read(tmp_path: Path) -> None:
    import os
    import threading

    pipe = tmp_path / "cluster.yaml"
    os.mkfifo(pipe)
    writer = threading.Thread(target=lambda: pipe.write_text((EXAMPLES / "cluster.yaml").read_text()), daemon=True)
    writer.start()
    result = run("validate", "-q", str(pipe))
    writer.join(timeout=60)
    assert result.exit_code == 0, result.output
