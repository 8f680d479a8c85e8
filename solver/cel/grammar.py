"""celpy's CEL grammar as a ready LALR parser, shipped with drasat instead of cached in the temp folder.

Building the parser from celpy's grammar takes lark about 150 ms, and every ``drasat`` start needs it.
lark's own cache (``cache=True``) writes ``.lark_cache_*.tmp`` into the temp folder, outside any path the
user gave, so drasat ships the built parser instead (``cel_parser.pickle``, beside this module, from
:meth:`lark.Lark.save`) and loads it when it was built from the same grammar text by the same lark;
otherwise (another celpy or lark than the file was made with) the parser is built in memory, which costs
those 150 ms on each start but writes nothing. ``python -m drasat.solver.cel.grammar`` writes the file
again (``tests/test_cel_grammar.py`` fails while it is out of date).

The lexer callback keeps token positions: celpy's own callback rebuilds ``true``/``false`` tokens without
them, which would lose the offsets analysis and error messages need.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import pickle
import re
from pathlib import Path
from typing import Any

import lark
from lark.exceptions import LarkError

SHIPPED = Path(__file__).with_name("cel_parser.pickle")
OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "start": "expr",
    "g_regex_flags": re.M,
    "propagate_positions": True,
    "maybe_placeholders": False,
    "priority": "invert",
}
"""celpy's own options for its grammar (``lexer_callbacks`` apart, see :func:`bool_literal`)."""


def bool_literal(token: lark.Token) -> lark.Token:
    """``true`` and ``false`` as the grammar's BOOL_LIT, keeping the token's position."""
    if token.value in ("true", "false"):
        return lark.Token.new_borrow_pos("BOOL_LIT", token.value, token)
    return token


def celpy_folder() -> Path:
    """Where celpy's grammar is, found without importing celpy (its evaluator and date libraries are
    a tenth of a second of start-up that only the celpy engine needs)."""
    spec = importlib.util.find_spec("celpy")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("celpy (cel-python), whose CEL grammar drasat parses with, is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def fingerprint(grammar: str) -> str:
    """What the shipped parser must have been built from: the grammar text, lark (whose serialized form
    may change between versions) and the options above. Not Python's version: the file holds plain data
    (lark's tables, the callback by name) in pickle protocol 5, which every supported Python reads."""
    made_of = [grammar, lark.__version__, repr(sorted(OPTIONS.items()))]
    return hashlib.sha256("\0".join(made_of).encode()).hexdigest()


def build(grammar: str) -> lark.Lark:
    """The parser, built from the grammar in memory."""
    return lark.Lark(grammar, lexer_callbacks={"IDENT": bool_literal}, **OPTIONS)


def parser() -> lark.Lark:
    """The shipped parser when it was made from this grammar by this lark, else one built now."""
    grammar = (celpy_folder() / "cel.lark").read_text()
    try:
        with SHIPPED.open("rb") as shipped:
            stamp, data = pickle.load(shipped)
            if stamp == fingerprint(grammar):
                return lark.Lark.load(io.BytesIO(data))
    except (OSError, ImportError, AttributeError, EOFError, TypeError, ValueError, pickle.UnpicklingError, LarkError):
        pass  # missing or unreadable (another lark's classes): built, as below
    return build(grammar)


def write_shipped(path: Path = SHIPPED) -> None:
    """Build the parser from the installed celpy grammar and write it, stamped, to ``path``."""
    grammar = (celpy_folder() / "cel.lark").read_text()
    saved = io.BytesIO()
    build(grammar).save(saved)
    path.write_bytes(pickle.dumps((fingerprint(grammar), saved.getvalue()), protocol=5))


if __name__ == "__main__":  # run as a module, pickle would name the callback __main__.bool_literal
    from drasat.solver.cel import grammar as _installed

    _installed.write_shipped()
    print(f"wrote {_installed.SHIPPED}")
