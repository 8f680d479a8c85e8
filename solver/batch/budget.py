"""One deadline for a whole joint placement, shared by its stages.

``schedule --batch --timeout S`` promises an answer within about S seconds, whatever the
size: building the counting model, its search, the scheduler-order pass beside it, the per-node
allocations and the last one-by-one pass all draw on the same clock. A stage that finds the time gone
stops where it is (every answer it has already made stays valid and verified), and says
what it cut short; the summary's notes carry those lines.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

# The least time an allocation is given once the budget is nearly spent (a positive limit is required).
LEAST_SECONDS = 0.05


@dataclass
class Budget:
    """Seconds left until the run's deadline, and what the stages cut short."""

    ends: float
    cut_short: list[str] = field(default_factory=list)
    stop: Callable[[], bool] | None = None  # asked with the clock: whether the stage may stop now anyway
    # Set by the caller (Ctrl-C): searching stops, the best answer found is decoded and returned.
    halt: threading.Event | None = None
    # A stage running beside the main one in another thread waits here, between its steps, while the main one
    # needs the interpreter (Python runs one thread at a time): it runs while CP-SAT searches.
    gate: threading.Event | None = None

    @classmethod
    def of(cls, seconds: float, halt: threading.Event | None = None) -> Budget:
        return cls(time.monotonic() + seconds, halt=halt)

    @property
    def halted(self) -> bool:
        return self.halt is not None and self.halt.is_set()

    def searching(self) -> bool:
        """Whether a stage may go on searching for better: the time is not over and no halt was asked."""
        return not self.over() and not self.halted

    def finishing(self) -> Budget:
        """This budget for making the best answer real (decoding, allocating it): a halt does not stop that."""
        return Budget(self.ends, self.cut_short, self.stop)

    @property
    def why(self) -> str:
        """What cut a stage short, as the notes say it."""
        return "stopped (Ctrl-C)" if self.halted else "time ran out"

    def part(self, fraction: float) -> Budget:
        """A budget ending once ``fraction`` of the time left is spent (or at this one's end); its notes are
        this one's."""
        return Budget(min(self.ends, time.monotonic() + fraction * self.left()), self.cut_short)

    def left(self) -> float:
        return max(0.0, self.ends - time.monotonic())

    def over(self) -> bool:
        if self.gate is not None:
            self.gate.wait()
        return time.monotonic() >= self.ends or (self.stop is not None and self.stop())

    def options(self, options: AllocateOptions) -> AllocateOptions:
        """``options`` with an allocation's time limit no later than the deadline."""
        limit = max(LEAST_SECONDS, min(options.time_limit, self.left()))
        return options if limit == options.time_limit else replace(options, time_limit=limit)

    def cut(self, what: str) -> None:
        """Record that a stage stopped early (once per message)."""
        if what not in self.cut_short:
            self.cut_short.append(what)
