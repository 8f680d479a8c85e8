"""The shipped CEL parser (``solver/cel/grammar.py``): up to date, the same trees as one built from the
grammar, and nothing written to the temp folder (lark's own cache did, at every first start)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import lark
import pytest

from drasat.solver.cel import grammar

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")
TEXTS = [
    'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"',
    "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0 || false",
    "[1, 2, 3].all(x, x > 0) ? {'a': b'x'}['a'] != b'' : -1.5e3 < 2u",
    'has(device.attributes.x) && "s" in ["s"] && r"\\d" == R"""\\d""" && !true',
    "a.b(c)[d].e % 2 == 0 // comment\n && null == null",
]


def _shape(tree: Any) -> Any:
    """A tree as nested tuples, with every token's type, text and position."""
    if isinstance(tree, lark.Token):
        return (tree.type, str(tree), tree.start_pos, tree.end_pos, tree.line, tree.column)
    return (tree.data, tuple(_shape(child) for child in tree.children))


def _grammar_text() -> str:
    return (grammar.celpy_folder() / "cel.lark").read_text()


def test_the_shipped_parser_was_built_from_the_installed_grammar_and_lark() -> None:
    stamp, _ = pickle.loads(grammar.SHIPPED.read_bytes())
    assert stamp == grammar.fingerprint(_grammar_text()), (
        "solver/cel/cel_parser.pickle is out of date: run python -m drasat.solver.cel.grammar"
    )


def test_the_shipped_parser_gives_the_trees_a_built_one_gives() -> None:
    shipped, built = grammar.parser(), grammar.build(_grammar_text())
    assert shipped is not built and shipped.source_path == "<deserialized>"  # loaded, not built again
    for text in TEXTS:
        assert _shape(shipped.parse(text)) == _shape(built.parse(text))


def test_a_stale_or_missing_parser_is_built_in_memory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stale = tmp_path / "stale.pickle"
    stale.write_bytes(pickle.dumps(("another grammar", b"")))
    for path in (stale, tmp_path / "missing.pickle"):
        monkeypatch.setattr(grammar, "SHIPPED", path)
        made = grammar.parser()
        assert made.source_path != "<deserialized>"
        assert _shape(made.parse(TEXTS[0])) == _shape(grammar.build(_grammar_text()).parse(TEXTS[0]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stale.pickle"]  # nothing written beside it


def test_parsing_writes_nothing_to_the_temp_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(grammar, "SHIPPED", tmp_path / "missing.pickle")  # the build path too
    grammar.parser().parse(TEXTS[1])
    assert list(tmp_path.iterdir()) == []


def test_a_solve_leaves_the_temp_folder_as_it_was(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    entry = "import sys; from drasat.cli.main import main; sys.argv[0] = 'drasat'; main()"
    done = subprocess.run(
        [sys.executable, "-c", entry, "solve", "--node", "gpu-node-1", "-o", "name", EXAMPLES],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert list(tmp_path.iterdir()) == []
