"""Loading: every input shape users feed drasat, and every way input can be broken, without a traceback."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from drasat.models.bundle import Bundle
from drasat.models.core import Node, Pod
from drasat.models.loader import load_paths, load_text
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.models.yaml_io import MAX_DEPTH, expansion_excess, parse_documents

from .helpers_models import REPO

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: {name}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {{name: node-1, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: gpu-0
    capacity:
      memory: {{value: 80Gi}}
"""
CLASS = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"

KUBECTL_LIST = """\
apiVersion: v1
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata:
    creationTimestamp: "2026-03-01T10:00:00Z"
    finalizers:
    - resource.kubernetes.io/delete-protection
    generation: 1
    managedFields:
    - apiVersion: resource.k8s.io/v1
      fieldsType: FieldsV1
      fieldsV1:
        f:spec:
          f:devices:
            f:requests: {}
      manager: kubectl-client-side-apply
      operation: Update
      time: "2026-03-01T10:00:00Z"
    name: trainer
    namespace: ml
    resourceVersion: "48121"
    uid: 3b9e6f1c-8d2a-4e7b-a5c3-1f0d9e8b7a62
  spec:
    devices:
      requests:
      - exactly:
          allocationMode: ExactCount
          count: 1
          deviceClassName: gpu.example.com
        name: gpu
  status:
    allocation:
      allocationTimestamp: "2026-03-01T10:00:02Z"
      devices:
        results:
        - device: gpu-0
          driver: gpu.example.com
          pool: node-1
          request: gpu
      nodeSelector:
        nodeSelectorTerms:
        - matchFields:
          - key: metadata.name
            operator: In
            values:
            - node-1
    reservedFor:
    - name: trainer-0
      resource: pods
      uid: 6a1f0e2d-3c4b-4a59-8e7d-9b0c1d2e3f40
- apiVersion: v1
  kind: Node
  metadata:
    labels:
      kubernetes.io/hostname: node-1
    name: node-1
  spec:
    podCIDR: 10.244.1.0/24
    providerID: kind://docker/kind/node-1
  status:
    allocatable:
      cpu: "8"
      memory: 32Gi
    nodeInfo:
      kubeletVersion: v1.37.0
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
kind: List
metadata:
  resourceVersion: ""
"""


def only(bundle: Bundle) -> list[str]:
    return [str(p) for p in bundle.problems]


# --- shapes of input -------------------------------------------------------------------------------


def test_multi_document_yaml_in_order_with_empty_documents() -> None:
    bundle = load_text("---\n" + SLICE.format(name="a") + "---\n---\n" + CLASS + "---\n", "x.yaml")
    assert only(bundle) == []
    assert [type(o).__name__ for o in bundle] == ["ResourceSlice", "DeviceClass"]
    assert [loaded.location.document for loaded in bundle.objects] == [0, 2]  # a leading --- opens document 0


def test_kubectl_list_output_loads_as_is() -> None:
    bundle = load_text(KUBECTL_LIST, "get.yaml")
    assert only(bundle) == []
    claim = bundle.by_name(ResourceClaim, "trainer", "ml")
    assert claim is not None and claim.status is not None and claim.status.allocation is not None
    assert claim.metadata.creation_timestamp == "2026-03-01T10:00:00Z"
    node = bundle.by_name(Node, "node-1")
    assert node is not None and node.status is not None and str(node.status.allocatable["memory"]) == "32Gi"
    assert node.to_api()["spec"]["providerID"] == "kind://docker/kind/node-1"  # untyped Node fields are kept
    assert [loaded.location.path for loaded in bundle.objects] == ["items[0]", "items[1]"]
    assert bundle.notices == ["get.yaml: skipped 1 apps/v1 Deployment object: drasat does not use this kind"]


def test_typed_list_items_take_the_list_kind() -> None:
    text = json.dumps(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSliceList",
            "metadata": {},
            "items": [
                {
                    "metadata": {"name": "s"},
                    "spec": {
                        "driver": "d.example.com",
                        "allNodes": True,
                        "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                    },
                }
            ],
        }
    )
    bundle = load_text(text, "slices.json")
    assert only(bundle) == [] and [o.name for o in bundle.of_kind(ResourceSlice)] == ["s"]


def test_problems_inside_list_items_name_the_item() -> None:
    text = KUBECTL_LIST.replace("        name: gpu\n", "        name: gpu\n        nam: x\n")
    (problem,) = load_text(text, "get.yaml").problems
    assert str(problem).startswith("get.yaml[0]: ResourceClaim/ml/trainer: items[0].spec.devices.requests[0].nam:")


def test_json_documents() -> None:
    data = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}}
    bundle = load_text(json.dumps(data, indent=2), "c.json")
    assert only(bundle) == [] and bundle.of_kind(DeviceClass)[0].name == "c"


def test_directories_are_read_recursively_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "b" / "2.yml").write_text(SLICE.format(name="two"))
    (tmp_path / "a.yaml").write_text(SLICE.format(name="one"))
    (tmp_path / "c.json").write_text(
        json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "three"}})
    )
    (tmp_path / "notes.txt").write_text("not: a manifest")
    (tmp_path / ".hidden" / "x.yaml").write_text("broken: [")
    bundle = load_paths([str(tmp_path)])
    assert only(bundle) == []
    assert [o.name for o in bundle] == ["one", "two", "three"]


def test_empty_directory_is_a_notice(tmp_path: Path) -> None:
    bundle = load_paths([str(tmp_path)])
    assert bundle.ok and len(bundle) == 0 and "no *.yaml, *.yml or *.json files" in bundle.notices[0]


def test_stdin_text_and_bytes() -> None:
    assert [o.name for o in load_paths(["-"], stdin=io.StringIO(CLASS))] == ["gpu.example.com"]
    binary = io.TextIOWrapper(io.BytesIO(CLASS.encode()), encoding="utf-8")
    bundle = load_paths(["-"], stdin=binary)
    assert [o.name for o in bundle] == ["gpu.example.com"]
    assert bundle.objects[0].location.file == "<stdin>"


def test_example_directory_loads_without_problems() -> None:
    bundle = load_paths([str(REPO / "examples")])
    assert only(bundle) == [] and len(bundle.of_kind(ResourceSlice)) == 4 and len(bundle.of_kind(Node)) == 2


# --- what is kept as written --------------------------------------------------------------------------


def test_timestamps_and_date_like_labels_stay_text() -> None:
    text = (
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  creationTimestamp: 2026-01-02T03:04:05Z\n"
        "  labels: {installed: 2026-01-02}\n"
    )
    (node,) = list(load_text(text))
    assert node.metadata.creation_timestamp == "2026-01-02T03:04:05Z"
    assert node.metadata.labels == {"installed": "2026-01-02"}


def test_null_fields_mean_absent() -> None:
    text = SLICE.format(name="a") + "    attributes:\n    taints:\n"
    (obj,) = list(load_text(text))
    assert isinstance(obj, ResourceSlice) and obj.spec.devices[0].taints == []
    assert "taints" not in obj.to_api()["spec"]["devices"][0]


def test_python_attribute_names_are_not_api_fields() -> None:
    text = CLASS + "spec:\n  extended_resource_name: example.com/gpu\n"
    (problem,) = load_text(text, "c.yaml").problems
    assert 'unknown field "extended_resource_name"' in problem.message
    assert 'did you mean "extendedResourceName"' in problem.message


# --- broken input: problems, never exceptions ----------------------------------------------------------


def test_yaml_syntax_error_names_line_and_column_and_keeps_earlier_documents() -> None:
    bundle = load_text(CLASS + "---\nkind: [unclosed\n", "broken.yaml")
    assert [o.name for o in bundle] == ["gpu.example.com"]
    (problem,) = bundle.problems
    assert str(problem).startswith("broken.yaml[1]: YAML error at line 6, column 1")


def test_duplicate_keys_are_errors() -> None:
    (problem,) = load_text(CLASS + "metadata: {name: other}\n", "dup.yaml").problems
    assert "the key 'metadata' appears twice" in problem.message and "line 4" in problem.message


def test_unknown_fields_and_wrong_types_name_each_field() -> None:
    text = SLICE.format(name="a").replace("nodeName", "nodname").replace("generation: 1", "generation: one")
    assert only(load_text(text, "s.yaml")) == [
        's.yaml[0]: ResourceSlice/a: spec.pool.generation: must be a whole number, not the text "one"',
        's.yaml[0]: ResourceSlice/a: spec.nodname: is not a field Kubernetes knows here (unknown field "nodname"); '
        'did you mean "nodeName"?',
    ]


def test_bad_quantity_is_a_problem_at_its_field() -> None:
    (problem,) = load_text(SLICE.format(name="a").replace("80Gi", "80GB"), "s.yaml").problems
    assert problem.location.path == 'spec.devices[0].capacity["memory"].value'
    assert "is not a quantity" in problem.message


def test_one_bad_object_does_not_stop_the_others() -> None:
    bundle = load_text(SLICE.format(name="a") + "---\n" + CLASS.replace("kind", "knd") + "---\n" + CLASS)
    assert [o.name for o in bundle] == ["a", "gpu.example.com"]
    assert len(bundle.problems) == 1


@pytest.mark.parametrize(
    "text, words",
    [
        ("- just\n- a list\n", "expected a mapping with apiVersion and kind, found a list"),
        ("plain text\n", "found text"),
        ("metadata: {name: x}\n", "apiVersion and kind must both be given"),
        (
            "apiVersion: resource.k8s.io/v9\nkind: ResourceSlice\nmetadata: {name: x}\n",
            "drasat does not know ResourceSlice in resource.k8s.io/v9",
        ),
        (
            "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceTaintRule\nmetadata: {name: x}\n",
            "it reads resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1alpha3",
        ),
        ("apiVersion: v1\nkind: List\nitems: {a: 1}\n", "must be a list"),
        ("!!python/object/apply:os.system ['true']\n", "could not determine a constructor"),
    ],
    ids=["list", "scalar", "no kind", "unknown version", "version without the kind", "list items", "python tag"],
)
def test_documents_that_are_not_objects(text: str, words: str) -> None:
    bundle = load_text(text, "x.yaml")
    assert len(bundle) == 0 and len(bundle.problems) == 1
    assert words in bundle.problems[0].message


def test_unused_kinds_and_scenarios_are_skipped_with_one_notice_for_the_input() -> None:
    text = (
        "apiVersion: scenario.drasat.dev/v1\nkind: Scenario\nmetadata: {name: s}\n---\n"
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n---\n" + CLASS
    )
    bundle = load_text(text, "s.yaml")
    assert bundle.ok and [o.name for o in bundle] == ["gpu.example.com"]
    assert bundle.notices == [
        "s.yaml: skipped 1 scenario.drasat.dev/v1 Scenario and 1 kubescheduler.config.k8s.io/v1 "
        "KubeSchedulerConfiguration objects: drasat does not use these kinds"
    ]


def test_alias_bomb_is_refused() -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        levels.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 10) + "]")
    bundle = load_text("\n".join(levels) + "\n", "bomb.yaml")
    (problem,) = bundle.problems
    assert "expands to more than" in problem.message and "aliases" in problem.message


def test_self_referencing_alias_is_refused() -> None:
    (problem,) = load_text("apiVersion: v1\nkind: Node\nmetadata: &m {name: n, labels: *m}\n", "loop.yaml").problems
    assert "expands to more than" in problem.message


def test_expansion_limit_counts_every_alias_use() -> None:
    shared = ["x"] * 10
    assert expansion_excess([shared] * 10, max_nodes=200) is None
    assert expansion_excess([shared] * 30, max_nodes=200) is not None


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000 + "]" * 100_000, "- " * 50_000 + "x\n", "{a: " * 3000 + "1" + "}" * 3000],
    ids=["flow lists", "block lists", "flow maps"],
)
def test_deep_nesting_is_refused_without_crashing(text: str) -> None:
    (problem,) = load_text(text, "deep.yaml").problems
    assert f"nested more than {MAX_DEPTH} levels deep" in problem.message


@pytest.mark.parametrize("fast", [False, True], ids=["reference", "fast"])
def test_deep_nesting_names_the_document_and_line(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    from drasat.models import fast_parse

    if fast:
        pytest.importorskip("yaml_rs")
        monkeypatch.setattr(fast_parse, "FAST_FROM_BYTES", 0)
    text = "a: 1\n---\nb: 2\n---\nc: " + "[" * 5000 + "]" * 5000 + "\n---\nd: 4\n"
    *read, last = parse_documents(text, "deep.yaml")
    assert [d.data for d in read] == [{"a": 1}, {"b": 2}] and last.problem is not None
    assert last.problem.location.document == 2  # the stream ends there, as at any syntax error
    assert last.problem.message.startswith(f"is nested more than {MAX_DEPTH} levels deep at line 5, column ")


def test_binary_garbage_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "garbage.yaml"
    path.write_bytes(bytes(range(256)) * 64)
    (problem,) = load_paths([str(path)]).problems
    assert problem.location.file == str(path) and "binary file" in problem.message


def test_non_utf8_is_refused_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(CLASS.encode() + "  labels: {owner: J\xfcrgen}\n".encode("latin-1"))
    (problem,) = load_paths([str(path)]).problems
    assert "is not UTF-8 text: byte 0xfc on line 4" in problem.message


def test_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + CLASS.encode())
    assert load_paths([str(path)]).ok


def test_huge_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text(CLASS + "#" * 3 * 1024 * 1024)
    (problem,) = load_paths([str(path)], max_bytes=2 * 1024 * 1024).problems
    assert "is larger than 2 MiB" in problem.message


def test_missing_paths_are_problems() -> None:
    (problem,) = load_paths(["/no/such/file.yaml"]).problems
    assert str(problem) == "/no/such/file.yaml: no such file or directory"


# --- the inventory ------------------------------------------------------------------------------------


def test_duplicates_are_problems_and_namespaces_keep_objects_apart() -> None:
    claim = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c, namespace: {ns}{more}}}\n"
        "spec: {{devices: {{requests: []}}}}\n"
    )
    other_class = CLASS + "spec: {selectors: [{cel: {expression: 'true'}}]}\n"  # the same name, other content
    text = "---\n".join(
        [
            claim.format(ns="a", more=""),
            claim.format(ns="b", more=""),
            claim.format(ns="a", more=", labels: {x: y}"),
            CLASS,
            other_class,
        ]
    )
    bundle = load_text(text, "d.yaml")
    assert len(bundle) == 5
    assert only(bundle) == [
        "d.yaml[2]: ResourceClaim/a/c: duplicate: ResourceClaim 'c' in namespace 'a' is already defined at d.yaml[0]",
        "d.yaml[4]: DeviceClass/gpu.example.com: duplicate: DeviceClass 'gpu.example.com' is already defined at "
        "d.yaml[3]",
    ]
    assert bundle.objects[2].problems == [bundle.problems[0]]


def test_a_later_copy_of_the_same_object_replaces_the_first_with_a_notice() -> None:
    """A chained what-if run reads its own --output-state after the original files: the claim
    comes back with status.allocation, and the newer copy counts, where the first one stood."""
    claim = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: a%s}\n"
        "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.example.com}}]}}\n"
    )
    allocated = (claim % ", resourceVersion: '7'") + (
        "status: {allocation: {devices: {results: [{request: r, driver: d, pool: p, device: g}]}}}\n"
    )
    bundle = load_text("---\n".join([claim % "", CLASS, allocated]), "s.yaml")
    assert bundle.problems == []
    assert [type(o.obj).__name__ for o in bundle.objects] == ["ResourceClaim", "DeviceClass"]
    (first,) = bundle.of_kind(ResourceClaim)
    assert first.status is not None and first.status.allocation is not None
    assert bundle.notices == [
        "s.yaml[2]: ResourceClaim a/c replaces the copy read at s.yaml[0] (the same object, its newer state)"
    ]
    with_uids = load_text("---\n".join([claim % ", uid: u1", claim % ", uid: u2"]), "u.yaml")
    assert len(with_uids.problems) == 1 and "duplicate" in with_uids.problems[0].message  # other uid: not the same


def test_lookups_by_kind_and_name() -> None:
    bundle = load_text(KUBECTL_LIST + "---\n" + CLASS)
    assert [c.name for c in bundle.of_kind(ResourceClaim)] == ["trainer"]
    assert bundle.by_name(ResourceClaim, "trainer") is bundle.by_name(ResourceClaim, "trainer", "ml")
    assert bundle.by_name(ResourceClaim, "trainer", "default") is None
    assert bundle.by_name(Pod, "trainer") is None
    claim = bundle.of_kind(ResourceClaim)[0]
    assert bundle.location_of(claim) == bundle.objects[0].location
    assert [type(e).__name__ for e in bundle.entries] == ["Loaded", "Loaded", "Loaded"]


def test_newline_delimited_json_is_one_document_per_line() -> None:
    node = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "%s"}}'
    bundle = load_text("\n".join([node % "a", "", node % "b"]) + "\n", "n.json")
    assert bundle.problems == [] and [o.obj.name for o in bundle.objects] == ["a", "b"]
    broken = load_text(node % "a" + '\n{"apiVersion":\n', "n.json")
    assert [str(p) for p in broken.problems] == [
        "n.json[1]: line 2 is not JSON: Expecting value, column 15 (newline-delimited JSON, one object a line)"
    ]


def test_json_documents_between_markers_are_a_yaml_stream_and_json_lines_are_one_line_each() -> None:
    """JSON is YAML: JSON objects between ``---`` lines are read as the stream they are (they were taken for
    newline-delimited JSON and refused from the second on), and a pretty-printed object with something after
    it gets YAML's message at its line, not "line 1 is not JSON"."""
    node = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "%s"}}'
    bundle = load_text(node % "a" + "\n---\n" + node % "b" + "\n", "n.yaml")
    assert bundle.problems == [] and [o.obj.name for o in bundle.objects] == ["a", "b"]
    pretty = json.dumps(json.loads(node % "a"), indent=2)
    spaced = load_text(pretty + "\n---\n" + pretty.replace('"a"', '"b"') + "\n", "p.yaml")
    assert spaced.problems == [] and [o.obj.name for o in spaced.objects] == ["a", "b"]
    trailing = load_text(pretty + " x\n", "t.yaml")
    assert [str(p) for p in trailing.problems] == [
        "t.yaml[1]: YAML error at line 7, column 3: did not find expected <document start>"
    ]


def test_directories_follow_links_and_report_loops_and_unreadable_ones(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "class.yaml").write_text(CLASS)
    (tmp_path / "a" / "b" / "loop").symlink_to(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "node.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n")
    (tmp_path / "linked").symlink_to(outside)
    bundle = load_paths([str(tmp_path)])
    assert sorted(o.obj.kind for o in bundle.objects) == ["DeviceClass", "Node"]
    assert [str(p) for p in bundle.problems] == [
        f"{tmp_path}/a/b/loop: links to {tmp_path}, a folder it is in (a symbolic link loop); drasat does not follow it"
    ]
    real_scandir = os.scandir

    def refuse(path):  # root reads every directory: make one unreadable the way the OS would say it
        if str(path).endswith("/b"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refuse)
    problems = [str(p) for p in load_paths([str(tmp_path)]).problems]
    assert f"{tmp_path}/a/b: cannot read this directory: Permission denied" in problems


@pytest.mark.parametrize(
    "text",
    [
        "{a: 0b_, b: +0x__, c: 0b1_0}",  # drasat's own constructor
        "{<<: {z: 1}, a: 0b_, b: +0x__, c: 0b1_0}",
    ],
)  # a merge key: PyYAML's
def test_a_number_pattern_with_no_digits_reads_as_text(text: str) -> None:
    """``0b_`` and ``0x__`` match YAML 1.1's int pattern but are no numbers (PyYAML raised a bare ValueError,
    a traceback); Kubernetes' reader takes them as text, and so does drasat."""
    (document,) = parse_documents(text + "\n", "x.yaml")
    assert document.problem is None
    assert {k: document.data[k] for k in "abc"} == {"a": "0b_", "b": "+0x__", "c": 2}


def test_a_manifest_with_such_a_value_loads() -> None:
    bundle = load_text("apiVersion: v1\nkind: Node\nmetadata: {name: n, annotations: {a: 0b_}}\n", "n.yaml")
    (node,) = list(bundle)
    assert isinstance(node, Node) and node.metadata.annotations == {"a": "0b_"}
