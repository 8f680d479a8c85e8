"""Structure-aware mutations of Kubernetes manifests, for the fuzzer's custom mutator.

Byte-level mutation almost never gets past the YAML parser and the schema; these
mutations keep the input a manifest and change one thing a careless (or hostile) user
could: drop a field, give it the wrong type, a huge or negative number, deep nesting,
odd unicode, an invalid quantity, version or CEL expression, a duplicate name, a
reference to something that does not exist, or an alias bomb.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import yaml

HUGE_NUMBERS = [2**63 - 1, 2**63, -(2**63) - 1, 2**64, -1, 0, 10**30, 1e308, -1e308, float("nan"), 1.5]
STRINGS = [
    "",
    " ",
    "\x00",
    "é",
    "𝔡𝔯𝔞",
    "\u202etxet",
    "a" * 300,
    "ünïcödé/ключ",
    "dra.example.com/",
    "/x",
    "UPPER",
    "-leading",
    "trailing-",
    "a..b",
    "a_b",
    "x" * 64,
    "x" * 65,
    "1",
    "true",
    "null",
    "${x}",
]
QUANTITIES = ["1Gii", "-1", "1e1000", "0x10", "1.5.5", "Ki", "", "9223372036854775808", "1E", "1m1", "+-1", "1 Gi"]
SEMVERS = ["1.2", "01.2.3", "1.2.3-", "v1.2.3", "1.2.3+", "1.2.3-01", "99999999999999999999.0.0", "1.2.3-a..b"]
CEL = [
    'device.attributes["x"].y.z(',
    "1/0 == 1",
    'device.attributes["d"].nosuch',
    "device.nosuch",
    "1",
    '"a" + 1 == 2',
    "[1,2][5] == 1",
    "{'a': 1}['b'] == 1",
    "int('x') == 1",
    'device.driver.matches("(")',
    "(" * 300 + "true" + ")" * 300,
    " + ".join(["1"] * 260) + " > 0",
    "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, "
    "[1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))",
    "cel.bind(a, 'xx', " + "cel.bind(a, a + a, " * 30 + "size(a) > 0" + ")" * 31,
    'quantity("1Gii").isInteger()',
    'semver("1.2").major() == 1',
    "9223372036854775807 + 1 > 0",
    'device.capacity["d"].mem.add(9223372036854775807).isInteger()',
    "true ? 1 : 'a'",
    'device.attributes["d"].list.includes(1)',
    "optional.none().value() == 1",
    "x" * 10241,
]
ALIAS_BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
    "g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
)


MAX_PATHS = 20_000  # an alias bomb expands to millions of paths: mutate its bytes instead


class _TooLarge(Exception):
    pass


def _paths(root: Any) -> list[tuple]:
    """Every path to a value inside the documents (keys and indexes); raises _TooLarge past MAX_PATHS.

    Each container is entered once: YAML's anchors make one list or mapping appear in many places, and
    ``a: &a [*a]`` makes a list that contains itself, whose paths (each one step longer than the last) took
    1.5 GB before the MAX_PATHS-th was reached -- inside the fuzzer's own mutator, so in every fuzzing run."""
    out: list[tuple] = []
    stack: list[tuple[Any, tuple]] = [(root, ())]
    entered: set[int] = set()
    while stack:
        node, prefix = stack.pop()
        out.append(prefix)
        if len(out) > MAX_PATHS:
            raise _TooLarge()
        if isinstance(node, (dict, list)):
            if id(node) in entered:
                continue
            entered.add(id(node))
        if isinstance(node, dict):
            stack.extend((value, prefix + (key,)) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, prefix + (i,)) for i, value in enumerate(node))
    return out


def _get(root: Any, path: tuple) -> Any:
    for step in path:
        root = root[step]
    return root


def _set(root: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def _replacement(rng: random.Random, current: Any, key: Any) -> Any:
    """A new value for a field, chosen by what the field is."""
    name = str(key).lower()
    if "expression" in name:
        return rng.choice(CEL)
    if name in ("version", "versions") or "version" in name:
        return rng.choice(SEMVERS)
    if name in ("value", "memory", "capacity") or isinstance(current, str) and current[:1].isdigit():
        return rng.choice(QUANTITIES + [str(n) for n in HUGE_NUMBERS[:5]])
    if isinstance(current, bool) or isinstance(current, (int, float)):
        return rng.choice(HUGE_NUMBERS + ["1", None, [], {}])
    if isinstance(current, str):
        return rng.choice(STRINGS + ["no-such-" + current, current + current, 1, None, [current], {"a": current}])
    return rng.choice([None, 1, "x", [], {}, True])


def _mutate_tree(rng: random.Random, docs: list[Any]) -> list[Any] | str:
    paths = [p for p in _paths(docs) if p]
    choice = rng.randrange(9)
    if choice == 8 or not paths:
        return ALIAS_BOMB if rng.random() < 0.5 else docs + [copy.deepcopy(rng.choice(docs))] if docs else ALIAS_BOMB
    path = rng.choice(paths)
    parent = _get(docs, path[:-1])
    current = parent[path[-1]]
    if choice == 0 and isinstance(parent, dict):  # drop a field
        del parent[path[-1]]
    elif choice == 1 and isinstance(parent, list):  # duplicate a list item (duplicate names)
        parent.insert(path[-1], copy.deepcopy(current))
    elif choice == 2:  # deep nesting
        value: Any = current
        for _ in range(rng.choice([50, 200, 2000])):
            value = [value] if rng.random() < 0.5 else {"x": value}
        _set(docs, path, value)
    elif choice == 3 and isinstance(parent, list) and len(parent) > 1:  # drop a list item
        del parent[path[-1]]
    elif choice == 4:  # a copy of another value of the input (wrong place)
        _set(docs, path, copy.deepcopy(_get(docs, rng.choice(paths))))
    else:  # a value chosen by the field's name and type
        _set(docs, path, _replacement(rng, current, path[-1]))
    return docs


def mutate(data: bytes, seed: int, fallback: Callable[[bytes], bytes]) -> bytes:
    """One structure-aware mutation of ``data``; ``fallback`` mutates bytes that are no manifest."""
    rng = random.Random(seed)
    try:
        docs = [d for d in yaml.load_all(data.decode("utf-8"), Loader=yaml.CSafeLoader) if d is not None]
    except Exception:  # noqa: BLE001 - not YAML: leave it to the byte mutator
        return fallback(data)
    if not docs or rng.random() < 0.1:
        return fallback(data)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        try:
            mutated = _mutate_tree(rng, docs)
        except (_TooLarge, RecursionError):  # alias bombs, or nesting too deep to copy
            return fallback(data)
        if isinstance(mutated, str):
            return mutated.encode()
        docs = mutated
    try:
        return yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True).encode(
            "utf-8", errors="replace"
        )
    except (Exception, RecursionError):  # noqa: BLE001 - unrepresentable or too deep: mutate bytes instead
        return fallback(data)
