"""The allocation map opened in headless Chromium: one DOM element per device, filters that hide what they
should, and screenshots whose pixels show an exhausted partition grey, a free one green and overlapping free
partitions pale; the page without a browser: self-contained, whole names, rows by partition type, counter bars."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

from .fleet_factory import device_count, fleet

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((found for name in BROWSERS if (found := shutil.which(name))), None)
needs_browser = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium found (Debian: apt-get install chromium; .ci/run installs it)"
)
NODES, GPUS = 100, 8


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The map of 100 nodes × 8 GPUs (a third of them MIG-partitioned), written by the command."""
    folder = tmp_path_factory.mktemp("map")
    manifests = folder / "fleet.yaml"
    manifests.write_text(yaml.safe_dump_all(fleet(NODES, GPUS, seed=7)))
    target = folder / "map.html"
    load_all_commands()
    result = CliRunner().invoke(cli, ["inventory", "--html", str(target), str(manifests)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and f"{device_count(NODES, GPUS)} devices on {NODES} nodes" in result.stderr
    return target


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    assert BROWSER is not None
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    return subprocess.run([BROWSER, *flags, *args], capture_output=True, text=True, timeout=60, check=True)


def test_page_is_self_contained(page: Path):
    text = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "the page must fetch nothing"
    assert "@import" not in text and "url(" not in text and "<link" not in text
    assert re.findall(r"<script[^>]*>", text) == ["<script>"], "one inline script, none fetched"


@needs_browser
def test_browser_dom_holds_one_element_per_device(page: Path, tmp_path: Path):
    dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    devices = re.findall(r'<span class="device (\w+)" data-device="([^"]+)" data-state="(\w+)" data-shade="(\w+)"', dom)
    assert len(devices) == device_count(NODES, GPUS)
    assert len({d for _, d, _, _ in devices}) == len(devices)
    assert {s for _, _, s, _ in devices} >= {"free", "allocated", "tainted", "blocked"}
    assert all(cls == shade for cls, _, _, shade in devices)
    assert len(re.findall(r'<section class="node"', dom)) == NODES
    assert len(re.findall(r'<tr data-node="[^"]*" data-shade=', dom)) == device_count(NODES, GPUS)  # the table


@needs_browser
def test_filters_by_node_and_state_hide_cards_and_rows(page: Path, tmp_path: Path):
    """The filters read the page's address (#node=...&state=...), as a link to a view would set them."""
    dom = chromium(tmp_path, "--dump-dom", page.as_uri() + "#node=node-00").stdout
    shown = re.findall(r'<section class="node" id="[^"]+" data-node="([^"]+)">', dom)
    assert shown == [f"node-00{i}" for i in range(10)], "only the cards whose name holds node-00"
    dom = chromium(tmp_path, "--dump-dom", page.as_uri() + "#state=tainted").stdout
    cards = re.findall(r'<section class="node( hidden)?" id="[^"]+" data-node="([^"]+)">', dom)
    tainted = {node for hidden, node in cards if not hidden}
    assert tainted and len(tainted) < NODES
    rows = re.findall(r'<tr data-node="([^"]+)" data-shade="(\w+)"( class="hidden")?>', dom)
    assert {shade for _, shade, hidden in rows if not hidden} == {"tainted"}
    assert {node for node, _, hidden in rows if not hidden} == tainted


@needs_browser
def test_browser_screenshot_is_not_blank(page: Path, tmp_path: Path):
    image = screenshot(page.as_uri(), tmp_path)
    assert image.size == (1400, 900)
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20) or []}
    assert len(colours) > 20, "the screenshot is (nearly) one colour"
    free_green, allocated_blue = (0x43, 0xA0, 0x47), (0x1E, 0x88, 0xE5)
    assert free_green in colours and allocated_blue in colours


def screenshot(uri: str, tmp_path: Path, size: str = "1400,900"):
    from PIL import Image

    shot = tmp_path / "map.png"
    chromium(tmp_path, f"--window-size={size}", f"--screenshot={shot}", uri)
    return Image.open(shot).convert("RGB")


PROFILE = "gpu.example.com/profile"


def _partition(name: str, gpu: str, slots: range, profile: str) -> dict:
    return {
        "name": name,
        "attributes": {"profile": {"string": profile}},
        "consumesCounters": [{"counterSet": gpu, "counters": {f"slice-{s}": {"value": "1"} for s in slots}}],
    }


def mig_node(tmp_path: Path) -> Path:
    """gpu-0: 3g-0 (slices 0-3) allocated, so 1g-0..3 and 7g-0 are exhausted, 1g-4..6 and 3g-1 free.
    gpu-1: four 4g partitions at slices 0, 1, 2 and 3: each fits alone, only one of them fits."""
    devices = [_partition(f"gpu-0-1g-{i}", "gpu-0", range(i, i + 1), "1g") for i in range(7)]
    devices += [_partition("gpu-0-3g-0", "gpu-0", range(4), "3g"), _partition("gpu-0-3g-1", "gpu-0", range(4, 7), "3g")]
    devices += [_partition("gpu-0-7g-0", "gpu-0", range(7), "7g")]
    devices += [_partition(f"gpu-1-4g-at-{i}", "gpu-1", range(i, i + 4), "4g") for i in range(4)]
    counters = [{"name": g, "counters": {f"slice-{s}": {"value": "1"} for s in range(7)}} for g in ("gpu-0", "gpu-1")]
    docs = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-a-gpus"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "node-a",
                "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
                "partitionTypeAttribute": PROFILE,
                "sharedCounters": counters,
                "devices": devices,
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "train", "namespace": "team-a"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0-3g-0"}
                        ]
                    }
                }
            },
        },
    ]
    manifests = tmp_path / "node-a.yaml"
    manifests.write_text(yaml.safe_dump_all(docs))
    target = tmp_path / "map.html"
    load_all_commands()
    result = CliRunner().invoke(cli, ["inventory", "--html", str(target), str(manifests)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return target


def test_rows_by_partition_type_counter_bars_and_shades(tmp_path: Path):
    text = mig_node(tmp_path).read_text()
    shades = dict(re.findall(r'data-device="gpu.example.com/node-a/([^"]+)" data-state="\w+" data-shade="(\w+)"', text))
    assert shades["gpu-0-7g-0"] == shades["gpu-0-1g-0"] == "blocked"  # its counters are used up: not free
    assert shades["gpu-0-1g-4"] == shades["gpu-0-3g-1"] == "free" and shades["gpu-0-3g-0"] == "allocated"
    assert {shades[f"gpu-1-4g-at-{i}"] for i in range(4)} == {"overlap"}  # free alone, one of four fits
    rows = re.findall(r'<div class="row" data-type="(\w+)"><span class="type"[^>]*>([^<]*)</span>', text)
    assert rows == [("1g", "1g"), ("3g", "3g"), ("7g", "7g"), ("4g", "4g 1/4 fit")]
    bars = re.findall(r'<span class="text">([^<]*)</span>', text)
    assert bars == ["slices 4/7", "slices 0/7"]
    assert "<td>gpu-0-1g-0</td>" in text and 'title="gpu.example.com/node-a/gpu-1-4g-at-3: free, but' in text
    fleet = re.search(r'<table class="fleet">.*?</table>', text)
    assert fleet is not None
    cells = re.findall(r"<td>(.*?)</td>", fleet.group())
    assert cells[1:] == ["2", "4", "10", "4g ×1"]  # two physical GPUs, slices used and free, largest free


@needs_browser
def test_screenshot_shows_an_exhausted_partition_grey_and_a_free_one_green(tmp_path: Path):
    """The page's own colours at known places: a test style moves three boxes to the corner, big."""
    page = mig_node(tmp_path)
    place = "position:fixed;top:0;width:200px;height:200px;z-index:9"
    style = (
        f'<style>[data-device$="/gpu-0-7g-0"]{{{place};left:0}}[data-device$="/gpu-0-1g-4"]{{{place};left:300px}}'
        f'[data-device$="/gpu-1-4g-at-1"]{{{place};left:600px}}</style></head>'
    )
    page.write_text(page.read_text().replace("</head>", style, 1))
    image = screenshot(page.as_uri(), tmp_path, "1000,600")
    assert image.getpixel((100, 150)) == (0x9E, 0x9E, 0x9E), "the exhausted 7g partition is grey"
    assert image.getpixel((400, 150)) == (0x43, 0xA0, 0x47), "the free 1g partition is green"
    assert image.getpixel((700, 150)) == (0xC5, 0xE1, 0xA5), "an overlapping free 4g partition is pale"


def test_counter_sets_of_two_drivers_with_the_same_names_are_two_groups(tmp_path: Path):
    target = tmp_path / "map.html"
    data = Path(__file__).parent / "data" / "inventory" / "two-drivers-same-counter-set.yaml"
    load_all_commands()
    result = CliRunner().invoke(cli, ["inventory", "--html", str(target), str(data)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    labels = re.findall(r'<div class="group" data-group="([^"]*)">', target.read_text())
    assert labels == ["gpu.example.com: node-a/dev-0", "npu.example.com: node-a/dev-0"]


def test_rows_show_what_tells_partitions_apart_never_a_word_cut():
    from drasat.cli.render.html import render_map
    from drasat.solver.report.device_states import DeviceReport, NodeReport

    devices = [
        DeviceReport(
            "gpu.example.com", "node-a", f"gpu-0-1g-at-{i}", "free", partition_type="1g", counter_sets=["gpu-0"]
        )
        for i in range(3)
    ] + [
        DeviceReport("gpu.example.com", "node-a", "gpu-0-7g.80gb", "free", partition_type="7g", counter_sets=["gpu-0"])
    ]
    text = render_map([NodeReport("node-a", devices=devices)])
    drawn = re.findall(r'<span class="device \w+" data-device="[^"]+"[^>]*>([^<]*)</span>', text)
    assert drawn == ["0", "1", "2", "gpu-0-7g.80gb"]  # after the shared "gpu-0-1g-at-"; a lone name whole
    assert "names gpu-0-1g-at-…" in text  # the shared start, on the row's title
