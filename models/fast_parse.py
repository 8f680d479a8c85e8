"""Fast parsers for big inputs (the ``fast`` extra: ``orjson``, ``yaml-rs``), PyYAML and json the reference.

A 1,000-node cluster as ``kubectl get -o yaml`` prints it is 20 to 30 MB: PyYAML's C loader
with drasat's constructor needs 5 to 15 s for it, yaml-rs (Rust) under 2 s; orjson reads the
same cluster as JSON in a third of json's time. The reference parsers stay the definition of
what a manifest means. A fast parser's answer is taken only where it must be the reference's,
and otherwise the caller parses with the reference — with the same values, messages and line
numbers:

- any error (syntax, a key twice, a number orjson cannot hold): the reference reports it;
- YAML that uses what the two read differently or what drasat limits: anchors and aliases
  (expansion limits), tags, directives, merge keys, tabs or characters PyYAML refuses, deep
  nesting, and plain scalars that YAML 1.1 (PyYAML: ``yes``, ``012``, ``0b1``, ``1:20``) and
  YAML 1.2 (yaml-rs: ``1e3``, ``0o7``) type differently.

A stream of several documents (helm's and kustomize's ``---`` between objects) is cut into its
documents first (:mod:`.yaml_split`) and each is judged on its own: one document with an anchor
goes to PyYAML, the thousands around it do not. The text is scanned once for all of them, with
searches that start at a literal character (Python's ``re`` finds those quickly; a search that
starts at a character class tests every position, ten times slower on 30 MB).

One big ``kind: List`` document (``kubectl get -o yaml``) is cut into its items the same way
(:meth:`FastStream.list_value`, :mod:`.json_list` for ``-o json``): each is read as the loader builds it, so
the list is never held whole as parsed values beside its models.

Small inputs always take the reference path: the fast one pays off only on big ones.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from .yaml_split import Piece

FAST_FROM_BYTES = 256 * 1024
"""Inputs smaller than this are parsed by the reference parsers alone."""

_PROPERTIES = (r"&(?=[^\s,\[\]\{\}])", r"\*(?=[^\s,\[\]\{\}])", r"!(?=[^\s,\[\]\{\}])")
"""An anchor, an alias or a tag, or text that looks like one (``&&`` in a CEL expression): see _properties."""
_UNUSUAL = (  # matched on "\n" + text; each match's last character lies in what it found
    r"<<[ \t]*:",  # a merge key
    r"\][ \t]*:(?:[ \t]|\n|$)",  # a flow collection used as a key
    r"\}[ \t]*:(?:[ \t]|\n|$)",
    r":(?<=[\s\[\{,]:)(?:[\s,\]\}]|$)",  # an empty key (PyYAML refuses some that yaml-rs reads)
    r"\n[ \t?:-]{256}",  # a line indented that deep: nesting near the limits (yaml-rs crashes far beyond)
)
"""Without a match (and with only simple flow collections, three levels at most: :func:`_simple_flow`) a
document's block nesting needs indentation: it nests less than about 520 levels, within both parsers'
limits (libyaml's 1,000), so depth cannot tell them apart."""
_FLOW_STARTS = (r"\[(?<=[\s,\[\{]\[)(?![ \t]*\])", r"\{(?<=[\s,\[\{]\{)(?![ \t]*\})")
"""Where a flow collection that is not empty may start."""


@cache
def _simple_flow() -> re.Pattern[str]:
    """A flow collection on one line, as PyYAML and Go's YAML printers write small ones (``{value: '1'}``,
    ``[gpu, nic]``, ``{a: {b: c}}``, three levels at most): entries after ``, ``, values after ``: ``, keys
    and values plain scalars without a colon, a ``#`` or a leading indicator, or quoted on one line. YAML
    1.1 and 1.2 read these alike (the plain scalars' types aside, which the word check covers); they
    differ on ``a:b``, ``"a":b``, ``[a: b]``, empty entries, and collections that span lines."""
    plain = r"(?:[^\s,\[\]\{\}:#'\"&*!|>?%@`-]|-(?=[^\s,\[\]\{\}]))[^,\[\]\{\}:#'\"\n]*?"
    scalar = rf"(?:{plain}|'[^'\n]*'|\"[^\"\\\n]*\")"
    level = r"(?!)"
    for _ in range(3):
        value = rf"(?:{scalar}|{level})"
        level = rf"(?:\[ ?{value}(?:, {value})* ?\]|\{{ ?{scalar}: {value}(?:, {scalar}: {value})* ?\}})"
    return re.compile(level + r"(?=[ \t]*\n|[ \t]*$|[ \t]+#)")


_IF_PRESENT = {"\t": r"\n[ ]*\t", "?": r"\n[ \t]*\?(?:[ \t]|\n|$)"}  # a tab in the indentation; a complex key
_BREAKS = r"[\x85\u2028\u2029]"  # line breaks YAML 1.1 knows and 1.2 does not (CR: no fast path at all)
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n"
_PLAIN_END = r"(?=[ \t]*(?:\n|$|[,\]\}]|:[ \t]|:\n|:$|[ \t]#))"
"""What may follow a word for it to be a whole plain scalar (or a key): not a word inside a sentence."""
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
"""Every digit byte as ``0``, every other byte as a space: a run of 19 digits becomes 19 zeros, which
``bytes.__contains__`` finds at memory speed (a regular expression tests each of 30 MB's positions)."""
_NUMBERISH = frozenset("-+._0123456789=~<")
_FLOWING = re.compile(r"[\[\]\{\},]").search  # a word holding flow indicators: its scalars lie between them
_WORDS = frozenset("yes Yes YES no No NO on On ON off Off OFF true True TRUE false False FALSE null Null NULL".split())
"""Plain scalars one of the two parsers might read as something other than text: those starting like a
number (or YAML 1.1's ``=`` value, ``<<`` merge and ``~`` null), and the words of booleans and null.
Every distinct such word of the text is read by both parsers (a superset: a word inside a quoted string
counts too); one that differs sends the documents where it stands as a whole plain scalar to PyYAML."""


def fast_json(text: str) -> Any | None:
    """``text`` parsed by orjson, or None: not installed, small, or an error (json reports it)."""
    if len(text) < FAST_FROM_BYTES:
        return None  # (checked first: a small input does not import orjson)
    orjson = _module("orjson")
    if orjson is None or _has_long_number(text):
        return None  # orjson reads whole numbers beyond 64 bits as floats: json keeps them (and drasat refuses)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # also NaN, numbers beyond 64 bits: json reads or words them
        return None


def _has_long_number(text: str) -> bool:
    """Whether ``text`` has a run of 19 digits, looked at a MiB at a time (overlapping by 18 characters)."""
    step = 1 << 20
    for start in range(0, len(text), step):
        chunk = text[max(0, start - 18) : start + step].encode("utf-8", "surrogatepass")
        if b"0" * 19 in chunk.translate(_DIGITS_AS_ZEROS):
            return True
    return False


@dataclass(frozen=True)
class FastStream:
    """A YAML stream cut into documents, and where in its text the fast parser must not answer."""

    text: str
    pieces: list[Piece]
    unusual: list[int]  # sorted offsets in text
    fits_int64: bool  # every whole number the fast parser reads here fits in int64 (it saw each one's text)

    def value(self, piece: Piece) -> tuple[Any] | None:
        """``(value,)`` of one document read by yaml-rs, or None where PyYAML must read it."""
        if piece.empty:
            return (None,)
        at = bisect_left(self.unusual, piece.start)
        if at < len(self.unusual) and self.unusual[at] < piece.end:
            return None
        return _loads(self.text[piece.start : piece.end])

    def list_value(self, piece: Piece) -> dict[str, Any] | None:
        """A big ``kind: List`` document as its frame with each item still text (:class:`Deferred`), read
        one at a time as the loader builds it: the list is never held whole as parsed values (a 1,000-node
        List's are 600 MB). None where it is not printed as kubectl prints one, or PyYAML must read it."""
        if piece.empty or piece.end - piece.start < FAST_FROM_BYTES:
            return None
        at = bisect_left(self.unusual, piece.start)
        if at < len(self.unusual) and self.unusual[at] < piece.end:
            return None
        from .yaml_split import split_list_items  # with split_stream: only a big input comes this far

        cut = split_list_items(self.text, piece.start, piece.end)
        frame = _loads(cut[0]) if cut is not None else None
        if cut is None or frame is None or not isinstance(frame[0], dict) or frame[0].get("items") != []:
            return None
        frame[0]["items"] = [Deferred(self.text, start, end) for start, end in cut[1]]
        return frame[0]


class ReadAgain(Exception):
    """A deferred item the fast parser cannot read: the document is to be read whole by the reference."""


@dataclass(frozen=True, slots=True)
class Deferred:
    """One item of a List document, still text (YAML: ``- `` and its lines; JSON: the item's value):
    :meth:`value` reads it."""

    text: str
    start: int
    end: int
    json: bool = False

    def value(self) -> Any:
        """The item as the whole document's parse gives it, or :class:`ReadAgain` (a syntax error, a key
        twice, a cut that was wrong: the reference then reads the document and says what is wrong)."""
        if self.json:
            orjson = _module("orjson")
            try:
                return orjson.loads(self.text[self.start : self.end])
            except orjson.JSONDecodeError:  # NaN, a lone surrogate...: json's whole-text reading decides
                raise ReadAgain from None
        read = _loads(self.text[self.start : self.end])
        if read is None or not isinstance(read[0], list) or len(read[0]) != 1:
            raise ReadAgain
        return read[0][0]


def _loads(content: str) -> tuple[Any] | None:
    yaml_rs = _module("yaml_rs")
    try:
        data = yaml_rs.loads(content, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error)
    except (yaml_rs.YAMLDecodeError, ValueError, OverflowError):
        return None
    return (data,)


def fast_stream(text: str, *, at_least: int | None = None) -> FastStream | None:
    """``text`` cut into documents for yaml-rs, or None where PyYAML reads it whole (small, no yaml-rs,
    a stream structure only PyYAML should judge). ``at_least``: the size below which PyYAML reads it anyway
    (default :data:`FAST_FROM_BYTES`)."""
    if len(text) < (FAST_FROM_BYTES if at_least is None else at_least):
        return None  # (checked first: a small input does not import yaml-rs)
    if _module("yaml_rs") is None:
        return None
    from .yaml_split import split_stream  # only a big input is cut into documents: a small one's start skips it

    pieces = split_stream(text)
    if pieces is None:
        return None
    unusual, wide = _census(text)
    return FastStream(text, pieces, sorted(unusual), not wide)


def fast_yaml(text: str, *, at_least: int | None = None) -> tuple[Any] | None:
    """``text``'s one document parsed by yaml-rs, or None where PyYAML must read it (see the module)."""
    stream = fast_stream(text, at_least=at_least)
    if stream is None or len(stream.pieces) != 1:
        return None
    return stream.value(stream.pieces[0])


def _census(text: str) -> tuple[list[int], bool]:
    """Offsets of everything in ``text`` that only PyYAML may read (see the module), and whether a plain
    scalar that both read alike is a whole number beyond int64 (which drasat refuses, naming it).

    Each check looks at one line (and the line break before and after it), so it is made first on each
    stretch's distinct lines (:func:`_samples`: a fleet repeats its lines, a 1,000-node cluster has 20,000
    distinct ones of 1.9 million) and on the whole text only where it found something there, for the
    offsets. A word that reads differently and first appears after the first stretch is searched for in
    the whole text: the stretches before it were not searched for it."""
    checks = _checks(text)
    found_in: set[int] = set()  # the checks that found something in some stretch
    words: set[str] = set()
    candidates: set[str] = set()
    differing: dict[str, bool] = {}  # a word read differently -> whether the whole text is searched for it
    for number, sample in enumerate(_samples(text)):
        found_in.update(i for i, check in enumerate(checks) if i not in found_in and check(sample))
        fresh = set(sample.split()) - words
        words |= fresh
        new = _plain_words(fresh) - candidates
        candidates |= new
        differing.update((token, number > 0) for token in new if not _same_reading(token))
        for token, whole in differing.items():
            if not whole and _plain_scalar(token).search(sample) is not None:
                differing[token] = True
    lines = "\n" + text if found_in or any(differing.values()) else ""  # every line, the first too, after a newline
    found = [at for i in sorted(found_in) for at in checks[i](lines)]
    for token in (token for token, whole in differing.items() if whole):
        found += [m.start() - 1 for m in _plain_scalar(token).finditer(lines)]
    return found, any(_wide_int(token) for token in candidates)


def _checks(text: str) -> list[Callable[[str], list[int]]]:
    """The checks of :func:`_census` for ``text``, each on text with a newline before every line (the first
    too) and giving offsets in ``text``."""
    checks: list[Callable[[str], list[int]]] = [
        partial(_ends, pattern)
        for pattern in (*_UNUSUAL, *(pattern for char, pattern in _IF_PRESENT.items() if char in text))
    ]
    checks += [lambda lines: [at - 1 for at in _properties(lines)], _complex_flows, _non_printable]
    if not text.isascii():
        checks.append(lambda lines: [m.start() - 1 for m in re.finditer(_BREAKS, lines)])
    return checks


def _ends(pattern: str, lines: str) -> list[int]:
    return [m.end() - 2 for m in re.finditer(pattern, lines)]


def _non_printable(lines: str) -> list[int]:
    if lines.isascii() and not lines.encode("ascii").translate(None, _PRINTABLE_ASCII):
        return []
    return [m.start() - 1 for m in yaml.reader.Reader.NON_PRINTABLE.finditer(lines)]


_STRETCH = 1 << 18
"""About how much text :func:`_samples` takes at a time (smaller stretches were slower, larger ones too)."""


def _samples(text: str) -> Iterator[str]:
    """Each stretch of about 256 KiB of ``text`` (whole lines) as its distinct lines, each after a newline
    and the last one before one too. (One stretch at a time: the distinct lines of a text whose lines
    never repeat would be all of it again.)"""
    start = 0
    while start < len(text):
        end = text.find("\n", start + _STRETCH)
        end = len(text) if end < 0 else end
        yield "\n" + "\n".join(set(text[start:end].split("\n"))) + "\n"
        start = end


@lru_cache(maxsize=256)
def _plain_scalar(token: str) -> re.Pattern[str]:
    """Where ``token`` stands as a whole plain scalar (a literal first: the search is quick)."""
    word = re.escape(token)
    return re.compile(rf"{word}(?:(?<=[\s\[\{{,]{word})|(?<=[\"'\]\}}]:{word})){_PLAIN_END}")


def _complex_flows(lines: str) -> list[int]:
    """Offsets (in text) of the flow collections that are not simple (:func:`_simple_flow`); one inside a
    simple one is simple too."""
    found, covered = [], -1
    simple_flow = _simple_flow()  # compiled at the first big input, not at every start (small inputs never)
    for at in sorted(m.start() for pattern in _FLOW_STARTS for m in re.finditer(pattern, lines)):
        if at < covered:
            continue
        simple = simple_flow.match(lines, at)
        if simple is None:
            found.append(at - 1)
        else:
            covered = simple.end()
    return found


def _properties(text: str) -> list[int]:
    """Offsets of what may be an anchor, alias or tag: an ``&``, ``*`` or ``!`` where a node may start, after
    ``: ``, ``- `` or ``? `` or at a line's (or flow entry's) start. Inside a scalar (``a && b``) it is text,
    and the document stays the fast parser's; a quoted string that happens to hold ``: &x`` counts too."""
    found = []
    for match in (m for pattern in _PROPERTIES for m in re.finditer(pattern, text)):
        at = before = match.start()
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        previous = text[before - 1] if before > 0 else "\n"
        if previous in "\n[{," or (previous in ":-?" and before < at):
            found.append(at)
    return found


def _plain_words(words: set[str]) -> set[str]:
    """Those of ``words`` (as ``str.split`` cuts text) that either parser might read as something other than text."""
    candidates = set()
    flow = str.maketrans("[]{},", "     ")
    words = {part for word in words for part in (word.translate(flow).split() if _FLOWING(word) else (word,))}
    for word in words:
        word = word.removesuffix(":")  # a key: its colon is the mapping's
        for token in (word, word.rpartition(":")[2]) if ":" in word else (word,):
            if token and (token[0] in _NUMBERISH or token in _WORDS):
                candidates.add(token)
    return candidates


@cache
def _wide_int(token: str) -> bool:
    from .yaml_io import reference_scalar

    try:
        value = reference_scalar(token)
    except yaml.YAMLError:
        return False
    return type(value) is int and not -(2**63) <= value < 2**63


@lru_cache(maxsize=16384)  # keyed by the input's own scalars: bounded, or a long-lived process grows with them
def _same_reading(token: str) -> bool:
    """Whether PyYAML (as drasat reads: timestamps kept as text) and yaml-rs give the plain scalar one value."""
    from .yaml_io import plain_tag, reference_scalar  # the reference's own resolver and constructor

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
