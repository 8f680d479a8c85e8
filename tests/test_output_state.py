"""--output-state: the input with a run's results merged in, read back by the next what-if run."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.models.resource import AllocationResult
from drasat.solver.allocation.problem import problem_from_objects
from drasat.solver.verification.verifier import verify

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(*args: str) -> Result:
    load_all_commands()
    return CliRunner().invoke(cli, list(args))


def test_schedule_state_feeds_the_next_run(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    first = run("schedule", "-o", "name", "--output-state", str(state), str(EXAMPLES))
    assert first.exit_code == 0, first.stderr
    items = yaml.safe_load(state.read_text())["items"]
    read = list(load_paths([str(EXAMPLES)]))
    assert len(items) == len(read) + first.stdout.count("resourceclaim")  # every input object, plus new claims
    placed = {i["metadata"]["name"]: i["spec"]["nodeName"] for i in items if i["kind"] == "Pod"}
    assert placed and all(placed.values())
    again = run("schedule", str(EXAMPLES), str(state))
    assert again.exit_code == 0 and yaml.safe_load(again.stdout)["items"] == []  # nothing left to place
    assert "no pending pods" in again.stderr and "replaces the copy read at" in again.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["state.yaml"]  # no temporary file left behind


def test_solve_state_holds_the_allocations_and_they_count_as_in_use(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    first = run(
        "solve", "--node", "gpu-node-1", "--claims", "default/single-gpu", "--output-state", str(state), str(EXAMPLES)
    )
    assert first.exit_code == 0, first.stderr
    objects = list(load_paths([str(state)]))
    (claim,) = [o for o in objects if o.kind == "ResourceClaim" and o.name == "single-gpu"]
    assert claim.status is not None and claim.status.allocation is not None
    problem = problem_from_objects(list(load_paths([str(EXAMPLES)])), node="gpu-node-1", claims=["single-gpu"])
    assert (
        verify(problem, {"default/single-gpu": AllocationResult.model_validate(claim.status.allocation.to_api())}) == []
    )
    second = run(
        "solve", "--node", "gpu-node-1", "--claims", "default/two-gpus", "-o", "json", str(EXAMPLES), str(state)
    )
    assert second.exit_code == 0, second.stderr
    taken = claim.status.allocation.devices.results[0].device
    assert taken not in second.stdout  # the first run's device is in use now


def test_an_unwritable_state_file_is_exit_2_and_nothing_printed(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    result = run(
        "solve",
        "--node",
        "gpu-node-1",
        "--claims",
        "default/single-gpu",
        "--output-state",
        str(tmp_path / "file" / "state.yaml"),
        str(EXAMPLES),
    )
    assert result.exit_code == 2 and result.stdout == "" and "cannot write" in result.stderr
