"""Inputs too large for bounded memory are refused up front with a clear message (exit 2).

The bounds themselves are measured in benchmarks/size_bench.py (a 200 MB manifest,
100,000 devices, 10,000 claims); here each refusal is checked on a small input with
the bound lowered, so the test stays fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import drasat.solver.allocation.api
from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_a_problem_past_the_pair_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drasat.solver.allocation.api, "MAX_REQUEST_DEVICE_PAIRS", 20)
    load_all_commands()
    result = CliRunner().invoke(
        cli, ["solve", "--node", "gpu-node-1", "--claims", "single-gpu,two-gpus,gpu-with-nic", str(EXAMPLES)]
    )
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(
        "error: too large to allocate in bounded memory: 3 claims with 4 requests and "
        "alternatives against 6 devices on node gpu-node-1 make 24 request-device pairs, "
        "more than drasat's limit of 20 (about 1 GiB); allocate fewer claims at a time"
    )


def test_at_the_bound_it_solves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drasat.solver.allocation.api, "MAX_REQUEST_DEVICE_PAIRS", 24)
    load_all_commands()
    assert (
        CliRunner()
        .invoke(cli, ["solve", "--node", "gpu-node-1", "--claims", "single-gpu,two-gpus,gpu-with-nic", str(EXAMPLES)])
        .exit_code
        == 0
    )


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("#" * 2**20 + "\n")
    bundle = load_paths([str(big)], max_bytes=2**20)
    assert [p.message for p in bundle.problems] == [
        "is larger than 1 MiB; drasat reads inputs up to that size (raise it with --max-input-size, "
        "e.g. --max-input-size 2Mi, or split the input into several files)"
    ]


def test_max_input_size_raises_and_lowers_the_bound() -> None:
    load_all_commands()
    example = str(EXAMPLES)
    small = CliRunner().invoke(cli, ["solve", "--node", "gpu-node-1", "--max-input-size", "1Ki", example])
    assert small.exit_code == 2 and small.stdout == ""
    assert (
        "cluster.yaml: is larger than 1024 bytes; drasat reads inputs up to that size (raise it with " in small.stderr
    )
    assert "e.g. --max-input-size 2Ki," in small.stderr
    for command in (["validate"], ["solve", "--node", "gpu-node-1"], ["inventory"], ["pool-status", "--driver", "x"]):
        assert CliRunner().invoke(cli, [*command, "--max-input-size", "1Ki", example]).exit_code == 2, command
        assert CliRunner().invoke(cli, [*command, "--max-input-size", "64Mi", example]).exit_code in (0, 1), command


@pytest.mark.parametrize("size", ["lots", "0", "1.5", "-1Mi"])
def test_a_bad_max_input_size_is_refused(size: str) -> None:
    load_all_commands()
    result = CliRunner().invoke(cli, ["validate", "--max-input-size", size, str(EXAMPLES)])
    assert result.exit_code == 2 and result.stdout == ""
    assert "--max-input-size" in result.stderr and "Traceback" not in result.stderr
