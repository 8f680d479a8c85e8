"""Building Python values from a composed YAML document, fast, with PyYAML's exact results.

PyYAML's C loader parses and composes in C but constructs every value in Python, one
method call per node: on a 20 MB `kubectl get -o yaml` that is more than half of the
reading time. Manifests are almost all plain mappings, sequences and strings, so this
constructor builds those in one iterative loop and hands every other scalar (null,
bool, int, float) to PyYAML's own constructor methods, so values are the ones
PyYAML gives. Anything rarer — merge keys, explicit tags such as ``!!binary`` or
``!!set``, mappings as keys — makes :func:`construct` return :data:`FALL_BACK`, and
the caller lets PyYAML construct that document the ordinary way, errors and all.

It also tells whether the document used an alias at all: without one, a document
holds no more values than its text has characters, and the expansion check can be
skipped.
"""

from __future__ import annotations

from typing import Any

import yaml

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_SCALARS = {
    "tag:yaml.org,2002:null": yaml.constructor.SafeConstructor.construct_yaml_null,
    "tag:yaml.org,2002:bool": yaml.constructor.SafeConstructor.construct_yaml_bool,
    "tag:yaml.org,2002:int": yaml.constructor.SafeConstructor.construct_yaml_int,
    "tag:yaml.org,2002:float": yaml.constructor.SafeConstructor.construct_yaml_float,
}

FALL_BACK = object()
"""Returned when the document needs PyYAML's full constructor."""


class _Unusual(Exception):
    """A node this constructor leaves to PyYAML."""


def construct(root: yaml.Node, loader: Any) -> tuple[Any, bool]:
    """``(value, used_alias)``, or ``(FALL_BACK, False)`` for documents PyYAML must build."""
    try:
        return _Builder(loader).build(root)
    except _Unusual:
        return FALL_BACK, False


class _Builder:
    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.built: dict[int, Any] = {}  # id(node) -> value: a node met twice is an alias
        self.pending: list[tuple[yaml.Node, Any]] = []
        self.used_alias = False

    def build(self, root: yaml.Node) -> tuple[Any, bool]:
        value = self.value(root)
        while self.pending:
            node, container = self.pending.pop()
            if isinstance(node, yaml.MappingNode):
                self.fill(node, container)
            else:
                container.extend(self.value(child) for child in node.value)
        return value, self.used_alias

    def value(self, node: yaml.Node) -> Any:
        """The value of ``node``; containers are created empty and filled later (no recursion)."""
        known = self.built.get(id(node), _MISSING)
        if known is not _MISSING:
            self.used_alias = True
            return known
        tag = node.tag
        if isinstance(node, yaml.ScalarNode):
            if tag == _STR:
                result: Any = node.value
            elif tag in _SCALARS:
                result = _SCALARS[tag](self.loader, node)
            else:
                raise _Unusual
        elif isinstance(node, yaml.MappingNode) and tag == _MAP:
            result = {}
            self.pending.append((node, result))
        elif isinstance(node, yaml.SequenceNode) and tag == _SEQ:
            result = []
            self.pending.append((node, result))
        else:
            raise _Unusual
        self.built[id(node)] = result
        return result

    def fill(self, node: yaml.MappingNode, mapping: dict[Any, Any]) -> None:
        """Fill a mapping in key order; a key given twice is the loader's duplicate-key error."""
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                raise _Unusual
            if key_node.value in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key_node.value!r} appears twice",
                    key_node.start_mark,
                )
            seen.add(key_node.value)
            key = self.value(key_node)
            if key in mapping:
                raise _Unusual  # two spellings of one key (1 and 1.0): PyYAML decides
            # Most values are plain strings met once: taken directly, they skip a call each.
            if value_node.tag == _STR and value_node.__class__ is yaml.ScalarNode and id(value_node) not in self.built:
                self.built[id(value_node)] = mapping[key] = value_node.value
            else:
                mapping[key] = self.value(value_node)


_MISSING = object()
