"""The inventory of everything loaded: objects in input order, their problems, notices, lookups.

A :class:`Bundle` is what the loader returns and what the command line and the
solver consume. It keeps input order (first-fit allocation depends on it), finds
objects by kind and name, and reports a second object with the same kind,
namespace and name as a problem: which of the two should count is ambiguous, and
the API server would not store both.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from .errors import InputProblem, Location
from .kinds import info_for, is_namespaced
from .meta import TypedObject

T = TypeVar("T", bound=TypedObject)


@dataclass
class Loaded:
    """One object and where it came from; ``converted_from`` is the original apiVersion if it was older."""

    obj: TypedObject
    location: Location
    converted_from: str | None = None
    problems: list[InputProblem] = field(default_factory=list)


Entry = Loaded | InputProblem
"""An input document in reading order: a loaded object, or the problem that kept a document from loading."""


@dataclass
class Bundle:
    """Objects in input order, every problem found while reading, and notices for the user."""

    objects: list[Loaded] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    _index: dict[tuple[str, str, str, str], Loaded] = field(default_factory=dict, repr=False)
    _places: dict[int, Location] = field(default_factory=dict, repr=False)  # id(obj): the bundle keeps obj alive

    # --- building ---------------------------------------------------------------------------

    def add(self, loaded: Loaded) -> None:
        """Append an object; a second object with the same identity is kept but reported.

        The exception is a later copy of the *same* object (same uid, or the same content but
        for status and bookkeeping metadata) — the state a chained what-if run wrote out with
        ``--output-state`` and reads back with the original files: it replaces the first copy
        where that one stood, with a notice.
        """
        identity = _identity(loaded.obj)
        first = self._index.get(identity) if identity is not None else None
        if identity is not None and first is not None and _same_object(first.obj, loaded.obj):
            if first.obj == loaded.obj:
                return  # read twice, unchanged: nothing to say
            self._replace(first, loaded)
            self._index[identity] = loaded
            return
        self.objects.append(loaded)
        self.entries.append(loaded)
        self._places.setdefault(id(loaded.obj), loaded.location)
        if identity is None:
            return
        if first is None:
            self._index[identity] = loaded
            return
        problem = InputProblem(
            loaded.location,
            f"duplicate: {loaded.obj.kind} {identity[3]!r}"
            f"{' in namespace ' + repr(identity[2]) if identity[2] else ''} "
            f"is already defined at {_place(first.location)}",
        )
        loaded.problems.append(problem)
        self.problems.append(problem)

    def _replace(self, first: Loaded, later: Loaded) -> None:
        self.objects[self.objects.index(first)] = later
        self.entries[self.entries.index(first)] = later
        self._places.setdefault(id(later.obj), later.location)
        self.notices.append(
            f"{_place(later.location)}: {later.obj.kind} {_display(later.obj)} replaces the copy "
            f"read at {_place(first.location)} (the same object, its newer state)"
        )

    def add_problem(self, problem: InputProblem) -> None:
        """Record a problem of a document that did not become an object."""
        self.problems.append(problem)
        self.entries.append(problem)

    def extend(self, other: Bundle) -> None:
        """Append everything of another bundle (duplicates across the two are reported)."""
        if not (self.entries or self.objects or self.problems or self._index):  # nothing to compare with:
            self.objects, self.problems, self.entries = list(other.objects), list(other.problems), list(other.entries)
            self._index, self._places = dict(other._index), dict(other._places)  # what the same adds would build
            self.notices.extend(other.notices)
            return
        for entry in other.entries:
            if isinstance(entry, Loaded):
                self.add(Loaded(entry.obj, entry.location, entry.converted_from))
            else:
                self.add_problem(entry)
        self.notices.extend(other.notices)

    # --- reading -----------------------------------------------------------------------------

    @property
    def ok(self) -> bool:
        """True when everything was read without a problem."""
        return not self.problems

    def of_kind(self, cls: type[T]) -> list[T]:
        """All objects of one model class, in input order."""
        return [loaded.obj for loaded in self.objects if type(loaded.obj) is cls]

    def loaded_of_kind(self, cls: type[TypedObject]) -> list[Loaded]:
        """Like :meth:`of_kind`, with each object's location."""
        return [loaded for loaded in self.objects if type(loaded.obj) is cls]

    def by_name(self, cls: type[T], name: str, namespace: str | None = None) -> T | None:
        """The first object of that class and name (and namespace, if given), or None."""
        info = info_for(cls)
        if namespace is not None or not info.namespaced:
            found = self._index.get((info.group, info.kind, namespace or "" if info.namespaced else "", name))
            return found.obj if found is not None and type(found.obj) is cls else None
        for loaded in self.objects:
            obj = loaded.obj
            if type(obj) is cls and obj.name == name and (namespace is None or obj.namespace == namespace):
                return obj
        return None

    def location_of(self, obj: TypedObject) -> Location | None:
        """Where an object of this bundle was read (None for an object from elsewhere)."""
        return self._places.get(id(obj))

    def __iter__(self) -> Iterator[TypedObject]:
        return (loaded.obj for loaded in self.objects)

    def __len__(self) -> int:
        return len(self.objects)


def _identity(obj: TypedObject) -> tuple[str, str, str, str] | None:
    """(group, kind, namespace, name); unnamed objects (generateName only) have none."""
    if not obj.name:
        return None
    group = info_for(type(obj)).group
    return group, obj.kind, obj.namespace if is_namespaced(obj) else "", obj.name


_BOOKKEEPING = {"resource_version", "generation", "managed_fields", "creation_timestamp"}


def _same_object(first: TypedObject, later: TypedObject) -> bool:
    """The same object in two states: equal uids, or equal but for status and bookkeeping metadata."""
    uid_a, uid_b = getattr(first.metadata, "uid", None), getattr(later.metadata, "uid", None)
    if uid_a and uid_b:
        return bool(uid_a == uid_b)
    return _content(first) == _content(later)


def _content(obj: TypedObject) -> dict[str, object]:
    """What makes the object itself, as the API server stores it (defaults applied): no status, no bookkeeping."""
    from .defaults import apply_defaults
    from .resource import ResourceClaim, ResourceClaimTemplate

    if isinstance(obj, ResourceClaim):
        obj = apply_defaults(obj)
    elif isinstance(obj, ResourceClaimTemplate):
        obj = apply_defaults(obj)
    data = obj.model_dump(exclude={"status"}, exclude_none=True)
    data["metadata"] = {k: v for k, v in data.get("metadata", {}).items() if k not in _BOOKKEEPING}
    return data


def _display(obj: TypedObject) -> str:
    return f"{obj.namespace}/{obj.name}" if is_namespaced(obj) and obj.namespace else str(obj.name)


def _place(location: Location) -> str:
    place = location.file or "?"
    if location.document is not None:
        place += f"[{location.document}]"
    return place + (f" {location.path}" if location.path else "")
