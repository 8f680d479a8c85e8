"""Per-node work on other processes (solver/scheduling/parallel.py): the same placements as the serial run,
every time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.errors import DrasatWarning, InputError, WorkerLost
from drasat.solver.scheduling import parallel
from drasat.solver.scheduling.cluster import Cluster
from drasat.solver.scheduling.one_by_one import Placement, schedule
from drasat.solver.scheduling.parallel import LocalProcesses, RayCluster, Serial, executor, ray_installed
from drasat.solver.scheduling.plugins import dynamic_resources
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

from .cluster_factory import claim, device_class, gpu_slice, make_cluster, node, pod, template, violations


def _unlike_node_docs(nodes: int) -> list[dict[str, Any]]:
    """Nodes of four GPUs, node i with i of them in use (so no two nodes are alike), and the GPU class."""
    docs: list[dict[str, Any]] = [device_class()]
    for i in range(nodes):
        docs += [node(f"node-{i}"), gpu_slice(f"node-{i}", count=4)]
        if i:
            docs.append(
                claim(
                    f"held-{i}",
                    count=i,
                    allocation={
                        "devices": {
                            "results": [
                                {
                                    "request": "gpu",
                                    "driver": "gpu.example.com",
                                    "pool": f"node-{i}",
                                    "device": f"gpu-{g}",
                                }
                                for g in range(i)
                            ]
                        }
                    },
                )
            )
    return docs


def _unlike_nodes() -> Cluster:
    """Six unlike nodes and eight pods asking for one or two GPUs: each pod needs an allocation on several node
    classes at once."""
    docs = [*_unlike_node_docs(6), template("one"), template("two", count=2)]
    docs += [
        pod(f"p{j}", claims=[{"name": "gpu", "resourceClaimTemplateName": "one" if j % 3 else "two"}]) for j in range(8)
    ]
    return make_cluster(*docs)


def _outcome(placements: list[Placement]) -> list[tuple]:
    return [
        (
            p.label,
            p.node,
            p.reason,
            sorted((name, r.device) for name, a in p.allocations.items() for r in a.devices.results),
        )
        for p in placements
    ]


def _double(x: int) -> int:
    return 2 * x


def _process(_: int) -> int:
    return os.getpid()


def test_local_processes_keep_task_order():
    with LocalProcesses(2) as ex:
        assert ex.map(_double, list(range(50))) == [2 * x for x in range(50)]
        assert os.getpid() not in ex.map(_process, list(range(8)))
        assert ex.map(_process, list(range(7))) == [os.getpid()] * 7  # not worth shipping: done here
    assert Serial().map(_double, [3, 1]) == [6, 2]


@pytest.mark.parametrize("objective", ["first-fit", "pack"])
def test_two_local_processes_place_pods_as_the_serial_run(objective):
    options = AllocateOptions(objective=objective)
    serial = schedule(_unlike_nodes(), options=options)
    with LocalProcesses(2, min_batch=2) as ex:  # ship even the small batches of this small cluster
        parallel = schedule(_unlike_nodes(), options=options, executor=ex)
    assert violations(parallel) == []
    assert sum(1 for p in parallel if p.node) >= 6  # the test places pods, it does not compare two empty runs
    assert _outcome(parallel) == _outcome(serial)


class _RayError(Exception):
    pass


class _RayTaskError(_RayError):
    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"ray::answer_on_node() (pid=1)\n  File ...\n{cause}")
        self.cause = cause


class _FakeRay(types.ModuleType):
    """Ray's API as RayCluster uses it, run in this process: the Ray code path without starting Ray (6 s here).
    ``running``: a Ray instance already runs here (init refuses num_cpus, as Ray does)."""

    exceptions = types.SimpleNamespace(RayError=_RayError, RayTaskError=_RayTaskError)

    def __init__(self, running: bool = False, fail: BaseException | None = None) -> None:
        super().__init__("ray")
        self.started = False
        self.calls = 0
        self.running, self.fail = running, fail
        self.inits: list[dict[str, Any]] = []

    def is_initialized(self) -> bool:
        return self.started

    def init(self, **options: Any) -> None:
        self.inits.append(options)
        if self.running and options.get("num_cpus") is not None:
            raise ValueError("When connecting to an existing cluster, num_cpus and num_gpus must not be provided.")
        self.started = True

    def shutdown(self) -> None:
        self.started = False

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}

    def remote(self, fn: Any) -> Any:
        fake = self

        class Remote:
            def remote(self, task: Any) -> Any:
                fake.calls += 1
                return fn(task)

        return Remote()

    def get(self, refs: list[Any]) -> list[Any]:
        if self.fail is not None:
            raise self.fail
        return list(refs)


def test_the_ray_path_places_pods_as_the_serial_run(monkeypatch):
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    serial = schedule(_unlike_nodes())
    with executor(2, "auto") as ex:
        assert isinstance(ex, RayCluster) and ex.workers == 2
        ex.min_batch = 2
        parallel = schedule(_unlike_nodes(), executor=ex)
    assert fake.calls > 0 and not fake.started
    assert _outcome(parallel) == _outcome(serial)


def test_without_ray_local_processes_take_over_with_a_warning(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails
    with pytest.warns(DrasatWarning, match=r"pip install 'drasat\[ray\]'.*2 local processes"):
        ex = executor(2, "auto")
    assert isinstance(ex, LocalProcesses)
    ex.close()


def test_schedule_cli_without_ray_says_so_and_still_places(monkeypatch, tmp_path):
    import yaml

    monkeypatch.setitem(sys.modules, "ray", None)
    docs = [
        node("node-0"),
        gpu_slice("node-0"),
        device_class(),
        template("one"),
        pod("p", claims=[{"name": "gpu", "resourceClaimTemplateName": "one"}]),
    ]
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(docs))
    load_all_commands()
    result = CliRunner().invoke(cli, ["schedule", "--ray", "auto", "-o", "name", str(tmp_path / "in.yaml")])
    assert result.exit_code == 0, result.output
    assert "ray is not installed (pip install 'drasat[ray]')" in result.stderr
    assert "pod/p" in result.stdout


def test_an_unreachable_ray_address_is_bad_input_at_once(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", _FakeRay())
    with pytest.raises(InputError, match="cannot reach the Ray cluster at 127.0.0.1:1"):
        executor(1, "127.0.0.1:1")
    with pytest.raises(InputError, match="not HOST:PORT"):
        executor(1, "somewhere")


def _fails(_: int) -> int:
    raise InputError("boom: a task's own error")


@pytest.mark.skipif(
    not ray_installed(),
    reason="real Ray: ray is not installed (CI installs .[test,lint] only; "
    "pip install 'drasat[ray]' to run it; starting Ray takes ~6 s)",
)
def test_a_local_ray_instance_places_pods_as_the_serial_run(capfd):
    """The real thing: pickling to Ray workers, a task's error unwrapped, Ray quiet on stderr, shut down after."""
    import ray

    serial = schedule(_unlike_nodes())
    with executor(2, "auto") as ex:
        assert isinstance(ex, RayCluster)
        ex.min_batch = 2
        parallel_run = schedule(_unlike_nodes(), executor=ex)
        with pytest.raises(InputError, match="^boom: a task's own error$"):
            ex.map(_fails, [1, 2, 3])
    assert not ray.is_initialized()
    assert _outcome(parallel_run) == _outcome(serial)
    assert "Token authentication" not in capfd.readouterr().err


def test_a_ray_task_error_is_raised_as_the_task_raised_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", _FakeRay(fail=_RayTaskError(InputError("boom"))))
    with executor(2, "auto") as ex, pytest.raises(InputError, match="^boom$"):
        ex.map(_double, list(range(20)))


def test_a_lost_ray_worker_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", _FakeRay(fail=_RayError("The worker died unexpectedly\n  details")))
    with (
        executor(2, "auto") as ex,
        pytest.raises(WorkerLost, match="^a Ray worker was lost: The worker died unexpectedly; no answer$"),
    ):
        ex.map(_double, list(range(20)))


def test_ray_auto_with_processes_joins_a_running_instance_with_a_warning(monkeypatch):
    fake = _FakeRay(running=True)
    monkeypatch.setitem(sys.modules, "ray", fake)
    with pytest.warns(DrasatWarning, match="already runs on this machine"):
        ex = executor(2, "auto")
    ex.close()
    assert [i.get("num_cpus") for i in fake.inits] == [2, None]


def test_a_ray_address_without_ray_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(InputError, match=r"--ray 10.0.0.1:6379: ray is not installed"):
        executor(2, "10.0.0.1:6379")


def _in_a_worker(parent: int, action: str) -> Any:
    """An ``allocate`` that kills its worker process, or raises there; in the test's own process, allocates."""
    real = dynamic_resources.allocate

    def allocate(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            if action == "die":
                os.kill(os.getpid(), signal.SIGKILL)
            raise InputError("boom in a worker")
        return real(*args, **kwargs)

    return allocate


def test_a_worker_that_dies_is_worker_lost(monkeypatch):
    monkeypatch.setattr(dynamic_resources, "allocate", _in_a_worker(os.getpid(), "die"))
    with LocalProcesses(2, min_batch=2) as ex, pytest.raises(WorkerLost, match="a worker process died"):
        schedule(_unlike_nodes(), executor=ex)


def _cli_input(tmp_path: Path) -> str:
    import yaml

    docs = [
        *_unlike_node_docs(4),
        template("one"),
        pod("p", claims=[{"name": "gpu", "resourceClaimTemplateName": "one"}]),
    ]
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(docs))
    return str(tmp_path / "in.yaml")


@pytest.mark.parametrize(
    "action, code, line", [("die", 1, "error: a worker process died"), ("raise", 2, "error: boom in a worker")]
)
def test_schedule_cli_says_what_went_wrong_on_a_worker_in_one_line(monkeypatch, tmp_path, action, code, line):
    monkeypatch.setattr(parallel, "WORTH_SHIPPING", 1)  # ship even this small cluster's batches
    monkeypatch.setattr(dynamic_resources, "allocate", _in_a_worker(os.getpid(), action))
    load_all_commands()
    result = CliRunner().invoke(cli, ["schedule", "--processes", "2", "-o", "name", _cli_input(tmp_path)])
    assert result.exit_code == code and result.stdout == ""
    assert result.stderr.startswith(line) and result.stderr.count("\n") == 1, result.stderr


def test_greedy_with_another_objective_is_refused_before_any_work(monkeypatch, tmp_path):
    def no_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("allocated before refusing the options")

    monkeypatch.setattr(dynamic_resources, "allocate", no_work)
    load_all_commands()
    result = CliRunner().invoke(cli, ["schedule", "--solver", "greedy", "--objective", "pack", _cli_input(tmp_path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "error: the greedy solver only knows the first-fit objective; use --solver cp-sat\n"


NAPPING_WORKERS = """
import os, sys, time
from drasat.cli.allocation_options import exit_on_error
from drasat.cli.interrupt import exit_on_interrupt, stopped_on_interrupt
from drasat.models.errors import DrasatError
from drasat.solver.scheduling.parallel import LocalProcesses

def nap(_):
    os.write(1, f"{os.getpid()}\\n".encode())  # one write: the two workers' lines never interleave
    time.sleep(60)

exit_on_interrupt()
ex = LocalProcesses(2, min_batch=2)
try:
    with stopped_on_interrupt(ex.terminate):  # as drasat schedule runs its executor
        ex.map(nap, [1, 2, 3, 4])
except DrasatError as exc:
    exit_on_error(exc, False)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie nobody reaped (no init in a container) is dead too


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc (Linux)")
def test_ctrl_c_leaves_no_worker_process_behind():
    run = subprocess.Popen(
        [sys.executable, "-c", NAPPING_WORKERS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert run.stdout is not None
    workers = {int(run.stdout.readline()), int(run.stdout.readline())}
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=10) == 130
    assert run.stderr is not None and run.stderr.read() == "drasat: interrupted\n"
    run.stdout.close()
    run.stderr.close()
    assert [pid for pid in workers if _alive(pid)] == []
