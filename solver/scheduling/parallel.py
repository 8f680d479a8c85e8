"""Independent per-node work spread over processes: none, local ones, or a Ray cluster.

What-if runs over a whole fleet evaluate thousands of node classes; each evaluation is a
pure function of a small picklable task (the per-node ``Problem``), so it can run anywhere.
An :class:`Executor` maps such a function over tasks and returns the results in task order,
so every caller gets exactly what the serial loop would have computed.

* :class:`Serial` — in this process (the default, and what one worker means);
* :class:`LocalProcesses` — ``concurrent.futures`` worker processes on this machine;
* :class:`RayCluster` — Ray tasks (``pip install 'drasat[ray]'``), on a cluster given by
  address or on a local Ray instance (``auto``).

:func:`executor` picks one from the options a user gives: with ``auto`` and Ray not
installed it falls back to local processes with a warning; a Ray cluster named by its
address without Ray installed is refused (the user asked for that cluster).

Speed: the work shared out is each pod's allocations on its node classes. On nodes
that are alike there is one class and nothing to share; measured on 30 and 60 unlike
nodes, one by one, two local processes on two cores were no faster than one (shipping
each per-node problem costs about what it saves). ``--processes`` pays off only where
each allocation is expensive.

Every executor can be ``terminate``d: Ctrl-C, SIGTERM and SIGHUP (``cli/interrupt.py``) kill the
workers instead of leaving them behind; a worker itself leaves those signals to its parent
(:func:`worker_signals`). A worker that dies is :class:`WorkerLost`; an error a
task raises on a worker is raised here as it was there (a Ray task's error unwrapped).
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import signal
import socket
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any, Protocol, TypeVar

from drasat.models.errors import DrasatWarning, InputError, WorkerLost

T = TypeVar("T")
R = TypeVar("R")

RAY_MISSING = "ray is not installed (pip install 'drasat[ray]')"
WORKER_DIED = "a worker process died (killed, or out of memory?): no answer; run again with fewer --processes"
#: Tasks per worker below which a batch runs in this process: shipping a task costs about a third of a
#: small allocation (pickling the per-node problem both ways), and a round trip more than one.
WORTH_SHIPPING = 4


class Executor(Protocol):
    """Maps a picklable function over tasks; results in task order. Close it (or use ``with``) when done.
    A batch too small to be worth shipping runs in this process."""

    workers: int

    def map(self, fn: Callable[[T], R], tasks: Sequence[T]) -> list[R]: ...

    def close(self) -> None: ...

    def terminate(self) -> None:
        """Stop the workers now, work in progress too (Ctrl-C, an error): nothing is left running."""


class _Closing:
    """``with executor(...) as ex:`` for every executor."""

    def __enter__(self: Any) -> Any:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close() if exc is None else self.terminate()  # after an error, tasks still queued are not wanted

    def close(self) -> None:
        return None

    def terminate(self) -> None:
        self.close()


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
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context, initializer=worker_signals)
        chunk = max(1, math.ceil(len(tasks) / (self.workers * 4)))
        try:
            return list(self._pool.map(fn, tasks, chunksize=chunk))
        except BrokenProcessPool:
            self.terminate()
            raise WorkerLost(WORKER_DIED) from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def terminate(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # The executor has no public way to stop its workers before Python 3.14 (terminate_workers).
        processes = list((getattr(pool, "_processes", None) or {}).values())
        for process in processes:
            process.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(timeout=1)


def worker_signals() -> None:
    """A forked worker's signals: the parent decides. Ctrl-C, which the terminal sends to the whole process
    group, is ignored (the parent stops the workers it started); SIGTERM and SIGHUP end the worker as they end
    any process, not through the handler the parent installed; and the signal wake-up pipe the fork shares with
    the parent is let go, so that a signal to a worker alone never ends the parent's run."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, signal.SIG_DFL)


class RayCluster(_Closing):
    """Ray tasks: ``address`` is a cluster's address (``ray://host:10001``, ``host:6379``) or ``auto`` —
    the Ray instance already running on this machine, else a new local one (of ``workers`` CPUs)."""

    def __init__(self, address: str, workers: int | None = None) -> None:
        import ray

        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            _connect(ray, address, workers)
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.min_batch = WORTH_SHIPPING * self.workers
        self._remote: dict[Callable[..., Any], Any] = {}

    def map(self, fn: Callable[[T], R], tasks: Sequence[T]) -> list[R]:
        if len(tasks) < max(2, self.min_batch):
            return [fn(task) for task in tasks]
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self._ray.remote(fn)
        errors = self._ray.exceptions
        try:
            return list(self._ray.get([remote.remote(task) for task in tasks]))
        except errors.RayTaskError as exc:
            cause = getattr(exc, "cause", None)  # the task's own error, as the serial run would have raised it
            if isinstance(cause, Exception):
                raise cause from None
            raise
        except errors.RayError as exc:  # a worker or node died, an object was lost
            raise WorkerLost(
                f"a Ray worker was lost: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}; no answer"
            ) from None

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


def _connect(ray: Any, address: str, workers: int | None) -> None:
    """``ray.init`` without Ray's chatter on stderr; ``auto`` with ``workers``: a new local instance of that
    many CPUs, or the instance already running here (whose CPUs are what they are: a warning says so)."""
    logging.getLogger("ray").setLevel(logging.ERROR)  # "Token authentication is enabled ...", and the like
    quiet = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address != "auto":
        _check_reachable(address)
    try:
        if address == "auto" and workers is not None:
            try:
                ray.init(address=None, num_cpus=workers, **quiet)
                return
            except ValueError as exc:
                if "num_cpus" not in str(exc):
                    raise
            warnings.warn(
                f"a Ray instance already runs on this machine: using it as it is, not {workers} CPUs",
                DrasatWarning,
                stacklevel=3,
            )
        ray.init(address=None if address == "auto" else address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise InputError(f"cannot reach the Ray cluster at {address}: {exc}") from None


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
    """Whether Ray can be imported here (the `ray` extra): `--ray auto` falls back to local processes without it."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def executor(workers: int = 1, ray: str | None = None) -> Serial | LocalProcesses | RayCluster:
    """The executor the options ask for: Ray at ``ray`` (``auto`` or an address) if given and installed,
    else ``workers`` local processes (one: none at all). A cluster's address without Ray installed is
    bad input: running locally instead would not be what was asked for."""
    if ray:
        if ray_installed():
            return RayCluster(ray, workers if workers > 1 else None)
        if ray != "auto":
            raise InputError(f"--ray {ray}: {RAY_MISSING}")
        warnings.warn(
            f"{RAY_MISSING}: running on {workers} local process{'es' if workers > 1 else ''} instead",
            DrasatWarning,
            stacklevel=2,
        )
    return LocalProcesses(workers) if workers > 1 else Serial()
