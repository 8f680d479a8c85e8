"""The repository's own promises: a licence file, markers in use, no machine paths, DRASAT_SHARED honoured."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = [p for folder in ("models", "solver", "cli", "tests", "benchmarks") for p in (REPO / folder).rglob("*.py")]
SOURCES += [REPO / "pyproject.toml", REPO / "README.md"]


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_the_announced_licence_file_is_the_apache_2_text() -> None:
    assert _pyproject()["project"]["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text()
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text


def test_every_declared_pytest_marker_is_used() -> None:
    declared = [m.split(":")[0] for m in _pyproject()["tool"]["pytest"]["ini_options"].get("markers", [])]
    tests = "\n".join(p.read_text() for p in (REPO / "tests").glob("*.py"))
    assert [m for m in declared if f"mark.{m}" not in tests] == []


def test_no_machine_paths_in_the_sources() -> None:
    machine_path = re.compile(r"""["'](/work|/home|/root|/Users|/tmp)/""")
    assert [str(p.relative_to(REPO)) for p in SOURCES if machine_path.search(p.read_text())] == []


def _resolved(env_value: str, code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "", "DRASAT_SHARED": env_value, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_tests_and_benchmarks_read_shared_inputs_from_drasat_shared(tmp_path: Path) -> None:
    assert _resolved(str(tmp_path), "from tests.shared_inputs import SHARED; print(SHARED)") == str(tmp_path)
    bench = "import runpy; print(runpy.run_path('benchmarks/solve_bench.py')['PERF'])"
    assert _resolved(str(tmp_path), bench) == str(tmp_path / "scenarios" / "perf")
