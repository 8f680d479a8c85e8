"""Kubernetes' CEL cost estimate (drasat.solver.cel.cost) and the limit the API server applies.

The expected costs are the ones Kubernetes' own tests pin down for the same expressions
(``staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go``): the estimate is
part of API compatibility, so drasat must reproduce it to the unit, not approximately.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.validation import registered_checkers, unregister_checker
from drasat.solver.cel.cost import MAX_COST, cost_problem, estimated_cost

load_all_commands()
D = "dra.example.com"
LIST_ELEMENTS = 64  # max(DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice)

KUBERNETES_COSTS = {
    'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))': 6,
    '"no-such-domain" in device.attributes': 3,
    'device.driver == ""': 2,
    f'device.driver == "{D}"': 4,
    f'device.attributes["{D}"]["name"]': 4,
    f'cel.bind(dra, device.attributes["{D}"], dra.name)': 15,
    f'device.attributes["{D}"].name > 0': 5,
    f'device.attributes["{D}"].name == "fish"': 5,
    f'device.attributes["{D}"].names.size() == 2': 6,
    f'device.attributes["{D}"].name.exists(x, x > 0)': 5 + 6 * LIST_ELEMENTS,
    f'device.attributes["{D}"].names.all(x, x != "")': 5 + 4 * LIST_ELEMENTS,
    f'device.attributes["{D}"].names.all(x, x.isGreaterThan(semver("0.0.1")))': 5 + 6 * LIST_ELEMENTS,
    f'device.attributes["{D}"].name.includes(true)': 4 + 48,
    f'device.attributes["{D}"].name.includes(semver("1.0.0"))': 4 + 48 + 1,
    f'1 in device.attributes["{D}"].names': 4 + 64,
    f'device.attributes["{D}"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)': 7,
    f'device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))': 6,
    f'"name" in device.capacity["{D}"] && device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))': 10,
    f'!("name" in device.capacity["{D}"]) || device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))': 11,
    f'device.attributes["{D}"].a && device.attributes["{D}"].b && device.attributes["{D}"].c': 12,
    f'device.attributes.exists_one(x, x == "{D}")': 164,
    f'device.attributes["{D}"].exists_one(x, x == "services")': 133,
    f'device.attributes["{D}"].services.split("example").size() >= 2': 19,
    f'device.attributes["{D}"].services.matches("[^a]?sym")': 18,
    f'device.capacity.exists_one(x, x == "{D}")': 164,
    f'device.capacity["{D}"].exists_one(x, x == "memory")': 133,
    "device.allowMultipleAllocations == true": 3,
}


@pytest.mark.parametrize("expression, cost", list(KUBERNETES_COSTS.items()))
def test_the_estimate_is_kubernetes_own(expression: str, cost: int) -> None:
    assert estimated_cost(expression) == cost


def nested_all(depth: int) -> str:
    """``depth`` nested ``.all()`` over ten-element lists: each level multiplies the cost by ten."""
    body = "x0 > 0"
    for level in range(depth):
        body = f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x{level}, {body})"
    return body


def costing(total: int) -> str:
    """An expression whose estimate is ``total`` (near the limit): a loop over 996 elements whose body
    is a 990-element membership test, plus ``1 > 0`` terms of one unit each."""
    loop = f"[{','.join(['0'] * 996)}].all(x, x in [{','.join(['1'] * 990)}])"
    padding = total - 1_000_000 + 5
    assert padding >= 0
    return " && ".join([loop] + ["1 > 0"] * padding)


def test_the_limit_is_inclusive() -> None:
    assert estimated_cost(costing(MAX_COST)) == MAX_COST
    assert cost_problem(costing(MAX_COST)) is None
    assert cost_problem(costing(MAX_COST + 1)) == (
        "Forbidden: too complex, exceeds cost limit (estimated worst-case cost 1000001, limit 1000000)"
    )


def test_five_nested_loops_pass_six_do_not() -> None:
    assert estimated_cost(nested_all(5)) == 655_551
    assert estimated_cost(nested_all(6)) == 6_555_551


def test_an_expression_that_does_not_type_check_has_no_estimate() -> None:
    assert estimated_cost("device.nosuch == 1") is None
    assert cost_problem("device.nosuch == 1") is None


@pytest.fixture
def _registry_as_found() -> Iterator[None]:
    """The CLI registers the CEL check when it first imports it, once per process: import it
    here so that it stays registered for the modules that expect that, and undo anything else."""
    importlib.import_module("drasat.solver.cel.validate")
    before = registered_checkers()
    yield
    for checker in registered_checkers():
        if checker not in before:
            unregister_checker(checker)


CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {name}}}
spec:
  selectors:
  - cel: {{expression: '{expression}'}}
"""


@pytest.mark.usefixtures("_registry_as_found")
def test_validate_refuses_a_selector_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "classes.yaml"
    path.write_text(
        CLASS.format(name="five", expression=nested_all(5))
        + "---\n"
        + CLASS.format(name="six", expression=nested_all(6))
    )
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "DeviceClass/five" in result.stdout.splitlines()[0] and result.stdout.startswith("ok")
    assert (
        f"{path}[1]: DeviceClass/six: spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost "
        "limit (estimated worst-case cost 6555551, limit 1000000)"
    ) in result.stdout
