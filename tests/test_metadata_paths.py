"""``drasat metadata`` never writes outside ``--out``: every name that becomes a path segment is checked as the
API server checks it, before anything is written, and a path resolving elsewhere (a link) is refused too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from drasat.cli.commands import metadata as metadata_command
from drasat.cli.main import cli, load_all_commands

GPU = Path(__file__).parent / "data" / "metadata" / "gpu.yaml"
CLAIM_META = "  name: pod0-gpu-2kqrd\n  namespace: gpu-test1\n"
RESULT = "{request: gpu, driver: gpu.example.com, pool: worker-0, device: gpu-0}"


def snapshot(root: Path) -> dict[str, int]:
    """Every path below ``root`` (folders too) with its size: what a stray write or makedirs would change."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            found[str(path.relative_to(root))] = 0 if path.is_dir() else path.stat().st_size
    return found


def traversal_cases(outside: Path) -> dict[str, tuple[str, str]]:
    """name -> (manifest, the field the message must name)."""
    gpu = GPU.read_text()

    def meta(namespace: str, name: str = "pod0-gpu-2kqrd") -> str:
        text = gpu.replace(CLAIM_META, f"  name: {name!r}\n  namespace: {namespace!r}\n")
        return text.replace(
            "metadata: {name: pod0, namespace: gpu-test1}", f"metadata: {{name: pod0, namespace: {namespace!r}}}"
        )

    unconsumed = gpu[: gpu.index("---\napiVersion: v1\nkind: Pod")]
    return {
        "namespace ..": (meta(".."), "metadata.namespace"),
        "namespace ../../x": (meta("../../x"), "metadata.namespace"),
        "absolute namespace": (meta(str(outside / "abs")), "metadata.namespace"),
        "claim name ..": (unconsumed.replace("name: pod0-gpu-2kqrd", "name: '..'"), "metadata.name"),
        "claim name with /": (unconsumed.replace("name: pod0-gpu-2kqrd", "name: '../../../x'"), "metadata.name"),
        "reservedFor ..": (
            unconsumed.replace("  allocation:", "  reservedFor: [{resource: pods, name: '..', uid: u}]\n  allocation:"),
            "status.reservedFor[0].name",
        ),
        "reservedFor ../../x": (
            unconsumed.replace(
                "  allocation:", "  reservedFor: [{resource: pods, name: '../../../x', uid: u}]\n  allocation:"
            ),
            "status.reservedFor[0].name",
        ),
        "owner ..": (
            unconsumed.replace(
                "  uid: c7e7",
                "  ownerReferences: [{apiVersion: v1, kind: Pod, name: '..', uid: p, controller: true}]\n  uid: c7e7",
            ),
            "metadata.ownerReferences[0].name",
        ),
        "pod claim annotation": (
            gpu.replace("pod-claim-name: gpu}", "pod-claim-name: '../../../../x'}"),
            "metadata.annotations[resource.kubernetes.io/pod-claim-name]",
        ),
        "pod claim status": (
            gpu.replace("  annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n", "").replace(
                "  - {name: gpu, resourceClaimName: pod0-gpu-2kqrd}",
                "  - {name: '../../..', resourceClaimName: pod0-gpu-2kqrd}",
            ),
            "status.resourceClaimStatuses[0].name",
        ),
        "pod name": (
            gpu.replace(
                "  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: single-gpu}",
                "  resourceClaims:\n  - {name: gpu, resourceClaimName: pod0-gpu-2kqrd}",
            )
            .replace("metadata: {name: pod0, namespace: gpu-test1}", "metadata: {name: '..', namespace: gpu-test1}")
            .replace("status:\n  resourceClaimStatuses:\n  - {name: gpu, resourceClaimName: pod0-gpu-2kqrd}\n", ""),
            "Pod/gpu-test1/..: metadata.name",
        ),
        "request ..": (gpu.replace("{request: gpu, driver", "{request: '..', driver"), "results[0].request"),
        "driver ../x": (
            gpu.replace(RESULT, RESULT.replace("driver: gpu.example.com", "driver: ../../x")),
            "results[0].driver",
        ),
    }


CASES = sorted(traversal_cases(Path("/placeholder")))


@pytest.mark.parametrize("case", CASES)
def test_a_traversal_manifest_leaves_everything_outside_out_untouched(tmp_path: Path, case: str) -> None:
    outside = tmp_path / "outside"
    out = outside / "a" / "b" / "out"
    out.mkdir(parents=True)
    (outside / "keep.txt").write_text("untouched\n")
    manifest, field = traversal_cases(outside)[case]
    before = snapshot(tmp_path)
    load_all_commands()
    result = CliRunner().invoke(cli, ["metadata", "--out", str(out), "-"], input=manifest, catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert field in result.stderr and "stdin" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(tmp_path) == before


def test_a_link_inside_out_that_leads_outside_is_refused(tmp_path: Path) -> None:
    outside, out = tmp_path / "outside", tmp_path / "out"
    outside.mkdir()
    out.mkdir()
    (out / "gpu-test1").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    load_all_commands()
    result = CliRunner().invoke(cli, ["metadata", "--out", str(out), str(GPU)], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert "ResourceClaim gpu-test1/pod0-gpu-2kqrd" in result.stderr and "outside --out" in result.stderr
    assert snapshot(outside) == before


def test_valid_names_still_write(tmp_path: Path) -> None:
    load_all_commands()
    result = CliRunner().invoke(cli, ["metadata", "--out", str(tmp_path), str(GPU)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "gpu-test1/pods/pod0/resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json").is_file()


CORPUS = sorted((Path(__file__).parent / "fuzz_corpus").glob("metadata-*.yaml"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_the_corpus_traversal_inputs_write_nothing(tmp_path: Path, path: Path) -> None:
    out = tmp_path / "a" / "out"
    out.mkdir(parents=True)
    before = snapshot(tmp_path)
    load_all_commands()
    result = CliRunner().invoke(cli, ["metadata", "--out", str(out), str(path)], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert snapshot(tmp_path) == before
    assert not Path(os.sep, "tmp", "drasat-fuzz-escape").exists()  # the absolute namespace of one of them


def test_the_corpus_has_the_traversal_inputs() -> None:
    assert len(CORPUS) >= 3


FILE = Path("gpu-test1/pods/pod0/resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json")


def metadata_run(out: Path) -> subprocess.CompletedProcess[str]:
    """A process of its own: a FIFO opened for writing would block the test for ever."""
    command = [sys.executable, "-m", "drasat.cli", "metadata", "--out", str(out), str(GPU)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def plant(out: Path, what: str) -> Path:
    """Something other than a regular file or a folder where drasat names a file or a folder below ``out``."""
    (out / FILE.parent).mkdir(parents=True)
    (out / "kept.json").write_text("kept\n")
    if what == "fifo":
        os.mkfifo(out / FILE)
        return out / FILE
    if what == "file link":
        (out / FILE).symlink_to(out / "kept.json")
        return out / FILE
    folder = out / "gpu-test1" / "pods"
    os.rename(folder, out / "real-pods")
    folder.symlink_to(out / "real-pods", target_is_directory=True)  # a link that stays inside --out
    return folder


@pytest.mark.parametrize("what, named", [("fifo", "a FIFO"), ("file link", "a link"), ("folder link", "a link")])
def test_what_drasat_names_below_out_is_a_regular_file_or_nothing(tmp_path: Path, what: str, named: str) -> None:
    out = tmp_path / "out"
    planted = plant(out, what)
    before = snapshot(tmp_path)
    result = metadata_run(out)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr.startswith(f"error: ResourceClaim gpu-test1/pod0-gpu-2kqrd: cannot write {out / FILE}: ")
    assert f"{planted} is {named}" in result.stderr or f"it is {named}" in result.stderr, result.stderr
    assert snapshot(tmp_path) == before and (out / "kept.json").read_text() == "kept\n"


def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(tmp_path: Path, monkeypatch) -> None:
    outside, out = tmp_path / "outside", tmp_path / "out"
    outside.mkdir()
    (out / FILE.parent).mkdir(parents=True)
    checked = metadata_command._inside

    def swapped_after_the_check(out_dir: str, entry: Any) -> str:
        target = checked(out_dir, entry)
        shutil.rmtree(out / "gpu-test1")
        (out / "gpu-test1").symlink_to(outside, target_is_directory=True)  # what another user could do meanwhile
        return target

    monkeypatch.setattr(metadata_command, "_inside", swapped_after_the_check)
    load_all_commands()
    result = CliRunner().invoke(cli, ["metadata", "--out", str(out), str(GPU)], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert (
        result.stderr
        == f"error: cannot write {out / FILE}: {out / 'gpu-test1'} is a link (drasat follows none below --out)\n"
    )
    assert list(outside.iterdir()) == []
