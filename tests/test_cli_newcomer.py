"""The command line as a newcomer meets it: bare commands, odd options, odd environments, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")


def drasat(*args: str, stdin: str | None = None):
    load_all_commands()
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False, prog_name="drasat")


def process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drasat.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_bare_drasat_prints_help_and_succeeds() -> None:
    result = drasat()
    assert result.exit_code == 0 and result.stdout.startswith("Usage: drasat") and "solve" in result.stdout
    done = process()
    assert done.returncode == 0 and done.stdout.startswith("Usage: drasat") and done.stderr == ""


@pytest.mark.parametrize("timeout", ["nan", "inf", "-inf", "1e400", "0", "-1", "0.0"])
def test_timeouts_no_solver_can_keep_are_refused(timeout: str) -> None:
    result = drasat("solve", "--node", "gpu-node-1", "--timeout", timeout, EXAMPLES)
    assert result.exit_code == 2 and result.stdout == ""
    assert f"'{timeout}' is not a time limit: give a finite number of seconds above 0" in result.stderr


def test_a_fractional_timeout_is_fine() -> None:
    assert drasat("solve", "--node", "gpu-node-1", "--timeout", "0.5e1", EXAMPLES).exit_code == 0


@pytest.mark.parametrize("command", [["solve", "--node", "gpu-node-1"], ["validate"]])
def test_an_unknown_cel_engine_in_the_environment_is_one_message(command: list[str]) -> None:
    load_all_commands()
    result = CliRunner().invoke(cli, [*command, EXAMPLES], env={"DRASAT_CEL_ENGINE": "bogus"}, catch_exceptions=False)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "error: DRASAT_CEL_ENGINE='bogus' is not a CEL engine: expected one of cel-expr, celpy\n"


def test_a_console_without_box_characters_gets_the_same_plain_table() -> None:
    from drasat.cli.render.tables import TextTable, table_text

    table = TextTable()
    table.add_column("claim")
    table.add_row("default/trainer-0")
    assert table_text(table, "cp1252", terminal=True) == table_text(table, "utf-8", terminal=False)
    assert table_text(table, "cp1252", terminal=True) == "CLAIM\ndefault/trainer-0\n"
    done = process("solve", "--node", "gpu-node-1", "-o", "table", EXAMPLES, env={"PYTHONIOENCODING": "cp1252"})
    assert done.returncode == 0, done.stderr  # piped: kubectl's plain table, no box characters at all
    assert done.stdout.startswith("CLAIM ") and "\ufffd" not in done.stdout and "+---" not in done.stdout


def test_characters_the_console_cannot_show_are_escaped_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "class.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
        "spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"\u0436\" &&'}\n"
    )
    done = process("validate", str(tmp_path), env={"PYTHONIOENCODING": "cp1252"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "CEL compile error" in done.stdout and "\\u0436" in done.stdout


@pytest.mark.parametrize("engine", ["cel-expr", "celpy"])
def test_a_bad_regular_expression_is_one_clean_message(tmp_path: Path, engine: str) -> None:
    claims = (
        Path(EXAMPLES, "claims.yaml")
        .read_text()
        .split("---")[0]
        .replace(
            "deviceClassName: gpu.example.com",
            "deviceClassName: gpu.example.com\n        selectors:\n"
            "        - cel: {expression: 'device.driver.matches(\"[\")'}",
        )
    )
    (tmp_path / "claims.yaml").write_text(claims)
    (tmp_path / "cluster.yaml").write_text(Path(EXAMPLES, "cluster.yaml").read_text())
    done = process("solve", "--node", "gpu-node-1", "--cel-engine", engine, str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    place = f"error: {tmp_path / 'claims.yaml'}[0]: ResourceClaim/default/single-gpu: "
    field = "spec.devices.requests[0].exactly.selectors[0].cel.expression: claim default/single-gpu: "
    assert line.startswith(place + field) and "invalid regular expression: missing ]: [" in line


def _claims_in_two_namespaces(tmp_path: Path) -> Path:
    claims = Path(EXAMPLES, "claims.yaml").read_text().split("---")[0]
    (tmp_path / "claims.yaml").write_text(claims + "---\n" + claims.replace("namespace: default", "namespace: team-b"))
    (tmp_path / "cluster.yaml").write_text(Path(EXAMPLES, "cluster.yaml").read_text())
    return tmp_path


def test_a_claim_name_two_namespaces_share_is_refused(tmp_path: Path) -> None:
    result = drasat("solve", "--node", "gpu-node-1", "--claims", "single-gpu", str(_claims_in_two_namespaces(tmp_path)))
    assert result.exit_code == 2 and result.stdout == ""
    assert (
        "error: ResourceClaim name single-gpu is ambiguous: give one of default/single-gpu, team-b/single-gpu"
        in result.stderr
    )


def test_a_claim_named_twice_is_allocated_once() -> None:
    result = drasat(
        "solve", "--node", "gpu-node-1", "--claims", "single-gpu,default/single-gpu", "-o", "json", EXAMPLES
    )
    assert result.exit_code == 0, result.stderr
    assert [item["metadata"]["name"] for item in json.loads(result.stdout)["items"]] == ["single-gpu"]


def test_claims_can_be_named_with_their_namespace(tmp_path: Path) -> None:
    result = drasat(
        "solve",
        "--node",
        "gpu-node-1",
        "--claims",
        "team-b/single-gpu",
        "-o",
        "json",
        str(_claims_in_two_namespaces(tmp_path)),
    )
    assert result.exit_code == 0, result.stderr
    assert [item["metadata"]["namespace"] for item in json.loads(result.stdout)["items"]] == ["team-b"]


def test_an_input_with_nothing_to_allocate_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("")
    result = drasat("solve", "--node", "gpu-node-1", str(tmp_path))  # no object at all: kubectl's words
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "error: no objects passed to solve\n"
    (tmp_path / "class.yaml").write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n")
    result = drasat("solve", "--node", "gpu-node-1", str(tmp_path))
    assert result.exit_code == 0 and yaml.safe_load(result.stdout)["items"] == []
    assert "notice: nothing to allocate: the input has no ResourceClaim without status.allocation" in result.stderr


def test_verbose_success_is_one_tidy_line() -> None:
    result = drasat("solve", "--node", "gpu-node-1", "-v", EXAMPLES)
    assert result.exit_code == 0
    notice, line = result.stderr.splitlines()  # the pending claims no pod uses, then how it was solved
    assert notice.startswith("notice: 3 pending claims no pending pod uses are left alone")
    assert line.startswith("solved by ") and not line.rstrip().endswith(";")
