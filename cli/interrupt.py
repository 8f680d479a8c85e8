"""Ctrl-C: exit 130 at once with one line on stderr, and leave no partly written output file.

Python runs a signal handler only between bytecodes of the main thread, and drasat's
main thread can sit for seconds inside CP-SAT or a CEL engine's C++ code. So the
handler here is a thread blocked on the signal wake-up pipe: the C-level handler
writes to the pipe whatever the main thread is doing, and the thread removes any
output still being written (see :func:`write_atomically`), stops what was registered
with :func:`stopped_on_interrupt` (worker processes, a Ray instance started here) and
ends the process. ``os._exit`` runs no ``finally`` and no ``atexit``: without that
registration, worker processes would be left running for ever.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130, what shells report for a process ended by Ctrl-C
MESSAGE = b"drasat: interrupted\n"
_PARTIAL: set[str] = set()
_LOCK = threading.Lock()
_STOPS: list[Callable[[], None]] = []
STOP_WAIT = 5.0  # seconds the stops may take before the process ends anyway (a Ray shutdown can hang)
_INTERRUPTED = threading.Event()


def exit_on_interrupt() -> None:
    """From now on Ctrl-C ends the process with :data:`EXIT_INTERRUPTED` (call from the main thread)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    signal.signal(signal.SIGINT, lambda *_: None)  # the C handler writes the wake-up byte; the thread acts
    threading.Thread(target=_watch, args=(read_end,), name="drasat-interrupt", daemon=True).start()


def _watch(read_end: int) -> None:
    while True:
        received = os.read(read_end, 64)
        if not received or signal.SIGINT in received:
            break
    _INTERRUPTED.set()
    remove_partial_outputs()
    os.write(2, MESSAGE)
    stopping = threading.Thread(target=_run_stops, name="drasat-stop", daemon=True)
    stopping.start()
    stopping.join(STOP_WAIT)
    os._exit(EXIT_INTERRUPTED)


def quiet_if_interrupted() -> None:
    """Called before reporting an error: stopping the workers on Ctrl-C makes the work in progress fail, and that
    failure is no error to report — this waits (on a main thread) for the interrupt to end the process."""
    if _INTERRUPTED.is_set():
        threading.Event().wait(STOP_WAIT + 1)
        os._exit(EXIT_INTERRUPTED)


@contextmanager
def stopped_on_interrupt(stop: Callable[[], None]) -> Iterator[None]:
    """Within the block, Ctrl-C calls ``stop`` before the process ends (e.g. an executor's terminate)."""
    with _LOCK:
        _STOPS.append(stop)
    try:
        yield
    finally:
        with _LOCK:
            _STOPS.remove(stop)


def _run_stops() -> None:
    with _LOCK:
        stops = list(reversed(_STOPS))
    for stop in stops:
        try:
            stop()
        except Exception:  # noqa: BLE001 - ending anyway: one stop failing must not keep the others from running
            pass


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Write ``path`` under a temporary name in the same directory and rename it when complete,
    so that an interrupted or failed write never leaves a half-written file under the real name."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.partial")
    with _LOCK:
        _PARTIAL.add(str(temporary))
    try:
        with open(temporary, "wb") as out:
            out.write(data.encode() if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    finally:
        with _LOCK:
            _PARTIAL.discard(str(temporary))
        if temporary.exists():
            temporary.unlink()


def remove_partial_outputs() -> None:
    """Delete every file :func:`write_atomically` has not finished."""
    with _LOCK:
        for name in list(_PARTIAL):
            try:
                os.unlink(name)
            except OSError:
                pass
        _PARTIAL.clear()
