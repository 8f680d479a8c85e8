"""kubectl's output forms on the commands that print objects: -o name and -o jsonpath=TEMPLATE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands
from drasat.cli.render.kubectl import render_list

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")
ITEMS = [
    {
        "kind": "ResourceClaim",
        "metadata": {"name": "a"},
        "status": {"allocation": {"devices": {"results": [{"device": "gpu-0"}, {"device": "nic-1"}]}}},
    },
    {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "n1"}},
]


def run(*args: str) -> Result:
    load_all_commands()
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(
    "template, printed",
    [
        ("{.items[*].metadata.name}", "a p"),
        ('{range .items[*]}{.metadata.name}{"\\t"}{.kind}{"\\n"}{end}', "a\tResourceClaim\np\tPod\n"),
        ("names: {.items[0].metadata.name}!", "names: a!"),
        ("{.items[0].status.allocation.devices.results[*].device}", "gpu-0 nic-1"),
        ("{.items[1].spec}", '{"nodeName":"n1"}'),
        ("{.items[0].metadata.name}{'\\t'}{\"\u00e9\"}", "a\t\u00e9"),
    ],
)
def test_jsonpath_templates_as_kubectl_prints_them(template: str, printed: str) -> None:
    assert render_list(ITEMS, f"jsonpath={template}") == printed


@pytest.mark.parametrize(
    "template, why",
    [
        ("{.items[5].metadata.name}", "array index out of bounds: index 5, length 4"),
        ("{.items[-5].metadata.name}", "array index out of bounds: index -1, length 4"),
        ("{.items[0:6].metadata.name}", "array index out of bounds: index 5, length 4"),
        ("{.items[5:6].metadata.name}", "array index out of bounds: index 5, length 4"),
    ],
)
def test_jsonpath_out_of_bounds_is_kubectls_error_not_an_empty_answer(template: str, why: str) -> None:
    """kubectl checks an index or a slice against the list whatever --allow-missing-template-keys says."""
    result = run("schedule", "-o", f"jsonpath={template}", EXAMPLES)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f'error: error executing jsonpath "{template}": Error executing template: {why}.\n'


@pytest.mark.parametrize(
    "template, printed",
    [
        ("{.nothing.here}", ""),
        ("{.items[0].metadata.nothing}", ""),
        ("{range .items[*]}{.metadata.name}:{.metadata.annotations.nothing};{end}", "trainer-0:;"),
        ("{.items[1:1].metadata.name}", ""),  # an empty slice is no error
    ],
)
def test_jsonpath_missing_keys_print_nothing_as_kubectl_get_does(template: str, printed: str) -> None:
    """kubectl get's --allow-missing-template-keys is true by default: an optional label or annotation a
    script reads is simply empty where it is missing."""
    result = run("schedule", "-o", f"jsonpath={template}", EXAMPLES)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(printed)


def test_jsonpath_steps_after_nothing_say_nothing() -> None:
    """As kubectl: a field after a wildcard over no items finds nothing without an error (an empty answer)."""
    result = run("schedule", "-o", "jsonpath={.items[*].metadata.name}", str(Path(EXAMPLES) / "cluster.yaml"))
    assert (result.exit_code, result.stdout) == (0, "")


def test_custom_columns_keep_none_for_missing_keys() -> None:
    result = run("schedule", "-o", "custom-columns=NAME:.metadata.name,X:.nothing", EXAMPLES)
    assert result.exit_code == 0 and result.stdout.splitlines()[1].split()[1] == "<none>"


def test_name_form() -> None:
    assert render_list(ITEMS, "name") == "resourceclaim.resource.k8s.io/a\npod/p\n"


def test_solve_and_schedule_print_every_form() -> None:
    listing = json.loads(run("solve", "--node", "gpu-node-1", "-o", "json", EXAMPLES).stdout)
    names = [item["metadata"]["name"] for item in listing["items"]]
    assert names
    by_name = run("solve", "--node", "gpu-node-1", "-o", "name", EXAMPLES)
    assert by_name.exit_code == 0 and by_name.stdout.split() == [f"resourceclaim.resource.k8s.io/{n}" for n in names]
    by_path = run("solve", "--node", "gpu-node-1", "-o", "jsonpath={.items[*].metadata.name}", EXAMPLES)
    assert by_path.exit_code == 0 and by_path.stdout.split() == names
    placed = run("schedule", "-o", "jsonpath={range .items[?(@.kind=='Pod')]}{.spec.nodeName}{' '}{end}", EXAMPLES)
    assert placed.exit_code == 0 and set(placed.stdout.split()) <= {"gpu-node-1", "gpu-node-2"} and placed.stdout


@pytest.mark.parametrize(
    "form, message",
    [
        ("bogus", "'bogus' is not an output format"),
        ("jsonpath={range .items[*]}{.metadata.name}", "every {range} needs an {end}"),
        ("jsonpath=plain text", "has no {expression}"),
        ("jsonpath={.items[?(@.x ==}", "is not valid"),
        ('jsonpath={.items[0]}{"\\q"}', "is not valid (Invalid \\escape)"),
        ("jsonpath={.items[", "error parsing jsonpath {.items[, unterminated array"),
        ("jsonpath={.items[0].metadata", "error parsing jsonpath {.items[0].metadata, unclosed action"),
        ("jsonpath={.a}{.b", "error parsing jsonpath {.a}{.b, unclosed action"),
    ],
)
def test_bad_output_forms_are_refused_before_any_work(form: str, message: str) -> None:
    result = run("solve", "-o", form, EXAMPLES)
    assert result.exit_code == 2 and result.stdout == "" and message in result.stderr


def test_share_ids_are_the_same_on_every_run_and_unique(shared: Path) -> None:
    """kubectl users diff answers: a share's ID comes from the claim, request, device and place, not chance."""
    scenario = shared / "scenarios" / "upstream" / "allow-multiple-allocations-with-partitionable-device.yaml"
    first, again = (
        run(  # an allocator fixture: its subrequest names are no DNS labels (tests/scenario_runner.py)
            "solve",
            "--allow-invalid-objects",
            "-o",
            "jsonpath={.items[*].status.allocation.devices.results[*].shareID}",
            str(scenario),
        )
        for _ in range(2)
    )
    assert first.exit_code == again.exit_code == 0, first.stderr
    ids = first.stdout.split()
    assert ids and ids == again.stdout.split() and len(set(ids)) == len(ids)


def test_jsonpath_reads_a_label_key_with_escaped_dots_as_kubectl_does() -> None:
    """kubectl's way to a label whose key has dots: app\\.kubernetes\\.io/name."""
    items = [{"kind": "Pod", "metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "web", "app": "x"}}}]
    template = "{.items[0].metadata.labels.app\\.kubernetes\\.io/name}"
    assert render_list(items, f"jsonpath={template}") == "web"
