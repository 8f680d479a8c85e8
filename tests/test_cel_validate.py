"""``drasat validate`` compiles CEL (drasat.solver.cel.validate): through the CLI, on both engines.

Each compile error is a problem at the expression's field, naming file, document,
object and field path, with the engine-neutral detail: line, column, the source line
and a caret, indented under the problem so that stdout keeps its shape.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands
from drasat.models.validation import registered_checkers, unregister_checker
from drasat.solver.cel import available_engines

load_all_commands()
CONTINUATION = " " * 9  # under "       - ", where drasat validate prints a problem

G = "gpu.example.com"
CLASS = f"""apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {G}}}
spec:
  selectors:
  - cel: {{expression: 'device.driver == "{G}"'}}
  - cel: {{expression: '{{SELECTOR}}'}}
"""
CLAIM = f"""apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: pair, namespace: default}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: {G}
        selectors:
        - cel: {{expression: '{{EXACT}}'}}
        derivedAttributes:
        - name: derived/numa
          expression: '{{DERIVED}}'
    - name: nic
      firstAvailable:
      - name: fast
        deviceClassName: nic.example.com
        selectors:
        - cel: {{expression: 'device.driver == "nic.example.com"'}}
        - cel: {{expression: '{{SUB}}'}}
        derivedAttributes:
        - name: derived/numa
          expression: '{{SUB_DERIVED}}'
    constraints:
    - requests: [gpu, nic]
      matchAttribute: derived/numa
"""
GOOD = {
    "SELECTOR": f'device.attributes["{G}"].model == "a100"',
    "EXACT": f'device.capacity["{G}"].memory.compareTo(quantity("40Gi")) >= 0',
    "DERIVED": f'device.attributes["{G}"].numa',
    "SUB": 'device.attributes["nic.example.com"].speed >= 100',
    "SUB_DERIVED": 'cel.bind(n, device.attributes["nic.example.com"].numaNode, [n, n + 1])',
}
GPU_CLAIM = "spec.devices.requests[0].exactly"
NIC_SUB = "spec.devices.requests[1].firstAvailable[0]"


@pytest.fixture(scope="module", autouse=True)
def _registry_as_found() -> Iterator[None]:
    """``drasat validate`` registers the CEL check for the whole process when it first runs;
    other test modules validate objects without it, so leave the registry as it was found.
    (The module is imported lazily, by the CLI, for the same reason.)"""
    before = registered_checkers()
    yield
    for checker in registered_checkers():
        if checker not in before:
            unregister_checker(checker)


@pytest.fixture(params=available_engines(), autouse=True)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs on each engine: the messages must not depend on it."""
    monkeypatch.setenv("DRASAT_CEL_ENGINE", request.param)
    return request.param


def _fill(template: str, **bad: str) -> str:
    text = template
    for key, value in {**GOOD, **bad}.items():
        text = text.replace("{" + key + "}", value)
    return text


def _run(tmp_path: Path, *documents: str) -> tuple[Path, Result]:
    path = tmp_path / "objects.yaml"
    path.write_text("---\n".join(documents))
    return path, CliRunner().invoke(cli, ["validate", str(path)])


def _problem(result: Result, prefix: str) -> list[str]:
    """The lines of the one problem that starts with ``prefix``: its first line and its continuation lines."""
    lines = result.stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(f"       - {prefix}")]
    assert len(starts) == 1, result.stdout
    block = [lines[starts[0]]]
    for line in lines[starts[0] + 1 :]:
        if not line.startswith(CONTINUATION):
            break
        block.append(line)
    return block


def _assert_caret(block: list[str], source: str, line: int) -> None:
    """``ERROR: <input>:L:C:`` and, under the problem, the source line with a caret at column C."""
    found = re.search(rf"ERROR: <input>:{line}:(\d+): ", block[0])
    assert found, block
    column = int(found.group(1))
    assert block[1] == f"{CONTINUATION} | {source}"
    assert block[2] == f"{CONTINUATION} | {'.' * (column - 1)}^"


def _assert_shape(result: Result) -> None:
    """Every stdout line is a verdict, a problem, a problem's continuation or the summary."""
    lines = result.stdout.splitlines()
    for line in lines[:-1]:
        assert re.match(r"(ok     |FAIL   |       - |" + CONTINUATION + r" \| )", line), line
    assert re.fullmatch(r"\d+ objects?: \d+ valid, \d+ invalid", lines[-1])
    assert result.stderr == ""


def test_the_cli_registers_the_checker(tmp_path: Path) -> None:
    _run(tmp_path, _fill(CLASS))
    module = importlib.import_module("drasat.solver.cel.validate")
    assert module.check_cel in registered_checkers()
    assert module.CONTINUATION == CONTINUATION


def test_good_objects_are_valid(tmp_path: Path) -> None:
    _, result = _run(tmp_path, _fill(CLASS), _fill(CLAIM))
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "2 objects: 2 valid, 0 invalid"
    _assert_shape(result)


def test_bad_class_selector(tmp_path: Path) -> None:
    path, result = _run(tmp_path, _fill(CLASS, SELECTOR="device.driver == 1"))
    assert result.exit_code == 2
    block = _problem(
        result,
        f"{path}[0]: DeviceClass/{G}: spec.selectors[1].cel.expression: CEL compile error: "
        "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' "
        "applied to '(string, int)'",
    )
    _assert_caret(block, "device.driver == 1", 1)
    assert f"FAIL   {path}[0]: DeviceClass/{G}" in result.stdout
    _assert_shape(result)


def test_bad_request_selector(tmp_path: Path) -> None:
    source = f'device.attributes["{G}"].memory >= quantity("1Gi")'
    path, result = _run(tmp_path, _fill(CLASS), _fill(CLAIM, EXACT=source))
    assert result.exit_code == 2
    block = _problem(
        result,
        f"{path}[1]: ResourceClaim/default/pair: {GPU_CLAIM}.selectors[0].cel.expression: "
        "CEL compile error: compilation failed: ",
    )
    assert "found no matching overload for '_>=_' applied to '(dyn, kubernetes.Quantity)'" in block[0]
    _assert_caret(block, source, 1)
    assert f"ok     {path}[0]: DeviceClass/{G}" in result.stdout
    assert result.stdout.splitlines()[-1] == "2 objects: 1 valid, 1 invalid"
    _assert_shape(result)


def test_bad_subrequest_selector(tmp_path: Path) -> None:
    path, result = _run(tmp_path, _fill(CLAIM, SUB="device.nosuch"))
    assert result.exit_code == 2
    block = _problem(
        result,
        f"{path}[0]: ResourceClaim/default/pair: {NIC_SUB}.selectors[1].cel.expression: "
        "CEL compile error: compilation failed: ERROR: <input>:1:7: undefined field 'nosuch'",
    )
    _assert_caret(block, "device.nosuch", 1)
    _assert_shape(result)


def test_selectors_must_be_bool(tmp_path: Path) -> None:
    path, result = _run(tmp_path, _fill(CLAIM, SUB='device.attributes["nic.example.com"].speed'))
    assert result.exit_code == 0  # dyn: only a device can tell
    path, result = _run(tmp_path, _fill(CLAIM, SUB="1 + 1"))
    assert (
        f"       - {path}[0]: ResourceClaim/default/pair: {NIC_SUB}.selectors[1].cel.expression: "
        "CEL compile error: must evaluate to bool or the unknown type, not int\n"
    ) in result.stdout


def test_bad_derived_attributes(tmp_path: Path) -> None:
    syntax = 'device.attributes["nic.example.com"].numaNode +'
    path, result = _run(tmp_path, _fill(CLAIM, DERIVED=f'device.attributes["{G}"].numa * 1.5', SUB_DERIVED=syntax))
    assert result.exit_code == 2
    assert (
        f"       - {path}[0]: ResourceClaim/default/pair: {GPU_CLAIM}.derivedAttributes[0].expression: "
        "CEL compile error: derived attribute must evaluate to string, int, bool, version or a list of those, "
        "not double\n"
    ) in result.stdout
    block = _problem(
        result,
        f"{path}[0]: ResourceClaim/default/pair: {NIC_SUB}.derivedAttributes[0].expression: "
        "CEL compile error: compilation failed: ERROR: <input>:1:",
    )
    _assert_caret(block, syntax, 1)
    assert result.stdout.count("       - ") == 2
    _assert_shape(result)


def test_derived_attribute_with_a_map_result(tmp_path: Path) -> None:
    path, result = _run(tmp_path, _fill(CLAIM, DERIVED=f'device.attributes["{G}"]'))
    assert (
        f"{GPU_CLAIM}.derivedAttributes[0].expression: CEL compile error: derived attribute must evaluate to "
        "string, int, bool, version or a list of those, not map(string, dyn)"
    ) in result.stdout


def test_template(tmp_path: Path) -> None:
    template = f"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: pair, namespace: default}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {G}
          selectors:
          - cel: {{expression: 'device.driver == "{G}"'}}
      - name: nic
        firstAvailable:
        - name: fast
          deviceClassName: nic.example.com
          derivedAttributes:
          - name: derived/numa
            expression: 'size(device.driver) > "1"'
      constraints:
      - matchAttribute: derived/numa
"""
    path, result = _run(tmp_path, template)
    assert result.exit_code == 2, result.stdout
    assert f"FAIL   {path}[0]: ResourceClaimTemplate/default/pair" in result.stdout
    block = _problem(
        result,
        f"{path}[0]: ResourceClaimTemplate/default/pair: spec.spec.devices.requests[1]."
        "firstAvailable[0].derivedAttributes[0].expression: CEL compile error: compilation "
        "failed: ERROR: <input>:1:21: found no matching overload for '_>_' applied to "
        "'(int, string)'",
    )
    _assert_caret(block, 'size(device.driver) > "1"', 1)
    assert result.stdout.count("       - ") == 1
    _assert_shape(result)
    fixed, result = _run(tmp_path, template.replace('> "1"', "> 1"))
    assert result.exit_code == 0, result.stdout


def test_a_multi_line_expression_points_at_its_line(tmp_path: Path) -> None:
    claim = _fill(CLAIM).replace(
        f"- cel: {{expression: '{GOOD['EXACT']}'}}",
        f'- cel:\n            expression: |-\n              device.driver == "{G}" &&\n                noSuch > 1',
    )
    path, result = _run(tmp_path, claim)
    block = _problem(result, f"{path}[0]: ResourceClaim/default/pair: {GPU_CLAIM}.selectors[0].cel.expression: ")
    assert "ERROR: <input>:2:3: undeclared reference to 'noSuch'" in block[0]
    _assert_caret(block, "  noSuch > 1", 2)


def test_empty_and_long_expressions_are_reported_once(tmp_path: Path) -> None:
    long = "true && " * 1300 + "true"
    path, result = _run(tmp_path, _fill(CLASS, SELECTOR=long), _fill(CLAIM, EXACT=""))
    assert result.exit_code == 2
    assert result.stdout.count("CEL compile error") == 0
    assert "spec.selectors[1].cel.expression: Too long: may not be more than 10240 bytes" in result.stdout
    assert f"{GPU_CLAIM}.selectors[0].cel.expression: a CEL expression is required" in result.stdout
