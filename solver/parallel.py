"""Independent per-node work spread over processes: none, local ones, or a Ray cluster.

What-if runs over a whole fleet evaluate thousands of node classes; each evaluation is a
pure function of a small picklable task (the per-node ``Problem``), so it can run anywhere.
An :class:`Executor` maps such a function over tasks and returns the results in task order,
so every caller gets exactly what the serial loop would have computed.

* :class:`Serial` — in this process (the default, and what one worker means);
* :class:`LocalProcesses` — ``concurrent.futures`` worker processes on this machine;
* :class:`RayCluster` — Ray tasks (``pip install 'drasat[ray]'``), on a cluster given by
  address or on a local Ray instance (``auto``).

:func:`executor` picks one from the options a user gives, and falls back to local
processes, with a warning, when Ray is asked for but not installed.
"""

from __future__ import annotations

import math
import multiprocessing
import socket
import warnings
from concurrent.futures import ProcessPoolExecutor
from types import TracebackType
from typing import Any, Callable, Protocol, Sequence, TypeVar

from drasat.models.errors import DrasatWarning, InputError

T = TypeVar("T")
R = TypeVar("R")

RAY_MISSING = "ray is not installed (pip install 'drasat[ray]')"
#: Tasks per worker below which a batch runs in this process: shipping a task costs about a third of a
#: small allocation (pickling the per-node problem both ways), and a round trip more than one.
WORTH_SHIPPING = 4


class Executor(Protocol):
    """Maps a picklable function over tasks; results in task order. Close it (or use ``with``) when done.
    A batch too small to be worth shipping runs in this process."""

    workers: int

    def map(self, fn: Callable[[T], R], tasks: Sequence[T]) -> list[R]: ...

    def close(self) -> None: ...


class _Closing:
    """``with executor(...) as ex:`` for every executor."""

    def __enter__(self: Any) -> Any:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        return None


class Serial(_Closing):
    """Everything in this process, in order."""

    workers = 1

    def map(self, fn: Callable[[T], R], tasks: Sequence[T]) -> list[R]:
        return [fn(task) for task in tasks]


class LocalProcesses(_Closing):
    """Worker processes on this machine, started on first use and kept for the run (starting one costs
    about as much as a hundred small allocations). Forked where the platform allows: the workers then
    share the imported modules instead of importing OR-Tools again."""

    def __init__(self, workers: int, min_batch: int | None = None) -> None:
        self.workers = workers
        self.min_batch = WORTH_SHIPPING * workers if min_batch is None else min_batch
        self._pool: ProcessPoolExecutor | None = None

    def map(self, fn: Callable[[T], R], tasks: Sequence[T]) -> list[R]:
        if len(tasks) < max(2, self.min_batch):
            return [fn(task) for task in tasks]
        if self._pool is None:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context)
        chunk = max(1, math.ceil(len(tasks) / (self.workers * 4)))
        return list(self._pool.map(fn, tasks, chunksize=chunk))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class RayCluster(_Closing):
    """Ray tasks: ``address`` is a cluster's address (``ray://host:10001``, ``host:6379``) or ``auto`` —
    the Ray instance already running on this machine, else a new local one."""

    def __init__(self, address: str, workers: int | None = None) -> None:
        import ray

        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            if address != "auto":
                _check_reachable(address)
            try:
                ray.init(address=None if address == "auto" else address, num_cpus=workers if address == "auto" else None,
                         include_dashboard=False, log_to_driver=False, configure_logging=False)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise InputError(f"cannot reach the Ray cluster at {address}: {exc}") from None
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.min_batch = WORTH_SHIPPING * self.workers
        self._remote: dict[Callable[..., Any], Any] = {}

    def map(self, fn: Callable[[T], R], tasks: Sequence[T]) -> list[R]:
        if len(tasks) < max(2, self.min_batch):
            return [fn(task) for task in tasks]
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self._ray.remote(fn)
        return list(self._ray.get([remote.remote(task) for task in tasks]))

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Ray waits minutes for an address nobody answers at; a plain connection attempt says so in seconds."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"the Ray address {address} is not HOST:PORT or ray://HOST:PORT (or auto)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None


def ray_installed() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def executor(workers: int = 1, ray: str | None = None) -> Serial | LocalProcesses | RayCluster:
    """The executor the options ask for: Ray at ``ray`` (``auto`` or an address) if given and installed,
    else ``workers`` local processes (one: none at all)."""
    if ray:
        if ray_installed():
            return RayCluster(ray, workers if workers > 1 else None)
        warnings.warn(f"{RAY_MISSING}: running on {workers} local process{'es' if workers > 1 else ''} instead",
                      DrasatWarning, stacklevel=2)
    return LocalProcesses(workers) if workers > 1 else Serial()
