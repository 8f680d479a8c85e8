"""Options that every command running the allocator shares, declared once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError
from drasat.solver.allocation.options import Objective, Solver

from .options import Seconds, Timestamp


def choice_of(kind: type[Solver] | type[Objective]) -> dict[str, Any]:
    """A click option's ``type`` and ``callback`` for one of the allocation's choices: the words are the
    members' values (as users type them, in ``--help`` too), the command gets the member."""
    return {"type": click.Choice([member.value for member in kind]), "callback": lambda ctx, param, value: kind(value)}


NODE = click.option("--node", metavar="NAME", help="Node to allocate for (default: the only Node in the input).")
"""The one node of a single-node allocation (``solve``, ``compare``)."""
FEATURE_GATES = click.option(
    "--feature-gates",
    default="",
    metavar="A=true,B=false",
    help="Kubernetes feature gates, e.g. DRAPrioritizedList=false,DRAListTypeAttributes=true.",
)
SOLVER = click.option(
    "--solver",
    **choice_of(Solver),
    default=Solver.CP_SAT.value,
    show_default=True,
    help="cp-sat: Kubernetes' depth-first search within a small budget, CP-SAT beyond it (same answer, bounded "
    "time); greedy: the depth-first search alone (exponential on hard inputs).",
)
OBJECTIVE_HELP = (
    "first-fit: exactly the devices Kubernetes would pick; prioritized-list: earliest firstAvailable "
    "alternatives first, then first-fit; pack: the firstAvailable entries Kubernetes would take (a "
    "later one only when an earlier cannot be satisfied), then among their devices the fewest GPUs "
    "(counter sets) and devices newly touched, partly used ones first (exact: the optimum for the "
    "node, proven within --timeout), then the biggest free partitions left (the best found within a "
    "fixed search effort), then first-fit."
)
OBJECTIVE = click.option(
    "--objective", **choice_of(Objective), default=Objective.FIRST_FIT.value, show_default=True, help=OBJECTIVE_HELP
)
TIMEOUT = click.option(
    "--timeout",
    type=Seconds(),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="Give up (exit 1) when no answer is found in this time.",
)
WORKERS = click.option(
    "--workers", type=click.IntRange(min=1), default=1, show_default=True, help="CP-SAT search workers."
)
PROCESSES = click.option(
    "--processes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="Local processes. One by one: for the per-node allocations of each pod (the placements are the same; "
    "rarely faster: only unlike nodes give work to share, and shipping each node's problem costs about what it "
    "saves, 30 unlike nodes on 2 cores: no faster than 1). With --batch past 300 nodes: the blocks of nodes "
    "are searched in N forked processes, each with its share of the pods (2,000 nodes on 2 cores, 2 processes: "
    "all 8,000 pods placed in 32 s of search instead of 52); up to 300 nodes one model is searched in one "
    "process.",
)
RAY = click.option(
    "--ray",
    metavar="auto|ADDRESS",
    help="Run the per-node allocations on Ray: auto (the Ray instance on this machine, else a new local one) or "
    "a cluster's ADDRESS. Needs pip install 'drasat[ray]'; without it, auto uses --processes local processes "
    "(a warning says so) and an ADDRESS is refused. Starting a local Ray instance takes seconds.",
)
PERCENTAGE = click.option(
    "--percentage-of-nodes-to-score",
    "percentage",
    type=click.IntRange(0, 100),
    default=0,
    show_default=True,
    metavar="0-100",
    help="kube-scheduler's percentageOfNodesToScore, one by one: on 100 nodes or more a pod's search stops once "
    "this share of the nodes (at least 100) passed the filters, starting where the last pod's stopped, and only "
    "those are scored. 0: the scheduler's adaptive default (50 %% minus 1 %% per 125 nodes, at least 5 %%); "
    "100: every node.",
)
CEL_ENGINE = click.option(
    "--cel-engine",
    type=click.Choice(["cel-expr", "celpy"]),
    default=None,
    help="CEL engine (default: cel-expr, or $DRASAT_CEL_ENGINE).",
)


def _allow_invalid(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """For this run only: undone when the command ends, so that it never carries over to the next in a process."""
    from drasat.models.storable import allowing_invalid

    ctx.with_resource(allowing_invalid(value))


ALLOW_INVALID = click.option(
    "--allow-invalid-objects",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_allow_invalid,
    help="Allocate even from objects the API server would refuse (as validate words it), as Kubernetes' "
    "allocator unit tests do with their fixtures; only objects without a name, negative counts, references to "
    "requests a claim lacks, and slices with counter sets and devices stay refused. Default: refuse.",
)


def allocation_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--feature-gates, --solver, --objective, --timeout, --workers, --cel-engine and --allow-invalid-objects."""
    for option in reversed([FEATURE_GATES, SOLVER, OBJECTIVE, TIMEOUT, WORKERS, CEL_ENGINE, ALLOW_INVALID]):
        command = option(command)
    return command


def parallel_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--percentage-of-nodes-to-score, --processes and --ray: how many nodes a pod's search looks at, and where
    the independent per-node work runs."""
    return PERCENTAGE(PROCESSES(RAY(command)))


def names_option(text: str | None) -> list[str] | None:
    """``a,b`` → ["a", "b"]; None when the option was not given."""
    return [n.strip() for n in text.split(",") if n.strip()] if text is not None else None


def exit_on_error(exc: DrasatError, verbose: bool, timeout: float | None = None) -> None:
    """One line on stderr (the reasons too with -v), and the error's exit code. With ``timeout``, a
    search that ran out of time says so in the same words on every command: "no answer within N s"."""
    import sys

    from drasat.models.errors import SolveTimeout, WorkerLost

    from .interrupt import quiet_if_interrupted

    # the error of work a signal stopped; a worker lost may be the signal's doing, read a moment later
    quiet_if_interrupted(0.5 if isinstance(exc, WorkerLost) else 0.0)
    if timeout is not None and isinstance(exc, SolveTimeout):
        exc = SolveTimeout(f"no answer within {timeout:g} s: {exc}")
    echo(f"error: {exc}", err=True)
    for reason in getattr(exc, "reasons", []) if verbose else []:
        echo(f"  {reason}", err=True)
    sys.exit(exc.exit_code)


NOW = click.option(
    "--now",
    type=Timestamp(),
    default=None,
    metavar="TIMESTAMP",
    help="The moment the scheduler looks, e.g. 2026-12-02T18:00:00Z (default: the clock). Binding conditions: a "
    "claim still waiting bindingTimeout after its status.allocation.allocationTimestamp has timed out; new "
    "allocations are stamped with this moment. For reproducible what-ifs.",
)
BINDING_TIMEOUT = click.option(
    "--binding-timeout",
    type=Seconds(),
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="DynamicResourcesArgs.bindingTimeout of kube-scheduler's configuration: how long PreBind waits for a "
    "device's bindingConditions to become True before the claim is deallocated and the pod tried again.",
)


def binding_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--now and --binding-timeout: when the scheduler looks, and how long it waits for binding conditions."""
    return NOW(BINDING_TIMEOUT(command))


def binding_clock(now: Any, binding_timeout: float) -> Any:
    """The solver's BindingClock for --now and --binding-timeout (the wall clock without --now)."""
    from datetime import timedelta

    from drasat.solver.scheduling.plugins.binding_conditions import BindingClock

    timeout = timedelta(seconds=binding_timeout)
    return BindingClock(now, timeout) if now is not None else BindingClock.current(timeout)
