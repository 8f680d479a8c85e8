"""The cluster-wide counting model: exact where its rules count, cut where they relax, the same answer twice.

Each case is small enough that the best answer is known by hand; every node's joint allocation goes
through the verifier, and so does every placement.
"""

from __future__ import annotations

from typing import Any

from drasat.solver.batch.placement import schedule_batch
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.verification.verifier import verify

from .cluster_factory import GPU, claim, device_class, gpu_slice, make_cluster, node, pod, template, violations

NIC = "nic.example.com"
NUMA = "numa.example.com/node"  # one attribute both drivers publish


def _devices(node_name: str, driver: str, numas: list[int]) -> dict[str, Any]:
    """One slice of ``driver``'s devices on the node, each with a ``numa`` attribute."""
    kind = driver.split(".")[0]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{kind}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": f"{node_name}-{kind}", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"{kind}-{i}", "attributes": {NUMA: {"int": numa}}} for i, numa in enumerate(numas)],
        },
    }


def _template(name: str, requests: list[dict[str, Any]], constraints: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": requests, "constraints": constraints}}},
    }


def _exactly(name: str, cls: str, count: int = 1) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, "count": count}}


def _pods(n: int, template: str) -> list[dict[str, Any]]:
    return [pod(f"p{i}", claims=[{"name": "dev", "resourceClaimTemplateName": template}]) for i in range(n)]


def _checked(result: Any) -> None:
    assert violations(result.placements) == []
    assert [v for c in result.nodes for v in verify(c.problem, c.allocations)] == []


def test_a_gpu_and_a_nic_on_one_numa_node_are_counted_exactly_per_numa_value():
    """Two NUMA nodes, each with two GPUs and one NIC: a pod needs a GPU and a NIC on the same NUMA node, so
    two pods fit (one per NIC) although four GPUs are free. The match constraint counts claims per value."""
    template = _template(
        "pair",
        [_exactly("gpu", GPU), _exactly("nic", NIC)],
        [{"matchAttribute": NUMA, "requests": ["gpu", "nic"]}],
    )
    docs = [
        device_class(GPU, GPU),
        device_class(NIC, NIC),
        template,
        node("n0"),
        _devices("n0", GPU, [0, 0, 1, 1]),
        _devices("n0", NIC, [0, 1]),
        *_pods(4, "pair"),
    ]
    result = schedule_batch(make_cluster(*docs))
    s = result.summary
    assert (s.placed, s.nodes_relaxed, s.proven, s.rounds) == (2, 0, True, 1)
    nics = {r.device for p in result.placements for c in p.claims for r in c.status.allocation.devices.results}
    assert {"nic-0", "nic-1"} <= nics
    _checked(result)


def test_a_rule_counts_cannot_say_is_relaxed_then_cut_where_a_node_refuses_its_mix():
    """distinctAttribute is not counted: the relaxed model puts two pods (two GPUs each, on distinct NUMA
    nodes) on four GPUs, but three of them share NUMA node 0, so only one pod fits. The node refuses the
    mix, the mix is cut from the model, and the second search places one pod — as one by one does."""
    template = _template("spread", [_exactly("gpu", GPU, count=2)], [{"distinctAttribute": NUMA}])
    docs = [device_class(GPU, GPU), template, node("n0"), _devices("n0", GPU, [0, 0, 0, 1]), *_pods(2, "spread")]
    result = schedule_batch(make_cluster(*docs))
    s = result.summary
    assert s.nodes_relaxed == 1 and s.rounds == 2 and s.placed == 1
    assert any("cut from the model" in note for note in s.notes), s.notes
    assert s.placed == sum(1 for p in schedule(make_cluster(*docs)) if p.node)
    _checked(result)


def test_the_same_input_gives_the_same_answer_twice():
    docs = [
        device_class(GPU, GPU),
        _template("one", [_exactly("gpu", GPU)], []),
        *[doc for n in range(3) for doc in (node(f"n{n}", cpu="3"), _devices(f"n{n}", GPU, [0, 1]))],
        *[
            pod(f"p{i}", claims=[{"name": "dev", "resourceClaimTemplateName": "one"}], requests={"cpu": "1"})
            for i in range(8)
        ],
    ]

    def answer() -> list[tuple[str, str | None, list[str]]]:
        result = schedule_batch(make_cluster(*docs))
        _checked(result)
        return [
            (p.label, p.node, [r.device for c in p.claims for r in c.status.allocation.devices.results])
            for p in result.placements
        ]

    first = answer()
    assert first == answer()
    assert sum(1 for _, n, _ in first if n) == 6  # two GPUs a node


def test_a_gang_runs_once_min_count_of_its_pods_fit():
    """A gang of four with minCount 2 on a node with room for three: three run (kube-scheduler's gang
    Permit lets the group through once two fit, and the third fits too); with minCount 4 none run."""
    for min_count, placed in ((2, 3), (4, 0)):
        group = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
        }
        members = [pod(f"m{i}", requests={"cpu": "1"}, schedulingGroup={"podGroupName": "g"}) for i in range(4)]
        result = schedule_batch(make_cluster(group, node("n0", cpu="3"), *members))
        assert result.summary.placed == placed, (min_count, result.summary)
        assert result.summary.gangs == 1
        _checked(result)


def test_a_search_that_finds_nothing_in_time_keeps_the_schedulers_answer(monkeypatch):
    """With the joint model's search made to find nothing, the answer is one by one's, and the summary
    says that time cut the joint model short."""
    from drasat.solver.batch import rounds

    class Nothing:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.proven = False

        def start(self) -> Nothing:
            return self

        def result(self) -> None:
            return None

        def value(self, var: Any) -> int:
            return 0

    monkeypatch.setattr(rounds, "Search", Nothing)
    docs = [
        device_class(GPU, GPU),
        _template("one", [_exactly("gpu", GPU)], []),
        node("n0"),
        _devices("n0", GPU, [0, 1]),
        *_pods(3, "one"),
    ]
    result = schedule_batch(make_cluster(*docs), options=AllocateOptions(time_limit=5))
    one = schedule(make_cluster(*docs))
    assert [p.node for p in result.placements] == [p.node for p in one]
    assert any("joint model found no answer" in note for note in result.summary.notes), result.summary.notes
    _checked(result)


def test_pack_keeps_an_untouched_node_whole_when_a_used_one_holds_the_pod_too():
    """Two nodes of two GPUs, one GPU of node a in use: the pending pod fits on either; with the pack
    objective the joint answer puts it beside the running one, leaving node b whole."""
    held = claim(
        "held",
        allocation={
            "devices": {"results": [{"request": "gpu", "driver": GPU, "pool": "a", "device": "gpu-0"}]},
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]
            },
        },
        reservedFor=[{"resource": "pods", "name": "running", "uid": "00000000-0000-4000-8000-000000000001"}],
    )
    running = pod("running", claims=[{"name": "gpu", "resourceClaimName": "held"}], nodeName="a")
    running["metadata"]["uid"] = "00000000-0000-4000-8000-000000000001"
    docs = [
        device_class(GPU, GPU),
        template("one"),
        node("a"),
        gpu_slice("a"),
        node("b"),
        gpu_slice("b"),
        held,
        running,
    ]
    docs.append(pod("new", claims=[{"name": "gpu", "resourceClaimTemplateName": "one"}]))
    packed = schedule_batch(make_cluster(*docs), options=AllocateOptions(objective="pack"))
    assert {p.label: p.node for p in packed.placements} == {"default/new": "a"}
    assert packed.summary.proven
    _checked(packed)
