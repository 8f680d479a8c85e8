"""A big ``kind: List`` document read item by item (the fast path's items left as text until each is built):
the same objects, problems, notices and line numbers as the reference reading the document whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from drasat.models import fast_parse
from drasat.models.fast_parse import Deferred, ReadAgain
from drasat.models.loader import load_paths
from drasat.models.yaml_io import parse_documents

from .test_fast_parse import TOKENS, same

NODE = "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-{i}\n    labels: {{zone: z{i}}}\n"
CLASS = (
    "- apiVersion: resource.k8s.io/v1\n  kind: DeviceClass\n  metadata:\n    name: gpu-{i}\n  spec:\n"
    '    selectors:\n    - cel:\n        expression: device.driver == "gpu.example.com"\n'
)


def listing(items: str, head: str = "apiVersion: v1\n", tail: str = "kind: List\nmetadata:\n  resourceVersion: ''\n"):
    return f"{head}items:\n{items}{tail}"


def fleet(count: int = 4) -> str:
    return "".join((NODE if i % 2 else CLASS).format(i=i) for i in range(count))


def read(path: Path, fast: bool) -> tuple[list, list, list]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "FAST_FROM_BYTES", 0 if fast else 1 << 40)
        bundle = load_paths([str(path)])
    objects = [(str(loaded.location), repr(loaded.obj.model_dump())) for loaded in bundle.objects]
    return objects, [str(p) for p in bundle.problems], bundle.notices


def check(tmp_path: Path, text: str) -> tuple[list, list, list]:
    path = tmp_path / "list.yaml"
    path.write_text(text)
    want = read(path, fast=False)
    assert read(path, fast=True) == want, text
    return want


def test_a_list_is_read_item_by_item() -> None:
    text = listing(fleet(6))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
        (document,) = parse_documents(text, "l.yaml", deferring=True)
        assert [type(item) for item in document.data["items"]] == [Deferred] * 6  # none parsed yet
        assert document.data["items"][1].value() == {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "node-1", "labels": {"zone": "z1"}},
        }
        (plain,) = parse_documents(text, "l.yaml")  # only the loader asks for items as text
        assert isinstance(plain.data["items"][0], dict)


BAD_INDENT = "  spec:\n    podCIDR: a\n   providerID: b\n"
AFTER = "apiVersion: v1\nkind: Node\nmetadata:\n  name: after\n"


@pytest.mark.parametrize(
    "text",
    [
        listing(fleet()),
        listing(fleet(), head="apiVersion: v1\n# a comment\n", tail="# between\nkind: List\n"),
        listing(fleet() + "# a comment in the first column\n\n" + fleet(2)),
        listing("- 1\n- [a, b]\n" + fleet(2)),  # items that are no objects
        listing("- apiVersion: v1\n  kind: List\n  items: []\n"),  # a list inside a list
        listing(NODE.format(i=1) + "  spec:\n    podCIDR: a\n    podCIDR: b\n" + fleet(2)),  # a key twice
        listing(fleet(3) + NODE.format(i=1) + BAD_INDENT + fleet(2)),  # an item yaml-rs cannot read
        listing(NODE.format(i=1) + "  spec: {podCIDR: [10.0.0.0/24\n" + NODE.format(i=2)),  # a flow left open
        listing(NODE.format(i=1) + NODE.format(i=1)),  # a duplicate object
        listing(fleet(2), tail="kind: List\nitems: []\n"),  # items twice: the reference's error
        # the cut is wrong: 'items:' inside a quoted string (kubectl never prints one over lines so)
        'apiVersion: v1\nkind: List\nnote: "x\nitems:\n' + NODE.format(i=1) + 'y"\n',
        listing(NODE.format(i=1) + "  note: 'open\n" + NODE.format(i=2) + "'\n"),
        listing(NODE.format(i=1) + "  note: 'open\n" + NODE.format(i=2) + "  kind: Node'\n"),
        listing(fleet(2)) + "---\n" + listing(fleet(2)),  # two Lists in a stream
        listing(NODE.format(i=1) + BAD_INDENT) + "---\n" + AFTER,  # the error ends the stream
        listing(NODE.format(i=1)) + "---\n" + AFTER + "---\n" + listing(fleet(2) + BAD_INDENT),
        listing("- apiVersion: resource.k8s.io/v1beta1\n  kind: DeviceClass\n  metadata: {name: old}\n"),
    ],
)
def test_read_as_the_reference_reads_the_document_whole(tmp_path: Path, text: str) -> None:
    check(tmp_path, text)


def test_an_items_error_names_the_document_and_the_line(tmp_path: Path) -> None:
    text = listing(fleet(3) + NODE.format(i=9) + BAD_INDENT + fleet(2))
    objects, problems, _ = check(tmp_path, text)
    line = text.splitlines().index("   providerID: b") + 1
    assert objects == [] and len(problems) == 1 and f"list.yaml[0]: YAML error at line {line}," in problems[0]


OPEN = "  spec:\n    config:\n    - opaque:\n        driver: d\n        parameters: 'open\n"
"""A quoted string left open over the next item (PyYAML reads on, yaml-rs does not)."""


def test_converted_objects_are_counted_once_when_read_again(tmp_path: Path) -> None:
    """An item cut open (a quoted string over lines) sends the List to PyYAML after one object was built."""
    old = "- apiVersion: resource.k8s.io/v1beta1\n  kind: DeviceClass\n  metadata: {{name: old-{i}}}\n"
    objects, _, notices = check(tmp_path, listing(old.format(i=0) + old.format(i=1) + OPEN + "- closed: here'\n"))
    assert len(objects) == 2
    assert notices == [
        f"{tmp_path / 'list.yaml'}: converted 2 objects from resource.k8s.io/v1beta1 to "
        "resource.k8s.io/v1; messages name the fields as v1 spells them"
    ]


def _resolved(text: str) -> list:
    """The documents as the loader sees them: deferred items read one by one, or the whole read again."""
    out = []
    for document in parse_documents(text, "l.yaml", deferring=True):
        if document.again is not None:
            try:
                document.data["items"] = [item.value() for item in document.data["items"]]
            except ReadAgain:
                document = document.again()
                if document is None:
                    continue
        out.append(("problem", str(document.problem)) if document.problem else document.data)
    return out


ODD_LINES = ["# a comment\n", "\n", "  'quoted\n", '  "open\n', "'\n", "  note: |\n    text\n", "-\n", "- x: 'y\n"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.builds(
                lambda data: yaml.safe_dump([data], allow_unicode=True),
                st.dictionaries(st.sampled_from(["a", "kind", "items"]), st.one_of(TOKENS, st.text(max_size=6))),
            ),
            st.sampled_from(ODD_LINES),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_lists_read_as_the_reference_reads_them(parts: list[str]) -> None:
    text = listing("".join(parts))
    want = [("problem", str(d.problem)) if d.problem else d.data for d in parse_documents(text, "l.yaml")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
        got = _resolved(text)
    assert len(got) == len(want) and all(same(a, b) for a, b in zip(got, want)), (text, got, want)


# --- the same for a JSON List (kubectl get -o json): its items cut where the next opens as kubectl prints it
# (else found by json's scanner), each read by orjson --


def json_listing(items: list, indent: int | None = None, **extra: object) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items, **extra}, indent=indent)


NESTED = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
"""An object that opens as kubectl opens an item, nested in one (ownerReferences can)."""


def json_fleet(count: int = 4) -> list:
    return [yaml.safe_load(item)[0] for item in (fleet(count).replace("\n- ", "\n\0- ").split("\0"))]


def test_a_json_list_is_read_item_by_item() -> None:
    text = json_listing(json_fleet(6), indent=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
        (document,) = parse_documents(text, "l.json", deferring=True)
    items = document.data["items"]
    assert [type(item) for item in items] == [Deferred] * 6 and items[1].value() == json_fleet(6)[1]
    assert document.data["kind"] == "List" and document.fits_int64


def test_json_items_are_cut_where_kubectl_opens_the_next() -> None:
    first, *others = json_fleet(4)
    text = json_listing([{**first, "owners": [{}, NESTED]}, *others], indent=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
        (document,) = parse_documents(text, "l.json", deferring=True)
        assert len(document.data["items"]) == 5  # the first item cut in two where the nested object opens,
        assert _resolved(text) == [json.loads(text)]  # so it cannot be read alone: the document is read whole
    kubectl = json_listing(json_fleet(4), indent=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
        (document,) = parse_documents(kubectl, "l.json", deferring=True)
    assert [json.loads(kubectl[item.start : item.end]) for item in document.data["items"]] == json_fleet(4)


@pytest.mark.parametrize(
    "text",
    [
        json_listing(json_fleet()),
        json_listing(json_fleet(), indent=4, metadata={"resourceVersion": ""}),
        json_listing([1, [], {"apiVersion": "v1", "kind": "List", "items": []}, *json_fleet(2)]),
        json_listing(json_fleet(2)).replace('"name": "node-1"', '"name": NaN', 1),  # orjson refuses NaN: json's
        json_listing(json_fleet(2)).replace('"name": "node-1"', '"name": "\\ud800"', 1),  # a lone surrogate
        json_listing(json_fleet(2)).replace('"name": "node-1"', '"name": "node-1", "name": "x"', 1),  # a key twice
        json_listing(json_fleet(2)).replace('"name": "node-1"', '"name": [', 1),  # a syntax error
        json_listing(json_fleet(2)).replace('"name": "node-1"', f'"name": {2**64}', 1),  # beyond 64 bits
        json_listing(json_fleet(2)).replace('"name": "node-1"', f'"name": {"[" * 3000}{"]" * 3000}', 1),
        json_listing(json_fleet(2))[:-1] + ', "items": []}',  # items twice: json keeps the last
        json_listing(json_fleet(2)) + "\n" + json_listing(json_fleet(2)),  # one object a line
        json_listing(json_fleet(2)) + "\n" + json_listing(json_fleet(3)),  # cut past the first: both read
        json_listing(json_fleet(2)) + "\n---\n" + json_listing(json_fleet(3)),  # the same between markers
        json_listing(json_fleet(2), indent=4) + "\n" + json_listing(json_fleet(3), indent=4),  # YAML's error
        json_listing([{**json_fleet(1)[0], "spec": "@"}, *json_fleet(3)]).replace('"@"', "@").replace("List", "Lizt"),
        json_listing([{**json_fleet(1)[0], "spec": "@"}, *json_fleet(3)]).replace('"@"', "@").replace('"v1"', "1", 1),
        json_listing([]),
        '{"apiVersion": "v1", "kind": "List", "items": {}}',
        json_listing(json_fleet(1) * 2),  # a duplicate object
        json_listing([{**item, "owners": [{"a": 1}, NESTED]} for item in json_fleet(3)]),  # a cut inside an item
        json_listing([{**item, "owners": [{}, NESTED, {}]} for item in json_fleet(3)], indent=4),  # two
        json_listing([json_fleet(1)[0], {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"}}, NESTED]),
        json_listing(json_fleet(2), metadata={"x": [{}, NESTED]}),  # kubectl's opening after the items too
        json_listing(json_fleet(2)).replace("}, {", "}, \n{", 1).replace("}, {", "}\t,{", 1),  # other spaces
    ],
)
def test_json_read_as_the_reference_reads_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "list.json"
    path.write_text(text)
    assert read(path, fast=True) == read(path, fast=False), text


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=8,
)


KUBECTL_SHAPED = st.recursive(
    JSON_VALUES,
    lambda inner: st.builds(
        lambda name, rest: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "rest": rest},
        st.text(max_size=3),
        st.lists(inner, max_size=3),
    ),
    max_leaves=6,
)
"""Items that open as kubectl prints them, with such objects nested in them: where to cut is only a guess."""


@settings(max_examples=300, deadline=None)
@given(st.lists(KUBECTL_SHAPED, min_size=1, max_size=5), st.sampled_from([None, 2]), st.sampled_from(["", " ", "\n"]))
def test_json_lists_read_as_the_reference_reads_them(items: list, indent: int | None, after: str) -> None:
    text = json_listing(items, indent=indent) + after
    want = [("problem", str(d.problem)) if d.problem else d.data for d in parse_documents(text, "l.json")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
        got = _resolved(text)
    assert len(got) == len(want) and all(same(a, b) for a, b in zip(got, want)), (text, got, want)
