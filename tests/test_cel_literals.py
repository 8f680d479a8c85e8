"""String literals without escapes are read without celpy's decoder: the same values as with it."""

from __future__ import annotations

import lark
from celpy.evaluation import celstr
from hypothesis import given
from hypothesis import strategies as st

from drasat.solver.cel.syntax import decode_string, parse

BODY = st.text(st.characters(blacklist_characters="\\\"'\r", blacklist_categories=("Cs",)), max_size=12)


def by_celpy(text: str) -> str:
    """What the decoder gave before (celpy's celstr; triple-quoted strings line by line)."""
    if text[:3] in ('"""', "'''"):
        return "\n".join(str(celstr(lark.Token("STRING_LIT", '"' + part + '"'))) for part in text[3:-3].split("\n"))
    return str(celstr(lark.Token("STRING_LIT", text)))


@given(BODY, st.sampled_from(['"', "'", '"""', "'''"]), st.sampled_from(["", "r", "R"]))
def test_plain_literals_as_celpy_reads_them(body, quote, prefix):
    if len(quote) == 1:
        body = body.replace("\n", "")
    text = f"{prefix}{quote}{body}{quote}"
    assert decode_string(lark.Token("STRING_LIT", text)) == by_celpy(text)


def test_escapes_still_decoded():
    assert parse(r'device.driver == "a\x41\u00e9\n"').root.args[1].value == "aAé\n"
    assert parse(r'device.driver == r"a\n"').root.args[1].value == "a\\n"
