"""drasat's one error hierarchy.

Every failure a user can cause maps to one of these classes, so the command line
can turn each into a message and an exit code without ever printing a traceback,
and library callers can catch exactly the family they care about.

    DrasatError
    ├── InputError          bad input: file, document, object, field (exit 2)
    │   └── SelectorError   a CEL selector that does not compile (exit 2)
    ├── EvaluationError     a CEL selector that fails at run time on a device (exit 2)
    ├── AllocationError     Kubernetes' allocator would return an error (exit 2)
    ├── SelectorParseError  a node selector Kubernetes would refuse to parse: caught where it is matched and
    │                       turned into an AllocationError or a node's filter reason, never shown as it is
    ├── Unschedulable       no allocation exists for all claims together (exit 1)
    ├── SolveTimeout        the solver ran out of time without an answer (exit 1)
    └── WorkerLost          a worker process or Ray task died (killed, out of memory): no answer (exit 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class DrasatError(Exception):
    """Base class of every error drasat raises on purpose."""

    exit_code: int = 2


class Location(NamedTuple):
    """Where in the input a problem sits: file, document index, object, field path.

    A NamedTuple, not a dataclass: the storability walk makes one per field it enters (millions on a
    10,000-node fleet), and a tuple is built in half the time a frozen dataclass's ``__init__`` takes.
    """

    file: str | None = None
    document: int | None = None
    kind: str | None = None
    name: str | None = None
    path: str | None = None

    def __str__(self) -> str:
        parts: list[str] = []
        if self.file is not None:
            parts.append(self.file if self.document is None else f"{self.file}[{self.document}]")
        if self.kind or self.name:
            parts.append(f"{self.kind or '?'}/{self.name or '?'}")
        if self.path:
            parts.append(self.path)
        return ": ".join(parts)

    def child(self, path: str) -> Location:
        """The same object, one field deeper."""
        here = self.path
        joined = path if not here else (here + path if path[:1] == "[" else f"{here}.{path}")
        return Location._make((self[0], self[1], self[2], self[3], joined))


@dataclass
class InputProblem:
    """One thing wrong with the input, in plain words, and where it is."""

    location: Location
    message: str

    def __str__(self) -> str:
        where = str(self.location)
        return f"{where}: {self.message}" if where else self.message


class InputError(DrasatError):
    """The input is malformed or breaks a Kubernetes rule."""

    def __init__(self, problems: list[InputProblem] | str, location: Location | None = None) -> None:
        if isinstance(problems, str):
            problems = [InputProblem(location or Location(), problems)]
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class SelectorError(InputError):
    """A CEL selector does not compile (syntax, types, limits)."""


class _AboutAnObject(DrasatError):
    """An error the solver finds in an object it was given: ``about`` names the object (kind, and name as
    results key it) and the field, where known. The solver never reads files, so it cannot name the file;
    the command line, which knows where each object was read, adds it (``drasat validate``'s words)."""

    def __init__(self, message: str, about: Location | None = None) -> None:
        super().__init__(message)
        self.about = about  # kept across worker processes: an exception pickles its attributes


class EvaluationError(_AboutAnObject):
    """A CEL selector failed at run time; Kubernetes aborts the allocation then too."""


class AllocationError(_AboutAnObject):
    """An error Kubernetes' allocator returns (unknown class, invalid pools, ...)."""


class SelectorParseError(DrasatError):
    """A node selector Kubernetes would refuse to parse. Allocation fails on it (an :class:`AllocationError`
    naming the slice or device), the scheduler filters the node out: each caller words it, so it is raised
    by the matching (solver and verifier alike) and caught right there."""


class Unschedulable(DrasatError):
    """No allocation exists for all the claims together on this node.

    It carries what the verdict is about, as data: ``problem``, the question that has no answer
    (``drasat.solver.Problem``; typed ``object`` here, as models never import the solver), ``stats``, what
    proving it took (``drasat.solver.Stats``), and ``reasons``, the explanation in a few lines when the
    raiser already knows them (empty otherwise). It never works an explanation out itself: most verdicts
    are only a "no" (the scheduler asks many nodes), and explaining costs more solves. A caller that wants
    the why asks for it: ``drasat.solver.explain(error.problem, proven=error)``, which proves nothing twice.
    """

    exit_code = 1

    def __init__(
        self,
        message: str = "no allocation exists for all claims together",
        *,
        problem: object | None = None,
        stats: object | None = None,
        reasons: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.problem = problem
        self.stats = stats
        self.reasons: list[str] = list(reasons or [])


class DrasatWarning(UserWarning):
    """Something the user should know that does not stop the command (printed as ``warning: ...``)."""


class SolveTimeout(DrasatError):
    """The solver hit its time limit before it found an answer or proved there is none."""

    exit_code = 1
    stats: object | None = None  # the solver's statistics (drasat.solver.Stats) up to the limit


class WorkerLost(DrasatError):
    """A process doing part of the work died (killed, out of memory, a Ray node lost): like running out of
    time, no answer — not bad input, and not a bug of drasat's."""

    exit_code = 1


class InternalError(DrasatError):
    """drasat itself went wrong (a model the solver calls invalid, a status it does not know): a bug to report."""

    exit_code = 3
