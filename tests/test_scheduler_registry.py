"""The scheduler's plugins come from one registry, in kube-scheduler's default-profile order, and the
one-by-one loop runs whatever the registry's profile holds (it names no plugin itself)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from drasat.solver.scheduling.cluster_state import NodeLoad
from drasat.solver.scheduling.cycle import Cycle
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins import registry
from drasat.solver.scheduling.plugins.registry import PLUGINS, Normalization, Plugin, Profile

from .cluster_factory import device_class, gpu_slice, make_cluster, node, pod, template, violations

UPSTREAM_ORDER = [  # getDefaultPlugins (apis/config/v1/default_plugins.go), DynamicResources as applyFeatureGates puts it
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
]
UPSTREAM_WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "DynamicResources": 1,
    "NodeResourcesBalancedAllocation": 1,
}
LOOP = ["one_by_one", "node_search", "node_outcomes", "devices_step", "ranking"]
TEMPLATED = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]


def test_the_registry_runs_upstreams_plugins_in_upstreams_order_with_its_weights():
    names = [p.name for p in PLUGINS]
    in_tree = [n for n in names if n in UPSTREAM_ORDER]
    assert in_tree == sorted(in_tree, key=UPSTREAM_ORDER.index)
    assert names[len(in_tree) :] == ["NodeResourceTopologyMatch"]  # out of tree: after the default profile
    assert {p.name: p.weight for p in PLUGINS if p.weight} == UPSTREAM_WEIGHTS
    assert len(set(names)) == len(names)


def test_the_loop_imports_no_plugin_module_but_the_registry():
    """Filters and scores reach the loop through the registry only (the devices step and binding may use
    the DynamicResources verdict and the reasons' wording)."""
    folder = Path(registry.__file__).parents[1]
    allowed = {"registry", "dynamic_resources", "node_filters", "binding_conditions"}
    for module in LOOP:
        tree = ast.parse((folder / f"{module}.py").read_text())
        for node_ in ast.walk(tree):
            if isinstance(node_, ast.ImportFrom) and node_.module and "plugins" in node_.module:
                leaf = node_.module.rsplit(".", 1)[-1]
                names = {a.name for a in node_.names}
                assert leaf in allowed or (leaf == "plugins" and names == {"registry"}), (module, node_.module)
                if leaf == "node_filters":
                    assert all(n.startswith("REASON_") or n == "summary" for n in names), (module, names)


class _Refuses(Plugin):
    name = "RefusesLabelled"

    def filter(self, cycle: Cycle, load: NodeLoad) -> list[str]:
        return ["node(s) refused by the test"] if "refuse" in load.node.metadata.labels else []


class _Prefers(Plugin):
    name = "PrefersLabelled"
    weight = 1000
    normalization = Normalization.DEFAULT

    def score(self, cycle: Cycle, load: NodeLoad) -> int:
        return 1 if "prefer" in load.node.metadata.labels else 0


def _cluster(pods: int = 1):
    labels = [{"refuse": "yes"}, {}, {"prefer": "yes"}]  # plugins read labels: nodes alike share an answer
    nodes = [d for i in range(3) for d in (node(f"n{i}", labels=labels[i]), gpu_slice(f"n{i}", 2))]
    return make_cluster(
        device_class(), template("one-gpu"), *nodes, *(pod(f"p{i}", claims=TEMPLATED) for i in range(pods))
    )


@pytest.fixture
def profile(monkeypatch):
    def use(*extra: Plugin) -> None:
        monkeypatch.setattr(registry, "PROFILE", Profile((*PLUGINS, *extra)))

    return use


def test_a_filter_added_to_the_registry_is_run_and_reported(profile):
    assert schedule(_cluster())[0].node == "n0"  # the default profile: the first node by name
    profile(_Refuses())
    placements = schedule(_cluster(5))
    assert [p.node for p in placements[:4]] == ["n1", "n2", "n1", "n2"]  # spread: NodeResourcesFit
    assert placements[4].node is None
    assert placements[4].node_reasons["n0"] == ["node(s) refused by the test"]
    assert violations(placements) == []


def test_a_score_added_to_the_registry_decides_the_ranking(profile):
    profile(_Prefers())
    placements = schedule(_cluster(3))
    assert [p.node for p in placements] == ["n2", "n2", "n0"]
    assert violations(placements) == []
