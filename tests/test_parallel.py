"""Per-node work on other processes (solver/parallel.py): the same placements as the serial run, every time."""

from __future__ import annotations

import os
import sys
import types
from typing import Any

import pytest
from click.testing import CliRunner

from drasat.cli.main import _register, cli
from drasat.models.errors import DrasatWarning, InputError
from drasat.solver.cluster import Cluster
from drasat.solver.node_dra import AllocateOptions
from drasat.solver.parallel import LocalProcesses, RayCluster, Serial, executor, ray_installed
from drasat.solver.scheduling import Placement, schedule

from .cluster_factory import claim, device_class, gpu_slice, make_cluster, node, pod, template, violations

RAY_TESTS = "DRASAT_TEST_RAY"


def _unlike_nodes() -> Cluster:
    """Six nodes of four GPUs, node i with i of them in use (so no two nodes are alike), and eight pods
    asking for one or two GPUs: each pod needs an allocation on several node classes at once."""
    docs: list[dict[str, Any]] = [device_class(), template("one"), template("two", count=2)]
    for i in range(6):
        docs += [node(f"node-{i}"), gpu_slice(f"node-{i}", count=4)]
        if i:
            docs.append(claim(f"held-{i}", count=i, allocation={"devices": {"results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": f"node-{i}", "device": f"gpu-{g}"}
                for g in range(i)]}}))
    docs += [pod(f"p{j}", claims=[{"name": "gpu", "resourceClaimTemplateName": "one" if j % 3 else "two"}])
             for j in range(8)]
    return make_cluster(*docs)


def _outcome(placements: list[Placement]) -> list[tuple]:
    return [(p.label, p.node, p.reason, sorted((name, r.device) for name, a in p.allocations.items()
                                               for r in a.devices.results)) for p in placements]


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


class _FakeRay(types.ModuleType):
    """Ray's API as RayCluster uses it, run in this process: the Ray code path without starting Ray (6 s here)."""

    def __init__(self) -> None:
        super().__init__("ray")
        self.started = False
        self.calls = 0

    def is_initialized(self) -> bool:
        return self.started

    def init(self, **options: Any) -> None:
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
    docs = [node("node-0"), gpu_slice("node-0"), device_class(), template("one"),
            pod("p", claims=[{"name": "gpu", "resourceClaimTemplateName": "one"}])]
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(docs))
    _register()
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


@pytest.mark.skipif(not ray_installed() or not os.environ.get(RAY_TESTS),
                    reason=f"real Ray: needs pip install 'drasat[ray]' and {RAY_TESTS}=1 (starting Ray takes ~6 s)")
def test_a_local_ray_instance_places_pods_as_the_serial_run():
    serial = schedule(_unlike_nodes())
    with executor(2, "auto") as ex:
        parallel = schedule(_unlike_nodes(), executor=ex)
    assert _outcome(parallel) == _outcome(serial)
