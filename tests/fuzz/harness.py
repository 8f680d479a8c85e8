"""One fuzz input through every drasat command, in process, and the contract it must keep.

The contract (issue 14): whatever bytes arrive on stdin, each command ends with exit 0, 1
or 2, says something when it fails, never prints a traceback and never lets an exception
escape. The commands run through click's ``CliRunner`` -- the real command line, without
a process per input -- so the fuzzer (:mod:`tests.fuzz.fuzz_cli`) and the corpus
regression test (``tests/test_fuzz_corpus.py``) check exactly what a user would see.

Commands are listed in :data:`COMMANDS`; a command that does not exist (yet) is skipped,
so a new command joins by adding a line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

#: Command name -> its arguments for an input (``node`` is the node the input names, if any).
COMMANDS: dict[str, Callable[[str | None], list[str]]] = {
    "validate": lambda node: ["validate", "-"],
    "solve": lambda node: ["solve", "--timeout", "5", *(["--node", node] if node else []), "-"],
    "schedule": lambda node: ["schedule", "--timeout", "5", "-"],
    "explain": lambda node: ["explain", "--timeout", "5", *(["--node", node] if node else []), "-"],
}
EXIT_CODES = (0, 1, 2, 4)  # 4: solve's valid allocation found before the time limit cut the objective short
MAX_INPUT_BYTES = 64 * 1024  # fuzz inputs larger than this are cut (the size bounds have their own benchmark)


@dataclass
class Outcome:
    command: str
    exit_code: int
    output: str
    error: BaseException | None

    def violation(self) -> str | None:
        """What breaks the contract, or None."""
        if self.error is not None and not isinstance(self.error, SystemExit):
            return f"{self.command}: exception {type(self.error).__name__}: {self.error}"
        if self.exit_code not in EXIT_CODES:
            return f"{self.command}: exit code {self.exit_code}"
        if "Traceback (most recent call last)" in self.output:
            return f"{self.command}: a traceback on the output"
        if self.exit_code != 0 and not self.output.strip():
            return f"{self.command}: exit {self.exit_code} without a message"
        return None


def node_of(text: str) -> str | None:
    """The node a scenario names, else the first Node's name (solve needs one when several exist)."""
    if "Node" not in text and "Scenario" not in text:
        return None
    try:
        documents = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    except Exception:  # noqa: BLE001 - any YAML the loader cannot read has no node to name
        return None
    nodes = []
    for doc in documents:
        if not isinstance(doc, dict):
            continue
        spec = doc.get("spec")
        if doc.get("kind") == "Scenario" and isinstance(spec, dict) and isinstance(spec.get("node"), str):
            return spec["node"]
        meta = doc.get("metadata")
        if doc.get("kind") == "Node" and isinstance(meta, dict) and isinstance(meta.get("name"), str):
            nodes.append(meta["name"])
    return nodes[0] if nodes else None


def run_all(data: bytes) -> Iterator[Outcome]:
    """Every available command on ``data`` as stdin."""
    load_all_commands()
    text = data[:MAX_INPUT_BYTES].decode("utf-8", errors="replace")
    node = node_of(text)
    runner = CliRunner()
    for name, arguments in COMMANDS.items():
        if name not in cli.commands:
            continue
        result = runner.invoke(cli, arguments(node), input=text)
        yield Outcome(name, result.exit_code, result.output, result.exception)


def violations(data: bytes) -> list[str]:
    return [v for v in (outcome.violation() for outcome in run_all(data)) if v is not None]


def shared_dir() -> Path | None:
    """``$DRASAT_SHARED`` or ``../shared`` next to the repository, if it exists."""
    root = Path(os.environ.get("DRASAT_SHARED") or Path(__file__).resolve().parents[3] / "shared")
    return root if root.is_dir() else None


def seed_files() -> list[Path]:
    """Every manifest of the repository's tests and examples and of the shared directory."""
    repo = Path(__file__).resolve().parents[2]
    roots = [repo / "tests", repo / "examples"] + ([shared_dir()] if shared_dir() else [])
    found: list[Path] = []
    for root in roots:
        assert root is not None
        found += sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    return found
