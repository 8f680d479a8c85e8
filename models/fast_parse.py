"""Fast parsers for big inputs (the ``fast`` extra: ``orjson``, ``yaml-rs``), PyYAML and json the reference.

A 1,000-node cluster as ``kubectl get -o yaml`` prints it is 20 MB: PyYAML's C loader
with drasat's constructor needs about 5 s for it, yaml-rs (Rust) 1 s; orjson reads the
same cluster as JSON in two thirds of json's time. The reference parsers stay the
definition of what a manifest means. A fast parser's answer is taken only where it
must be the reference's, and otherwise these functions return None and the caller
parses as before — with the same values, messages and line numbers:

- any error (syntax, a key twice, a number orjson cannot hold): the reference reports it;
- YAML that uses what the two read differently or what drasat limits: anchors and aliases
  (expansion limits), tags, directives, merge keys, several documents, tabs or characters
  PyYAML refuses, and plain scalars that YAML 1.1 (PyYAML: ``yes``, ``012``, ``0b1``,
  ``1:20``) and YAML 1.2 (yaml-rs: ``1e3``, ``0o7``) type differently.

Small inputs always take the reference path: the fast one pays off only on big ones.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

import yaml

FAST_FROM_BYTES = 256 * 1024
"""Inputs smaller than this are parsed by the reference parsers alone."""

_SYNTAX = (  # each starts with a character: a fast scan each
    r"[&*!][^\s,\[\]\{\}]",  # an anchor, alias or tag (or text that looks like one)
    r"\n%",  # a directive
    "[\x85\u2028\u2029\r]",  # line breaks YAML 1.1 knows and 1.2 does not (NEL, LS,
    # PS), and CR (line numbers on errors stay PyYAML's)
    r"\n[ ]*\t",  # a tab in the indentation
    r"<<[ \t]*:",  # a merge key
    r"[\]\}][ \t]*:(?:[ \t]|\n|$)",  # a flow collection used as a key
    r"\n[ \t]*\?(?:[ \t]|\n|$)",  # an explicit (complex) key
    r"\n(?:---|\.\.\.)(?:[ \t]|\n|$)",  # more than one document
    r":(?<=[\s\[\{,]:)(?:[\s,\]\}]|$)",  # an empty key (PyYAML refuses some that yaml-rs reads)
    r"[\[\{](?<=[\s,\[\{][\[\{])(?![ \t]*[\]\}])",  # a flow collection that is not empty (kubectl prints
    # none; 1.1 and 1.2 differ on ':' inside them)
)
"""Compiled on first use (``re`` keeps them): a start that reads only small inputs never needs them."""
_LONG_NUMBER = r"[0-9]{19}"
_PLAIN = (
    r"(?:[\s\[\{,]|[\"'\]\}]:)((?:[-+._0-9=~<]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE"
    r"|false|False|FALSE|null|Null|NULL)[^\s,\[\]\{\}]*)(?=[ \t]*(?:\n|$|[,\]\}]|:[ \t]|:\n|:$|[ \t]#))"
)
"""Plain scalars that one of the two parsers might read as something other than text: after a space, a
bracket or a comma, or right after a JSON-like key (``{"a":012}``). A superset (a sentence's last word
"on" is one too): each distinct token is then read by both parsers, and one that differs sends the
input to PyYAML."""


def fast_json(text: str) -> Any | None:
    """``text`` parsed by orjson, or None: not installed, small, or an error (json reports it)."""
    if len(text) < FAST_FROM_BYTES:
        return None  # (checked first: a small input does not import orjson)
    orjson = _module("orjson")
    if orjson is None or re.search(_LONG_NUMBER, text):
        return None  # orjson reads whole numbers beyond 64 bits as floats: json keeps them (and drasat refuses)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # also NaN, numbers beyond 64 bits: json reads or words them
        return None


def fast_yaml(text: str, *, at_least: int | None = None) -> tuple[Any] | None:
    """``text``'s one document parsed by yaml-rs, or None where PyYAML must read it (see the module).

    ``at_least``: the size below which PyYAML reads it anyway (default :data:`FAST_FROM_BYTES`)."""
    if len(text) < (FAST_FROM_BYTES if at_least is None else at_least):
        return None  # (checked first: a small input does not import yaml-rs)
    yaml_rs = _module("yaml_rs")
    if yaml_rs is None or not text.strip():
        return None
    lines = "\n" + text.removeprefix("---\n")  # every line, the first too, after a newline
    if any(re.search(pattern, lines) for pattern in _SYNTAX) or yaml.reader.Reader.NON_PRINTABLE.search(text):
        return None
    if any(not _same_reading(token) for token in set(re.findall(_PLAIN, lines))):
        return None
    try:
        data = yaml_rs.loads(text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error)
    except (yaml_rs.YAMLDecodeError, ValueError, OverflowError):
        return None
    return None if data is None else (data,)  # a stream of comments only: PyYAML's zero documents


@lru_cache(maxsize=16384)  # keyed by the input's own scalars: bounded, or a long-lived process grows with them
def _same_reading(token: str) -> bool:
    """Whether PyYAML (as drasat reads: timestamps kept as text) and yaml-rs give the plain scalar one value."""
    from .yaml_io import plain_tag, reference_scalar  # the reference's own resolver and constructor

    token = token[:-1] if token.endswith(":") else token  # a key: its colon is the mapping's
    try:
        theirs = _module("yaml_rs").loads(f"- {token}\n", parse_datetime=False)
    except Exception:  # noqa: BLE001 - whatever yaml-rs makes of it, PyYAML decides
        return False
    if plain_tag(token) == "tag:yaml.org,2002:str":
        return theirs == [token] and type(theirs[0]) is str
    try:
        ours = reference_scalar(token)
    except yaml.YAMLError:
        return False
    return type(ours) is type(theirs[0]) and ours == theirs[0]  # NaN too is left to PyYAML (a key twice...)


@cache
def _module(name: str) -> Any:
    """The optional parser module, imported on first use (start-up pays nothing for it), or None."""
    try:
        return __import__(name)
    except ImportError:
        return None
