"""The layers the tree is drawn in: each package imports only those below it, never one above.

models → solver.cel → solver.allocation → solver.explanation | solver.verification → solver.scheduling
→ solver.batch → solver.report → cli. Every import is read from the source (module level and inside
functions alike, ``TYPE_CHECKING`` blocks included), so a lazy import cannot hide a cycle. The
verifier is a second reading of the spec: it may use the allocation's plain data (the problem, the
feature gates) but imports no rule and no search.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"models": "drasat.models", "solver": "drasat.solver", "cli": "drasat.cli"}

LAYERS = [
    {"drasat.models"},
    {"drasat.solver.cel"},
    {"drasat.solver.allocation"},
    {"drasat.solver.explanation", "drasat.solver.verification"},
    {"drasat.solver.scheduling"},
    {"drasat.solver.batch"},
    {"drasat.solver.report"},
    {"drasat.solver", "drasat.cli"},
]
"""Bottom first. ``drasat.solver`` itself is only its lazy public API, so it sits with the CLI at the top."""

FORBIDDEN = {
    "drasat.solver.verification": (
        "drasat.solver.allocation.rules",
        "drasat.solver.allocation.planning",
        "drasat.solver.allocation.depth_first",
        "drasat.solver.allocation.cp_sat",
        "drasat.solver.allocation.api",
        "drasat.solver.explanation",
    ),
}
"""Imports a package may not make although the layers would allow them."""

KNOWN_UPWARD: set[tuple[str, str]] = set()
"""Upward imports still to be removed (importer, imported): none left, and none may be added."""


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([FOLDERS[parts[0]], *parts[1:]])


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def _imports(path: Path) -> set[str]:
    """Every drasat module ``path`` imports, resolved to an absolute name."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("drasat."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("drasat."):
                module = node.module
            else:
                continue
            found.add(module)
    return found


def _layer(module: str) -> int:
    best, index = -1, -1
    for i, layer in enumerate(LAYERS):
        for package in layer:
            if (module == package or module.startswith(package + ".")) and len(package) > best:
                best, index = len(package), i
    assert index >= 0, f"{module} is in no layer"
    return index


def _package_of(module: str) -> str:
    return max((p for layer in LAYERS for p in layer if module == p or module.startswith(p + ".")), key=len)


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_imports_upward(path: Path) -> None:
    importer = _module_name(path)
    upward = sorted(m for m in _imports(path) if _layer(m) > _layer(importer) and (importer, m) not in KNOWN_UPWARD)
    assert upward == [], f"{importer} imports from a layer above it"


@pytest.mark.parametrize("package, banned", sorted(FORBIDDEN.items()))
def test_the_verifier_imports_no_rule_and_no_search(package: str, banned: tuple[str, ...]) -> None:
    offending = sorted(
        f"{_module_name(path)} imports {module}"
        for path in _sources()
        if _package_of(_module_name(path)) == package
        for module in _imports(path)
        if module.startswith(banned)
    )
    assert offending == []


def test_every_folder_is_a_listed_package() -> None:
    """pyproject lists each package (setuptools does not find subpackages of a mapped folder by itself):
    a folder left out would be missing from the installed drasat."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {_module_name(init) for folder in FOLDERS for init in (ROOT / folder).rglob("__init__.py")}
    assert folders == listed


def test_the_solver_top_level_holds_packages_and_only_its_api() -> None:
    modules = sorted(p.name for p in (ROOT / "solver").glob("*.py"))
    assert modules == ["__init__.py"]
