"""``drasat metadata``: write the KEP-5304 device metadata files for allocated claims, atomically."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import click

from drasat.cli.inputs import in_namespace_only, input_options, namespace_options_with, read_inputs
from drasat.cli.output_file import folder_problem
from drasat.cli.output_tree import problem_below, write_below
from drasat.cli.render.kubectl import forms_epilog, output_options
from drasat.cli.render.text import echo
from drasat.cli.reporting import exits_on_error
from drasat.models.errors import InputError

if TYPE_CHECKING:
    from drasat.solver.report.metadata import MetadataFile

EPILOG = """Below DIR each pod gets its own tree, since the protocol's paths are what one
container sees under /var/run/kubernetes.io/dra-device-attributes (two pods from
one template both see resourceclaimtemplates/gpu/...):

\b
  <namespace>/pods/<pod>/resourceclaims/<claim>/
      <request>/<driver>-metadata.json
  <namespace>/pods/<pod>/resourceclaimtemplates/<podClaimName>/
      <request>/<driver>-metadata.json

A pod consumes a claim when its spec.resourceClaims or status.resourceClaimStatuses
name it, the claim's status.reservedFor lists it, or it owns the claim; a claim no
pod consumes yet goes to <namespace>/claims/<claim>/<protocol path>.
A claim counts as generated from a template when it has the annotation
resource.kubernetes.io/pod-claim-name or a Pod's status.resourceClaimStatuses names
it. Each file is a stream of DeviceMetadata objects (v1beta1, then v1alpha1) at
generation 1, with each device's attributes from its ResourceSlice. Every file is
written to a temporary name and then renamed, so none is ever half written, and
keeps the mode of the file it replaces. DIR may be a link; below it nothing is
followed or written through: a link, a FIFO or a device there is refused.

\b
Exit status: 0 written (a table of the files); 2 invalid input, two claims
writing one path of one pod, a device missing from the slices, a name that
is not what the API server accepts for it (a namespace "..", a claim "a/b"),
or a link, FIFO or device below DIR: then nothing is written.

\b
Examples:
  drasat metadata --out /tmp/dra-metadata cluster/
  drasat metadata --out out/ --claim gpu-test1/pod0-gpu-2kqrd cluster/
  drasat metadata --out out/ -o custom-columns=PATH:.path cluster/
"""
WRITTEN = "DeviceMetadataFile objects, one per file"
FORMS = forms_epilog(
    WRITTEN, rows="file", named="claim written for", example=(".items[*].path", "PATH:.path,CLAIM:.claim")
)


@click.command(epilog=EPILOG + "\n" + FORMS)
@input_options
@namespace_options_with("Only the claims of this namespace; a bare --claim NAME is taken from it.")
@click.option(
    "--out",
    "out_dir",
    required=True,
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Folder to write the metadata files into (created if missing, inside a folder that exists).",
)
@click.option(
    "--claim",
    "claim_names",
    multiple=True,
    metavar="NAMESPACE/NAME",
    help="Only this allocated claim (repeatable); default: every allocated claim.",
)
@output_options(
    ("table", "wide"),
    "table",
    "What to print of the files written: table: one row per file (its path, the claim); wide: with the "
    "devices in it; yaml/json: a v1 List of one DeviceMetadataFile per file (path, claim, and the "
    "DeviceMetadata objects written); name: the claims written for.",
)
@exits_on_error
def metadata(
    files: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    filenames: tuple[str, ...],
    namespace: str | None,
    all_namespaces: bool,
    out_dir: str,
    claim_names: tuple[str, ...],
    output: str,
) -> None:
    """Write the device metadata files drivers would write for allocated ResourceClaims.

    FILE is a YAML or JSON file, a directory (read recursively) or - for stdin, holding
    allocated ResourceClaims, the ResourceSlices of their devices and, optionally, Pods.
    With no FILE, or with --kubeconfig/--context, the live cluster is read (read-only).
    """
    from drasat.models.core import Pod
    from drasat.models.live import Listed
    from drasat.models.resource import ResourceClaim, ResourceSlice
    from drasat.solver.report.metadata import metadata_files

    needs = {Listed.RESOURCE_SLICES, Listed.RESOURCE_CLAIMS, Listed.PODS}  # pods decide where each file goes
    bundle = read_inputs(files, kubeconfig, context, filenames, needs=needs)
    claims = in_namespace_only(bundle.of_kind(ResourceClaim), namespace, all_namespaces)
    named = tuple(n if "/" in n or namespace is None else f"{namespace}/{n}" for n in claim_names)
    claims = _chosen(claims, named)
    made = metadata_files(claims, bundle.of_kind(ResourceSlice), bundle.of_kind(Pod), bundle.location_of)
    targets = [_inside(out_dir, entry) for entry in made]  # every path checked before anything is written
    _check_parent(out_dir)
    for entry in made:  # the protocol's tree below --out, and no further up; no link, FIFO or device in it
        write_below(out_dir, entry.path, stream(entry.objects))
    from drasat.cli.render.kubectl import render_answer
    from drasat.cli.render.metadata_files import written_answer

    echo(render_answer(written_answer(made, targets), output), nl=False)
    if not made:
        echo("notice: no allocated ResourceClaim in the input: nothing written", err=True)


def _check_parent(out_dir: str) -> None:
    """--out may be a new folder, but in one that exists: a typo in its parent is not made into folders."""
    problem = None if os.path.isdir(out_dir) else folder_problem(os.path.dirname(os.path.normpath(out_dir)) or ".")
    if problem is not None:
        raise InputError(f"--out {out_dir}: {problem}")


def _inside(out_dir: str, entry: MetadataFile) -> str:
    """The file's path below ``out_dir``; InputError if it resolves elsewhere (through a link already in
    ``out_dir``, say): the names were checked already, this guards what they cannot. Nor may anything in
    its way be a link, a FIFO or a device (see :mod:`drasat.cli.output_tree`, which checks again as it writes)."""
    root = os.path.realpath(out_dir)
    target = os.path.join(out_dir, entry.path)
    resolved = os.path.realpath(target)
    if os.path.commonpath([root, resolved]) != root or resolved == root:
        raise InputError(
            f"ResourceClaim {entry.claim}: its metadata file {entry.path} resolves to {resolved}, "
            f"outside --out {out_dir}: nothing written"
        )
    problem = problem_below(out_dir, entry.path)
    if problem is not None:
        raise InputError(f"ResourceClaim {entry.claim}: cannot write {target}: {problem}: nothing written")
    return target


def _chosen(claims: list, names: tuple[str, ...]) -> list:
    if not names:
        return claims
    by_name = {f"{c.namespace}/{c.name}": c for c in claims}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise InputError(f"--claim: no ResourceClaim {', '.join(missing)} in the input (write NAMESPACE/NAME)")
    return [by_name[n] for n in names]


def stream(objects: tuple[dict[str, Any], ...]) -> str:
    """The objects one after another, each as indented JSON on its own lines (a JSON stream)."""
    return "".join(json.dumps(obj, indent=2) + "\n" for obj in objects)
