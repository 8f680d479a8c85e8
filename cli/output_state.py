"""``--output-state FILE``: the whole input with a run's results merged in, for chained what-if runs.

``drasat solve cluster/ --output-state next.yaml`` writes every object it read, with the
claims it allocated (and the ones it generated from templates) in their new state;
``drasat solve cluster/ next.yaml more-claims.yaml`` then reads the originals and their
newer copies, and the loader lets each newer copy replace the original (see
``Bundle.add``). A file is written under a temporary name and renamed (see
:mod:`.output_file`), so an interrupted run never leaves half a state behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click
import yaml

Key = tuple[str, str, str]


def state_option(function: Any) -> Any:
    return click.option(
        "--output-state",
        metavar="FILE",
        type=click.Path(dir_okay=False),
        callback=_not_stdout,
        help="Also write the whole input with this run's results merged in (YAML, or JSON for "
        "*.json), to feed the next what-if run; its folder must exist.",
    )(function)


def _not_stdout(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value == "-":
        raise click.BadParameter("standard output carries the answer already: give a file name")
    return value


def write_state(path: str, inputs: Iterable[Any], results: list[dict[str, Any]]) -> None:
    """Every input object as the API prints it, each replaced by its result where one exists (same kind,
    namespace and name), then results that are new (claims generated from templates), as one v1 List."""
    updated = {_key(item): item for item in results}
    items = []
    for obj in inputs:
        body = obj.to_api()
        items.append(updated.pop(_key(body), body))
    items.extend(updated.values())
    listing = {"apiVersion": "v1", "kind": "List", "items": items}
    text = json.dumps(listing, indent=2) + "\n" if path.endswith(".json") else yaml.safe_dump(listing, sort_keys=False)
    from .output_file import write_output  # only when a state is written: not on every solve's start

    write_output(path, text)


def _key(body: dict[str, Any]) -> Key:
    metadata = body.get("metadata") or {}
    return str(body.get("kind", "")), str(metadata.get("namespace") or ""), str(metadata.get("name", ""))
