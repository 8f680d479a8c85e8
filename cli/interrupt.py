"""Ctrl-C, SIGTERM, SIGHUP: exit at once with one line on stderr, no worker left running, no partly written file.

Python runs a signal handler only between bytecodes of the main thread, and drasat's
main thread can sit for seconds inside CP-SAT or a CEL engine's C++ code. So the
handler here is a thread blocked on the signal wake-up pipe: the C-level handler
writes to the pipe whatever the main thread is doing, and the thread removes any
output still being written (see :func:`removed_if_interrupted`), stops what was registered
with :func:`stopped_on_interrupt` (worker processes, a Ray instance started here) and
ends the process. ``os._exit`` runs no ``finally`` and no ``atexit``: without that
registration, worker processes would be left running for ever.

A long search may ask for a gentler first Ctrl-C (:func:`halted_on_first_interrupt`): within it the
first SIGINT only sets an event — the search stops and its best answer so far is printed, saying it
is not proven — and a second Ctrl-C (or SIGTERM, SIGHUP) ends the run as above.

SIGTERM (what ``kill``, a container runtime or systemd send) and SIGHUP (the terminal went away) end the
run the same way; Python's default for them ends the process on the spot, leaving the workers and the
temporary files behind. The exit status is the shell's for a process ended by that signal: 130 for
Ctrl-C, 143 for SIGTERM, 129 for SIGHUP. A signal the parent process ignores (``nohup`` ignores SIGHUP, a
shell's background job ignores SIGINT) stays ignored.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130, what shells report for a process ended by Ctrl-C
#: The signals that end a run politely, and the line each leaves on stderr; the exit status is 128 + the signal.
ENDING = {
    signal.SIGINT: b"drasat: interrupted\n",
    signal.SIGTERM: b"drasat: terminated\n",
    **({signal.SIGHUP: b"drasat: hangup\n"} if hasattr(signal, "SIGHUP") else {}),
}
MESSAGE = ENDING[signal.SIGINT]
_PARTIAL: set[tuple[int, str]] = set()  # (folder descriptor, name) of each temporary being written
_LOCK = threading.Lock()
_STOPS: list[Callable[[], None]] = []
STOP_WAIT = 5.0  # seconds the stops may take before the process ends anyway (a Ray shutdown can hang)
_INTERRUPTED = threading.Event()
_HALTS: list[threading.Event] = []  # the events a first Ctrl-C sets instead of ending the run
HALTING = b"drasat: stopping: the best answer so far follows (Ctrl-C again to quit at once)\n"
_exit_code = EXIT_INTERRUPTED  # 128 + the signal that ended the run
WATCHER = "drasat-interrupt"
"""The name of the thread that acts on signals (it imports nothing: :mod:`.startup` relies on it)."""


def exit_on_interrupt() -> None:
    """From now on Ctrl-C, SIGTERM and SIGHUP end the process with 128 + the signal (call from the main thread)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    for number in ENDING:
        if signal.getsignal(number) is not signal.SIG_IGN:  # what the parent chose to ignore stays ignored
            signal.signal(number, lambda *_: None)  # the C handler writes the wake-up byte; the thread acts
    threading.Thread(target=_watch, args=(read_end,), name=WATCHER, daemon=True).start()


def _watch(read_end: int) -> None:
    global _exit_code
    number: int | None = None
    while number is None:
        received = os.read(read_end, 64)
        number = next((n for n in received if n in ENDING), None if received else int(signal.SIGINT))
        if number == signal.SIGINT and _halt_first():
            number = None
    _exit_code = 128 + number
    _INTERRUPTED.set()
    remove_partial_outputs()
    os.write(2, ENDING[signal.Signals(number)])
    stopping = threading.Thread(target=_run_stops, name="drasat-stop", daemon=True)
    stopping.start()
    stopping.join(STOP_WAIT)
    os._exit(_exit_code)


def quiet_if_interrupted(grace: float = 0.0) -> None:
    """Called before reporting an error: stopping the workers on a signal makes the work in progress fail, and
    that failure is no error to report — this waits (on a main thread) for the signal to end the process.
    ``grace``: seconds to wait for a signal still on its way (a worker killed with the whole process group
    can be noticed before the signal is read)."""
    if _INTERRUPTED.wait(grace) if grace else _INTERRUPTED.is_set():
        threading.Event().wait(STOP_WAIT + 1)
        os._exit(_exit_code)


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


@contextmanager
def halted_on_first_interrupt() -> Iterator[threading.Event]:
    """Within the block, the first Ctrl-C sets the event yielded (the caller's search stops and reports its best
    so far) instead of ending the process; another Ctrl-C, SIGTERM or SIGHUP ends it as ever."""
    halt = threading.Event()
    with _LOCK:
        _HALTS.append(halt)
    try:
        yield halt
    finally:
        with _LOCK:
            _HALTS.remove(halt)


def _halt_first() -> bool:
    """Set the innermost unset halt, saying so on stderr; False when there is none (the run ends)."""
    with _LOCK:
        halt = next((h for h in reversed(_HALTS) if not h.is_set()), None)
    if halt is None:
        return False
    halt.set()
    os.write(2, HALTING)
    return True


def _run_stops() -> None:
    with _LOCK:
        stops = list(reversed(_STOPS))
    for stop in stops:
        try:
            stop()
        except Exception:  # noqa: BLE001 - ending anyway: one stop failing must not keep the others from running
            pass


@contextmanager
def removed_if_interrupted(folder: int, name: str) -> Iterator[None]:
    """Within the block, a signal that ends the run first removes the file ``name`` in the open folder
    ``folder`` (a temporary being written: see :mod:`.atomic_file`)."""
    with _LOCK:
        _PARTIAL.add((folder, name))
    try:
        yield
    finally:
        with _LOCK:
            _PARTIAL.discard((folder, name))


def remove_partial_outputs() -> None:
    """Delete every file registered with :func:`removed_if_interrupted` whose block has not ended."""
    with _LOCK:
        for folder, name in list(_PARTIAL):
            try:
                os.unlink(name, dir_fd=folder)
            except OSError:
                pass
        _PARTIAL.clear()
