"""The rules in force, in the order their checks run.

Order matters only where Kubernetes' does: static exclusions report the first reason in
this order (within their stage), and the depth-first search asks ``fits`` in this order —
exclusivity first (a taken device is skipped before anything else), attribute constraints
before capacity (in All mode a broken constraint is the error Kubernetes reports).

Adding a rule: one module with a :class:`~.base.Rule` subclass, and one line here.
"""

from __future__ import annotations

from .base import Rule
from .capacity import ConsumableCapacity
from .counters import Counters
from .exclusivity import Exclusivity
from .matching import AttributeConstraints
from .node_operations import NodeOperations
from .reachability import Reachability
from .taints import Taints

RULES: tuple[Rule, ...] = (
    Exclusivity(),
    Reachability(),
    Counters(),
    NodeOperations(),
    AttributeConstraints(),
    ConsumableCapacity(),
    Taints(),
)
