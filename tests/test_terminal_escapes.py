"""Names from the input never reach a terminal raw: every command's text and table output escapes control
characters (``\\x1b]0;TITLE\\x07`` in a device name would set the terminal's title through ``inventory``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.cli.render.tables import TextTable, table_text
from drasat.cli.render.text import printable

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TITLE = r"\e]0;TITLE\a"  # YAML's escapes: ESC ] 0 ; TITLE BEL, an xterm window-title sequence
SHOWN = "\\x1b]0;TITLE\\x07"  # how drasat prints it
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
RULE = f"""apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {{name: "drain{TITLE}"}}
spec:
  deviceSelector: {{driver: gpu.example.com, pool: gpu-node-1, device: "gpu-0{TITLE}"}}
  taint: {{key: example.com/maintenance, effect: None}}
"""


def hostile(tmp_path: Path) -> Path:
    """The bundled example with a control sequence in device, claim, pod and counter-free names."""
    cluster = (EXAMPLES / "cluster.yaml").read_text().replace("  - name: gpu-0\n", f'  - name: "gpu-0{TITLE}"\n')
    claims = (EXAMPLES / "claims.yaml").read_text().replace("  name: single-gpu\n", f'  name: "single-gpu{TITLE}"\n')
    pods = (EXAMPLES / "pods.yaml").read_text().replace("  name: notebook-0\n", f'  name: "notebook-0\\u202e{TITLE}"\n')
    folder = tmp_path / "in"
    folder.mkdir()
    for name, text in (("cluster.yaml", cluster), ("claims.yaml", claims), ("pods.yaml", pods)):
        (folder / name).write_text(text)
    (tmp_path / "rule.yaml").write_text(RULE)
    return folder


COMMANDS = {
    "validate": ["validate"],
    "solve table": ["solve", "--node", "gpu-node-1", "-o", "table"],
    "solve wide": ["solve", "--node", "gpu-node-1", "-o", "wide"],
    "solve name": ["solve", "--node", "gpu-node-1", "-o", "name"],
    "solve jsonpath": ["solve", "--node", "gpu-node-1", "-o", "jsonpath={.items[*].metadata.name}"],
    "schedule table": ["schedule", "-o", "table"],
    "schedule wide": ["schedule", "-o", "wide"],
    "explain": ["explain", "--node", "gpu-node-1"],
    "compare": ["compare", "--node", "gpu-node-1"],
    "inventory": ["inventory"],
    "inventory wide": ["inventory", "-o", "wide"],
    "inventory custom-columns": ["inventory", "-o", "custom-columns=NODE:.metadata.name,DEVICES:.devices[*].name"],
    "inventory name": ["inventory", "-o", "name"],
    "solve custom-columns": ["solve", "--node", "gpu-node-1", "-o", "custom-columns=NAME:.metadata.name"],
    "compare wide": ["compare", "--node", "gpu-node-1", "-o", "wide"],
    "compare name": ["compare", "--node", "gpu-node-1", "-o", "name"],
    "explain name": ["explain", "--node", "gpu-node-1", "-o", "name"],
    "validate name": ["validate", "-o", "name"],
    "pool-status wide": ["pool-status", "--driver", "gpu.example.com", "-o", "wide"],
    "pool-status": ["pool-status", "--driver", "gpu.example.com", "-o", "table"],
    "taint-impact": ["taint-impact", "RULE"],
    "metadata": ["metadata", "--out", "OUT"],
    # JSON and YAML escape control characters themselves (checked here, not changed)
    "solve json": ["solve", "--node", "gpu-node-1", "-o", "json"],
    "solve yaml": ["solve", "--node", "gpu-node-1", "-o", "yaml"],
    "schedule yaml": ["schedule", "-o", "yaml"],
    "explain json": ["explain", "--node", "gpu-node-1", "-o", "json"],
    "inventory json": ["inventory", "-o", "json"],
    "validate json": ["validate", "-o", "json"],
    "taint-impact json": ["taint-impact", "-o", "json", "RULE"],
}


def arguments(tmp_path: Path, command: str) -> list[str]:
    """The command's arguments; the allocating commands take the invalid names anyway (the names are invalid,
    and refused by default with validate's message: the point here is what reaches their tables)."""
    args = [
        str(tmp_path / "rule.yaml") if a == "RULE" else str(tmp_path / "out") if a == "OUT" else a
        for a in COMMANDS[command]
    ]
    return args + (["--allow-invalid-objects"] if args[0] in ("solve", "schedule", "explain", "compare") else [])


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_control_character_reaches_the_output(tmp_path: Path, command: str) -> None:
    folder = hostile(tmp_path)
    load_all_commands()
    result = CliRunner().invoke(cli, [*arguments(tmp_path, command), str(folder)], catch_exceptions=False)
    assert result.exit_code in (0, 1, 2), result.output
    for stream in (result.stdout, result.stderr):
        assert RAW.findall(stream) == [], stream


@pytest.mark.parametrize(
    "command", ["validate", "inventory", "inventory custom-columns", "taint-impact", "solve table", "schedule table"]
)
def test_the_names_are_shown_escaped(tmp_path: Path, command: str) -> None:
    """Not dropped: the user still sees which name it is, in a form that can be searched for."""
    folder = hostile(tmp_path)
    load_all_commands()
    result = CliRunner().invoke(cli, [*arguments(tmp_path, command), str(folder)], catch_exceptions=False)
    assert SHOWN in result.stdout + result.stderr, result.output


@pytest.mark.parametrize("terminal", [False, True])
def test_a_table_cell_stays_one_piece_and_no_markup(terminal: bool) -> None:
    table = TextTable(title="t\x1b[2J")
    table.add_column("name")
    table.add_row("a\nb\tc\x1b]0;T\x07[red]x[/red]")
    text = table_text(table, "utf-8", terminal=terminal)
    body = re.sub(r"\x1b\[[0-9;]*m", "", text)  # the bold header drawn on a terminal is drasat's own
    assert RAW.findall(body) == [] and "\\x1b]0;T\\x07" in body and "[red]x[/red]" in body
    assert "a\\nb\\tc" in body


def test_printable_keeps_line_breaks_in_text_and_escapes_c1_and_bidi() -> None:
    assert printable("a\nb\tc") == "a\nb\tc"
    assert printable("\x9b2J\u202eabc\x7f") == "\\x9b2J\\u202eabc\\x7f"
    assert printable("a\nb", cell=True) == "a\\nb"
