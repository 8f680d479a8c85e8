"""``drasat validate``: would the Kubernetes API server accept these objects?

Loads the input like every drasat command, checks each object against
Kubernetes' validation rules (and the checks other parts of drasat register, such
as CEL compilation), and prints one verdict per object. Problems go to stdout
with the verdict (with ``-o name``, which lists the valid objects only, to
stderr); notices (skipped kinds, conversions) go to stderr.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from drasat.cli.inputs import in_namespace_only, input_options, namespace_options_with, read_inputs
from drasat.cli.render.kubectl import LIST_FORMS, render_data, report_output_option
from drasat.cli.render.text import echo, rendered, secho, styled
from drasat.cli.reporting import exits_on_error
from drasat.models.bundle import Loaded
from drasat.models.errors import DrasatError, InputProblem, Location
from drasat.models.validation import validate_object
from drasat.models.validation.admin_access import AdminAccessViolation, admin_access_unchecked, admin_access_violations

CHECKER_MODULES = ("drasat.solver.cel.validate",)
"""Modules that register extra checks with ``register_checker`` when imported (if they exist)."""

EPILOG = """\b
What is checked, as the API server of Kubernetes 1.37 checks it:
  - structure: known fields only (a typo is an error), the right types,
    required fields, quantities (1Gi, 500m) and versions (semver 2.0.0);
  - names: DNS labels and subdomains, driver and pool names, qualified
    attribute names (dra.example.com/model), resource names in a pod's
    requests and limits (cpu, nvidia.com/gpu), label keys and values;
  - limits: attributes and capacities per device (32), devices per slice
    (128, or 64 with taints, counters or list attributes), counter sets (8),
    counters per set (32), requests (32), subrequests (8), selectors (32),
    constraints (32), tolerations (16), reservedFor (256), CEL length, ...;
  - rules: exactly one node selection per slice, exactly one value per
    attribute, request policies, binding conditions, taint effects,
    references from constraints and config to existing requests;
  - admin access: a claim asking for it must be in a namespace labelled
    resource.kubernetes.io/admin-access: "true" (checked when Namespace
    objects are in the input; a warning otherwise);
  - CEL: every expression compiles, within cel-go's parser limits and
    Kubernetes' estimated cost limit (1,000,000).
Older resource.k8s.io versions (v1beta2, v1beta1, v1alpha3) are converted to
v1 first. Kinds drasat does not use are skipped with a notice on stderr.

\b
Exit status: 0 every object is valid; 2 anything is invalid or unreadable.

\b
Examples:
  drasat validate examples/
  drasat validate slices.yaml claims.yaml
  kubectl get resourceslices,deviceclasses,resourceclaims -A -o yaml \\
      | drasat validate -
"""


@click.command(epilog=EPILOG)
@input_options
@namespace_options_with("Check only the objects of this namespace, and the cluster-scoped ones.")
@click.option("-q", "--quiet", is_flag=True, help="Print only objects with problems, and the summary.")
@report_output_option(
    ("text",),
    "text: a verdict per object for people; json/yaml: the same as data, for CI (each object with its file, "
    "document, kind and name, unreadable ones too); name: kind.group/NAME of each valid object, every problem on stderr.",
)
@exits_on_error
def validate(
    files: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    filenames: tuple[str, ...],
    namespace: str | None,
    all_namespaces: bool,
    quiet: bool,
    output: str,
) -> None:
    """Check Kubernetes objects the way the API server would, and say what is wrong.

    FILE is a YAML or JSON file (multi-document, List kinds and `kubectl get -o yaml`
    output are fine), a directory (read recursively: *.yaml, *.yml, *.json), or - for
    stdin. Each object is printed as "ok" or followed by its problems, each naming the
    file, the document (counted from 0), the object and the field. With no FILE, or with
    --kubeconfig/--context, the live cluster's objects are checked (read-only).
    """
    from drasat.models.live import ALLOCATION_NEEDS

    _import_checkers()
    _check_cel_engine()
    in_namespace_only([], namespace, all_namespaces)
    bundle = read_inputs(files, kubeconfig, context, filenames, needs=ALLOCATION_NEEDS, keep_problems=True)
    entries = [e for e in bundle.entries if not isinstance(e, Loaded) or _in_namespace(e.obj, namespace)]
    objects = [entry.obj for entry in bundle.objects]
    unchecked = admin_access_unchecked(objects)
    if unchecked is not None:
        echo(f"warning: {unchecked}", err=True)
    violations = admin_access_violations(objects)
    verdicts: list[Verdict] = [
        (entry, _problems(entry, violations)) if isinstance(entry, Loaded) else (entry, []) for entry in entries
    ]
    invalid = sum(1 for entry, problems in verdicts if isinstance(entry, Loaded) and problems)
    valid = sum(1 for entry, _ in verdicts if isinstance(entry, Loaded)) - invalid
    unreadable = sum(1 for entry in entries if isinstance(entry, InputProblem))
    if output == "name":
        _report_names(verdicts)
    elif output in LIST_FORMS:
        echo(render_data(_as_data(verdicts, valid, invalid, unreadable), output, []), nl=False)
    else:
        _report(verdicts, quiet)
        echo(_summary(valid, invalid, unreadable))
    raise SystemExit(0 if invalid == 0 and unreadable == 0 else 2)


Verdict = tuple[Loaded | InputProblem, list[InputProblem]]


def _in_namespace(obj: Any, namespace: str | None) -> bool:
    from drasat.models.kinds import is_namespaced

    return namespace is None or not is_namespaced(obj) or obj.namespace == namespace


def _report(verdicts: list[Verdict], quiet: bool) -> None:
    """Print each entry in reading order: unreadable documents, invalid objects with their problems, ok."""
    for entry, problems in verdicts:
        if isinstance(entry, InputProblem):
            secho(f"error  {entry}", fg="red")
        elif problems:
            secho(f"FAIL   {_title(entry)}", fg="red", bold=True)
            for problem in problems:
                echo(f"       - {problem}")
        elif not quiet:
            echo(rendered(styled("ok", fg="green"), f"     {_title(entry)}"))


def _report_names(verdicts: list[Verdict]) -> None:
    """kubectl's ``-o name``: the objects that passed on stdout (a script may act on them), and every problem
    on stderr as kubectl tells an error — an invalid object's name on stdout would read as a success. Each
    name carries its object's apiVersion, whose group kubectl writes after the kind (poddisruptionbudget.policy)."""
    valid = [entry.obj for entry, problems in verdicts if isinstance(entry, Loaded) and not problems]
    named = [{"apiVersion": obj.api_version, "kind": obj.kind, "metadata": {"name": obj.name}} for obj in valid]
    echo(render_data(None, "name", named), nl=False)
    for entry, problems in verdicts:
        for problem in [entry] if isinstance(entry, InputProblem) else problems:
            echo(f"error: {problem}", err=True)


def _problems(entry: Loaded, violations: list[AdminAccessViolation]) -> list[InputProblem]:
    """Everything wrong with one object: structure, Kubernetes' rules, admin access outside admin namespaces."""
    problems = entry.problems + validate_object(entry.obj, entry.location)
    return problems + [InputProblem(entry.location.child(v.path), v.message) for v in violations if v.obj is entry.obj]


def _as_data(verdicts: list[Verdict], valid: int, invalid: int, unreadable: int) -> dict[str, Any]:
    """The verdicts as data: one record per object (or unreadable document), in reading order."""
    records = []
    for entry, problems in verdicts:
        if isinstance(entry, InputProblem):
            records.append(
                {
                    **_place(entry.location),
                    "kind": entry.location.kind,
                    "name": entry.location.name,
                    "valid": False,
                    "readable": False,
                    "problems": [{"field": entry.location.path, "message": entry.message}],
                }
            )
            continue
        record = {
            **_place(entry.location),
            "kind": entry.location.kind,
            "name": entry.location.name,
            "valid": not problems,
            "readable": True,
            "problems": [{"field": p.location.path, "message": p.message} for p in problems],
        }
        if entry.converted_from:
            record["convertedFrom"] = entry.converted_from
        records.append(record)
    return {
        "valid": invalid == 0 and unreadable == 0,
        "objects": records,
        "summary": {"valid": valid, "invalid": invalid, "unreadable": unreadable},
    }


def _place(location: Location) -> dict[str, Any]:
    return {"file": location.file, "document": location.document, "path": location.path}


def _title(entry: Loaded) -> str:
    where = entry.location
    place = f"{where.file}[{where.document}]" if where.document is not None else str(where.file)
    item = f" {where.path}" if where.path else ""
    converted = f" (from {entry.converted_from})" if entry.converted_from else ""
    return f"{place}{item}: {where.kind}/{where.name or '?'}{converted}"


def _summary(valid: int, invalid: int, unreadable: int) -> str:
    total = valid + invalid
    parts = [f"{total} object{'s' if total != 1 else ''}: {valid} valid, {invalid} invalid"]
    if unreadable:
        parts.append(
            f"{unreadable} unreadable document{'s' if unreadable != 1 else ''} or file{'s' if unreadable != 1 else ''}"
        )
    return "; ".join(parts)


def _check_cel_engine() -> None:
    """A bad ``$DRASAT_CEL_ENGINE`` is one message and exit 2, not an internal error under every object."""
    from drasat.solver.cel import SelectorEvaluator

    try:
        SelectorEvaluator()
    except DrasatError as exc:
        echo(f"error: {exc}", err=True)
        raise SystemExit(exc.exit_code) from None


def _import_checkers() -> None:
    """Let optional modules register their checks; a module that does not exist (yet) is fine."""
    for name in CHECKER_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name and not name.startswith(f"{exc.name}."):
                raise
