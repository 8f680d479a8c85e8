"""A Pod's requests and limits checked as the API server checks them, through every command that reads Pods.

Issue 24, item 2: ``nvidia.com/gpu: "99999999999999999999"`` was a pydantic traceback (exit 1) from
solve/schedule/explain/compare, ``"1.5"`` and ``"-1"`` were scheduled, and validate called them valid.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands

from .helpers_models import REPO

load_all_commands()
EXAMPLES = str(REPO / "examples")

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: default}}
spec:
  containers:
  - name: c
    image: x
    resources:
      requests: {{{requests}}}
      limits: {{{limits}}}
"""

BAD = {
    "99999999999999999999": 'Invalid value: "99999999999999999999": must be at most 9223372036854775807',
    "9223372036854775808": 'Invalid value: "9223372036854775808": must be at most 9223372036854775807',
    "1e19": 'Invalid value: "10e18": must be at most 9223372036854775807',
    "1.5": 'Invalid value: "1500m": must be an integer',
    "-1": 'Invalid value: "-1": must be greater than or equal to 0',
}
COMMANDS = {
    "validate": ["validate"],
    "solve": ["solve", "--node", "gpu-node-2", "--pods", "default/p"],
    "schedule": ["schedule", "-o", "table"],
    "schedule --batch": ["schedule", "--batch", "-o", "table"],
    "explain": ["explain", "--pods", "default/p"],
    "compare": ["compare", "--node", "gpu-node-2", "--pods", "default/p"],
    "compare --schedule": ["compare", "--schedule"],
    "fit": ["fit", "WORKLOAD"],
    "defrag": ["defrag"],
}
RULE = """\
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: drain}
spec:
  deviceSelector: {driver: gpu.example.com}
  taint: {key: maintenance, effect: NoExecute}
"""
WORKLOAD = POD.format(requests='example.com/gpu: "1"', limits='example.com/gpu: "1"').replace("name: p,", "name: w,")


def run(args: list[str], *files: str) -> Result:
    return CliRunner().invoke(cli, [*args, *files])


def _args(command: list[str], tmp_path: Path) -> list[str]:
    """The command line with ``WORKLOAD`` (fit's first argument) a valid pod of its own."""
    workload = tmp_path / "workload.yaml"
    workload.write_text(WORKLOAD)
    return [str(workload) if a == "WORKLOAD" else a for a in command]


def _pod(tmp_path: Path, requests: str, limits: str) -> str:
    path = tmp_path / "pod.yaml"
    path.write_text(POD.format(requests=requests, limits=limits))
    return str(path)


@pytest.mark.parametrize("value", list(BAD))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_refuses_a_quantity_the_api_server_or_the_scheduler_cannot_take(
    tmp_path: Path, command: str, value: str
) -> None:
    pod = _pod(tmp_path, f'example.com/gpu: "{value}"', f'example.com/gpu: "{value}"')
    result = run(_args(COMMANDS[command], tmp_path), EXAMPLES, pod)
    assert result.exit_code == 2, result.output
    field = "spec.containers[0].resources.requests[example.com/gpu]"
    out = result.stdout if command == "validate" else result.stderr
    assert f"{pod}[0]: Pod/default/p: {field}: {BAD[value]}" in out
    assert "Traceback" not in result.output and "pydantic" not in result.output
    if command != "validate":
        assert result.stdout == ""


def test_requests_and_limits_follow_kubernetes_overcommit_rules(tmp_path: Path) -> None:
    pod = _pod(
        tmp_path,
        'example.com/gpu: "1", cpu: "2", nvidia.com/gpu: "1", memory: 1Gi',
        'example.com/gpu: "2", cpu: "1", memory: 2Gi',
    )
    result = run(["validate"], pod)
    assert result.exit_code == 2
    at = f"{pod}[0]: Pod/default/p: spec.containers[0].resources"
    assert f'{at}.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2' in result.stdout
    assert f'{at}.requests: Invalid value: "2": must be less than or equal to cpu limit of 1' in result.stdout
    limit_missing = "Required value: Limit must be set for non overcommitable resources (nvidia.com/gpu is requested)"
    assert f"{at}.limits: {limit_missing}" in result.stdout
    assert "memory" not in result.stdout  # a request below its limit is fine for memory (overcommit allowed)


def test_whole_valid_quantities_pass_and_cpu_is_counted_in_thousandths(tmp_path: Path) -> None:
    fits = _pod(tmp_path, 'example.com/gpu: "2", cpu: "9223372036854775", memory: 1.5Gi', 'example.com/gpu: "2"')
    result = run(["validate"], fits)
    assert result.exit_code == 0, result.output
    too_many = _pod(tmp_path, 'cpu: "9223372036854776"', "")  # 9223372036854776000m does not fit
    result = run(["validate"], too_many)
    assert result.exit_code == 2
    assert (
        'requests[cpu]: Invalid value: "9223372036854776": must be at most 9223372036854775807m '
        "(kube-scheduler counts cpu in 64-bit integers)" in result.stdout
    )


def test_a_container_resource_must_be_standard_or_extended(tmp_path: Path) -> None:
    pod = _pod(tmp_path, 'gpus: "1"', "")
    result = run(["validate"], pod)
    assert result.exit_code == 2
    assert 'requests[gpus]: Invalid value: "gpus": must be a standard resource for containers' in result.stdout


@pytest.mark.parametrize(
    "command",
    [["schedule", "-o", "table"], ["schedule", "--batch"], ["compare", "--schedule"], ["fit", "WORKLOAD"], ["defrag"]],
)
def test_a_bound_pod_whose_requests_cannot_be_counted_is_refused_too(tmp_path: Path, command: list[str]) -> None:
    """A pod on a node is that node's load: a request kube-scheduler cannot count would make it any number."""
    text = POD.format(
        requests='example.com/gpu: "9223372036854775808"', limits='example.com/gpu: "9223372036854775808"'
    )
    pod = tmp_path / "bound.yaml"
    pod.write_text(text.replace("spec:\n", "spec:\n  nodeName: gpu-node-2\n", 1))
    result = run(_args(command, tmp_path), EXAMPLES, str(pod))
    assert result.exit_code == 2 and result.stdout == "", result.output
    field = "spec.containers[0].resources.requests[example.com/gpu]"
    assert f"{pod}[0]: Pod/default/p: {field}: {BAD['9223372036854775808']}" in result.stderr


@pytest.mark.parametrize("command", [["inventory"], ["schedule", "-o", "table"], ["taint-impact", "RULE"]])
def test_a_finished_pod_is_no_commands_concern(tmp_path: Path, command: list[str]) -> None:
    """A Succeeded or Failed pod holds nothing: what it once asked for (here more cores than the scheduler
    counts) keeps no command from answering, as before the loading path checked every pod."""
    text = POD.format(requests='cpu: "1e16"', limits='cpu: "1e16"').replace("name: p,", "name: old-job,")
    done = tmp_path / "done.yaml"
    done.write_text(text.replace("spec:\n", "spec:\n  nodeName: gpu-node-2\n", 1) + "status: {phase: Succeeded}\n")
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE)
    args = [str(rule) if a == "RULE" else a for a in command]
    assert run(args, EXAMPLES, str(done)).exit_code == 0
    running = tmp_path / "running.yaml"
    running.write_text(done.read_text().replace("Succeeded", "Running"))
    refused = run(args, EXAMPLES, str(running))
    assert refused.exit_code == 2 and "Pod/default/old-job: spec.containers[0].resources" in refused.stderr


@pytest.mark.parametrize("value", ["1.5", "-1", "9223372036854775808"])
@pytest.mark.parametrize("kind", ["Pod", "Deployment"])
def test_fit_refuses_a_workload_whose_pod_asks_for_what_the_api_server_refuses(
    tmp_path: Path, kind: str, value: str
) -> None:
    """The workload is read apart from the cluster's files: its pods are checked as the cluster's are."""
    pod = POD.format(requests=f'example.com/gpu: "{value}"', limits=f'example.com/gpu: "{value}"')
    field = "spec.containers[0].resources.requests[example.com/gpu]"
    if kind == "Deployment":
        spec = "\n".join("    " + line for line in pod.split("spec:\n", 1)[1].splitlines())
        pod = (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n" + spec + "\n"
        )
        field = "spec.template." + field
    workload = tmp_path / "workload.yaml"
    workload.write_text(pod)
    result = run(["fit", str(workload)], EXAMPLES)
    assert result.exit_code == 2 and result.stdout == "", result.output
    name = "default/p" if kind == "Pod" else "p"  # as the loader names it: the namespace when one is written
    assert f"{workload}[0]: {kind}/{name}: {field}: {BAD[value]}" in result.stderr


LONG_DOMAIN = ".".join(["d" * 61] * 4)  # 247 characters: a subdomain, but not with "requests." before it
BAD_NAMES = {
    "bad name/gpu": 'Invalid value: "bad name/gpu": prefix must be a DNS subdomain',
    "example.com/bad name": 'Invalid value: "example.com/bad name": name part must consist of',
    "example.com/-gpu": 'Invalid value: "example.com/-gpu": name part must consist of',
    "example.com/": 'Invalid value: "example.com/": name part must consist of',
    "/gpu": "has an empty prefix before '/'",
    "example.com/" + "g" * 64: "name part must be no more than 63 characters",
    f"{LONG_DOMAIN}/gpu": "doesn't follow extended resource name standard",
}


@pytest.mark.parametrize("name", list(BAD_NAMES))
@pytest.mark.parametrize("field", ["requests", "limits"])
@pytest.mark.parametrize("command", ["validate", "schedule"])
def test_a_resource_name_that_is_not_a_qualified_name_is_refused(
    tmp_path: Path, command: str, field: str, name: str
) -> None:
    """Issue 24, item 3: "bad name/gpu" was scheduled as a resource no node has, and validate called it valid."""
    quantity = f'"{name}": "1"'
    pod = _pod(tmp_path, quantity if field == "requests" else "", quantity)
    result = run(COMMANDS[command], pod)
    assert result.exit_code == 2, result.output
    out = result.stdout if command == "validate" else result.stderr
    assert f"{pod}[0]: Pod/default/p: spec.containers[0].resources.{field}[{name}]: " in out
    assert BAD_NAMES[name] in out
    if command != "validate":
        assert result.stdout == ""


@pytest.mark.parametrize("command", ["validate", "schedule"])
def test_a_device_class_extended_resource_name_must_be_qualified(tmp_path: Path, command: str) -> None:
    path = tmp_path / "class.yaml"
    path.write_text(
        'apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {extendedResourceName: "bad name/gpu"}\n'
    )
    result = run(COMMANDS[command], EXAMPLES, str(path))
    assert result.exit_code == 2, result.output
    out = result.stdout if command == "validate" else result.stderr
    assert (
        f'{path}[0]: DeviceClass/c: spec.extendedResourceName: "bad name/gpu" is not an extended resource name' in out
    )


def test_valid_resource_names_stay_accepted(tmp_path: Path) -> None:
    names = ["nvidia.com/gpu", "example.com/gpu", "cpu", "memory", "ephemeral-storage"]
    whole = ", ".join(f'{n}: "1"' for n in names) + ", hugepages-2Mi: 2Mi"  # whole pages
    pod = _pod(tmp_path, whole, whole)
    assert run(["validate"], pod).exit_code == 0
    scheduled = run(["schedule", "-o", "table"], EXAMPLES, pod)
    assert scheduled.exit_code in (0, 1) and "Invalid value" not in scheduled.output, scheduled.output


SPEC_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: default}}
spec:
  containers: [{{name: c, image: x}}]
{spec}"""


def _validate_spec(tmp_path: Path, spec: str) -> tuple[Result, str]:
    """``drasat validate`` of a pod with ``spec`` (indented two spaces) added, and where its messages start."""
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC_POD.format(spec=spec))
    return run(["validate"], str(path)), f"{path}[0]: Pod/default/p: spec"


def test_overhead_names_follow_the_container_rules(tmp_path: Path) -> None:
    """validateOverhead checks ``spec.overhead`` as a container's limits (at ``spec.overhead.limits``): ``foo``
    is neither a standard resource nor a container's, and hugepages need cpu or memory there too."""
    result, at = _validate_spec(tmp_path, '  overhead: {foo: "1"}\n')
    assert result.exit_code == 2, result.output
    assert f'{at}.overhead.limits[foo]: Invalid value: "foo": must be a standard resource for containers' in (
        result.stdout
    )
    result, at = _validate_spec(tmp_path, "  overhead: {hugepages-2Mi: 2Mi}\n")
    assert result.exit_code == 2, result.output
    assert f"{at}.overhead: Forbidden: HugePages require cpu or memory" in result.stdout
    assert _validate_spec(tmp_path, '  overhead: {cpu: 250m, memory: 120Mi, example.com/gpu: "1"}\n')[0].exit_code == 0


SUPPORTED_AT_POD_LEVEL = 'supported values: "cpu", "hugepages-", "memory"'


@pytest.mark.parametrize(
    "name, message",
    [
        ("example.com/gpu", f'Unsupported value: "example.com/gpu": {SUPPORTED_AT_POD_LEVEL}'),
        ("ephemeral-storage", f'Unsupported value: "ephemeral-storage": {SUPPORTED_AT_POD_LEVEL}'),
        ("foo", 'Invalid value: "foo": must be a standard resource type or fully qualified'),
    ],
)
def test_pod_level_resources_take_only_cpu_memory_and_hugepages(tmp_path: Path, name: str, message: str) -> None:
    """validatePodResourceName: a qualified standard name first, then one pod-level resources support."""
    result, at = _validate_spec(tmp_path, f'  resources: {{requests: {{"{name}": "1"}}, limits: {{"{name}": "1"}}}}\n')
    assert result.exit_code == 2, result.output
    for field in ("requests", "limits"):
        assert f"{at}.resources.{field}[{name}]: {message}\n" in result.stdout
    assert "for containers" not in result.stdout


def test_pod_level_cpu_memory_and_hugepages_stay_accepted(tmp_path: Path) -> None:
    spec = "  resources: {requests: {cpu: '1', memory: 1Gi, hugepages-2Mi: 4Mi}, limits: {hugepages-2Mi: 4Mi}}\n"
    result, _ = _validate_spec(tmp_path, spec)
    assert result.exit_code == 0, result.output


def test_a_name_without_a_domain_is_first_not_a_standard_resource_then_not_a_containers(tmp_path: Path) -> None:
    """validateContainerResourceName appends its own word to validateResourceName's, in that order."""
    pod = _pod(tmp_path, 'gpus: "1"', "")
    result = run(["validate"], pod)
    assert result.exit_code == 2
    at = f'{pod}[0]: Pod/default/p: spec.containers[0].resources.requests[gpus]: Invalid value: "gpus": must be'
    assert f"{at} a standard resource type or fully qualified\n       - {at} a standard resource for containers\n" in (
        result.stdout
    )
    pods = run(["validate"], _pod(tmp_path, 'pods: "1"', ""))  # a standard resource, but not a container's
    assert pods.exit_code == 2 and "fully qualified" not in pods.stdout and "for containers" in pods.stdout


@pytest.mark.parametrize("command", ["validate", "schedule"])
def test_hugepages_need_cpu_or_memory_beside_them(tmp_path: Path, command: str) -> None:
    pod = _pod(tmp_path, "hugepages-2Mi: 2Mi", "hugepages-2Mi: 2Mi")
    result = run(COMMANDS[command], pod)
    assert result.exit_code == 2, result.output
    out = result.stdout if command == "validate" else result.stderr
    assert f"{pod}[0]: Pod/default/p: spec.containers[0].resources: Forbidden: HugePages require cpu or memory" in out
    for beside in ("requests", "limits"):
        with_memory = _pod(
            tmp_path,
            "hugepages-2Mi: 2Mi" + (", memory: 1Gi" if beside == "requests" else ""),
            "hugepages-2Mi: 2Mi" + (", cpu: '1'" if beside == "limits" else ""),
        )
        assert run(["validate"], with_memory).exit_code == 0


@pytest.mark.parametrize(
    "name, quantity, shown",
    [("hugepages-2Mi", "3Mi", "3Mi"), ("hugepages-1Gi", "1.5Gi", "1536Mi"), ("hugepages-2Mi", "1", "1")],
)
def test_hugepages_come_in_whole_pages(tmp_path: Path, name: str, quantity: str, shown: str) -> None:
    """validateResourceQuantityHugePageValue, always on for a new pod (the indivisible values an old pod may
    keep are an update's allowance): the quantity is a whole number of pages."""
    pod = _pod(tmp_path, f"memory: 1Gi, {name}: {quantity}", f"{name}: {quantity}")
    result = run(["validate"], pod)
    assert result.exit_code == 2, result.output
    for field in ("requests", "limits"):
        at = f"{pod}[0]: Pod/default/p: spec.containers[0].resources.{field}[{name}]"
        assert f'{at}: Invalid value: "{shown}": {shown} is not positive integer multiple of {name}\n' in result.stdout
    whole = _pod(tmp_path, f"memory: 1Gi, {name}: 0", f"{name}: 0")
    assert run(["validate"], whole).exit_code == 0


@pytest.mark.parametrize("namespace", ["", ", namespace: team"])
def test_fit_names_its_workload_as_every_other_command_names_the_pod(tmp_path: Path, namespace: str) -> None:
    """A Pod given to fit is named as validate and schedule name it: namespace/name when a namespace is written."""
    text = POD.format(requests='example.com/gpu: "1.5"', limits='example.com/gpu: "1.5"')
    workload = tmp_path / "workload.yaml"
    workload.write_text(text.replace(", namespace: default}", namespace + "}"))
    fit = run(["fit", str(workload)], EXAMPLES)
    validate = run(["validate"], str(workload))
    assert fit.exit_code == validate.exit_code == 2, fit.output
    name = "team/p" if namespace else "p"
    line = f'{workload}[0]: Pod/{name}: spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "1500m"'
    assert line in fit.stderr and line in validate.stdout
