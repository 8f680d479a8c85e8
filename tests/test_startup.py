"""Start-up: a command imports only what it needs (issue 9: ``drasat solve`` on the README example, whole
process, under 0.2 s). Each lazy import is checked here in a fresh process, where ``sys.modules`` tells
what the command loaded; the times themselves are measured by ``benchmarks/call_bench.py --startup``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.table import Table

from drasat.cli.render.tables import TextTable, table_text
from drasat.solver.cel.check_proto import CHECK_FILE, check_file

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")

_PROBE = """
import atexit, gc, json, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + json.dumps(
    {"modules": sorted(sys.modules), "collecting": gc.isenabled(), "frozen": gc.get_freeze_count(),
     "plugins_scanned": getattr(sys.modules.get("pydantic.plugin._loader"), "_plugins", None) is not None}) + "\\n"))
from drasat.cli.main import main
sys.argv[0] = "drasat"
main()
"""


def run(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``drasat ARGS`` in a fresh process (output piped) and, at its exit, the names of the modules it
    imported (``modules``), whether the garbage collector runs (``collecting``) and how many objects
    start-up froze (``frozen``)."""
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120, env=env)
    last = done.stderr.rstrip().rsplit("\n", 1)[-1]
    assert last.startswith("MODULES "), done.stderr
    return done, json.loads(last.removeprefix("MODULES "))


def loaded(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``drasat ARGS`` in a fresh process (output piped) and the names of the modules it imported."""
    done, state = run(*args)
    return done, set(state["modules"])


def test_solve_on_the_readme_example_imports_only_what_it_needs() -> None:
    done, modules = loaded("solve", "--node", "gpu-node-1", "-o", "table", EXAMPLES)
    assert done.returncode == 0 and done.stdout.startswith("CLAIM ")
    unneeded = {
        "rich": "the table is piped",
        "ortools": "greedy finishes",
        "celpy": "cel-expr is the engine",
        "yaml_rs": "the files are small",
        "orjson": "no JSON",
        "drasat.solver.explanation.explain": "all allocated",
        "drasat.solver.cel.cost": "no selector ran out of cel-cpp's budget",
        "google.protobuf.descriptor_pb2": "the check environment's messages come serialized",
        "kubernetes": "files are read, not a cluster",
        "jsonpath_ng": "no -o jsonpath",
        "drasat.models.topology": "no NodeResourceTopology or KubeletConfiguration in the input",
        "drasat.models.policy": "no PodDisruptionBudget in the input",
        "drasat.models.pool_status_request": "no ResourcePoolStatusRequest in the input",
        "drasat.solver.allocation.cp_sat.packing": "the objective is first-fit, not pack",
        "drasat.solver.scheduling.cluster_state": "one node's claims, no scheduling queue",
        "drasat.solver.scheduling.plugins.dynamic_resources": "no node is filtered or scored",
        "drasat.solver.scheduling.plugins.numa_layout": "no NUMA admission without scheduling",
        "importlib.metadata": "pydantic's plugin scan is off",
    }
    assert {name: why for name, why in unneeded.items() if name in modules} == {}


def test_a_kind_whose_model_is_imported_on_first_use_still_loads(tmp_path: Path) -> None:
    """The models of the kinds few inputs hold come in with the first such object (``models.kinds``)."""
    budget = tmp_path / "pdb.yaml"
    budget.write_text(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: keep, namespace: default}\n"
        "spec: {maxUnavailable: 0, selector: {matchLabels: {app: x}}}\n"
    )
    done, modules = loaded("validate", "-q", str(budget))
    assert done.returncode == 0, done.stderr
    assert "drasat.models.policy" in modules


def test_start_up_objects_are_frozen_and_the_collector_runs_again() -> None:
    """The collector is paused only while modules are imported (see ``drasat.cli.main.importing``):
    a command that left it paused would grow without bound on a long run."""
    for args in (
        ("solve", "--node", "gpu-node-1", "-o", "table", EXAMPLES),
        ("schedule", "-o", "table", EXAMPLES),
        ("validate", "-q", EXAMPLES),
    ):
        done, state = run(*args)
        assert done.returncode == 0, done.stderr
        assert state["collecting"] is True and state["frozen"] > 10_000, (args, state)


def test_the_serialized_check_messages_are_the_ones_check_file_builds() -> None:
    assert check_file().SerializeToString() == CHECK_FILE


def test_a_text_table_prints_as_a_rich_table_does() -> None:
    ours, theirs = TextTable(title="Allocation"), Table(title="Allocation", show_lines=False)
    for table in (ours, theirs):
        table.add_column("claim")
        table.add_column("device")
        table.add_row("default/a", "gpu-0")
        table.add_row("default/b")
    for encoding in ("utf-8", "cp1252"):
        assert table_text(ours, encoding, terminal=True) == table_text(theirs, encoding, terminal=True)
    assert (
        table_text(ours, terminal=False)
        == table_text(theirs, terminal=False)
        == ("CLAIM       DEVICE\ndefault/a   gpu-0\ndefault/b\n")
    )


def test_the_command_skips_pydantic_s_plugin_scan_unless_the_user_asks_for_it() -> None:
    args = ("solve", "--node", "gpu-node-1", "-o", "name", EXAMPLES)
    plain = {key: value for key, value in os.environ.items() if key != "PYDANTIC_DISABLE_PLUGINS"}
    done, state = run(*args, env=plain)
    assert done.returncode == 0 and not state["plugins_scanned"]
    done, state = run(*args, env={**plain, "PYDANTIC_DISABLE_PLUGINS": ""})  # the user's own choice
    assert done.returncode == 0 and state["plugins_scanned"]


def test_the_plugin_loader_s_stand_in_for_package_metadata_reads_the_real_one_when_called() -> None:
    """Without plugins the loader is imported with ``importlib.metadata`` standing in (``cli.startup``):
    called after all, its ``entry_points`` reads the installed distributions, and the module imported
    afterwards is the real one."""
    probe = (
        "import sys\nfrom drasat.cli.main import main\nsys.argv[0] = 'drasat'\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('before', 'importlib.metadata' in sys.modules)\n"
        "import pydantic.plugin._loader as loader\n"
        "print('found', sorted(loader.entry_points(group='console_scripts').names & {'drasat', 'kubectl-drasat'}))\n"
        "import importlib.metadata\n"
        "print('real', type(importlib.metadata).__name__, importlib.metadata.version('click') is not None)\n"
    )
    args = ("solve", "--node", "gpu-node-1", "-o", "name", EXAMPLES)
    plain = {key: value for key, value in os.environ.items() if key != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120, env=plain)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-3:] == ["before False", "found ['drasat', 'kubectl-drasat']", "real module True"]


def test_the_stand_in_is_not_used_while_another_thread_could_import() -> None:
    """Another thread (a tracing agent's, a host's) importing ``importlib.metadata`` while the stand-in is in
    ``sys.modules`` would keep it: with one running, the loader imports the real module."""
    probe = (
        "import os, sys, threading\nos.environ['PYDANTIC_DISABLE_PLUGINS'] = '__all__'\n"
        "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
        "from drasat.cli.startup import importing\nwith importing():\n    import pydantic.plugin._loader\n"
        "print(type(sys.modules.get('importlib.metadata')).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["module"], done.stderr
