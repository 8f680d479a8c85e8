"""SIGTERM and SIGHUP end a run as Ctrl-C does: the workers ended, the temporaries removed, one line on stderr,
exit 128 + the signal (143, 129) -- never a worker left running under PID 1 or a ``.NAME.PID.partial`` file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from .cluster_factory import claim, gpu_slice, node, pod, template
from .test_interrupt import slow_class

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state, ppid, pgrp, ...), or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def _living(where) -> list[int]:  # type: ignore[no-untyped-def]
    """Processes not dead (a zombie nobody reaps, as in a container without init, is dead) that ``where`` picks."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and fields[0] not in ("Z", "X") and where(fields):
                found.append(int(entry.name))
    return found


def slow_cluster(folder: Path) -> Path:
    """Twelve unlike nodes of twelve GPUs behind a selector celpy takes seconds over, and one pending pod: the
    pod's allocations on the twelve node classes are shipped to the worker processes, which stay busy."""
    docs = [yaml.safe_load(slow_class())]
    for i in range(12):
        docs += [node(f"node-{i}"), gpu_slice(f"node-{i}", count=12)]
        if i:  # node i has i GPUs in use: no two nodes alike
            results = [
                {"request": "gpu", "driver": "gpu.example.com", "pool": f"node-{i}", "device": f"gpu-{g}"}
                for g in range(i)
            ]
            docs.append(claim(f"held-{i}", count=i, allocation={"devices": {"results": results}}))
    docs += [template("one"), pod("p0", claims=[{"name": "gpu", "resourceClaimTemplateName": "one"}])]
    path = folder / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


@pytest.mark.parametrize(
    "number, code, line", [(signal.SIGTERM, 143, "drasat: terminated"), (signal.SIGHUP, 129, "drasat: hangup")]
)
def test_a_signal_ends_schedule_with_processes_and_leaves_nothing(
    tmp_path: Path, number: int, code: int, line: str
) -> None:
    state = tmp_path / "state.yaml"
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "drasat.cli",
            "schedule",
            "--processes",
            "2",
            "--output-state",
            str(state),
            str(slow_cluster(tmp_path)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, DRASAT_CEL_ENGINE="celpy"),
        start_new_session=True,  # its own process group: every process it starts is found by the group
    )
    try:
        deadline = time.monotonic() + 60
        while len(_living(lambda f: f[1] == str(run.pid))) < 2:  # both workers started, at work
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.1)
        time.sleep(0.5)
        run.send_signal(number)
        stdout, stderr = run.communicate(timeout=20)
    finally:  # a failing run must not leave its workers behind either
        if _living(lambda f: f[2] == str(run.pid)):
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == code, stderr
    assert stdout == "" and stderr.splitlines()[-1] == line, stderr
    assert "Traceback" not in stderr
    time.sleep(0.2)  # the killed workers' last instant
    assert _living(lambda f: f[2] == str(run.pid)) == []  # nothing of its process group is left running
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.yaml"]  # no state, no .partial


WRITING = """
import os, sys
from drasat.cli.atomic_file import write_atomically
from drasat.cli.interrupt import exit_on_interrupt

def stuck(fd):  # the write is under way, its temporary file on disk, when the signal comes
    os.write(1, b"writing\\n")
    os.read(os.open(os.devnull, os.O_RDONLY), 1)  # returns at once; then wait for ever
    import time; time.sleep(60)

exit_on_interrupt()
os.fsync = stuck
write_atomically(sys.argv[1], "new\\n" * 100_000)
"""


@pytest.mark.parametrize("number, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_a_signal_during_a_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, number: int, code: int) -> None:
    target = tmp_path / "state.yaml"
    target.write_text("old\n")
    run = subprocess.Popen(
        [sys.executable, "-c", WRITING, str(target)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert run.stdout is not None and run.stdout.readline() == "writing\n"
    assert len(list(tmp_path.iterdir())) == 2  # the .state.yaml.RANDOM.partial beside the old file
    run.send_signal(number)
    assert run.wait(timeout=20) == code
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.yaml"] and target.read_text() == "old\n"
    run.stdout.close()
    assert run.stderr is not None
    run.stderr.close()


NAPPING_WORKERS = """
import os, time
from drasat.cli.allocation_options import exit_on_error
from drasat.cli.interrupt import exit_on_interrupt, stopped_on_interrupt
from drasat.models.errors import DrasatError
from drasat.solver.scheduling.parallel import LocalProcesses

def nap(_):
    os.write(1, f"{os.getpid()}\\n".encode())
    time.sleep(60)

exit_on_interrupt()
ex = LocalProcesses(2, min_batch=2)
try:
    with stopped_on_interrupt(ex.terminate):
        ex.map(nap, [1, 2, 3, 4])
except DrasatError as exc:
    exit_on_error(exc, False)
"""


def test_sigterm_to_one_worker_alone_is_a_lost_worker_not_the_end_of_the_run() -> None:
    """The worker ends (it does not share the parent's handler or its wake-up pipe); the parent reports it."""
    run = subprocess.Popen(
        [sys.executable, "-c", NAPPING_WORKERS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert run.stdout is not None and run.stderr is not None
    workers = [int(run.stdout.readline()), int(run.stdout.readline())]
    os.kill(workers[0], signal.SIGTERM)
    assert run.wait(timeout=20) == 1
    assert "a worker process died" in run.stderr.read()
    run.stdout.close()
    run.stderr.close()
    time.sleep(0.2)
    assert [pid for pid in workers if _stat(pid) is not None and _stat(pid)[0] not in ("Z", "X")] == []  # type: ignore[index]
