"""The fast parsers (models.fast_parse) answer only where their answer is the reference parsers'.

Differential: random manifest-shaped YAML, with plain scalars that YAML 1.1 and 1.2 read
differently written unquoted; wherever yaml-rs's answer is taken, it must equal what
PyYAML (drasat's reference loader) reads, and every input the reference refuses must be
left to it (same messages and line numbers).
"""

from __future__ import annotations

import json
import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from drasat.models import fast_parse
from drasat.models.fast_parse import fast_json, fast_yaml
from drasat.models.yaml_io import parse_documents

pytest.importorskip("yaml_rs", reason="the fast extra (yaml-rs, orjson) is not installed")

TRICKY = [
    "yes",
    "No",
    "ON",
    "off",
    "012",
    "0o17",
    "0x1F",
    "0b101",
    "1e3",
    "1.5e3",
    "1.5e+3",
    "1:20",
    "1_000",
    "-.5",
    ".5",
    "1.",
    ".inf",
    "-.INF",
    ".nan",
    "~",
    "null",
    "true",
    "False",
    "=",
    "2026-01-01",
    "2026-11-01T10:00:00Z",
    "10.0.0.1",
    "1.2.3",
    "80Gi",
    "1.5",
    "-3",
    "+4",
    "0",
    "00",
    "007",
    "y",
    "n",
]
TOKENS = st.one_of(st.sampled_from(TRICKY), st.from_regex(r"[0-9.eE+\-_:xob]{1,6}", fullmatch=True))


def reference(text: str) -> list:
    documents = list(parse_documents(text.replace("\n", "\n", 1), "t"))  # small: always PyYAML's path
    return [("problem", str(d.problem)) if d.problem else d.data for d in documents]


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(type(k) is type(j) for k, j in zip(a, b)) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def check(text: str) -> None:
    fast = fast_yaml(text, at_least=0)
    if fast is None:
        return
    want = reference(text)
    assert len(want) == 1 and not (isinstance(want[0], tuple) and want[0][:1] == ("problem",)), (text, want)
    assert same(fast[0], want[0]), (text, fast[0], want[0])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(TOKENS, TOKENS), min_size=1, max_size=4), st.integers(0, 4))
def test_plain_scalars_read_as_the_reference_reads_them(pairs, shape):
    lines = []
    for i, (a, b) in enumerate(pairs):
        lines.append(
            [f"k{i}: {a}", f"- {a}\n- {b}", f"k{i}: [{a}, {b}]", f'{{"k{i}":{a}, {b}: x}}', f"{a}: {b}"][shape]
        )
    check("\n".join(lines if shape != 1 else lines[:1]) + "\n")


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-(2**70), 2**70),
            st.text(max_size=8),
            st.floats(allow_nan=False),
            TOKENS,
        ),
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
        max_leaves=20,
    ),
    st.booleans(),
)
def test_dumped_documents_read_as_the_reference_reads_them(data, flow):
    check(yaml.safe_dump({"spec": data}, default_flow_style=flow, allow_unicode=True))


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # a key twice: PyYAML's message
        "spec: '\x85  '\n",  # NEL: a line break in YAML 1.1 (PyYAML reads ' '), text in 1.2 (found by hypothesis)
        "a: &x [1]\nb: *x\n",  # aliases: PyYAML's expansion limits
        "a: !!str 1\n",  # tags
        "%YAML 1.1\n---\na: 1\n",  # directives
        "a: 1\n---\nb: 2\n",  # several documents
        "a:\n\t- 1\n",  # a tab in the indentation
        "a: \x07\n",  # a character PyYAML refuses
        "<<: {a: 1}\n",  # a merge key
        "a: [1, 2\n",  # a syntax error: PyYAML's line and column
        "# only a comment\n",  # no document at all
    ],
)
def test_left_to_the_reference(text):
    assert fast_yaml(text, at_least=0) is None


def test_kubectl_shaped_text_is_taken():
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "node-0001", "labels": {"zone": "a"}, "creationTimestamp": "2026-11-01T10:00:00Z"},
                "status": {
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                    "capacity": {"cpu": "96", "memory": "1024Gi"},
                    "conditions": [{"type": "Ready", "message": "kubelet has no pressure"}],
                },
            }
        ],
    }
    text = yaml.safe_dump(listing, sort_keys=False)
    assert fast_yaml(text, at_least=0) == (listing,)
    assert fast_yaml(text) is None  # small: the reference's path


def test_big_inputs_take_the_fast_path_through_the_loader(monkeypatch):
    monkeypatch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
    text = "items:\n" + "".join(f"- name: n{i}\n  count: {i}\n" for i in range(50))
    assert fast_yaml(text) is not None
    assert [d.data for d in parse_documents(text, "t")] == [yaml.safe_load(text)]
    listing = {"items": [{"n": i, "f": 0.5} for i in range(50)]}
    assert fast_json(json.dumps(listing)) == listing
    assert fast_json('{"a": NaN}') is None and fast_json('{"a": 1') is None
    assert fast_json(json.dumps({"a": 2**70})) is None  # beyond orjson: json reads it
    assert fast_json(json.dumps({"a": 2**63})) is None


# --- several documents: cut at their markers, each read by yaml-rs or, where it must, by PyYAML -----------


def documents(text: str) -> list:
    return [(d.index, ("problem", str(d.problem)) if d.problem else d.data) for d in parse_documents(text, "s.yaml")]


def check_stream(text: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
        fast = documents(text)
    want = documents(text)  # small: PyYAML's (or json's) path alone
    assert len(fast) == len(want) and all(a[0] == b[0] and same(a[1], b[1]) for a, b in zip(fast, want)), (
        text,
        fast,
        want,
    )


SEPARATORS = ["---\n", "--- # next\n", "...\n---\n", "---\t\n", "---  \n# a comment\n", "---\n\n"]
ODD_DOCUMENTS = [
    "",  # empty: null
    "# only a comment\n",
    "text: |\n  ---\n  indented, so not a marker\n",
    "text: |\n  a block scalar\n",  # the next marker ends it
    "text: |+\n  kept\n\n",
    "text: >-\n  folded\n  lines\n",
    "text: 'quoted, with --- inside'\n",
    "plain: words\n  that continue\n",
    "a: &x [1]\nb: *x\n",  # an alias: PyYAML's
    "a: !!str 1\n",  # a tag: PyYAML's
    "flow: {a: 1, b: [x, y]}\n",
    "counters: {s0: {value: '1'}, s1: {value: \"2\"}}\nitems: [gpu, nic, 3, yes, 012, 1e3]\n",
    "flow: {a:b, 'c':d}\n",  # read differently by YAML 1.1 and 1.2
    "flow: [a: b, {c}, [x, , y]]\n",
    "flow: {a: [1,\n  2]}\n",  # a flow collection over two lines
    "- {name: whole, deviceClassName: mig-7g} # a comment\n- [] \n- {}\n",
    "a: yes\nb: 012\nc: 1e3\n",  # read differently by YAML 1.1 and 1.2: PyYAML's
    "message: kubelet has no pressure\n",
    "a: 1\na: 2\n",  # a key twice: PyYAML's message and line
    "a: [1, 2\n",  # an unclosed flow sequence: the error names this document and its line
    "a: 'unclosed\n",
    "a:\n  b: 1\n c: 2\n",  # bad indentation
    "a:\n\t- 1\n",  # a tab
    "- 1\n- 2\n",
    "just text\n",
    "null\n",
    "big: 99999999999999999999\n",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(ODD_DOCUMENTS),
            st.builds(
                lambda data, flow: yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True),
                st.dictionaries(st.sampled_from(["a", "b", "name", "yes"]), st.one_of(TOKENS, st.text(max_size=6))),
                st.booleans(),
            ),
        ),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.sampled_from(SEPARATORS), min_size=6, max_size=6),
    st.sampled_from(["", "---\n", "# header\n---\n", "%YAML 1.1\n---\n"]),
    st.sampled_from(["", "---\n", "...\n", "# trailer\n"]),
)
def test_streams_read_as_the_reference_reads_them(docs, separators, head, tail):
    text = head + "".join(d + (separators[i] if i + 1 < len(docs) else "") for i, d in enumerate(docs)) + tail
    check_stream(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n---\nb: 2\n",
        "---\na: 1\n---\n",
        "a: 1\n...\n---\nb: 2\n...\n",
        "a: 1\n...\n...\n# done\n",
        "...\na: 1\n",  # '...' before any document: PyYAML's error
        "a: 1\n...\nb: 2\n",  # content after '...' without '---': PyYAML's error
        "a: 1\n--- |\n  a block scalar on the marker's line\n",
        'a: 1\n---\nb: "x\n---\ny"\n',  # a marker inside a quoted string: PyYAML's error, on line 4
        "a: 1\n---\nb: [1,\n---\n]\n",  # a marker inside a flow sequence
        "a: 1\r\n---\r\nb: 2\r\n",  # CR: PyYAML reads the stream whole
        "%YAML 1.1\n---\na: 1\n---\nb: 2\n",
        "a: 1\n---\n%YAML 1.1\n---\nb: 2\n",
        "# c\n---\n---\na: 1\n",
        "a: 1\n---\nb: 2\nb: 3\n---\nc: 4\n",  # the duplicate key names document 1, line 4; c is never read
        '{"a": 1} x\n---\nb: 2\n',  # text after the flow collection that is the document: PyYAML's error
        "a: 1\n---\n{b: 2} x\n---\nc: 3\n",
        "a: 1\n---\n[1,\n  2] x\n",
        '{"a": 1}\n---\n{"b": [1, 2]}\n',  # JSON documents between markers: a YAML stream
        '{\n  "a": 1\n}\n---\n{\n  "b": 2\n}\n',
        '{\n  "a": 1\n} x\n',  # pretty-printed JSON and more on its last line: YAML's error, not JSON lines'
    ],
)
def test_stream_structures_read_as_the_reference_reads_them(text):
    check_stream(text)


def test_an_error_names_its_document_and_the_streams_line(monkeypatch):
    monkeypatch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
    text = (
        "".join(f"---\nname: n{i}\ncount: {i}\n" for i in range(5)) + "---\nname: bad\nlist: [1, 2\n---\nname: after\n"
    )
    *read, last = list(parse_documents(text, "s.yaml"))
    assert [d.data["name"] for d in read] == [f"n{i}" for i in range(5)]
    assert str(last.problem).startswith("s.yaml[5]: YAML error at line 19, column 1:")


def test_plain_documents_are_read_by_the_fast_parser(monkeypatch):
    text = "".join(f"---\nname: n{i}\nitems:\n- a: 1\n  b: '2'\n" for i in range(20)) + "---\nanchor: &a x\n"
    stream = fast_parse.fast_stream(text, at_least=0)
    values = [stream.value(piece) for piece in stream.pieces]
    assert [v is not None for v in values] == [True] * 20 + [False]  # only the anchor's document is PyYAML's
    assert values[3] == ({"name": "n3", "items": [{"a": 1, "b": "2"}]},)
    assert stream.fits_int64
    assert not fast_parse.fast_stream(text + "---\nbig: 9223372036854775808\n", at_least=0).fits_int64


def test_a_word_in_a_sentence_is_no_plain_scalar(monkeypatch):
    text = "---\nmessage: kubelet has no pressure\n---\nswitch: on\n"
    stream = fast_parse.fast_stream(text, at_least=0)
    assert [stream.value(piece) is not None for piece in stream.pieces] == [True, False]


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        ('expression: device.driver == "a" && device.attributes["a"].x != 1 * 2\n', True),
        ("a: &x 1\n", False),
        ("a:\n  &x 1\n", False),
        ("- *x\n", False),
        ("- ? !!str a\n  : b\n", False),
        ("a: 'text: &x'\n", False),  # a quoted string that looks like an anchor: PyYAML's (a superset)
    ],
)
def test_node_properties_are_told_from_text(text, fast):
    stream = fast_parse.fast_stream(text, at_least=0)
    assert (stream.value(stream.pieces[0]) is not None) is fast


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        ("a: {value: '1'}\nb: [gpu, nic]\nc: {s0: {value: '1'}, s1: [x, y]}\n", True),
        ("a: {name: whole, deviceClassName: mig-7g}  # comment\n", True),
        ("a: [yes, no]\n", False),  # YAML 1.1 booleans inside a flow sequence
        ("a: {b: 012}\n", False),
        ("a: {b:c}\n", False),
        ("a: {'b':c}\n", False),
        ("a: [b: c]\n", False),
        ("a: [b, , c]\n", False),
        ("a: [b,\n  c]\n", False),
        ("a: [b], c\n", False),
    ],
)
def test_simple_flow_collections_are_the_fast_parsers(text, fast):
    stream = fast_parse.fast_stream(text, at_least=0)
    assert (stream.value(stream.pieces[0]) is not None) is fast
    check_stream(text)
