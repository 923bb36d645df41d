"""``kubemu bench chaos``'s verdict: a missing replica is lost only when the Ready, live
nodes had room for it; beyond that it is capacity shortfall (no Ray is started here)."""

import pytest

from actors.harness.benchchaos import Soak, replica_set, split_missing
from cluster.runtime.cluster import Fleet
from cluster.runtime.component import ComponentSpec


class FakeCluster:
    """What ``Soak`` reads of a cluster: an informer (unused here) and the fleet."""

    def __init__(self, dead=()):
        self.fleet = Fleet()
        self.fleet.add_host(ComponentSpec("host-0", dict, nodes=("n0", "n1", "n2")))
        self.fleet.dead_nodes |= set(dead)

    def informer(self, kinds):
        return None


def node(name, cpu="4", memory="32Gi", pods="110", ready="True"):
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    status = {"allocatable": alloc, "capacity": alloc, "conditions": [{"type": "Ready", "status": ready}]}
    return {"kind": "Node", "metadata": {"name": name}, "status": status}


def pod(name, node_name, cpu="100m", memory="500Mi"):
    container = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {"nodeName": node_name, "containers": [container]},
        "status": {"phase": "Running"},
    }


TEMPLATE = replica_set(0, 1)["spec"]["template"]  # 100m, 500Mi


def soak_with(nodes, pods=(), dead=()):
    soak = Soak(FakeCluster(dead))
    for obj in [*nodes, *pods]:
        soak.mirror.apply(obj["kind"], "ADDED", obj, 0.0, 0.0)
    return soak


def test_room_counts_the_scarcest_resource_on_each_ready_live_node():
    soak = soak_with(
        [node("n0", memory="2000Mi"), node("n1", pods="3"), node("n2", ready="False")],
        [pod("a", "n1")],
    )
    # n0: memory for 4 pods; n1: 2 pod slots left; n2: not Ready
    assert soak.room(TEMPLATE) == 6


def test_a_dead_node_has_no_room_even_if_its_last_status_said_ready():
    soak = soak_with([node("n0", pods="5"), node("n1", pods="5")], dead={"n1"})
    assert soak.room(TEMPLATE) == 5


@pytest.mark.parametrize(
    "missing, room, expected",
    [
        (0, 100, (0, 0)),
        (120, 500, (120, 0)),  # room for every one of them: all lost
        (120, 20, (20, 100)),  # room for 20: those are lost, the rest could not fit
        (120, 0, (0, 120)),
        (-3, 10, (0, 0)),  # more running than asked (a surge): nothing missing
    ],
)
def test_missing_replicas_split_into_lost_and_shortfall(missing, room, expected):
    assert split_missing(missing, room) == expected
