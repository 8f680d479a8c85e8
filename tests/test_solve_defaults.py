"""``drasat solve`` allocates what the API server would have stored: its defaults applied first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.defaults import apply_defaults
from drasat.models.loader import load_paths, load_text
from drasat.models.resource import AllocationResult, ResourceClaim
from drasat.models.validation import validate_object
from drasat.solver.allocation.problem import NodeInfo, Problem, problem_from_objects
from drasat.solver.verification.verifier import verify

from .test_models_defaults import CLAIM

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SINGLE_GPU = "      exactly:\n        deviceClassName: gpu.example.com\n---"
ZERO = {
    "exactly": "      exactly:\n        deviceClassName: gpu.example.com\n        count: 0\n---",
    "firstAvailable": "      firstAvailable:\n      - name: one\n        deviceClassName: gpu.example.com\n"
    "        count: 0\n---",
}


@pytest.mark.parametrize("where", sorted(ZERO))
def test_count_zero_is_one_device(tmp_path: Path, where: str) -> None:
    claims = (EXAMPLES / "claims.yaml").read_text()
    assert SINGLE_GPU in claims
    (tmp_path / "claims.yaml").write_text(claims.replace(SINGLE_GPU, ZERO[where], 1))
    (tmp_path / "cluster.yaml").write_text((EXAMPLES / "cluster.yaml").read_text())
    load_all_commands()
    result = CliRunner().invoke(
        cli,
        ["solve", "--node", "gpu-node-1", "--claims", "single-gpu", "-o", "json", str(tmp_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    (item,) = json.loads(result.stdout)["items"]
    allocation = AllocationResult.model_validate(item["status"]["allocation"])
    assert len(allocation.devices.results) == 1
    objects = [loaded.obj for loaded in load_paths([str(tmp_path)]).objects]
    assert (
        verify(
            problem_from_objects(objects, node="gpu-node-1", claims=["single-gpu"]), {"default/single-gpu": allocation}
        )
        == []
    )


def test_a_problem_holds_defaulted_copies_and_leaves_the_callers_claims_alone() -> None:
    (claim,) = list(load_text(CLAIM))
    assert isinstance(claim, ResourceClaim)
    written = claim.to_api()
    problem = Problem(NodeInfo("n"), [], [], [claim], allocated=[claim])
    for held in (problem.claims[0], problem.allocated[0]):
        assert held.status is not None and held.status.allocation is not None
        assert held.status.allocation.devices.results[0].tolerations[0].operator == "Equal"
    requests = problem.claims[0].spec.devices.requests
    assert [r.exactly.count for r in requests[:4] if r.exactly] == [1, 1, None, 3]
    assert requests[0].exactly is not None and requests[0].exactly.tolerations[0].operator == "Equal"
    # A claim in use is read for its allocation only: its spec is left as written (not walked on every problem).
    assert problem.allocated[0].spec is claim.spec
    assert claim.to_api() == written


@pytest.mark.parametrize(
    "edit",
    [
        ("count: 0}", "count: 0}"),
        ("count: 0}", "count: -1}"),
        ("allocationMode: All}", "allocationMode: All, count: 2}"),
        ("tolerations: [{key: a}]", "tolerations: [{key: a, value: v}]"),
        ("tolerations: [{key: a}]", "tolerations: [{key: a, value: v, effect: Bogus}]"),
    ],
)
def test_validation_reads_absent_fields_as_the_servers_defaults(edit: tuple[str, str]) -> None:
    """validate checks objects as written; the API server checks them defaulted: the verdicts must agree."""
    assert edit[0] in CLAIM
    (claim,) = list(load_text(CLAIM.replace(*edit)))
    assert isinstance(claim, ResourceClaim)
    assert [str(p) for p in validate_object(claim)] == [str(p) for p in validate_object(apply_defaults(claim))]
