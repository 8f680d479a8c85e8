"""Errors an allocation meets in an object it was given name the file, the object and the field, as
``drasat validate`` names them: a missing DeviceClass, a CEL selector or derived attribute failing at run time.

The solver never reads files: it names the object and field (``DrasatError.about``), and the command line
adds where the object was read — a claim's own file, or for a claim made from a ResourceClaimTemplate, the
template's.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands
from drasat.models.errors import AllocationError, EvaluationError, Location
from drasat.solver.cel.errors import CelRuntimeError

load_all_commands()

CLUSTER = Path(__file__).resolve().parent.parent / "examples" / "cluster.yaml"

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c, namespace: default}}
spec:
  devices:
    requests:
    - name: nic
      exactly: {{deviceClassName: nic.example.com}}
    - name: gpu
{body}
"""

MISSING_CLASS = "      exactly: {deviceClassName: missing-class}"
SUBREQUESTS = """\
      firstAvailable:
      - {name: a, deviceClassName: gpu.example.com}
      - {name: b, deviceClassName: missing-class}"""
FAILING_SELECTOR = """\
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.driver != ""'}
        - cel: {expression: 'device.attributes["gpu.example.com"].nosuch == 3'}"""

CLASS_WITH_FAILING_SELECTOR = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: picky}
spec:
  selectors:
  - cel: {expression: 'device.attributes["gpu.example.com"].nosuch == 3'}
"""

POD_WITH_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: missing-class}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  containers:
  - name: c
    image: x
    resources:
      claims: [{name: g}]
  resourceClaims:
  - {name: g, resourceClaimTemplateName: t}
"""

ALLOCATING = {
    "solve": ["solve", "--node", "gpu-node-1", "--claims", "default/c"],
    "explain": ["explain", "--node", "gpu-node-1", "--claims", "default/c"],
    "compare": ["compare", "--node", "gpu-node-1", "--claims", "default/c"],
}


def _run(args: list[str], *files: Path) -> Result:
    return CliRunner().invoke(cli, [*args, str(CLUSTER), *map(str, files)])


def _refused(result: Result, start: str, words: str) -> None:
    """Exit 2, nothing on stdout, one message on stderr starting with the place, keeping the solver's words."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {start}: "), result.stderr
    assert words in result.stderr


@pytest.mark.parametrize("command", list(ALLOCATING))
@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        (MISSING_CLASS, "spec.devices.requests[1].exactly.deviceClassName", 'deviceclass.resource.k8s.io "missing'),
        (SUBREQUESTS, "spec.devices.requests[1].firstAvailable[1].deviceClassName", "could not retrieve device class"),
        (FAILING_SELECTOR, "spec.devices.requests[1].exactly.selectors[1].cel.expression", "CEL runtime error"),
    ],
)
def test_a_claims_error_names_its_file_object_and_field(
    tmp_path: Path, command: str, body: str, field: str, words: str
) -> None:
    claims = tmp_path / "claims.yaml"
    claims.write_text(CLAIM.format(body=body))
    _refused(_run(ALLOCATING[command], claims), f"{claims}[0]: ResourceClaim/default/c: {field}", words)


def test_a_class_selector_failing_names_the_class_file_and_field(tmp_path: Path) -> None:
    classes = tmp_path / "classes.yaml"
    classes.write_text(CLASS_WITH_FAILING_SELECTOR)
    claims = tmp_path / "claims.yaml"
    claims.write_text(CLAIM.format(body="      exactly: {deviceClassName: picky}"))
    result = _run(ALLOCATING["solve"], classes, claims)
    _refused(result, f"{classes}[0]: DeviceClass/picky: spec.selectors[0].cel.expression", "CEL runtime error")


def test_a_claim_made_from_a_template_is_named_by_the_template(tmp_path: Path) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text(POD_WITH_TEMPLATE)
    result = _run(["solve", "--node", "gpu-node-1", "--pods", "default/trainer"], pods)
    field = "spec.spec.devices.requests[0].exactly.deviceClassName"
    _refused(result, f"{pods}[0]: ResourceClaimTemplate/default/t: {field}", "could not retrieve device class")


AMBIGUOUS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: good, namespace: default}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: bad, namespace: default}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: missing-class}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {claims: [{name: b-c}]}}]
  resourceClaims: [{name: b-c, resourceClaimTemplateName: good}]
---
apiVersion: v1
kind: Pod
metadata: {name: a-b, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {claims: [{name: c}]}}]
  resourceClaims: [{name: c, resourceClaimTemplateName: bad}]
"""


def test_the_template_is_the_one_the_claim_was_made_from_when_names_look_alike(tmp_path: Path) -> None:
    """Pod a's claim b-c and pod a-b's claim c both make names starting a-b-c-: the whole name tells them apart."""
    pods = tmp_path / "pods.yaml"
    pods.write_text(AMBIGUOUS)
    result = _run(["solve", "--node", "gpu-node-1", "--pods", "default/a-b"], pods)
    field = "spec.spec.devices.requests[0].exactly.deviceClassName"
    _refused(result, f"{pods}[1]: ResourceClaimTemplate/default/bad: {field}", "could not retrieve device class")


@pytest.mark.parametrize("kind", [AllocationError, EvaluationError])
def test_the_place_crosses_process_boundaries(kind: type[AllocationError | EvaluationError]) -> None:
    about = Location(kind="ResourceClaim", name="default/c", path="spec.devices.requests[0].exactly")
    copy = pickle.loads(pickle.dumps(kind("claim default/c: broken", about)))
    assert type(copy) is kind and str(copy) == "claim default/c: broken" and copy.about == about


def test_an_engines_runtime_error_crosses_process_boundaries_too() -> None:
    """A subclass with a constructor of its own (the CEL engines' error) still pickles, with its detail."""
    copy = pickle.loads(pickle.dumps(CelRuntimeError("no such key: x")))
    assert type(copy) is CelRuntimeError and copy.detail == "no such key: x" and copy.about is None
