"""Output for people and for tools: kubectl's plain table on a terminal and through a pipe alike, solve -o wide,
explain's text/json/yaml, and a progress bar only on a terminal and never with -o json."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from rich.table import Table

from drasat.cli.main import cli, load_all_commands
from drasat.cli.progress import Bar, wanted
from drasat.cli.render.tables import table_text

from .explain_inputs import NODE, claim, gpus

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")


def run(*args: str) -> tuple[int, str, str]:
    load_all_commands()
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_piped_table_is_kubectls_plain_aligned_untruncated_form() -> None:
    code, out, _ = run("solve", "--node", "gpu-node-1", "-o", "table", EXAMPLES)
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == ["CLAIM", "REQUEST", "DEVICE"]  # what fits 80 columns; the rest is -o wide
    assert not any(c in out for c in "┃│+|")
    device_at = header.index("DEVICE")
    assert [r[device_at:].split()[0] for r in rows if r[device_at:].strip()[:3] in ("gpu", "nic")] == [
        "gpu-0",
        "nic-0",
        "gpu-1",
    ]  # every row's DEVICE cell starts under its header
    assert "default/notebook-0-extended-resources-" in out  # long names whole


def test_wide_puts_each_detail_in_its_own_column() -> None:
    code, out, _ = run("solve", "--node", "gpu-node-1", "-o", "wide", EXAMPLES)
    header = out.splitlines()[0]
    assert code == 0 and "SHARE ID" in header and "NODE SELECTOR" in header
    assert out.splitlines()[1].endswith("metadata.name In gpu-node-1")


def test_a_terminal_gets_the_table_a_pipe_gets() -> None:
    table = Table()
    table.add_column("claim")
    table.add_row("default/a")
    assert table_text(table, "utf-8", terminal=True) == table_text(table, "utf-8", terminal=False)
    assert table_text(table, "utf-8", terminal=False) == "CLAIM\ndefault/a\n"


@pytest.mark.parametrize("form", ["text", "json", "yaml"])
def test_explain_each_output_form(tmp_path: Path, form: str) -> None:
    (tmp_path / "in.yaml").write_text(NODE + claim("big", gpus(5)))
    code, out, err = run("explain", "-o", form, str(tmp_path))
    assert code == 1, err
    if form == "text":
        assert "cause: too few candidates for claim d/big, request gpu" in out
        assert "count 4 fits (it asks 5)" in out
    else:
        data = json.loads(out) if form == "json" else yaml.safe_load(out)
        assert data["shortRequests"] == [{"claim": "d/big", "request": "gpu"}] and data["funnel"][0]["offered"] == 5
        assert data["fixes"][0] == {
            "kind": "count",
            "text": "claim d/big, request gpu: count 4 fits (it asks 5)",
            "claim": "d/big",
            "request": "gpu",
            "count": 4,
            "asked": 5,
        }


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_shows_only_on_a_terminal_and_never_for_tools() -> None:
    assert wanted("table", Terminal()) and not wanted("json", Terminal()) and not wanted("jsonpath={.x}", Terminal())
    assert not wanted("table", io.StringIO())
    shown = Terminal()
    with Bar("scheduling pods", output="table", stream=shown) as bar:
        bar.update(1, 2)
    assert "scheduling pods" in shown.getvalue()
    quiet = Terminal()
    with Bar("scheduling pods", output="json", stream=quiet) as bar:
        bar.update(1, 2)
    assert quiet.getvalue() == ""


def test_a_piped_schedule_prints_no_bar() -> None:
    code, out, err = run("schedule", "-o", "table", EXAMPLES)
    assert code == 0 and "scheduling pods" not in err and "\x1b" not in out + err
