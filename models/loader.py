"""Reading what users feed drasat: files, directories, stdin → a :class:`Bundle` of typed objects.

Input is what ``kubectl get -o yaml`` prints or what people write by hand:
multi-document YAML, JSON, ``kind: List`` and typed lists (``ResourceSliceList``),
older API versions (converted to v1), and kinds drasat does not use (skipped, with
one notice an input saying how many of each kind). Reading never raises for bad
input: every problem (broken YAML, wrong types, unknown fields, huge or binary
files, alias bombs) is recorded with file, document index, kind/name and field
path, and one bad object does not stop the others from loading.

Loading checks structure only (types, required and unknown fields). Whether an
object follows Kubernetes' semantic rules is :mod:`drasat.models.validation`'s
question, asked separately, because the solver must be able to reproduce what
Kubernetes does even with objects the API server would have refused.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TextIO

from pydantic import ValidationError

from .bundle import Bundle, Loaded
from .collector import collector_paused
from .convert import needs_conversion, to_v1
from .errors import InputError, InputProblem, Location
from .fast_parse import Deferred, ReadAgain
from .input_text import MAX_INPUT_BYTES, ReadOnce, decode, read_at_most, read_file, too_large
from .int64 import int64_problems
from .kinds import KindInfo, lookup, split_api_version
from .pydantic_problems import problems_from
from .resource import ResourceSlice
from .shared_leaves import Shared
from .yaml_io import FREEZE_AFTER, Document, parse_documents

STDIN = "-"
STDIN_NAME = "<stdin>"

__all__ = ["Bundle", "Loaded", "add_data", "load_objects", "load_paths", "load_text", "manifest_files"]


def load_paths(paths: list[str], stdin: TextIO | None = None, *, max_bytes: int = MAX_INPUT_BYTES) -> Bundle:
    """Everything in ``paths``: files, directories (recursively, sorted) and ``-`` for ``stdin``; each file
    (and stdin) at most ``max_bytes`` long, and each read once however many paths lead to it
    (:class:`.input_text.ReadOnce`)."""
    bundle, once = Bundle(), ReadOnce()
    for path in paths:
        if path == STDIN:
            _add_read(bundle, partial(_read_stream, stdin if stdin is not None else sys.stdin, max_bytes), STDIN_NAME)
        elif os.path.isdir(path):
            walked = once.walk(path)
            for problem in walked.problems:
                bundle.add_problem(problem)
            bundle.notices.extend(walked.notices)
            if not walked.files and not walked.problems and not walked.notices:
                bundle.notices.append(f"{path}: no *.yaml, *.yml or *.json files in this directory")
            for name in walked.files:
                _add_read(bundle, partial(read_file, name, max_bytes), name)
        elif not os.path.exists(path):
            bundle.add_problem(InputProblem(Location(path), "no such file or directory"))
        elif (notice := once.take_file(path)) is not None:
            bundle.notices.append(notice)
        else:
            _add_read(bundle, partial(read_file, path, max_bytes), path)
    return bundle


def load_text(text: str, name: str = "<string>") -> Bundle:
    """The objects in one YAML or JSON text (for library users and tests)."""
    bundle = Bundle()
    _add_documents(bundle, parse_documents(text, name), name)
    return bundle


def add_data(bundle: Bundle, data: Any, name: str, index: int = 0, *, owned: bool = False) -> None:
    """Add already-parsed objects (an API server's list response, a client's ``to_dict()``) to ``bundle``,
    with the same checks and messages as a file's document ``index`` named ``name``. With ``owned`` the
    data is the caller's to give away: a list's items are let go (set to None) as their objects are built,
    and a fleet's repeated leaf values are shared, as for a file."""
    _add_documents(bundle, iter([Document(index, data)]), name, owned=owned)


def load_objects(items: Iterable[Any], name: str = "<objects>", *, strict: bool = False) -> Bundle:
    """Objects held in memory, checked as files are: drasat's own models, API JSON as dicts, and the
    official kubernetes client's model objects or their ``to_dict()`` (see :mod:`.client_objects`).

    An object that cannot be read is a problem in the bundle (``bundle.problems``), left out of its
    objects; with ``strict`` it raises :class:`InputError` naming every such object instead, so that a
    caller who does not look at the problems never computes with fewer objects than it passed."""
    from .client_objects import unread_kind, wire_form
    from .meta import TypedObject

    bundle, reading = Bundle(), _Reading(owned=False)  # one reading: one notice for all that is skipped
    for index, item in enumerate(items):
        if isinstance(item, TypedObject):
            bundle.add(Loaded(item, Location(name, index, item.kind, item.name)))
            continue
        kind = unread_kind(item)
        if kind is not None:
            reading.skip(kind)
            continue
        try:
            data = wire_form(item)
        except InputError as exc:
            for problem in exc.problems:
                bundle.add_problem(InputProblem(Location(name, index), problem.message))
            continue
        with collector_paused(FREEZE_AFTER):
            _add_each(bundle, iter([Document(index, data)]), name, reading)
    _tell(bundle, name, reading)
    if strict and bundle.problems:
        raise InputError(bundle.problems)
    return bundle


def typed_objects(items: Iterable[Any], name: str = "<objects>") -> list[Any]:
    """``items`` as drasat's models: those already models pass as they are; API JSON dicts, the
    official client's objects and their ``to_dict()`` are read as :func:`load_objects` reads them.
    Raises InputError naming every object that cannot be read."""
    from .meta import TypedObject

    items = list(items)
    if all(isinstance(item, TypedObject) for item in items):
        return items
    return [loaded.obj for loaded in load_objects(items, name, strict=True).objects]


def manifest_files(directory: str) -> list[str]:
    """Manifest files below ``directory``, sorted; hidden files and directories are left out."""
    return ReadOnce().walk(directory).files


def _read_stream(stream: TextIO, max_bytes: int) -> tuple[str | None, InputProblem | None]:
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is not None:
            return decode(read_at_most(buffer, max_bytes + 1), STDIN_NAME, max_bytes)
        text = stream.read(max_bytes + 1)
    except (OSError, UnicodeDecodeError) as exc:
        return None, InputProblem(Location(STDIN_NAME), f"cannot read standard input: {exc}")
    if isinstance(text, bytes):
        return decode(text, STDIN_NAME, max_bytes)
    if len(text) > max_bytes:
        return None, InputProblem(Location(STDIN_NAME), too_large(max_bytes))
    return text, None


def _add_read(bundle: Bundle, read: Callable[[], tuple[str | None, InputProblem | None]], name: str) -> None:
    """The objects of one input ``read`` gives; the text is held by the parse alone (a JSON List's
    parse lets it go before the models are built: 100 MB of a 1,000-node cluster)."""
    text, problem = read()
    if problem is not None or text is None:
        bundle.add_problem(problem or InputProblem(Location(name), "could not be read"))
        return
    documents = parse_documents(text, name, deferring=True)
    del text
    _add_documents(bundle, documents, name)


@dataclass
class _Reading:
    """What holds for the objects of one input while it is read."""

    owned: bool  # the parsed data is the loader's own: each list item is let go once read (peak memory)
    fits_int64: bool = False  # of the document being read: see Document.fits_int64
    converted: dict[str, int] = field(default_factory=dict)  # older apiVersion -> objects converted from it
    skipped: dict[str, int] = field(default_factory=dict)  # "apiVersion Kind" drasat does not use -> objects of it
    shared: Shared = field(default_factory=Shared)  # a fleet's repeated small values, built once (owned data only)

    def skip(self, kind: str) -> None:
        """One more object of ``kind`` (``apiVersion Kind``), which drasat does not use: told once (:func:`_tell`)."""
        self.skipped[kind] = self.skipped.get(kind, 0) + 1


def _add_documents(bundle: Bundle, documents: Iterator[Document], name: str, owned: bool = True) -> None:
    reading = _Reading(owned)
    with collector_paused(FREEZE_AFTER):  # building thousands of models triggers collections that find nothing
        _add_each(bundle, documents, name, reading)
    _tell(bundle, name, reading)


def _add_each(bundle: Bundle, documents: Iterator[Document], name: str, reading: _Reading) -> None:
    for document in documents:
        if document.problem is not None:
            bundle.add_problem(document.problem)
            continue
        if document.data is None:
            continue  # an empty document, e.g. after a trailing '---'
        where = Location(name, document.index)
        reading.fits_int64 = document.fits_int64
        try:
            if document.again is not None:
                _add_deferred(bundle, document, where, reading)
            else:
                _add_document(bundle, document.data, where, reading)
        except RecursionError:
            bundle.add_problem(InputProblem(where, "is nested too deeply to read"))
        except Exception as exc:  # noqa: BLE001  (never a traceback: a bug here still gets reported)
            bundle.add_problem(
                InputProblem(
                    where,
                    f"could not be read because of an internal error in drasat "
                    f"({type(exc).__name__}: {exc}); please report it",
                )
            )


def _tell(bundle: Bundle, name: str, reading: _Reading) -> None:
    """The notices for an input once it is read: conversions from each older version, kinds skipped."""
    for version, count in sorted(reading.converted.items()):
        bundle.notices.append(
            f"{name}: converted {count} object{'s' if count > 1 else ''} from {version} to "
            "resource.k8s.io/v1; messages name the fields as v1 spells them"
        )
    if reading.skipped:
        bundle.notices.append(_skipped_notice(name, reading.skipped))


def _skipped_notice(name: str, skipped: dict[str, int]) -> str:
    """One line for every object of kinds drasat does not use in one input (a ``kubectl get all -A -o yaml``
    dump holds thousands of them): how many of each kind, in the order they came."""
    counts = [f"{count} {kind}" for kind, count in skipped.items()]
    listed = ", ".join(counts[:-1]) + " and " + counts[-1] if len(counts) > 1 else counts[0]
    objects = "object" if sum(skipped.values()) == 1 else "objects"
    kinds = "this kind" if len(skipped) == 1 else "these kinds"
    return f"{name}: skipped {listed} {objects}: drasat does not use {kinds}"


def _add_deferred(bundle: Bundle, document: Document, where: Location, reading: _Reading) -> None:
    """A List whose items are still text, each read as it is built (never the whole list parsed at once),
    into a bundle of its own kept once every item was read; where one cannot be read alone, the
    document read whole is added instead, as any other (its error, if it has one)."""
    trial, converted, skipped = Bundle(), dict(reading.converted), dict(reading.skipped)
    try:
        _add_document(trial, document.data, where, reading)
        if any(isinstance(item, Deferred) for item in document.data["items"]):
            raise ReadAgain  # not read as a List's items (another kind, no kind): their text was never checked
    except ReadAgain:
        reading.converted, reading.skipped = converted, skipped
        whole = document.again() if document.again is not None else None
        if whole is not None and whole.problem is not None:
            bundle.add_problem(whole.problem)
        elif whole is not None and whole.data is not None:
            reading.fits_int64 = whole.fits_int64
            _add_document(bundle, whole.data, where, reading)
        return
    bundle.extend(trial)


def _add_document(bundle: Bundle, data: Any, where: Location, reading: _Reading) -> None:
    if not isinstance(data, dict):
        bundle.add_problem(
            InputProblem(
                where, f"is not a Kubernetes object: expected a mapping with apiVersion and kind, found {_shape(data)}"
            )
        )
        return
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        said = Location(  # what the document says of itself, for a report to name it (validate -o json)
            where.file,
            where.document,
            kind if isinstance(kind, str) and kind else None,
            display_name(data),
            where.path,
        )
        bundle.add_problem(
            InputProblem(said, "is not a Kubernetes object: apiVersion and kind must both be given as text")
        )
        return
    item_kind = _list_item_kind(api_version, kind, data)
    if item_kind is not None:
        _add_list(bundle, data, where, item_kind, reading)
        return
    info = lookup(api_version, kind)
    if info is None:
        reading.skip(f"{api_version} {kind}")
        return
    _add_object(bundle, data, Location(where.file, where.document, kind, display_name(data), where.path), info, reading)


def _list_item_kind(api_version: str, kind: str, data: dict[str, Any]) -> str | None:
    """``List`` → "" (items name their kind); ``ResourceSliceList`` → ``ResourceSlice``; else None."""
    if kind == "List" and split_api_version(api_version)[0] == "":
        return ""
    if kind.endswith("List") and "items" in data and lookup(api_version, kind[:-4]) is not None:
        return kind[:-4]
    return None


def _add_list(bundle: Bundle, data: dict[str, Any], where: Location, item_kind: str, reading: _Reading) -> None:
    items = data.get("items")
    if items is None:
        return
    if not isinstance(items, list):
        bundle.add_problem(InputProblem(where.child("items"), f"must be a list, not {_shape(items)}"))
        return
    for i, item in enumerate(items):
        if reading.owned:
            items[i] = None  # its model is all that is kept of it: a 1,000-node List is not held twice
        if isinstance(item, Deferred):
            item = item.value()  # still text (a big List read fast): ReadAgain if it cannot be read alone
        at = Location(where.file, where.document, path=f"{where.path + '.' if where.path else ''}items[{i}]")
        if item_kind and isinstance(item, dict):
            item = {"apiVersion": data["apiVersion"], "kind": item_kind, **item}
        if isinstance(item, dict) and _list_item_kind(str(item.get("apiVersion")), str(item.get("kind")), item):
            bundle.add_problem(InputProblem(at, "a list inside a list is not a Kubernetes object"))
            continue
        _add_document(bundle, item, at, reading)


def _add_object(bundle: Bundle, data: dict[str, Any], where: Location, info: KindInfo, reading: _Reading) -> None:
    api_version = data["apiVersion"]
    _, version = split_api_version(api_version)
    if not info.reads(version):
        versions = ", ".join(f"{info.group + '/' if info.group else ''}{v}" for v in (info.version, *info.older))
        bundle.add_problem(
            InputProblem(
                where.child("apiVersion"), f"drasat does not know {info.kind} in {api_version}; it reads {versions}"
            )
        )
        return
    source = None
    if version != info.version and needs_conversion(api_version):
        try:
            data = to_v1(data, where)
        except InputError as exc:
            for problem in exc.problems:
                bundle.add_problem(problem)
            return
        source = api_version
        reading.converted[api_version] = reading.converted.get(api_version, 0) + 1
    oversized = [] if reading.fits_int64 else int64_problems(data, where)
    if oversized:
        for problem in oversized:
            bundle.add_problem(problem)
        return
    if reading.owned and info.model is ResourceSlice:
        reading.shared.slice_leaves(data)
    try:
        obj = info.model.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as exc:
        for problem in problems_from(exc, info.model, where):
            bundle.add_problem(problem)
        return
    bundle.add(Loaded(obj, where, source))


def display_name(data: dict[str, Any]) -> str | None:
    """``name`` or ``namespace/name`` from metadata, if they are there as text: how every message names an object
    read from a document (the workload ``fit`` reads too)."""
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return None
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str) or not name:
        return None
    return f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name


def _shape(value: Any) -> str:
    """What a value is, in YAML's words (never a Python type name)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "text"
    return "a number" if isinstance(value, (int, float)) else "a mapping"
