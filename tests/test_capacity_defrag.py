"""``drasat defrag`` / ``defrag``: moves that free whole GPUs, checked against brute force over device layouts.

The brute force knows the factory's layout (a GPU is 4 units, four quarter devices): it relocates any set of
at most K quarter pods to any GPU with room and counts the GPUs left whole. Every step of drasat's plan is
verified on the state the steps before it left.
"""

from __future__ import annotations

import json
from itertools import combinations, product
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli
from drasat.solver import defrag, verify

from .capacity_factory import classes_and_templates, partitioned_node, running
from .cluster_factory import make_cluster

SCATTERED = {"q1": (0, 0), "q2": (0, 1), "q3": (1, 0), "q4": (1, 1)}  # pod -> (gpu, quarter index)


def _docs(held: dict[str, tuple[int, int]], gpus: int = 2) -> list:
    out = [*classes_and_templates(), *partitioned_node("a", gpus=gpus)]
    for name, (g, i) in held.items():
        out += running("a", f"gpu-{g}-quarter-{i}", "quarter", pod_name=name)
    return out


def _whole_by_brute_force(held: dict[str, tuple[int, int]], gpus: int, moves: int) -> int:
    """The most GPUs left whole with at most ``moves`` quarter pods relocated (each GPU takes four)."""
    best = 0
    for k in range(moves + 1):
        for moved in combinations(sorted(held), k):
            for targets in product(range(gpus), repeat=k):
                load = [0] * gpus
                for name, (g, _) in held.items():
                    if name not in moved:
                        load[g] += 1
                for g in targets:
                    load[g] += 1
                if max(load) <= 4:
                    best = max(best, load.count(0))
    return best


def _checked(result: Any) -> None:
    for m in result.moves:
        assert m.placement.problem is not None
        assert verify(m.placement.problem, m.placement.allocations) == []


def test_two_moves_free_a_whole_gpu_and_one_move_cannot() -> None:
    cluster = make_cluster(*_docs(SCATTERED))
    two = defrag(cluster, moves=2)
    assert (two.before.whole, two.after.whole, len(two.moves), two.proven) == (0, 1, 2, True)
    assert two.after.whole == _whole_by_brute_force(SCATTERED, 2, 2)
    moved = {m.after[0].split("/")[1].rsplit("-", 2)[0] for m in two.moves}
    assert len(moved) == 1  # both onto the same GPU
    _checked(two)
    one = defrag(cluster, moves=1)
    assert one.after.whole == _whole_by_brute_force(SCATTERED, 2, 1) == 0
    assert one.after.largest > one.before.largest  # a larger partition free all the same
    _checked(one)


def test_nothing_to_gain_gives_an_empty_plan() -> None:
    packed = {"q1": (0, 0), "q2": (0, 1)}
    result = defrag(make_cluster(*_docs(packed)), moves=2)
    assert (result.moves, result.improves, result.after.whole) == ([], False, 1)
    assert _whole_by_brute_force(packed, 2, 2) == 1


def _write(tmp_path: Any, docs: list) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_the_command_prints_ordered_steps_in_each_form(tmp_path: Any) -> None:
    path = _write(tmp_path, _docs(SCATTERED))
    runner = CliRunner()
    table = runner.invoke(cli, ["defrag", path])
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0].startswith("defrag: 2 moves; whole devices free 0 -> 1") and lines[0].endswith("proven")
    assert lines[1].split() == ["STEP", "POD", "FROM", "TO"]
    assert [line.split()[0] for line in lines[2:]] == ["1", "2"] and all("default/q" in line for line in lines[2:])
    data = json.loads(runner.invoke(cli, ["defrag", "-o", "json", path]).stdout)
    assert [m["step"] for m in data["moves"]] == [1, 2] and data["wholeDevicesFree"] == {"before": 0, "after": 1}
    assert yaml.safe_load(runner.invoke(cli, ["defrag", "-o", "yaml", "--moves", "1", path]).stdout)["proven"]


def test_a_cluster_without_partitions_has_no_share_to_speak_of() -> None:
    """examples/ has whole GPUs only: no "largest free GPU share 0 -> 0" that reads as no GPU free."""
    result = CliRunner().invoke(cli, ["defrag", str(Path(__file__).resolve().parents[1] / "examples" / "cluster.yaml")])
    assert result.stdout == (
        "defrag: 0 moves; whole devices free 12 -> 12; no partitionable device (no counter set): whole devices "
        "only; proven\n"
    )


@pytest.mark.parametrize("args,code", [(["--moves", "-1"], 2), (["--moves", "99"], 2)])
def test_bad_move_counts_exit_2(tmp_path: Any, args: list[str], code: int) -> None:
    result = CliRunner().invoke(cli, ["defrag", *args, _write(tmp_path, _docs(SCATTERED))])
    assert result.exit_code == code and result.stdout == ""


def test_no_improvement_exits_1(tmp_path: Any) -> None:
    result = CliRunner().invoke(cli, ["defrag", _write(tmp_path, _docs({"q1": (0, 0)}))])
    assert result.exit_code == 1 and "0 moves" in result.stdout
