"""``drasat metadata``'s report of the files it wrote, in kubectl's forms: a table of one row per file (its
path whole, the claim; ``-o wide`` adds the devices), a v1 List of DeviceMetadataFile objects, and for
``-o name`` the claims written for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .kubectl import Answer, as_list, named_object, report_object
from .tables import rows_table

if TYPE_CHECKING:
    from drasat.solver.report.metadata import MetadataFile


def written_answer(made: Sequence[MetadataFile], targets: Sequence[str]) -> Answer:
    """The files written (``targets``: each file's path below --out, as given), each a DeviceMetadataFile named
    by its path below --out; -o name lists each claim once, in the order of its first file."""
    items = [
        report_object(
            "DeviceMetadataFile", entry.path, {"path": target, "claim": entry.claim, "objects": entry.objects}
        )
        for entry, target in zip(made, targets)
    ]
    claims = list(dict.fromkeys(entry.claim for entry in made))
    return Answer(
        lambda wide: _table(items, wide), as_list(items), items, [named_object("ResourceClaim", c) for c in claims]
    )


def _table(items: list[dict[str, Any]], wide: bool) -> str:
    rows = [(item["path"], item["claim"], ",".join(_devices(item["objects"]))) for item in items]
    return rows_table((("path", False), ("claim", False), ("devices", True)), rows, wide)


def _devices(objects: Sequence[dict[str, Any]]) -> list[str]:
    """driver/pool/device of each device the file's first DeviceMetadata lists (every version lists the same)."""
    first = objects[0] if objects else {}
    return [
        f"{d.get('driver')}/{d.get('pool')}/{d.get('name')}"
        for request in first.get("requests", [])
        for d in request.get("devices", [])
    ]
