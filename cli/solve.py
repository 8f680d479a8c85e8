"""``drasat solve``: allocate claims on a node and print them with ``status.allocation`` set."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
import yaml

from drasat.models.errors import DrasatError

from .main import cli
from .options import Seconds
from .render import allocation_table

EPILOG = """\b
Exit status: 0 all claims allocated; 1 no allocation exists for all of them
together (one line on stderr, nothing on stdout) or the time ran out;
2 invalid input, unknown node or claim, or a CEL error
(nothing on stdout).

\b
Examples:
  drasat solve --node gpu-node-1 examples/
  kubectl get resourceslices,deviceclasses,resourceclaims,nodes -A -o yaml \\
      | drasat solve --node worker-3 -o table -
  drasat solve --claims train,infer --objective prioritized-list cluster.yaml
"""


@cli.command(epilog=EPILOG)
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--node", metavar="NAME", help="Node to allocate for (default: the only Node in the input).")
@click.option("--feature-gates", default="", metavar="A=true,B=false",
              help="Kubernetes feature gates, e.g. DRAPrioritizedList=false,DRAListTypeAttributes=true.")
@click.option("--claims", metavar="C1,C2", help="Claims to allocate, in this order "
              "(default: every claim without status.allocation, in input order).")
@click.option("--solver", type=click.Choice(["cp-sat", "greedy"]), default="cp-sat", show_default=True,
              help="cp-sat: Kubernetes' depth-first search within a small budget, CP-SAT beyond it "
                   "(same answer, bounded time); greedy: the depth-first search alone (exponential on hard inputs).")
@click.option("--objective", type=click.Choice(["first-fit", "prioritized-list"]), default="first-fit",
              show_default=True, help="first-fit: exactly the devices Kubernetes would pick; prioritized-list: "
              "earliest firstAvailable alternatives first, then first-fit.")
@click.option("--timeout", type=Seconds(), default=60.0, show_default=True, metavar="SECONDS",
              help="Give up (exit 1) when no answer is found in this time.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="CP-SAT search workers.")
@click.option("--cel-engine", type=click.Choice(["cel-expr", "celpy"]), default=None,
              help="CEL engine (default: cel-expr, or $DRASAT_CEL_ENGINE).")
@click.option("-o", "--output", type=click.Choice(["yaml", "json", "table"]), default="yaml", show_default=True,
              help="yaml/json: a v1 List of the allocated ResourceClaims; table: a summary for people.")
@click.option("-v", "--verbose", is_flag=True,
              help="Print how the answer was found, or why there is none, on stderr.")
def solve(files: tuple[str, ...], node: str | None, feature_gates: str, claims: str | None, solver: str,
          objective: str, timeout: float, workers: int, cel_engine: str | None, output: str, verbose: bool) -> None:
    """Allocate devices for ResourceClaims on one node, all claims together.

    FILE is a YAML or JSON file (multi-document, List kinds and `kubectl get -o yaml`
    output are fine), a directory (read recursively), or - for stdin. Claims that
    already have status.allocation count as devices in use.

    Objects are taken as the API server stores them: its defaults applied (a
    missing or zero count is 1), and objects it would never store refused (a
    negative count, no name, numbers beyond int64; `drasat validate` checks the
    rest).

    Prints a v1 List of the newly allocated ResourceClaims with status.allocation set.
    """
    try:
        text = _solve(files, node, feature_gates, claims, solver, objective, timeout, workers, cel_engine,
                      output, verbose)
    except DrasatError as exc:
        click.echo(f"error: {exc}", err=True)
        for reason in getattr(exc, "reasons", []) if verbose else []:
            click.echo(f"  {reason}", err=True)
        sys.exit(exc.exit_code)
    click.echo(text, nl=not text.endswith("\n"))


def _solve(files, node, feature_gates, claims, solver, objective, timeout, workers, cel_engine, output,
           verbose) -> str:
    from drasat.solver import Features, allocate
    from drasat.solver.cel import SelectorEvaluator
    from drasat.solver.problem import problem_from_objects

    from .loading import load_or_raise

    bundle = load_or_raise(files)
    objects = list(bundle)
    features = Features.parse(feature_gates)
    names = [c.strip() for c in claims.split(",") if c.strip()] if claims is not None else None
    problem = problem_from_objects(objects, node=node, claims=names, features=features, locate=bundle.location_of)
    if not problem.claims:
        why = "--claims names no claim" if claims is not None else "the input has no ResourceClaim without " \
                                                                  "status.allocation"
        click.echo(f"notice: nothing to allocate: {why}", err=True)
    if not any(n.kind == "Node" for n in objects):
        click.echo(f"warning: no Node objects in the input: node {problem.node.name} has no labels, "
                   "so slices selected by node labels do not match", err=True)
    evaluator = SelectorEvaluator(cel_engine)  # None: $DRASAT_CEL_ENGINE, else the preferred engine
    answer = allocate(problem, solver=solver, objective=objective, time_limit=timeout, workers=workers,
                      evaluator=evaluator)
    if verbose:
        s = answer.stats
        notes = "".join(f"; {note}" for note in s.notes)
        click.echo(f"solved by {s.solver} in {s.seconds * 1000:.1f} ms (greedy steps {s.greedy_steps}, "
                   f"CP-SAT solves {s.cp_sat_solves}){notes}", err=True)
    allocated = []
    for claim in problem.claims:
        body = claim.to_api()
        body["apiVersion"] = "resource.k8s.io/v1"
        body.setdefault("status", {})["allocation"] = answer.results[claim.name].to_api()
        allocated.append(body)
    return render(allocated, output)


def render(claims: list[dict[str, Any]], output: str) -> str:
    """The allocated claims as a v1 List (yaml, json) or a human table."""
    if output == "table":
        return allocation_table(claims, encoding=getattr(sys.stdout, "encoding", None) or "utf-8")
    listing = {"apiVersion": "v1", "kind": "List", "items": claims}
    if output == "json":
        return json.dumps(listing, indent=2) + "\n"
    return yaml.safe_dump(listing, sort_keys=False)
