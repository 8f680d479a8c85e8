"""``schedule --html`` and ``compare --schedule --html``: the map as the placement leaves the cluster, the
placements (one by one beside batch) and the pending pods with the scheduler's reasons; placements verified."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.solver.scheduling.cluster import cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule

from .cluster_factory import violations

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TOO_BIG = """---
apiVersion: v1
kind: Pod
metadata: {name: big-0, namespace: default}
spec:
  containers:
  - name: c
    image: registry.example.com/big:1
    resources:
      limits: {example.com/gpu: "9"}
"""


def cluster_with_a_pod_too_big(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    shutil.copytree(EXAMPLES, folder)
    with (folder / "pods.yaml").open("a") as pods:
        pods.write(TOO_BIG)
    return folder


def run(*args: str):
    load_all_commands()
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def devices_in(text: str) -> dict[str, str]:
    return dict(re.findall(r'data-device="([^"]+)" data-state="(\w+)"', text))


def test_schedule_html_draws_the_cluster_as_the_pods_leave_it(tmp_path: Path) -> None:
    folder = cluster_with_a_pod_too_big(tmp_path)
    (tmp_path / "out").mkdir()  # drasat creates no folder for an output
    page = tmp_path / "out" / "map.html"
    result = run("schedule", "-o", "name", "--html", str(page), str(folder))
    assert result.exit_code == 1 and "pod/trainer-0" in result.stdout  # big-0 pending; the List still printed
    assert f"wrote {page}: 12 devices on 2 nodes" in result.stderr
    placements = schedule(cluster_from_objects([o.obj for o in load_paths([str(folder)]).objects]))
    assert violations(placements) == []
    text = page.read_text()
    states = devices_in(text)
    for p in placements:
        for claim in p.claims:
            for r in claim.status.allocation.devices.results if claim.status and claim.status.allocation else []:
                assert states[f"{r.driver}/{r.pool}/{r.device}"] == "allocated", (p.label, r.device)
    rows = re.findall(r"<tr[^>]*><td>(default/[\w-]+)</td><td[^>]*>([\w-]+)</td>", text.split("<h2>Placements")[1])
    assert ("default/trainer-0", "gpu-node-1") in rows and ("default/big-0", "pending") in rows
    pending = text.split("<h2>Pending pods</h2>")[1].split("</table>")[0]
    assert "default/big-0" in pending and "0/2 nodes are available" in pending and "<details>" in pending
    fleet = text.split('<table class="fleet">')[1].split("</table>")[0]
    assert "Placed one-by-one" in fleet and "default/notebook-0" in fleet


def test_the_map_before_and_after_differ_by_the_devices_placed(tmp_path: Path) -> None:
    folder = cluster_with_a_pod_too_big(tmp_path)
    assert run("inventory", "--html", str(tmp_path / "before.html"), str(folder)).exit_code == 0
    assert run("schedule", "--html", str(tmp_path / "after.html"), str(folder)).exit_code == 1
    before, after = (devices_in((tmp_path / f"{n}.html").read_text()) for n in ("before", "after"))
    changed = {d for d in before if before[d] != after[d]}
    assert changed == {
        "gpu.example.com/gpu-node-1/gpu-0",
        "nic.example.com/gpu-node-1/nic-0",
        "gpu.example.com/gpu-node-2/gpu-1",
    }
    text = (tmp_path / "before.html").read_text()
    assert "Pending pods that could go there" in text  # pods and nodes in the input: tried one by one alone
    fleet = text.split('<table class="fleet">')[1].split("</table>")[0]
    assert "default/trainer-0, default/notebook-0" in fleet and "big-0" not in fleet


def test_compare_schedule_html_sets_one_by_one_beside_batch(tmp_path: Path) -> None:
    folder = cluster_with_a_pod_too_big(tmp_path)
    page = tmp_path / "compare.html"
    result = run("compare", "--schedule", "--html", str(page), str(folder))
    assert result.exit_code == 0, result.stderr
    text = page.read_text()
    head = text.split('<table class="placements">')[1].split("</tr>")[0]
    assert re.findall(r"<th>([^<]*)</th>", head) == [
        "Pod",
        "Node (one-by-one)",
        "Devices (one-by-one)",
        "Node (batch)",
        "Devices (batch)",
    ]
    pending = text.split("<h2>Pending pods</h2>")[1].split("</table>")[0]
    assert re.findall(r"<td>default/big-0</td><td>([\w-]+)</td>", pending) == ["one-by-one", "batch"]
    assert not page.with_name("compare.html.tmp").exists() and list(tmp_path.glob("*.tmp*")) == []
