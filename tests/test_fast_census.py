"""The fast parser's census (what only PyYAML may read) made on each stretch's distinct lines finds what a
scan of the whole text finds, at the same offsets, however the text is cut into stretches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drasat.models import fast_parse

from .test_fast_parse import TRICKY

pytest.importorskip("yaml_rs", reason="the fast extra (yaml-rs, orjson) is not installed")

LINES = [
    "kind: ResourceSlice",
    "- name: gpu-0",
    "-",
    "- -",
    "  key: value",
    "a: &x 1",
    "b: *x",
    "c: !!str d",
    "<<: *x",
    "[a, b]: c",
    "{a: b}: c",
    "? complex",
    "\tindented: by a tab",
    "  : empty key",
    "x: {value: '1'}",
    "x: [a,\n  b]",
    "x: {a: {b: {c: {d: e}}}}",
    "expr: a && b",
    "nel: a\x85b",
    "bell: \x07",
    "deep: " + "- " * 140,
    "big: 9223372036854775808",
    "key: 'quoted: &x'",
    '"a":yes',
    "x: 1::",
    "1:",
    "",
    "# a comment",
]
PLAIN = [f"v: {token}" for token in TRICKY] + [f"- {token}" for token in TRICKY] + [f"[{token}]" for token in TRICKY]


def whole_text(text: str) -> tuple[list[int], bool]:
    """The census as one scan of the whole text (what the fast parser did before it looked at stretches)."""
    lines = "\n" + text
    found = [at for check in fast_parse._checks(text) for at in check(lines)]
    candidates = fast_parse._plain_words(set(text.split()))
    for token in (token for token in candidates if not fast_parse._same_reading(token)):
        found += [m.start() - 1 for m in fast_parse._plain_scalar(token).finditer(lines)]
    return sorted(found), any(fast_parse._wide_int(token) for token in candidates)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(LINES + PLAIN), min_size=1, max_size=60),
    st.sampled_from([1, 7, 40, 1 << 18]),
    st.booleans(),
)
def test_stretches_find_what_the_whole_text_scan_finds(chosen, stretch, final_newline):
    text = "\n".join(chosen) + ("\n" if final_newline else "")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_parse, "_STRETCH", stretch)
        found, wide = fast_parse._census(text)
    assert (sorted(found), wide) == whole_text(text)


def test_a_word_first_seen_late_is_searched_for_everywhere(monkeypatch):
    """``1:`` reads differently (a mapping for one parser's check, not the text itself) and stands as a plain
    scalar on the first stretch's line ``1:``, where the words give only ``1``; it is first a word in the
    second stretch (``[1::]``, where it is no plain scalar): the first stretch must be searched for it all the same."""
    monkeypatch.setattr(fast_parse, "_STRETCH", 8)
    text = "1:\n  a: b\nz: [1::]\n"
    assert not fast_parse._same_reading("1:")
    found, _ = fast_parse._census(text)
    assert sorted(found) == whole_text(text)[0]
    assert 0 in found  # the first line's
