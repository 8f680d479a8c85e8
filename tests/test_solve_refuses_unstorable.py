"""``drasat solve`` refuses what the API server would never have stored, with ``drasat validate``'s messages."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.errors import InputError
from drasat.models.loader import load_text
from drasat.solver.allocation.problem import problem_from_objects

CLUSTER = Path(__file__).resolve().parents[1] / "examples" / "cluster.yaml"
CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: broken, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
    - name: alternatives
      firstAvailable:
      - {name: one, deviceClassName: gpu.example.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: fine, namespace: default}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
"""
BROKEN = {
    "negative count": (
        "exactly: {deviceClassName: gpu.example.com}",
        "exactly: {deviceClassName: gpu.example.com, count: -1}",
        "spec.devices.requests[0].exactly.count: -1 must be greater than zero",
    ),
    "negative subrequest count": (
        "{name: one, deviceClassName: gpu.example.com}",
        "{name: one, deviceClassName: gpu.example.com, count: -2}",
        "spec.devices.requests[1].firstAvailable[0].count: -2 must be greater than zero",
    ),
    "no name": (
        "metadata: {name: broken, namespace: default}",
        "metadata: {namespace: default}",
        "metadata.name: name or generateName is required",
    ),
    "constraint naming no request": (
        "      - {name: one, deviceClassName: gpu.example.com}\n",
        "      - {name: one, deviceClassName: gpu.example.com}\n    constraints:\n"
        "    - {requests: [gpu, nosuch], matchAttribute: example.com/numa}\n",
        'spec.devices.constraints[0].requests[1]: "nosuch" must name a request',
    ),
    "count beyond int64": (
        "exactly: {deviceClassName: gpu.example.com}",
        "exactly: {deviceClassName: gpu.example.com, count: 99999999999999999999}",
        "count: 99999999999999999999 does not fit in a 64-bit integer",
    ),
}


def _run(tmp_path: Path, *args: str, claims: str = CLAIM, cluster: str | None = None):
    (tmp_path / "claims.yaml").write_text(claims)
    (tmp_path / "cluster.yaml").write_text(cluster if cluster is not None else CLUSTER.read_text())
    load_all_commands()
    return CliRunner().invoke(cli, [*args, str(tmp_path)], catch_exceptions=False)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_solve_refuses_with_validates_message(tmp_path: Path, case: str) -> None:
    old, new, message = BROKEN[case]
    claims = CLAIM.replace(old, new, 1)
    validated = _run(tmp_path, "validate", "-q", claims=claims)
    assert validated.exit_code == 2 and message in validated.stdout
    (line,) = [
        line.split("- ", 1)[-1].removeprefix("error  ") for line in validated.stdout.splitlines() if message in line
    ]
    solved = _run(tmp_path, "solve", "--node", "gpu-node-1", claims=claims)
    assert solved.exit_code == 2 and solved.stdout == "" and "Traceback" not in solved.stderr
    assert f"error: {line.strip()}" in solved.stderr


@pytest.mark.parametrize("case", ["negative count", "constraint naming no request"])
def test_a_claim_named_with_claims_is_checked_too(tmp_path: Path, case: str) -> None:
    old, new, message = BROKEN[case]
    solved = _run(
        tmp_path, "solve", "--node", "gpu-node-1", "--claims", "default/broken", claims=CLAIM.replace(old, new, 1)
    )
    assert solved.exit_code == 2 and solved.stdout == "" and message in solved.stderr


def test_an_object_solve_does_not_use_is_left_to_validate(tmp_path: Path) -> None:
    claims = CLAIM.replace(*BROKEN["negative count"][:2], 1)
    assert _run(tmp_path, "solve", "--node", "gpu-node-1", "--claims", "fine", claims=claims).exit_code == 0
    assert _run(tmp_path, "validate", claims=claims).exit_code == 2


def test_a_claim_known_only_by_generate_name_cannot_be_allocated(tmp_path: Path) -> None:
    claims = CLAIM.replace("metadata: {name: broken,", "metadata: {generateName: broken-,", 1)
    assert _run(tmp_path, "validate", claims=claims).exit_code == 0  # the API server would name it
    solved = _run(tmp_path, "solve", "--node", "gpu-node-1", claims=claims)
    assert solved.exit_code == 2 and "a claim to allocate needs its name" in solved.stderr


@pytest.mark.parametrize("engine", ["cel-expr", "celpy"])
def test_an_attribute_beyond_int64_is_refused_before_any_cel_engine_sees_it(tmp_path: Path, engine: str) -> None:
    cluster = CLUSTER.read_text().replace(
        "example.com/numa:\n        int: 0", "example.com/numa: {int: 99999999999999999999}"
    )
    assert cluster != CLUSTER.read_text()
    claims = CLAIM.replace(
        "exactly: {deviceClassName: gpu.example.com}",
        "exactly: {deviceClassName: gpu.example.com, "
        "selectors: [{cel: {expression: 'device.attributes[\"example.com\"].numa > 0'}}]}",
        1,
    )
    solved = _run(tmp_path, "solve", "--node", "gpu-node-1", "--cel-engine", engine, claims=claims, cluster=cluster)
    assert solved.exit_code == 2 and solved.stdout == "" and "Traceback" not in solved.stderr
    assert ".attributes[example.com/numa].int: 99999999999999999999 does not fit in a 64-bit integer" in solved.stderr


def test_library_callers_get_the_same_refusal() -> None:
    objects = list(load_text(CLAIM.replace(*BROKEN["negative count"][:2], 1)))
    with pytest.raises(InputError, match=r"ResourceClaim/default/broken: spec.devices.requests\[0\].exactly.count: -1"):
        problem_from_objects(objects, node="n")


MIXED_SLICE = """\
apiVersion: v1
kind: Node
metadata: {name: node-0}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-0-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 1}
  sharedCounters:
  - {name: gpu-0, counters: {mem: {value: 80Gi}}}
  devices:
  - name: gpu-0-half
    consumesCounters: [{counterSet: gpu-0, counters: {mem: {value: 40Gi}}}]
"""


def test_solve_refuses_a_slice_with_counter_sets_and_devices_as_validate_does(tmp_path: Path) -> None:
    """Since 1.35 such a slice is never stored, and none of its devices could draw on its counters: solve used
    to allocate from it, and the verifier then found the device in no slice the node sees."""
    claim = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
        "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
    )
    message = "only one of `sharedCounters` or `devices` may be set in a slice"
    validated = _run(tmp_path, "validate", "-q", claims=claim, cluster=MIXED_SLICE)
    assert validated.exit_code == 2 and message in validated.stdout
    solved = _run(tmp_path, "solve", claims=claim, cluster=MIXED_SLICE)
    assert solved.exit_code == 2 and solved.stdout == "" and "Traceback" not in solved.stderr
    assert message in solved.stderr and "cluster.yaml[2]: ResourceSlice/node-0-gpus: spec" in solved.stderr


# --- one rule: what validate refuses, solve refuses, on every object it uses ---------------------------------

USED_BY_SOLVE = ("slice", "claim", "allocated", "class", "rule", "node")


def _validate_cases() -> list[tuple[str, str, dict, str, str]]:
    """validate's own test cases on the kinds solve uses: every compatibility-group case and every third other."""
    from . import test_models_validation, test_models_validation_claims

    cases = [c for c in test_models_validation.CASES + test_models_validation_claims.CASES if c[1] in USED_BY_SOLVE]
    return [c for i, c in enumerate(cases) if "compatibility" in c[0] or i % 3 == 0]


SAMPLED = _validate_cases()


def _manifest(base: str, edits: dict) -> str:
    import yaml

    from .helpers_models import BASES, NODE, edit

    data = copy.deepcopy(BASES[base])
    for path, value in edits.items():
        edit(data, path, value)
    return yaml.safe_dump_all([data] if base == "node" else [NODE, data])


@pytest.mark.parametrize("case", SAMPLED, ids=[c[0] for c in SAMPLED])
def test_solve_refuses_what_validate_refuses_with_its_message(tmp_path: Path, case) -> None:
    name, base, edits, path, words = case
    if base == "node" and ("metadata.name" in edits or "metadata" in edits):
        pytest.skip("solve --node looks the node up by the name the case breaks")
    (tmp_path / "objects.yaml").write_text(_manifest(base, edits))
    load_all_commands()
    validated = CliRunner().invoke(cli, ["validate", "-q", str(tmp_path)], catch_exceptions=False)
    assert validated.exit_code == 2 and words in validated.stdout, validated.stdout
    solved = CliRunner().invoke(cli, ["solve", "--node", "node-1", str(tmp_path)], catch_exceptions=False)
    assert (solved.exit_code, solved.stdout) == (2, ""), solved.output
    line = next(
        line.split("- ", 1)[1] for line in validated.stdout.splitlines() if words in line and f": {path}: " in line
    )
    assert line in solved.stderr, solved.stderr


def test_the_sample_covers_the_compatibility_groups_and_many_rules() -> None:
    names = [c[0] for c in SAMPLED]
    assert {"compatibility groups limit", "compatibility groups unique"} <= set(names) and len(names) >= 40


def test_allocator_fixtures_are_allocated_with_allow_invalid_objects(tmp_path: Path) -> None:
    """Kubernetes' allocator tests feed subrequest names that are not DNS labels; the switch replays them."""
    claims = CLAIM.replace("{name: one, deviceClassName", "{name: subReq-0, deviceClassName")
    refused = _run(tmp_path, "solve", "--node", "gpu-node-1", claims=claims)
    assert refused.exit_code == 2 and '"subReq-0" must be a DNS label' in refused.stderr
    allowed = _run(tmp_path, "solve", "--node", "gpu-node-1", "--allow-invalid-objects", claims=claims)
    assert allowed.exit_code == 0, allowed.stderr
    again = _run(tmp_path, "solve", "--node", "gpu-node-1", claims=claims)  # the switch held for that run only
    assert again.exit_code == 2


def _broken_slice_of(node: str) -> str:
    """The example cluster with a device of ``node``'s GPU slice named what is no DNS label (validate refuses it)."""
    text = CLUSTER.read_text()
    head, marker, rest = text.partition(f"  name: {node}-gpu.example.com\n")
    assert marker, node
    broken = rest.replace("  - name: gpu-0\n", "  - name: GPU_0\n", 1)
    assert broken != rest
    return head + marker + broken


def test_a_broken_slice_of_another_nodes_pool_is_left_to_validate(tmp_path: Path) -> None:
    """Kubernetes' allocator for gpu-node-2 never looks at gpu-node-1's pool: solve for gpu-node-2 does not
    check it (a fleet's 4,000 slices took 6 s to check for one node), solve for gpu-node-1 refuses it."""
    cluster = _broken_slice_of("gpu-node-1")
    assert _run(tmp_path, "validate", "-q", cluster=cluster).exit_code == 2
    here = _run(tmp_path, "solve", "--node", "gpu-node-1", cluster=cluster)
    assert here.exit_code == 2 and here.stdout == "" and '"GPU_0"' in here.stderr
    elsewhere = _run(tmp_path, "solve", "--node", "gpu-node-2", cluster=cluster)
    assert elsewhere.exit_code == 0, elsewhere.stderr


def test_solve_checks_each_object_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """solve's two questions (the pods', then every pending claim's) share their objects: one check each."""
    from drasat.models import storable

    checked: list[int] = []
    real = storable.rule_problems

    def counting(obj, where):  # type: ignore[no-untyped-def]
        checked.append(id(obj))
        return real(obj, where)

    monkeypatch.setattr(storable, "rule_problems", counting)
    assert _run(tmp_path, "solve", "--node", "gpu-node-1").exit_code == 0
    assert checked and len(checked) == len(set(checked))
    checked.clear()
    assert _run(tmp_path, "solve", "--node", "gpu-node-1").exit_code == 0  # a new block: checked anew
    assert checked
