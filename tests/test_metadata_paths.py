"""``drasat metadata`` never writes outside ``--out``: every name that becomes a path segment is checked as the
API server checks it, before anything is written, and a path resolving elsewhere (a link) is refused too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

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
