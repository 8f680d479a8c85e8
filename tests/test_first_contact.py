"""The smaller things a newcomer meets first (issue 24, item 6), each through the command line.

Nothing skipped silently, kubectl's "no objects passed", ``-`` as stdout and never a file, no folder made
for an output, compare refusing what solve refuses, CEL errors with validate's file and field, help that
reads whole on 80 columns and names ``kubectl drasat`` under kubectl, shell completion, and the library's
own bits: ``py.typed``, the version, ``__all__``, ``load_objects(strict=True)``.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from drasat.cli.main import COMMANDS, cli, load_all_commands
from drasat.models.errors import InputError
from drasat.models.loader import load_objects

from .helpers_models import REPO

load_all_commands()
EXAMPLES = str(REPO / "examples")
CLASS = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
BAD_CEL = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model =='}
"""


def run(*args: str, prog: str = "drasat", env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name=prog, env=env)


def test_the_readme_example_names_the_pending_claims_it_leaves_alone() -> None:
    result = run("solve", "--node", "gpu-node-1", "-o", "table", EXAMPLES)
    assert result.exit_code == 0, result.stderr
    assert (
        "notice: 3 pending claims no pending pod uses are left alone (name them with --claims to allocate "
        "them): default/single-gpu, default/two-gpus, default/gpu-with-nic"
    ) in result.stderr
    named = run("solve", "--node", "gpu-node-1", "--claims", "default/single-gpu", "-o", "name", EXAMPLES)
    assert named.exit_code == 0 and "left alone" not in named.stderr  # named claims are the question


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "--node", "n"],
        ["schedule"],
        ["explain", "--node", "n"],
        ["compare", "--node", "n"],
        ["validate"],
        ["inventory"],
        ["pool-status", "--driver", "gpu.example.com"],
        ["metadata", "--out", "out"],
    ],
)
def test_an_input_without_objects_is_refused_in_kubectls_words(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing yet\n")
    (tmp_path / "sub").mkdir()
    for given in (str(tmp_path / "empty.yaml"), str(tmp_path)):
        result = run(*args, given)
        assert result.exit_code == 2 and result.stdout == "", result.output
        assert result.stderr == f"error: no objects passed to {args[0]}\n"


def test_html_to_stdout_and_no_folder_made_for_an_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    page = run("inventory", "--html", "-", EXAMPLES)
    assert page.exit_code == 0 and page.stdout.startswith("<!DOCTYPE html>")
    assert os.listdir(cwd) == []  # no file named "-"
    missing = tmp_path / "no-such-folder"
    for args in (
        ["inventory", "--html", str(missing / "map.html")],
        ["solve", "--node", "gpu-node-1", "--output-state", str(missing / "state.yaml")],
        ["metadata", "--out", str(missing / "meta")],
    ):
        result = run(*args, EXAMPLES)
        assert result.exit_code == 2 and result.stdout == "", args
        assert f"there is no folder {missing} (drasat creates none)" in result.stderr, result.stderr
        assert not missing.exists()
    state = run("solve", "--node", "gpu-node-1", "--output-state", "-", EXAMPLES)
    assert state.exit_code == 2 and "standard output carries the answer already" in state.stderr


def test_compare_with_a_missing_device_class_is_an_error_as_solve_says(tmp_path: Path) -> None:
    (tmp_path / "claim.yaml").write_text(BAD_CEL.replace("gpu.example.com\n", "missing.example.com\n", 1))
    (tmp_path / "class.yaml").write_text(CLASS)
    solve = run("solve", "--node", "gpu-node-1", str(tmp_path))
    compare = run("compare", "--node", "gpu-node-1", str(tmp_path))
    assert solve.exit_code == compare.exit_code == 2
    assert compare.stdout == "" and "identical" not in compare.output
    assert 'deviceclass.resource.k8s.io "missing.example.com" not found' in compare.stderr
    error = [line for line in solve.stderr.splitlines() if line.startswith("error: ")]
    assert error and error == [line for line in compare.stderr.splitlines() if line.startswith("error: ")]


def test_cel_errors_keep_the_file_and_field_validate_gives(tmp_path: Path) -> None:
    claim = tmp_path / "claim.yaml"
    claim.write_text(BAD_CEL)
    (tmp_path / "class.yaml").write_text(CLASS)
    validate = run("validate", str(tmp_path))
    line = f"{claim}[0]: ResourceClaim/default/bad: spec.devices.requests[0].exactly.selectors[0].cel.expression: "
    assert validate.exit_code == 2 and line + "CEL compile error" in validate.stdout
    for command in ("solve", "explain", "compare"):
        result = run(command, "--node", "gpu-node-1", str(tmp_path))
        assert result.exit_code == 2 and result.stdout == "", command
        assert f"\nerror: {line}CEL compile error: " in "\n" + result.stderr, (command, result.stderr)


def test_solve_help_keeps_the_jsonpath_example_whole_on_80_columns() -> None:
    result = run("solve", "--help", env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    template = "'jsonpath={.items[*].status.allocation.devices.results[*].device}'"
    assert any(line.strip() == template for line in lines)
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]


@pytest.mark.parametrize("command", ["", *COMMANDS])
@pytest.mark.parametrize("prog", ["drasat", "kubectl drasat"])
def test_every_help_reads_whole_on_80_columns(command: str, prog: str) -> None:
    """No line of any help is longer than an 80-column terminal: the terminal would fold it anywhere."""
    result = run(*([command] if command else []), "--help", prog=prog, env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert [line for line in result.stdout.splitlines() if len(line) > 80] == []


def test_help_under_kubectl_says_kubectl_drasat() -> None:
    top = run("--help", prog="kubectl drasat")
    assert top.exit_code == 0
    assert "  kubectl drasat solve --node worker-1 cluster/" in top.stdout
    assert "Run `kubectl drasat COMMAND --help`" in top.stdout
    assert not [line for line in top.stdout.splitlines() if line.lstrip().startswith("drasat ")]
    sub = run("schedule", "--help", prog="kubectl drasat")
    assert sub.stdout.startswith("Usage: kubectl drasat schedule")
    assert "kubectl drasat schedule -o table" in sub.stdout and "pip install 'drasat[cluster]'" in sub.stdout
    assert run("--help").stdout.count("kubectl drasat") == 0  # as drasat, nothing renamed


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_and_completions(shell: str) -> None:
    script = run("completion", shell)
    assert script.exit_code == 0 and "_DRASAT_COMPLETE" in script.stdout
    env = {
        **os.environ,
        "_DRASAT_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": "drasat solve --solver ",
        "COMP_CWORD": "3",
    }
    if shell == "fish":  # fish passes the word being completed, not its index
        env.update({"COMP_WORDS": "drasat solve --solver", "COMP_CWORD": ""})
    answer = subprocess.run(
        [sys.executable, "-m", "drasat.cli"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert "cp-sat" in answer.stdout and "greedy" in answer.stdout, answer.stderr
    assert run("completion", "tcsh").exit_code == 2


def test_kubectl_drasat_tab_on_a_full_disk_is_one_message() -> None:
    complete = "import sys; from drasat.cli.main import kubectl_complete; sys.argv[0] = 'x'; kubectl_complete()"
    with open("/dev/full", "w") as full:
        answer = subprocess.run([sys.executable, "-c", complete, "solve", ""], stdout=full, stderr=subprocess.PIPE)
    assert (
        answer.returncode == 2 and answer.stderr.decode() == "error: writing standard output: No space left on device\n"
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_kubectl_drasat_completes_itself(shell: str) -> None:
    script = run("completion", shell, prog="kubectl drasat")
    assert script.exit_code == 0 and "_KUBECTL_DRASAT_COMPLETE" in script.stdout and "kubectl-drasat" in script.stdout
    assert "_DRASAT_COMPLETE" not in script.stdout.replace("_KUBECTL_DRASAT_COMPLETE", "")
    env = {**os.environ, "_KUBECTL_DRASAT_COMPLETE": f"{shell}_complete", "COMP_WORDS": "kubectl-drasat sch"}
    env["COMP_CWORD"] = "" if shell == "fish" else "1"
    plugin = "from drasat.cli.main import kubectl_plugin; kubectl_plugin()"
    answer = subprocess.run([sys.executable, "-c", plugin], env=env, capture_output=True, text=True, timeout=60)
    assert "schedule" in answer.stdout and answer.returncode == 0, answer.stderr


@pytest.mark.parametrize(
    ("words", "offered", "directive"),
    [
        (["sch"], ["schedule\t"], ":4"),  # commands, with their descriptions
        (["solve", "--sol"], ["--solver\t"], ":4"),
        (["solve", "--solver", ""], ["cp-sat", "greedy"], ":4"),  # an option's choices
        (["solve", "ex"], [], ":0"),  # a FILE: the shell completes file names
        (["solve", "-f", "ex"], [], ":0"),
        (["fit", "-o", "j"], ["json", "jsonpath="], ":4"),  # every command's output forms
        (["solve", "-o", "jsonp"], ["jsonpath="], ":6"),  # and no space after '=': the template follows
        ([], ["solve\t", "schedule\t"], ":4"),
    ],
)
def test_kubectl_drasat_tab_is_answered_as_kubectl_asks(words: list[str], offered: list[str], directive: str) -> None:
    """kubectl (1.26+) runs kubectl_complete-drasat with the words after `drasat`, the last one being
    completed, and reads Cobra's format: a completion a line (tab, description), then ':' and a directive."""
    complete = "import sys; from drasat.cli.main import kubectl_complete; sys.argv[0] = 'x'; kubectl_complete()"
    answer = subprocess.run([sys.executable, "-c", complete, *words], capture_output=True, text=True, timeout=60)
    lines = answer.stdout.splitlines()
    assert answer.returncode == 0 and lines[-1] == directive, (answer.stdout, answer.stderr)
    for word in offered:
        assert any(line.startswith(word) for line in lines[:-1]), (word, lines)
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl_complete-drasat"] == "drasat.cli.main:kubectl_complete"


def test_packages_are_typed_and_the_library_names_its_version_and_api() -> None:
    import drasat.solver

    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    for package, folder in data["package-dir"].items():
        assert data["package-data"][package] == ["py.typed"] and (REPO / folder / "py.typed").is_file()
    assert drasat.solver.__version__ == importlib.metadata.version("drasat")
    for name in ("schedule_batch", "BatchResult", "node_reports", "NodeReport", "pool_status", "PoolInputs"):
        assert name in drasat.solver.__all__
    for name in ("answer_pool_status_request", "taint_impact", "RuleSelector", "Impact"):
        assert name in drasat.solver.__all__
    assert all(getattr(drasat.solver, name) is not None for name in drasat.solver.__all__)


def test_load_objects_strict_raises_on_an_object_it_cannot_read() -> None:
    good = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "a"}}
    bad = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "b"}, "spec": 3}
    lenient = load_objects([good, bad])
    assert [o.obj.name for o in lenient.objects] == ["a"] and len(lenient.problems) == 1
    with pytest.raises(InputError, match=r"<objects>\[1\].*DeviceClass/b.*spec"):
        load_objects([good, bad], strict=True)
    assert len(load_objects([good], strict=True).objects) == 1
