"""Ctrl-C: ``drasat`` exits 130 with one line on stderr, even while it is inside C++ code,
and an output being written under a temporary name never appears under the real one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from drasat.cli.atomic_file import write_atomically
from drasat.cli.interrupt import EXIT_INTERRUPTED, remove_partial_outputs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def slow_class() -> str:
    """A selector Kubernetes accepts (estimated cost 655,551) that takes seconds to evaluate in celpy."""
    body = "x0 > 0"
    for level in range(5):
        body = f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x{level}, {body})"
    return (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
        f"spec:\n  selectors:\n  - cel: {{expression: '{body}'}}\n"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_exits_130_with_one_line(tmp_path: Path) -> None:
    cluster = (
        (EXAMPLES / "cluster.yaml")
        .read_text()
        .replace("metadata:\n  name: gpu.example.com\nspec:", "metadata:\n  name: unused-gpu-class\nspec:")
    )
    (tmp_path / "cluster.yaml").write_text(cluster)
    (tmp_path / "class.yaml").write_text(slow_class())
    (tmp_path / "claims.yaml").write_text((EXAMPLES / "claims.yaml").read_text())
    env = dict(os.environ, DRASAT_CEL_ENGINE="celpy")
    process = subprocess.Popen(
        [sys.executable, "-m", "drasat.cli", "solve", "--node", "gpu-node-1", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    time.sleep(2.5)
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=20)
    assert process.returncode == EXIT_INTERRUPTED == 130
    assert stdout == ""
    assert stderr.splitlines()[-1] == "drasat: interrupted"
    assert [line for line in stderr.splitlines() if not line.startswith(("notice:", "warning:"))] == [
        "drasat: interrupted"
    ]


def test_write_atomically_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "state.yaml"
    target.write_text("old\n")
    write_atomically(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["state.yaml"]


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "state.yaml"
    target.write_text("old\n")

    def interrupted_fsync(fd: int) -> None:
        remove_partial_outputs()  # what the interrupt thread does before it ends the process
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted_fsync)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["state.yaml"]
