"""The first Ctrl-C of ``schedule --batch`` stops the search and prints the best answer found so far, saying it
is not proven; a second Ctrl-C ends the run at once (exit 130)."""

from __future__ import annotations

import os
import pty
import runpy
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fragmented, over-subscribed cluster whose joint model takes minutes to prove (300 nodes, 6,000 pods)."""
    frag = runpy.run_path(str(BENCHMARKS / "frag_cluster.py"))
    path = tmp_path_factory.mktemp("halt") / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(frag["cluster_objects"](300, 6000, 10)))
    return path


class _Run:
    """``schedule --batch`` with stderr on a terminal (a pty), so that its status line shows when the search has
    an answer: the test interrupts then, not after a guessed sleep."""

    def __init__(self, path: Path, state: Path) -> None:
        main, child = pty.openpty()
        command = ["schedule", "--batch", "--timeout", "300", "-o", "wide", "--output-state", str(state), str(path)]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "drasat.cli", *command],
            stdout=subprocess.PIPE,
            stderr=child,
            text=True,
            env=dict(os.environ, COLUMNS="200"),
        )
        os.close(child)
        self.err = bytearray()
        self._reader = threading.Thread(target=self._read, args=(main,), daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            self.err += chunk

    def wait_for(self, text: str, seconds: float) -> None:
        ends = time.monotonic() + seconds
        while text.encode() not in self.err:
            assert self.process.poll() is None and time.monotonic() < ends, self.stderr()
            time.sleep(0.2)

    def finish(self, seconds: float) -> tuple[str, str]:
        out, _ = self.process.communicate(timeout=seconds)
        self._reader.join(5)
        return out, self.stderr()

    def stderr(self) -> str:
        return self.err.decode(errors="replace")


def _devices_once(items: list[dict]) -> Counter[tuple[str, str, str]]:
    """Every device the claims hold, counted (an independent reading: no device may be taken twice)."""
    held: Counter[tuple[str, str, str]] = Counter()
    for item in items:
        if item.get("kind") != "ResourceClaim":
            continue
        for result in ((item.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []):
            held[result["driver"], result["pool"], result["device"]] += 1
    return held


def test_first_ctrl_c_prints_the_best_answer_so_far(cluster: Path, tmp_path: Path) -> None:
    run = _Run(cluster, tmp_path / "state.yaml")
    run.wait_for("pods placed so far", 240)  # the search has an answer; it runs on for minutes
    started = time.monotonic()
    run.process.send_signal(signal.SIGINT)
    out, err = run.finish(300)
    assert "drasat: stopping: the best answer so far follows" in err, err
    assert run.process.returncode in (0, 1), err  # 1: some pods pending, as ever
    placed = [line for line in out.splitlines()[1:] if line.split()[1:2] != ["<pending>"]]
    assert placed, err[-3000:]
    assert "proven optimal" not in err, err[-3000:]
    docs = [d for d in yaml.safe_load_all((tmp_path / "state.yaml").read_text()) if d]
    state = [item for d in docs for item in (d.get("items") or [d])]
    pending = {
        f"default/{p['metadata']['name']}" for p in state if p.get("kind") == "Pod" and "nodeName" not in p["spec"]
    }
    assert len(pending) < 6000, err[-3000:]  # the state the answer leaves: some of the 6,000 pending pods bound
    assert max(_devices_once(state).values(), default=1) == 1
    # decoding the best answer, then printing 6,000 pods and writing the whole state: minutes on a loaded machine
    assert time.monotonic() - started < 240, "the best answer took too long to come after Ctrl-C"


def test_second_ctrl_c_ends_the_run(cluster: Path, tmp_path: Path) -> None:
    run = _Run(cluster, tmp_path / "state.yaml")
    run.wait_for("pods placed so far", 240)
    run.process.send_signal(signal.SIGINT)
    run.wait_for("drasat: stopping", 30)
    run.process.send_signal(signal.SIGINT)
    out, err = run.finish(30)
    assert run.process.returncode == 130, err
    assert out == ""
    assert "drasat: interrupted" in err
    assert not (tmp_path / "state.yaml").exists()


def test_a_batch_stopped_while_its_model_is_built_proves_nothing_and_says_so_once(tmp_path: Path) -> None:
    """A run whose time ends before the joint model counts every node has no bound and no proof (its bound and
    proof would speak of the nodes reached only), and the pods it did not try are one line, not one each."""
    frag = runpy.run_path(str(BENCHMARKS / "frag_cluster.py"))
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(frag["cluster_objects"](20, 200, 2)))
    command = ["schedule", "--batch", "--timeout", "0.01", "-o", "name", str(path)]
    done = subprocess.run([sys.executable, "-m", "drasat.cli", *command], capture_output=True, text=True, timeout=120)
    summary = done.stderr.splitlines()[0]
    assert summary.startswith("batch: ") and "proven optimal" not in summary and "no bound known" in summary
    assert "while the model was built: it counts 0 of 20 nodes, so no bound is proven" in done.stderr
    untried = [line for line in done.stderr.splitlines() if "not tried: the batch's time limit" in line]
    assert len(untried) == 1 and untried[0].startswith("200 pods are pending: ") and "-v names each" in untried[0]
