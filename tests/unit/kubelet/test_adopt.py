"""A Node created through the API read as a kubelet's configuration (``cluster/kubelet/adopt.py``):
capacity and allocatable from the object (the kubelet posts the same allocatable), the
defaults for what it leaves out, labels and taints, and one line for what it cannot run."""

import pytest

from cluster.kubelet.adopt import NotAdoptable, adopting_host, node_config
from cluster.kubelet.component import NodeHostComponent
from cluster.kubelet.node import node_status
from cluster.runtime.component import START, Batch

GI = 1024**3
MI = 1024**2


def node(capacity=None, allocatable=None, labels=None, taints=None, name="api-0"):
    status = {}
    if capacity is not None:
        status["capacity"] = capacity
    if allocatable is not None:
        status["allocatable"] = allocatable
    meta = {"name": name, **({"labels": labels} if labels else {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": {"taints": taints or []}, "status": status}


@pytest.mark.parametrize(
    "capacity, allocatable, want_capacity, want_allocatable",
    [
        # Nothing said: serve's node size and a pool's pods and ephemeral-storage.
        (None, None, {"cpu": 4000, "memory": 16 * GI, "pods": 110}, {"cpu": 4000, "memory": 16 * GI - 100 * MI}),
        # The apiserver's defaulting copies capacity to allocatable: posted unchanged.
        ({"cpu": "8", "memory": "32Gi"}, {"cpu": "8", "memory": "32Gi"}, {"cpu": 8000}, {"memory": 32 * GI}),
        # A gap: reserved, memory's first 100Mi as the hard eviction threshold.
        (
            {"cpu": "8", "memory": "32Gi", "pods": "50"},
            {"cpu": "7500m", "memory": "30Gi", "pods": "40"},
            {"pods": 50},
            {"cpu": 7500, "memory": 30 * GI, "pods": 40},
        ),
        # A memory gap smaller than 100Mi is all threshold.
        ({"memory": "1Gi"}, {"memory": "1000Mi"}, {"memory": GI}, {"memory": 1000 * MI}),
        # A resource only the allocatable names is capacity too; extended resources kept.
        ({"cpu": "2"}, {"cpu": "2", "nvidia.com/gpu": "4"}, {"nvidia.com/gpu": 4}, {"nvidia.com/gpu": 4}),
    ],
)
def test_capacity_and_allocatable_come_from_the_object(capacity, allocatable, want_capacity, want_allocatable):
    config = node_config(node(capacity, allocatable))
    caps, alloc = config.capacity_ints(), config.allocatable()
    assert {k: caps[k] for k in want_capacity} == want_capacity
    assert {k: alloc[k] for k in want_allocatable} == want_allocatable
    if allocatable is not None:  # the status the kubelet posts says what the object said
        posted = node_status(config, 0, 0.0, alloc)["allocatable"]
        assert {k: posted[k] for k in allocatable} == allocatable


def test_labels_and_taints_come_from_the_object():
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    config = node_config(node({"cpu": "2", "memory": "4Gi"}, labels={"pool": "api"}, taints=[taint]))
    assert (config.name, config.labels, config.taints) == ("api-0", {"pool": "api"}, [taint])


@pytest.mark.parametrize(
    "capacity, allocatable, line",
    [
        ({"cpu": "abc"}, None, 'status.capacity.cpu: "abc" is not a quantity'),
        ({"cpu": "-1"}, None, 'status.capacity.cpu: "-1" must be greater than or equal to 0'),
        ({"cpu": "2"}, {"cpu": "3"}, 'status.allocatable.cpu: "3" is more than the capacity "2"'),
        ({"nvidia.com/gpu": "0.5"}, None, 'status.capacity.nvidia.com/gpu: "0.5" must be an integer'),
        ("8 cpus", None, 'status.capacity: "8 cpus" is not a map of resources'),
        (None, {"memory": "lots"}, 'status.allocatable.memory: "lots" is not a quantity'),
    ],
)
def test_a_node_a_kubelet_cannot_run_is_refused_in_one_line(capacity, allocatable, line):
    with pytest.raises(NotAdoptable) as e:
        node_config(node(capacity, allocatable))
    assert str(e.value) == line


def test_the_adopting_host_runs_one_kubelet_that_posts_status_and_never_creates_the_node():
    spec = adopting_host(node({"cpu": "2", "memory": "4Gi"}), 7)
    assert (spec.name, spec.nodes, spec.kwargs["first_index"]) == ("host-api-0", ("api-0",), 7)
    host = spec.build()
    assert isinstance(host, NodeHostComponent)
    writes = host.reconcile(Batch(0.0, boot=START)).writes
    kinds = [(type(w).__name__, getattr(w, "kind", "")) for w in writes]
    assert all(type(w).__name__ != "Create" for w in writes)
    assert ("UpdateStatus", "Node") in kinds  # Ready at once
    assert any(type(w).__name__ == "Patch" and w.kind == "Lease" for w in writes)  # and heartbeats
