"""Runs a scenario file (../shared/scenarios/FORMAT.md) through the public CLI and checks the answer.

Used by the scenario tests; kept importable so a failing scenario can be replayed by hand:
``python -m tests.scenario_runner PATH [--solver greedy]``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.quantity import Quantity

from .shared_inputs import SHARED  # noqa: F401  (re-exported for the scenario tests)

OWN = Path(__file__).resolve().parent / "scenarios"
SKIP = "scenario.drasat.dev/skip"
#: Shared folders whose inputs break API rules on purpose: Kubernetes' allocator unit tests' fixtures (subrequest
#: names that are not DNS labels, capacity names that are not C identifiers, ...) and the perf and scale inputs
#: (slices of thousands of devices). They replay with --allow-invalid-objects; drasat's own scenarios and the
#: CEL ones run as a user's input does, refused when validate refuses it.
ALLOCATOR_FIXTURES = ("upstream", "perf", "scale")
ALLOW_INVALID = "--allow-invalid-objects"


def allows_invalid(path: Path) -> bool:
    """Whether the scenario is one of Kubernetes' allocator fixtures or a benchmark input (see above)."""
    return path.parent.name in ALLOCATOR_FIXTURES and path.parent.parent.name == "scenarios" and OWN not in path.parents


def scenario_files(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders if folder.is_dir() for p in folder.glob("*.yaml"))


@functools.lru_cache(maxsize=8)  # a scale scenario is a megabyte of YAML: read its Scenario document once
def scenario_doc(path: Path) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    return next(d for d in docs if d.get("kind") == "Scenario")


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str

    def allocations(self) -> dict[str, dict[str, Any]]:
        listing = json.loads(self.stdout)
        return {item["metadata"]["name"]: item["status"]["allocation"] for item in listing["items"]}


def cli_args(path: Path, doc: dict[str, Any], solver: str) -> list[str]:
    spec = doc.get("spec") or {}
    command = spec.get("command", "solve")  # solve | schedule (pods placed over every node)
    args = [command, "-o", "json", "--solver", solver]
    if spec.get("pods") is not None:
        args += ["--pods", ",".join(spec["pods"])]
    if spec.get("node"):
        args += ["--node", spec["node"]]
    gates = spec.get("featureGates") or {}
    if gates:
        args += ["--feature-gates", ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())]
    if spec.get("claims") is not None:
        args += ["--claims", ",".join(spec["claims"])]
    if spec.get("batch"):  # drasat's own field: schedule --batch (joint placement)
        args.append("--batch")
    if spec.get("objective"):  # drasat's own field (default first-fit, the only one the greedy solver knows)
        args += ["--objective", spec["objective"]]
    if allows_invalid(path):
        args.append(ALLOW_INVALID)
    return args + [str(path)]


def run(path: Path, solver: str = "cp-sat", extra: list[str] | None = None) -> Outcome:
    load_all_commands()
    doc = scenario_doc(path)
    result = CliRunner().invoke(cli, cli_args(path, doc, solver) + (extra or []), catch_exceptions=False)
    return Outcome(result.exit_code, result.stdout, result.stderr)


def mismatches(expect: dict[str, Any], outcome: Outcome) -> list[str]:
    """What differs between the expectation and the outcome; [] when they agree."""
    if "placements" in expect or "pending" in expect:
        return placement_mismatches(expect, outcome)
    if "error" in expect:
        if outcome.exit_code != 2 or outcome.stdout:
            return [f"expected error exit 2, got {outcome.exit_code}: {outcome.stderr.strip()[:300]}"]
        return (
            [] if expect["error"] in outcome.stderr else [f"error text {expect['error']!r} not in {outcome.stderr!r}"]
        )
    if expect.get("unschedulable"):
        if outcome.exit_code != 1 or outcome.stdout:
            return [f"expected unschedulable exit 1, got {outcome.exit_code}: {outcome.stderr.strip()[:300]}"]
        return []
    if outcome.exit_code != 0:
        return [f"expected an allocation, got exit {outcome.exit_code}: {outcome.stderr.strip()[:500]}"]
    got = outcome.allocations()
    problems = []
    expected = expect.get("allocations") or {}
    if set(got) != set(expected):
        problems.append(f"claims allocated {sorted(got)} != expected {sorted(expected)}")
    for name, want in expected.items():
        if name in got:
            problems += [f"{name}: {p}" for p in _claim_mismatches(want, got[name])]
    return problems


def placement_mismatches(expect: dict[str, Any], outcome: Outcome) -> list[str]:
    """``drasat schedule``: each expected pod on its node, its claims with their devices and reservedFor;
    each pending pod with its reason (a substring of the scheduler's summary line on stderr)."""
    pending = expect.get("pending") or {}
    if outcome.exit_code != (1 if pending else 0):
        return [f"expected exit {1 if pending else 0}, got {outcome.exit_code}: {outcome.stderr.strip()[:500]}"]
    problems = [
        f"pod {pod} not pending with {why!r}: {outcome.stderr!r}"
        for pod, why in pending.items()
        if f"pod {pod} is pending: " not in outcome.stderr or why not in outcome.stderr
    ]
    items = json.loads(outcome.stdout)["items"] if outcome.stdout else []
    pods = {
        f"{i['metadata'].get('namespace', 'default')}/{i['metadata']['name']}": i for i in items if i["kind"] == "Pod"
    }
    claims = {i["metadata"]["name"]: i for i in items if i["kind"] == "ResourceClaim"}
    placements = expect.get("placements") or {}
    if set(pods) != set(placements):
        problems.append(f"pods placed {sorted(pods)} != expected {sorted(placements)}")
    for name, want in placements.items():
        got = pods.get(name)
        if got is not None and got["spec"].get("nodeName") != want["node"]:
            problems.append(f"{name}: node {got['spec'].get('nodeName')} != expected {want['node']}")
        for claim_name, claim_want in (want.get("claims") or {}).items():
            problems += [f"{name}: {p}" for p in _placed_claim_mismatches(claim_name, claim_want, claims)]
    return problems


def _placed_claim_mismatches(name: str, want: dict[str, Any], claims: dict[str, dict]) -> list[str]:
    """``name`` may end in ``*`` for a generated name (its five random characters)."""
    found = [c for n, c in claims.items() if n == name or (name.endswith("*") and n.startswith(name[:-1]))]
    if len(found) != 1:
        return [f"claim {name}: {len(found)} matching claims in the output"]
    status = found[0].get("status") or {}
    problems = []
    if "reservedFor" in want:
        got = sorted(f"{r['resource']}/{r['name']}" for r in status.get("reservedFor", []))
        if got != sorted(want["reservedFor"]):
            problems.append(f"claim {name}: reservedFor {got} != expected {sorted(want['reservedFor'])}")
    if "devices" in want:
        problems += _claim_mismatches(want, status.get("allocation") or {})
    return problems


def _claim_mismatches(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    problems = []
    results = got.get("devices", {}).get("results", [])
    wanted = [_entry(e, e) for e in want.get("devices", [])]
    have = [_entry(r, e) for r, e in _pair(results, want.get("devices", []))]
    if sorted(map(repr, wanted)) != sorted(map(repr, have)):
        problems.append(f"devices {sorted(map(repr, have))} != expected {sorted(map(repr, wanted))}")
    if "nodeSelector" in want and _selector(want["nodeSelector"]) != got.get("nodeSelector"):
        problems.append(f"nodeSelector {got.get('nodeSelector')} != expected {want['nodeSelector']}")
    if "config" in want and _normal(want["config"]) != _normal(got.get("devices", {}).get("config", [])):
        problems.append(f"config {got.get('devices', {}).get('config')} != expected {want['config']}")
    return problems


def _pair(results: list[dict], expected: list[dict]) -> list[tuple[dict, dict]]:
    """Each result with the expected entry describing the same device (for the optional fields)."""
    pairs = []
    for r in results:
        match = next(
            (
                e
                for e in expected
                if (e.get("request"), e.get("device"), e.get("pool"))
                == (r.get("request"), r.get("device"), r.get("pool"))
            ),
            {},
        )
        pairs.append((r, match))
    return pairs


def _entry(entry: dict[str, Any], expectation: dict[str, Any]) -> tuple:
    consumed = {k: Quantity.parse(v).value for k, v in (entry.get("consumedCapacity") or {}).items()}
    share = entry.get("shareID")
    base = (
        entry.get("request"),
        entry.get("driver"),
        entry.get("pool"),
        entry.get("device"),
        bool(entry.get("adminAccess")),
        tuple(sorted(consumed.items())),
        bool(share),
    )
    optional = tuple(
        _normal(entry.get(k))
        for k in ("tolerations", "bindingConditions", "bindingFailureConditions")
        if k in expectation
    )
    return base + optional


def _selector(want: Any) -> Any:
    if want == "allNodes" or want is None:
        return None
    if isinstance(want, dict) and set(want) == {"nodeName"}:
        return {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [want["nodeName"]]}]}
            ]
        }
    return want


def _normal(value: Any) -> Any:
    """Quantities by value, everything else as JSON."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def value_of(text: str) -> Fraction:
    return Quantity.parse(text).value


if __name__ == "__main__":  # pragma: no cover - manual replay
    import sys

    target = Path(sys.argv[1])
    chosen = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--solver" else "cp-sat"
    out = run(target, chosen, ["-v"])
    print(out.exit_code, out.stderr)
    print(out.stdout[:3000])
    print(mismatches(scenario_doc(target).get("expect") or {}, out))
