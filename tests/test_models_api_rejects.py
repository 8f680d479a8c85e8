"""Which shared objects the Kubernetes API rejects, and why: drasat rejects exactly those.

The upstream scenarios come from Kubernetes' allocator unit tests, which never go
through API validation; some of their objects would be refused by a real API
server (uppercase subrequest names, capacity names with '-', ...). The seed
examples were written for the documentation; three of them break a rule too.
Every other shared object is valid.
"""

from __future__ import annotations

from pathlib import Path

import drasat.solver.cel.validate  # noqa: F401  (registers the CEL checker, as drasat validate does)
from drasat.models.kinds import lookup
from drasat.models.validation import validate_object

from .helpers_models import SHARED, documents, shared_files

_SUBREQUEST = "subrequest names like subReq-0 are not DNS labels"
_CAPACITY = "capacity names like capacity-0 are not C identifiers"
API_REJECTS = {
    "scenarios/perf/wide-16x16-64x4.yaml[2]": "256 devices in one slice (limit 128)",
    "scenarios/upstream/all-devices-no-slices-prioritized-list.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/all-devices-of-the-incomplete-pool.yaml[4]": "count with allocationMode All",
    "scenarios/upstream/all-devices-some-allocated-admin-access.yaml[4]": "count with allocationMode All",
    "scenarios/upstream/all-devices-some-allocated-prioritized-list.yaml[6]": _SUBREQUEST,
    "scenarios/upstream/all-devices-some-allocating-admin-access.yaml[4]": "count with allocationMode All",
    "scenarios/upstream/allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector.yaml[3]": _CAPACITY,
    "scenarios/upstream/allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable.yaml[3]": _CAPACITY
    + "; requestPolicy without allowMultipleAllocations",
    "scenarios/upstream/allow-multiple-allocations-with-partitionable-device.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/allow-multiple-allocations-with-shared-device-counter-cross-cycle.yaml[3]": _CAPACITY,
    "scenarios/upstream/check-combinations-with-backtracking-across-slices-and-pools.yaml[5]": "bindingConditions without bindingFailureConditions",
    "scenarios/upstream/claim-config-scoped-to-subrequests-of-one-request.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/consumable-capacity-dedicated-device-with-consumable-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-disabled-feature-with-prioritized-list.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-violates-zero-request-policy.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device.yaml[3]": _CAPACITY
    + "; validRange max above the capacity",
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-missing-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity.yaml[3]": _CAPACITY
    + "; validRange max above the capacity",
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-subrequest.yaml[3]": _CAPACITY
    + "; validRange max above the capacity",
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-subrequest.yaml[4]": _SUBREQUEST
    + "; two subrequests named subReq-1",
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-valid-values-policy.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-with-zero-request-policy.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-with-partitionable-device-multiple-capacity-pools.yaml[3]": _CAPACITY,
    "scenarios/upstream/consumable-capacity-with-partitionable-device-multiple-capacity-pools.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint.yaml[3]": _CAPACITY,
    "scenarios/upstream/distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint.yaml[4]": _CAPACITY,
    "scenarios/upstream/invalid-cel-all-devices.yaml[4]": "count with allocationMode All",
    "scenarios/upstream/list-attributes-distinct-constaint-with-empty-or-unknown-type.yaml[3]": "an attribute without a value; an empty list attribute",
    "scenarios/upstream/list-attributes-match-constaint-list-of-string-values-without-common-elements.yaml[4]": "two requests named req-0",
    "scenarios/upstream/list-attributes-match-constaint-with-empty-or-unknown-type.yaml[3]": "an attribute without a value; an empty list attribute",
    "scenarios/upstream/partitionable-devices-devices-on-different-nodes-consume-same-counter-set.yaml[6]": _SUBREQUEST,
    "scenarios/upstream/partitionable-devices-multiple-capacity-pools.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/partitionable-devices-prioritized-list.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/partitionable-devices-same-counter-set-name-in-different-resource-slices.yaml[4]": "a counter set without counters",
    "scenarios/upstream/partitionable-devices-same-counter-set-name-in-different-resource-slices.yaml[6]": "a counter set without counters",
    "scenarios/upstream/prioritized-list-allocation-mode-all-multiple-requests.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-allocation-mode-all-with-selectors.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-device-config.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-disabled.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-max-allocation-allocation-mode-all.yaml[6]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-max-allocation-limit-request.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-non-available.yaml[6]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-subrequests-with-allocation-mode-all.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-subrequests-with-constraints-ref-parent-request.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-subrequests-with-constraints-ref-sub-request.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-too-many-in-first-subrequest.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/prioritized-list-with-backtracking.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/tainted-prioritized-list.yaml[5]": _SUBREQUEST,
    "scenarios/upstream/tainted-two-devices-prioritized-list-tolerated.yaml[4]": _SUBREQUEST,
    "scenarios/upstream/unknown-selector.yaml[4]": "a selector without a CEL expression",
    "scenarios/upstream/with-distinct-constraints-unknown-type-attribute.yaml[3]": "an attribute without a value",
    "scenarios/upstream/with-distinct-constraints-with-subrequests.yaml[4]": _SUBREQUEST,
    "scenarios/cel/cel-040.yaml[4]": "CEL selector 1 + 1 is not a bool (the API server compiles CEL)",
    "scenarios/upstream/invalid-cel-one-device-class.yaml[2]": "CEL selector with an undeclared reference",
    "scenarios/upstream/invalid-cel-one-device.yaml[4]": "CEL selector with an undeclared reference",
    "seeds/examples/seed000-05.yaml[0]": "attribute name supported-models is not a C identifier",
    # Upstream requires the multiplier: resource.k8s.io/v1 NodeAllocatableMapping.capacityKey carries
    # +k8s:alpha(since: "1.37")=+k8s:dependentRequired("capacityMultiplier") (KEP-5517 API, declarative
    # validation) and its API doc says "capacityMultiplier must also be set". No default of 1 exists in 1.37
    # (1.36's allocationMultiplier had one; the field was replaced).
    "seeds/examples/seed000-11.yaml[0]": "nodeAllocatableResources mapping with capacityKey but no capacityMultiplier",
    "seeds/examples/seed000-14.yaml[0]": "driver example.com/gpu is not a DNS subdomain",
}


def _rejected_shared_objects() -> set[str]:
    rejected = set()
    for path in shared_files("scenarios/upstream", "scenarios/cel", "scenarios/perf", "seeds/examples"):
        where = str(path.relative_to(SHARED))
        for index, data in documents(path):
            info = lookup(str(data.get("apiVersion")), str(data.get("kind")))
            if info is not None and validate_object(info.model.model_validate(data)):
                rejected.add(f"{where}[{index}]")
    return rejected


def test_exactly_the_objects_the_api_rejects_are_rejected(shared: Path) -> None:
    """The documented list: each of these breaks a Kubernetes validation rule; every other object is valid."""
    assert _rejected_shared_objects() == set(API_REJECTS)
