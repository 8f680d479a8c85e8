"""``drasat metadata``: the seed's GPU example field for field, the protocol's paths, atomic writes, bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

from .shared_inputs import SHARED

GPU = Path(__file__).parent / "data" / "metadata" / "gpu.yaml"
SEED = SHARED / "seeds" / "000_6fca26b38f54023b.txt"
TWO_PODS = Path(__file__).parent / "data" / "metadata" / "two-pods-one-template.yaml"
FILE = "gpu-test1/pods/pod0/resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json"


def run(*args: str, stdin: str | None = None):
    load_all_commands()
    return CliRunner().invoke(cli, ["metadata", *args], input=stdin, catch_exceptions=False)


def written(result) -> list[str]:
    """The paths the command's table lists: its first column, below the header row."""
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["PATH", "CLAIM"], result.stdout
    return [line.split()[0] for line in lines[1:]]


def read_stream(path: Path) -> list[dict]:
    """Decode a JSON stream the way a consumer does: object after object."""
    text, objects, at = path.read_text(), [], 0
    decoder = json.JSONDecoder()
    while text[at:].strip():
        obj, end = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
        objects.append(obj)
        at = end
    return objects


def seed_examples() -> dict[str, dict]:
    """The seed document's DeviceMetadata examples, by apiVersion."""
    text = SEED.read_text(encoding="utf-8")
    found = {}
    for start in [i for i in range(len(text)) if text.startswith('{\n  "kind": "DeviceMetadata"', i)]:
        obj, _ = json.JSONDecoder().raw_decode(text, start)
        found[obj["apiVersion"]] = obj
    return found


@pytest.mark.usefixtures("shared")  # skips with the one shared-inputs reason
def test_seed_gpu_example_reproduced_field_for_field(tmp_path: Path):
    result = run("--out", str(tmp_path), str(GPU))
    assert result.exit_code == 0, result.stderr
    assert written(result) == [str(tmp_path / FILE)]
    stream = read_stream(tmp_path / FILE)
    seed = seed_examples()
    assert set(seed) == {"metadata.resource.k8s.io/v1beta1", "metadata.resource.k8s.io/v1alpha1"}
    assert [obj["apiVersion"] for obj in stream] == [
        "metadata.resource.k8s.io/v1beta1",
        "metadata.resource.k8s.io/v1alpha1",
    ]
    for obj in stream:
        assert obj == seed[obj["apiVersion"]]
        assert list(obj) == list(seed[obj["apiVersion"]])  # same field order too


def test_directly_named_claim_and_subrequest_path(tmp_path: Path):
    text = GPU.read_text().replace("  annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n", "")
    text = text.replace("{request: gpu, driver", "{request: gpu/high-memory, driver")
    text = text.replace("  - {name: gpu, resourceClaimName: pod0-gpu-2kqrd}\n", "")
    result = run("--out", str(tmp_path), "-", stdin=text)
    assert result.exit_code == 0, result.stderr
    written = (
        tmp_path / "gpu-test1/claims/pod0-gpu-2kqrd/resourceclaims/pod0-gpu-2kqrd/gpu/gpu.example.com-metadata.json"
    )
    first = read_stream(written)[0]
    assert "podClaimName" not in first
    assert first["requests"][0]["name"] == "gpu/high-memory"
    assert "capacity" not in json.dumps(first) and "80Gi" not in written.read_text()


def test_pod_status_marks_a_claim_as_generated_from_a_template(tmp_path: Path):
    text = GPU.read_text().replace("  annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n", "")
    assert run("--out", str(tmp_path), "-", stdin=text).exit_code == 0
    assert read_stream(tmp_path / FILE)[0]["podClaimName"] == "gpu"


def test_one_file_per_driver_and_no_temporary_files_left(tmp_path: Path):
    extra = """---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: worker-0-nic}
spec:
  driver: nic.example.com
  nodeName: worker-0
  pool: {name: worker-0, generation: 1, resourceSliceCount: 1}
  devices:
  - name: eth1
"""
    text = (
        GPU.read_text().replace(
            "      - {request: gpu, driver: gpu.example.com, pool: worker-0, device: gpu-0}\n",
            "      - {request: gpu, driver: gpu.example.com, pool: worker-0, device: gpu-0}\n"
            "      - {request: gpu, driver: nic.example.com, pool: worker-0, device: eth1}\n",
        )
        + extra
    )
    result = run("--out", str(tmp_path), "-", stdin=text)
    assert result.exit_code == 0, result.stderr
    folder = tmp_path / "gpu-test1/pods/pod0/resourceclaimtemplates/gpu/gpu"
    assert sorted(os.listdir(folder)) == ["gpu.example.com-metadata.json", "nic.example.com-metadata.json"]
    nic = read_stream(folder / "nic.example.com-metadata.json")[0]
    assert nic["requests"][0]["devices"] == [{"driver": "nic.example.com", "pool": "worker-0", "name": "eth1"}]


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda t: t.replace("device: gpu-0}", "device: gpu-7}"),
            "ResourceClaim gpu-test1/pod0-gpu-2kqrd: status.allocation.devices.results: device "
            "gpu.example.com/worker-0/gpu-7 is in no ResourceSlice of the input",
        ),
        (
            lambda t: (
                t
                + t[
                    t.index("---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim") : t.index("---\napiVersion: v1")
                ]
                .replace("name: pod0-gpu-2kqrd", "name: pod1-gpu-x7k2p")
                .replace("device: gpu-0", "device: gpu-1")
                .replace("  allocation:", "  reservedFor: [{resource: pods, name: pod0, uid: p0}]\n  allocation:")
            ),
            "would both write gpu-test1/pods/pod0/resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json",
        ),
    ],
)
def test_bad_input_writes_nothing_and_exits_2(tmp_path: Path, edit, message):
    result = run("--out", str(tmp_path / "out"), "-", stdin=edit(GPU.read_text()))
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_claim_filter_exits_2(tmp_path: Path):
    result = run("--out", str(tmp_path), "--claim", "gpu-test1/nope", str(GPU))
    assert result.exit_code == 2 and "--claim: no ResourceClaim gpu-test1/nope" in result.stderr


def test_two_pods_from_one_template_each_get_their_own_tree(tmp_path: Path):
    """Both generated claims say podClaimName gpu: each lands in its pod's tree, neither is refused."""
    text = TWO_PODS.read_text().replace(
        "  annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n",
        "  annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n"
        "  ownerReferences: [{apiVersion: v1, kind: Pod, name: pod0, uid: p0, controller: true}]\n",
        1,
    )
    text = text.replace(
        "  allocation:\n    devices:\n      results:\n      - {request: gpu, driver",
        "  reservedFor: [{resource: pods, name: pod1, uid: p1}]\n"
        "  allocation:\n    devices:\n      results:\n      - {request: gpu, driver",
    )
    result = run("--out", str(tmp_path), "-", stdin=text)
    assert result.exit_code == 0, result.stderr
    tail = "resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json"
    assert written(result) == [str(tmp_path / "ns/pods" / pod / tail) for pod in ("pod0", "pod1")]
    names = [read_stream(tmp_path / "ns/pods" / pod / tail)[0]["metadata"]["name"] for pod in ("pod0", "pod1")]
    assert names == ["pod0-gpu-aaaaa", "pod1-gpu-bbbbb"]


def test_same_claim_name_in_two_namespaces_and_unconsumed_claims(tmp_path: Path):
    """Without consumers each claim gets its namespace's claims/<claim> tree: no clash across namespaces."""
    text = TWO_PODS.read_text().replace(
        "name: pod1-gpu-bbbbb\n  namespace: ns", "name: pod0-gpu-aaaaa\n  namespace: other"
    )
    result = run("--out", str(tmp_path), "-", stdin=text)
    assert result.exit_code == 0, result.stderr
    tail = "resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json"
    assert written(result) == [str(tmp_path / ns / "claims/pod0-gpu-aaaaa" / tail) for ns in ("ns", "other")]
