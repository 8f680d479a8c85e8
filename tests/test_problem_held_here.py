"""A Problem keeps the allocated claims that may hold a device of its node, and only those."""

from __future__ import annotations

from dataclasses import replace

from drasat.models.loader import load_objects
from drasat.solver.allocation.api import allocate
from drasat.solver.allocation.problem import problem_from_objects

from .fleet_factory import fleet

CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}


def _pending(count: int) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "want", "namespace": "team-a"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}]}},
    }


def test_claims_of_other_nodes_pools_are_left_out_and_change_nothing() -> None:
    objects = [loaded.obj for loaded in load_objects([*fleet(6, 4, seed=3), CLASS, _pending(2)]).objects]
    all_allocated = [c for c in objects if c.kind == "ResourceClaim" and c.status and c.status.allocation]
    problem = problem_from_objects(objects, node="node-001")
    pools = {r.pool for c in problem.allocated for r in c.status.allocation.devices.results}
    assert pools == {"node-001"}
    assert len(problem.allocated) == sum(
        1 for c in all_allocated if c.status.allocation.devices.results[0].pool == "node-001"
    )
    assert 0 < len(problem.allocated) < len(all_allocated)
    every = replace(problem, allocated=all_allocated)
    assert allocate(problem).results == allocate(every).results


def test_a_pool_published_for_this_node_too_keeps_its_claims() -> None:
    objects = [loaded.obj for loaded in load_objects([*fleet(3, 2, seed=1), CLASS]).objects]
    for obj in objects:
        if obj.kind == "ResourceSlice" and obj.spec.node_name == "node-000":
            obj.spec.pool.name = "node-001"  # one pool name on two nodes: none of its claims is foreign
    problem = problem_from_objects(objects, node="node-000")
    held = [
        c for c in objects if c.kind == "ResourceClaim" and c.status.allocation.devices.results[0].pool == "node-001"
    ]
    assert held and {c.name for c in held} <= {c.name for c in problem.allocated}
