"""The 30 CEL scenarios from Kubernetes' allocator, checked directly against the selector layer.

Each scenario's claim asks for all matching devices (allocationMode All), so the expected
allocation is exactly the set of devices every selector (the DeviceClass's and the
request's) accepts; ``unschedulable`` means none does, ``error`` is a substring of the
first error Kubernetes reports. The full allocation pipeline runs these again; this is
the direct check of ``drasat.solver.cel``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from drasat.models.quantity import Quantity
from drasat.solver.cel import CelCompileError, CelDevice, CelRuntimeError, SelectorEvaluator, available_engines

from .shared_inputs import params, shared_files

SCENARIOS = shared_files("scenarios/cel")


def load(path: Path) -> tuple[list[CelDevice], list[str], dict]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    devices = []
    for s in (d for d in docs if d["kind"] == "ResourceSlice"):
        spec = s["spec"]
        for d in spec.get("devices") or []:
            capacity = {k: Quantity.parse(v["value"]) for k, v in (d.get("capacity") or {}).items()}
            devices.append(
                CelDevice(
                    key=(spec["driver"], spec["pool"]["name"], s["metadata"]["name"], d["name"]),
                    driver=spec["driver"],
                    attributes=d.get("attributes") or {},
                    capacity=capacity,
                    allow_multiple_allocations=bool(d.get("allowMultipleAllocations")),
                )
            )
    expressions = [
        sel["cel"]["expression"] for d in docs if d["kind"] == "DeviceClass" for sel in d["spec"].get("selectors") or []
    ]
    expressions += [
        sel["cel"]["expression"]
        for d in docs
        if d["kind"] == "ResourceClaim"
        for r in d["spec"]["devices"]["requests"]
        for sel in r["exactly"].get("selectors") or []
    ]
    expect = next(d for d in docs if d["kind"] == "Scenario")["expect"]
    return devices, expressions, expect


def select(engine: str, devices: list[CelDevice], expressions: list[str]) -> tuple[set[str], str | None]:
    evaluator = SelectorEvaluator(engine)
    chosen = set()
    try:
        for device in devices:
            if all(evaluator.matches(e, device) for e in expressions):
                chosen.add(device.key[3])
    except (CelCompileError, CelRuntimeError) as exc:
        return chosen, exc.detail
    return chosen, None


def test_all_thirty_scenarios_are_present(shared: Path) -> None:
    assert len(SCENARIOS) == 30


@pytest.mark.parametrize("engine", available_engines())
@pytest.mark.parametrize("path", params(SCENARIOS), ids=lambda p: p.stem)
def test_scenario(engine: str, path: Path, shared: Path) -> None:
    devices, expressions, expect = load(path)
    chosen, error = select(engine, devices, expressions)
    if "error" in expect:
        assert error is not None and expect["error"] in error, (chosen, error)
    elif expect.get("unschedulable"):
        assert error is None and not chosen
    else:
        wanted = {d["device"] for claim in expect["allocations"].values() for d in claim["devices"]}
        assert error is None, error
        assert chosen == wanted
