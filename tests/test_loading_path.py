"""What every command's objects go through on their way in: each file read once, however many paths lead to
it; one notice for the objects of kinds drasat does not use; the API server's rules for every command."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from .test_inputs_cli import EXAMPLES, run

CLUSTER = EXAMPLES / "cluster.yaml"
NAMES = 8  # the objects of examples/cluster.yaml


def _names(stdout: str) -> list[str]:
    return stdout.splitlines()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``t/v2/cluster.yaml`` and ``t/current``, a link to ``v2``, with ``t`` the working directory's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t" / "v2").mkdir(parents=True)
    shutil.copy(CLUSTER, tmp_path / "t" / "v2" / "cluster.yaml")
    (tmp_path / "t" / "current").symlink_to("v2")
    return tmp_path


def test_a_folder_and_a_link_to_it_are_read_once_and_the_link_is_named(tree: Path) -> None:
    result = run("validate", "-o", "name", "t")
    assert result.exit_code == 0, result.stderr
    assert len(_names(result.stdout)) == NAMES
    assert result.stderr == "notice: t/current: links to t/v2, which is read; passed over\n"


@pytest.mark.parametrize(
    "args, notice",
    [
        (["t/v2", "t/current"], "t/current: links to t/v2, which is read; passed over"),
        (["t/current", "t/v2"], "t/v2: read already as t/current; passed over"),
        (["t", "t/v2"], "t/v2: read already; passed over"),
        (["t/v2", "t"], "t/v2: read already; passed over"),
    ],
)
def test_a_folder_given_by_two_paths_is_read_once(tree: Path, args: list[str], notice: str) -> None:
    result = run("validate", "-o", "name", *args)
    assert result.exit_code == 0, result.stderr
    assert len(_names(result.stdout)) == NAMES
    assert f"notice: {notice}\n" in result.stderr


def test_a_link_to_a_folder_it_is_in_is_a_loop_named_by_the_link(tree: Path) -> None:
    (tree / "t" / "v2" / "up").symlink_to("..")
    result = run("inventory", "t")
    assert result.exit_code == 2 and result.stdout == ""
    assert "error: t/v2/up: links to t, a folder it is in (a symbolic link loop); drasat does not follow it\n" in (
        result.stderr
    )


GENERATED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {generateName: gpu-, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
"""


@pytest.mark.parametrize(
    "args, notice",
    [
        (["t/v2/claim.yaml", "t/v2/claim.yaml"], "t/v2/claim.yaml: read already; passed over"),
        (["t/v2", "t/v2/claim.yaml"], "t/v2/claim.yaml: read already; passed over"),
        (["t/v2/claim.yaml", "t/v2"], "t/v2/claim.yaml: read already; passed over"),
        (
            ["t/v2/claim.yaml", "t/current/claim.yaml"],
            "t/current/claim.yaml: read already as t/v2/claim.yaml; passed over",
        ),
    ],
)
def test_a_file_given_twice_is_read_once(tree: Path, args: list[str], notice: str) -> None:
    """A claim with generateName only has no identity to tell a second copy by: read twice, it was two claims."""
    (tree / "t" / "v2" / "claim.yaml").write_text(GENERATED)
    result = run("validate", *args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("ResourceClaim/?") == 1
    assert f"notice: {notice}\n" in result.stderr


def test_a_file_link_beside_its_target_is_passed_over_by_name(tree: Path) -> None:
    (tree / "t" / "v2" / "alias.yaml").symlink_to("cluster.yaml")
    result = run("validate", "-o", "name", "t/v2")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "notice: t/v2/alias.yaml: links to t/v2/cluster.yaml, which is read; passed over\n"


def test_objects_of_unused_kinds_are_one_notice_per_file(tmp_path: Path) -> None:
    """A ``kubectl get all -A -o yaml`` dump holds thousands of objects drasat does not use: one line says so."""
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}} for i in range(50)]
    items += [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"d{i}"}} for i in range(5)]
    items.insert(3, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    noise = tmp_path / "noise.yaml"
    noise.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    result = run("schedule", "-o", "name", str(EXAMPLES), str(noise))
    assert result.exit_code == 0, result.stderr
    skipped = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert skipped == [
        f"notice: {noise}: skipped 50 v1 ConfigMap and 5 apps/v1 Deployment objects: drasat does not use these kinds"
    ]


HARD_LINK = "hl/d.yaml: the same file as hl/c.yaml, read already; passed over"


@pytest.mark.parametrize(
    "args, notices",
    [
        (["hl"], [HARD_LINK]),
        (["hl/c.yaml", "hl/d.yaml"], [HARD_LINK]),
        (["hl/c.yaml", "hl"], ["hl/c.yaml: read already; passed over", HARD_LINK]),
    ],
)
def test_hard_links_to_one_file_are_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], notices: list[str]
) -> None:
    """Two names of one file (a hard link, or a bind mount) have no link to tell by: the file itself is the key."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hl").mkdir()
    (tmp_path / "hl" / "c.yaml").write_text(GENERATED)
    os.link(tmp_path / "hl" / "c.yaml", tmp_path / "hl" / "d.yaml")
    result = run("validate", "-o", "name", *args)
    assert result.exit_code == 0, result.stderr
    assert len(_names(result.stdout)) == 1, result.stdout  # one claim, not two
    assert result.stderr.splitlines() == [f"notice: {notice}" for notice in notices]


def test_a_link_given_and_then_reached_again_is_read_already_not_a_link_to_itself(tree: Path) -> None:
    result = run("validate", "-o", "name", "t/current", "t")
    assert result.exit_code == 0, result.stderr
    assert len(_names(result.stdout)) == NAMES
    assert result.stderr == (
        "notice: t/current: read already; passed over\nnotice: t/v2: read already as t/current; passed over\n"
    )


def test_a_link_to_a_fifo_is_skipped_as_the_fifo_is_never_said_to_be_read(tree: Path) -> None:
    os.mkfifo(tree / "t" / "v2" / "pipe.yaml")
    (tree / "t" / "v2" / "alias.yaml").symlink_to("pipe.yaml")
    result = run("validate", "-o", "name", "t/v2")
    assert result.exit_code == 0, result.stderr
    skipped = (
        "skipped, not a regular file (a FIFO, socket or device may never end); name it on the command line to read it"
    )
    assert result.stderr == f"notice: t/v2/alias.yaml: {skipped}\nnotice: t/v2/pipe.yaml: {skipped}\n"
