"""drasat explain: the funnel names the cause, or a minimal conflict of rule instances does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.solver import allocate
from drasat.solver.explanation.explain import explain
from drasat.solver.verification.verifier import verify

from .explain_inputs import NODE, assert_choice_verifies, assert_minimal, claim, gpus, held, problem


def test_a_count_beyond_the_candidates_is_named_in_the_funnel() -> None:
    p = problem(claim("big", gpus(5)))
    found = explain(p)
    assert not found.feasible and found.short_requests == ["claim d/big, request gpu"]
    (gpu,) = found.funnel
    assert (gpu.needs, gpu.candidates) == (5, 4)
    assert gpu.steps[0].reason == 'not selected by class gpu, selector #0 (device.driver == "gpu.example.com")'
    assert gpu.steps[0].devices == ["nic.example.com/node-1/nic-0"]
    assert [fix.text for fix in found.fixes] == ["claim d/big, request gpu: count 4 fits (it asks 5)"]


def test_two_claims_wanting_more_than_there_is_conflict_on_exclusivity() -> None:
    p = problem(claim("a", gpus(3)), claim("b", gpus(2)))
    found = explain(p)
    assert not found.feasible and not found.short_requests
    assert found.conflict == [
        "device gpu.example.com/node-1/gpu-0, gpu.example.com/node-1/gpu-1, "
        "gpu.example.com/node-1/gpu-2, gpu.example.com/node-1/gpu-3 is allocated at most once: "
        "4 devices, wanted by claim d/a request gpu (3 devices), claim d/b request gpu (2 devices)"
    ]
    assert {fix.text for fix in found.fixes} == {
        "claim d/a, request gpu: count 2 fits (it asks 3)",
        "claim d/b, request gpu: count 1 fits (it asks 2)",
    }
    assert_minimal(p, found)


def test_match_across_requests_names_the_constraint() -> None:
    """gpu-2 is in use: numa 0 has two GPUs but no NIC, numa 1 the NIC but one GPU."""
    pair = claim(
        "pair",
        f"{gpus(2)}, {{name: nic, exactly: {{deviceClassName: nic}}}}",
        "{requests: [gpu, nic], matchAttribute: example.com/numa}",
    )
    alone = problem(pair)
    assert verify(alone, allocate(alone).results) == []  # without gpu-2 in use it fits
    p = problem(held("held", "gpu-2"), pair)
    found = explain(p)
    assert not found.feasible and not found.short_requests
    assert found.conflict == [
        "claim d/pair: constraint #0 (matchAttribute example.com/numa) holds: no "
        "example.com/numa value has 2 devices for gpu and 1 device for nic free "
        "(0: 2 gpu, 0 nic; 1: 1 gpu, 1 nic)"
    ]
    assert found.conflict_rules[0].requests == ("gpu", "nic")
    assert "releasing claim d/held (deallocating it) makes them fit" in [fix.text for fix in found.fixes]
    held_step = [s for s in found.funnel[0].steps if s.reason.startswith("already allocated")]
    assert [(s.reason, s.devices) for s in held_step] == [
        ("already allocated to claim d/held", ["gpu.example.com/node-1/gpu-2"])
    ]
    assert_minimal(p, found)


def test_one_requests_own_match_cannot_be_met() -> None:
    p = problem(claim("three", gpus(3), "{requests: [gpu], matchAttribute: example.com/numa}"))
    found = explain(p)
    assert not found.feasible and not found.short_requests
    assert found.conflict == [
        "claim d/three: constraint #0 (matchAttribute example.com/numa) holds: no "
        "example.com/numa value has 3 devices for gpu free (0: 2 gpu; 1: 2 gpu)"
    ]
    assert_minimal(p, found)


def test_distinct_over_too_few_values() -> None:
    p = problem(claim("spread", gpus(3), "{requests: [gpu], distinctAttribute: example.com/numa}"))
    found = explain(p)
    assert not found.feasible and found.conflict == [
        "claim d/spread: constraint #0 (distinctAttribute example.com/numa) holds: the candidates carry 2 distinct "
        "values of example.com/numa (0, 1) for 3 devices"
    ]
    assert_minimal(p, found)


def test_a_feasible_input_says_so_and_verifies() -> None:
    p = problem(claim("fits", gpus(2)))
    assert_choice_verifies(p, explain(p))


@pytest.mark.parametrize("form", ["text", "json"])
def test_cli_outputs_and_exit_codes(tmp_path: Path, form: str) -> None:
    (tmp_path / "input.yaml").write_text(NODE + claim("a", gpus(3)) + claim("b", gpus(2)))
    load_all_commands()
    result = CliRunner().invoke(cli, ["explain", "-o", form, str(tmp_path)])
    assert result.exit_code == 1, result.stderr
    if form == "json":
        data = json.loads(result.stdout)
        assert data["feasible"] is False and data["conflict"] and data["conflict"][0]["rule"] == "exclusivity"
    else:
        assert "but this rule cannot hold:" in result.stdout and "allocated at most once" in result.stdout
    fits = CliRunner().invoke(cli, ["explain", "--claims", "d/a", str(tmp_path)])
    assert fits.exit_code == 0 and "feasible" in fits.stdout


def test_solve_verbose_prints_the_short_form_of_the_same_explanation(tmp_path: Path) -> None:
    (tmp_path / "input.yaml").write_text(
        NODE + claim("three", gpus(3), "{requests: [gpu], matchAttribute: example.com/numa}")
    )
    load_all_commands()
    result = CliRunner().invoke(cli, ["solve", "-v", str(tmp_path)])
    assert result.exit_code == 1 and result.stdout == ""
    assert "but this rule cannot hold: claim d/three: constraint #0 (matchAttribute example.com/numa)" in result.stderr


def test_counters_shared_by_partitions_conflict() -> None:
    """Each half alone fits the 40Gi counter set; both together overdraw it."""
    from .test_explain_funnel import PARTITIONS

    halves = 'selectors: [{cel: {expression: \'!("numa" in device.attributes["example.com"])\'}}]'
    p = problem(PARTITIONS, claim("a", gpus(1, extra=halves)), claim("b", gpus(1, extra=halves)))
    found = explain(p)
    assert not found.feasible and not found.short_requests, found.summary()
    assert found.conflict == [
        "counter set memory of pool gpu.example.com/big-gpu is not overdrawn: 40Gi of gib left, "
        "taken by half-0 24Gi, half-1 24Gi; 2 devices, wanted by claim d/a request gpu (1 device), "
        "claim d/b request gpu (1 device)"
    ]
    assert found.conflict_rules[0].counter_set == "gpu.example.com/big-gpu/memory"
    assert_minimal(p, found)


def test_consumable_capacity_exhausted_conflict() -> None:
    """Each claim's 6Gi share fits the shared device's 10Gi; both do not."""
    from .test_explain_funnel import SHARED

    only = "selectors: [{cel: {expression: 'device.allowMultipleAllocations'}}], capacity: {requests: {memory: 6Gi}}"
    p = problem(SHARED, claim("a", gpus(1, extra=only)), claim("b", gpus(1, extra=only)))
    found = explain(p)
    assert not found.feasible and not found.short_requests, found.summary()
    assert found.conflict == [
        "the shares of device gpu.example.com/shared/vgpu fit its capacity: device vgpu has "
        "memory 10Gi of 10Gi free; shares asked: claim d/a request gpu memory 6Gi, "
        "claim d/b request gpu memory 6Gi"
    ]
    assert_minimal(p, found)


FIRST_AVAILABLE = (
    "{name: gpu, firstAvailable: [{name: four, deviceClassName: gpu, count: 4}, "
    "{name: three, deviceClassName: gpu, count: 3}]}"
)


def test_first_available_alternatives_are_one_or_the_other_in_a_match_conflict() -> None:
    p = problem(
        claim(
            "fa",
            f"{FIRST_AVAILABLE}, {{name: nic, exactly: {{deviceClassName: nic}}}}",
            "{requests: [gpu, nic], matchAttribute: example.com/numa}",
        )
    )
    found = explain(p)
    assert not found.feasible and not found.short_requests
    (rule,) = found.conflict_rules
    assert rule.detail.startswith(
        "no example.com/numa value has (4 devices for gpu/four or 3 devices for gpu/three) and 1 device for nic free"
    ), rule.detail
    assert_minimal(p, found)


def test_first_available_alternatives_are_one_or_the_other_in_a_distinct_conflict() -> None:
    p = problem(claim("fad", FIRST_AVAILABLE, "{requests: [gpu], distinctAttribute: example.com/numa}"))
    found = explain(p)
    (rule,) = found.conflict_rules
    assert rule.detail == ("the candidates carry 2 distinct values of example.com/numa (0, 1) for 3 or 4 devices")
    assert_minimal(p, found)
