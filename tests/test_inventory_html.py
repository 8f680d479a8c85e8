"""The allocation map opened in headless Chromium: one DOM element per device, a screenshot that is not blank."""

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
    assert "<script" not in text and "@import" not in text and "url(" not in text


@needs_browser
def test_browser_dom_holds_one_element_per_device(page: Path, tmp_path: Path):
    dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    devices = re.findall(r'<g class="device" data-device="([^"]+)" data-state="(\w+)"', dom)
    assert len(devices) == device_count(NODES, GPUS)
    assert len(set(d for d, _ in devices)) == len(devices)
    assert {s for _, s in devices} >= {"free", "allocated", "tainted", "blocked"}
    assert len(re.findall(r'<section class="node"', dom)) == NODES


@needs_browser
def test_browser_screenshot_is_not_blank(page: Path, tmp_path: Path):
    from PIL import Image

    shot = tmp_path / "map.png"
    chromium(tmp_path, "--window-size=1400,900", f"--screenshot={shot}", page.as_uri())
    image = Image.open(shot).convert("RGB")
    assert image.size == (1400, 900)
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20) or []}
    assert len(colours) > 20, "the screenshot is (nearly) one colour"
    free_green, allocated_blue = (0x43, 0xA0, 0x47), (0x1E, 0x88, 0xE5)
    assert free_green in colours and allocated_blue in colours


def test_counter_sets_of_two_drivers_with_the_same_names_are_two_groups(tmp_path: Path):
    target = tmp_path / "map.html"
    data = Path(__file__).parent / "data" / "inventory" / "two-drivers-same-counter-set.yaml"
    load_all_commands()
    result = CliRunner().invoke(cli, ["inventory", "--html", str(target), str(data)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    text = target.read_text()
    labels = re.findall(r'<g class="group"[^>]*><rect[^>]*/><text[^>]*>([^<]*)</text>', text)
    assert labels == ["gpu.example.com: node-a/dev-0", "npu.example.com: node-a/dev-0"]


def test_long_partition_names_keep_their_distinguishing_end():
    from drasat.cli.render.html import render_map
    from drasat.solver.report.device_states import DeviceReport, NodeReport

    devices = [
        DeviceReport(
            "gpu.example.com", "node-a", f"gpu-0-1g-at-{i}", "free", partition_type="1g", counter_sets=["gpu-0"]
        )
        for i in range(3)
    ]
    text = render_map([NodeReport("node-a", devices=devices)])
    drawn = re.findall(r'<text x="3" y="14">([^<]*)</text>', text)
    assert len(drawn) == 3 and len(set(drawn)) == 3
    assert all(name.endswith(f"at-{i}") and len(name) <= 7 for i, name in enumerate(drawn))
