"""The fast constructor builds exactly what PyYAML's own constructor builds from the same document."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from drasat.models.yaml_construct import FALL_BACK, construct
from drasat.models.yaml_io import _ManifestLoader, parse_documents


def both(text: str) -> tuple[Any, Any]:
    """(fast constructor's value or FALL_BACK, PyYAML's value) for the first document of ``text``;
    an error is compared as its message (a key written twice, as text, is refused by both)."""
    node = yaml.compose(text, Loader=_ManifestLoader)
    try:
        fast, _ = construct(node, _ManifestLoader(""))
    except yaml.YAMLError as exc:
        fast = f"error: {exc}"
    try:
        reference = _ManifestLoader("").construct_document(yaml.compose(text, Loader=_ManifestLoader))
    except yaml.YAMLError as exc:
        reference = f"error: {exc}"
    return fast, reference


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            "yes",
            "No",
            "on",
            "OFF",
            "0o17",
            "017",
            "0x1F",
            "1_000",
            "12:30",
            "1e3",
            "1.0e3",
            ".inf",
            "-.Inf",
            "~",
            "null",
            "2024-01-01",
            "'quoted'",
            "a: b",
            "- x",
            "#",
            "&anchor",
            "*alias",
            "!!str",
            "",
            " ",
            "\t",
            "é",
            "\u2028",
        ]
    ),
)
keys = st.one_of(st.text(max_size=8), st.integers(), st.booleans())
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=20,
)


def test_a_key_written_twice_as_text_is_refused_whatever_its_type() -> None:
    """'false' and false are one key once Kubernetes reads the manifest as JSON: both constructors refuse."""
    fast, reference = both("'false': 1\nfalse: 2\n")
    assert fast == reference and "appears twice" in str(fast)


@settings(max_examples=300, deadline=None)
@given(documents, st.booleans())
def test_random_documents_construct_as_pyyaml_does(data: Any, flow: bool) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    fast, reference = both(text)
    assert fast is not FALL_BACK
    assert fast == reference and repr(fast) == repr(reference)  # 1 and True, 1.0 and 1 told apart


@pytest.mark.parametrize(
    "text",
    [
        "a: yes\nb: on\nc: 017\nd: 12:30\ne: 1e3\nf: 1.5e3\ng: ~\nh: 0x1f\ni: 2024-01-01\nj: .nan\n",
        "a: &x {k: [1, 2]}\nb: *x\nc: *x\n",
        "- &s text\n- *s\n",
        "a: !!null ''\n",
        "base: &b {x: 1}\nderived: {<<: *b, y: 2}\n",
        "a: !!binary aGVsbG8=\n",
        "a: !!set {x, y}\n",
        "1: int key\n1.0: float key\n",
        "a: !!timestamp 2024-01-01\n",
        "a: !!str 5\nb: !!int '7'\n",
    ],
)
def test_unusual_documents_match_pyyaml_or_fall_back(text: str) -> None:
    fast, reference = both(text)
    if fast is not FALL_BACK:
        assert repr(fast) == repr(reference)
    loaded = [d.data for d in parse_documents(text, "t.yaml")]
    assert repr(loaded[0]) == repr(reference)  # whatever path is taken, the reader gives PyYAML's value


def test_a_sequence_as_key_is_still_pyyamls_error() -> None:
    (document,) = parse_documents("? [1, 2]\n: complex key\n", "k.yaml")
    assert document.problem is not None and "found unhashable key" in document.problem.message


def test_aliases_share_one_value_and_are_reported() -> None:
    node = yaml.compose("a: &x {k: v}\nb: *x\n", Loader=_ManifestLoader)
    value, used_alias = construct(node, _ManifestLoader(""))
    assert used_alias and value["a"] is value["b"]
    _, plain = construct(yaml.compose("a: {k: v}\n", Loader=_ManifestLoader), _ManifestLoader(""))
    assert plain is False


def test_a_key_given_twice_is_the_same_error_as_before() -> None:
    (document,) = parse_documents("a: 1\nb: 2\na: 3\n", "d.yaml")
    assert document.problem is not None
    assert document.problem.message == (
        "YAML error at line 3, column 1: the key 'a' appears twice (while reading a mapping)"
    )


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(max_size=10),
        st.sampled_from(
            [
                "",
                "~",
                "null",
                "Null",
                "NULL",
                "yes",
                "No",
                "on",
                "OFF",
                "y",
                "n",
                "true",
                "False",
                "0",
                "-0",
                "+1",
                "017",
                "0o17",
                "0x1F",
                "0b101",
                "1_000",
                "12:30",
                "190:20:30",
                "1e3",
                "1.0e+3",
                "-1.5",
                ".5",
                ".inf",
                "-.Inf",
                ".NaN",
                "<<",
                "=",
                "2024-01-01",
                "2024-01-01T10:00:00Z",
                "!x",
                "&a",
                "*b",
            ]
        ),
    )
)
def test_the_quick_resolver_tags_every_scalar_as_pyyaml_does(value: str) -> None:
    """The loader's resolve() is PyYAML's with timestamps left as text: compare it with PyYAML's own."""
    stock = yaml.SafeLoader("")
    for implicit in ((True, False), (False, True), (False, False)):
        expected = stock.resolve(yaml.ScalarNode, value, implicit)
        if expected == "tag:yaml.org,2002:timestamp":
            expected = stock.resolve(yaml.ScalarNode, "x", implicit)  # timestamps stay strings
        assert _ManifestLoader("").resolve(yaml.ScalarNode, value, implicit) == expected
