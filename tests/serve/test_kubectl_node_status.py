"""What a user sees of nodes and of a namespace being deleted, through ``kubemu serve``
with kubectl and the official Python client: the kubelets' and the node controller's
Events in ``kubectl describe node`` (startup, cordon and uncordon), the conditions'
lastHeartbeatTime moving with the kubelet's 5-minute status report while the transition
times stay, and a terminating namespace's status conditions while content remains."""

import json

import pytest
from kubernetes import client, config
from servedcluster import Served, needs_kubectl, until

pytestmark = needs_kubectl

TIME_SCALE = 100  # the 5-minute report every 3 s of wall time

STARTUP = [
    ("Starting", "kubelet", "Starting kubelet."),
    ("NodeHasSufficientMemory", "kubelet", "Node node-0 status is now: NodeHasSufficientMemory"),
    ("NodeHasNoDiskPressure", "kubelet", "Node node-0 status is now: NodeHasNoDiskPressure"),
    ("NodeHasSufficientPID", "kubelet", "Node node-0 status is now: NodeHasSufficientPID"),
    ("NodeAllocatableEnforced", "kubelet", "Updated Node Allocatable limit across pods"),
    ("RegisteredNode", "node-controller", "Node node-0 event: Registered Node node-0 in Controller"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("node-status"), nodes=2, extra=("--time-scale", str(TIME_SCALE)))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def api(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.CoreV1Api()


def described_events(served, node):
    """(reason, from, message) of each row under Events: in ``kubectl describe node``."""
    text = served.kubectl("describe", "node", node).stdout
    rows = text.split("\nEvents:\n", 1)[1].splitlines()[2:]  # past the header and its rule
    out = []
    for row in rows:
        cells = row.split()
        if len(cells) < 5:
            break
        # Type, Reason, Age, From (one word here), Message
        out.append((cells[1], cells[3], " ".join(cells[4:])))
    return out


def test_describe_node_shows_the_startup_events(served):
    assert sorted(described_events(served, "node-0")) == sorted(STARTUP)


def test_a_cordon_and_an_uncordon_are_recorded_by_the_kubelet(served):
    served.kubectl("cordon", "node-1")
    assert until(lambda: ("NodeNotSchedulable", "kubelet") in [e[:2] for e in described_events(served, "node-1")])
    served.kubectl("uncordon", "node-1")
    assert until(lambda: ("NodeSchedulable", "kubelet") in [e[:2] for e in described_events(served, "node-1")])
    assert ("NodeSchedulable", "kubelet", "Node node-1 status is now: NodeSchedulable") in described_events(
        served, "node-1"
    )


def ready(api):
    node = api.read_node("node-0")
    return next(c for c in node.status.conditions if c.type == "Ready")


def test_the_heartbeat_moves_every_five_minutes_and_the_transition_stays(served, api):
    first = ready(api)
    assert first.status == "True" and first.last_transition_time <= first.last_heartbeat_time
    later = until(lambda: (r := ready(api)).last_heartbeat_time > first.last_heartbeat_time and r, seconds=20)
    assert later, "lastHeartbeatTime did not move"
    step = (later.last_heartbeat_time - first.last_heartbeat_time).total_seconds()
    assert 300 <= step < 320  # one report, 300 emulated s (with the 10 s lease cadence) apart
    assert later.last_transition_time == first.last_transition_time
    conditions = json.loads(served.kubectl("get", "node", "node-0", "-o", "json").stdout)["status"]["conditions"]
    assert {c["lastHeartbeatTime"] for c in conditions} == {later.last_heartbeat_time.strftime("%Y-%m-%dT%H:%M:%SZ")}


HELD = """
apiVersion: v1
kind: ConfigMap
metadata: {name: held, namespace: leaving, finalizers: [example.com/hold]}
data: {a: b}
"""


def namespace_conditions(served):
    got = served.kubectl("get", "namespace", "leaving", "-o", "json", check=False)
    if got.returncode != 0:
        return None
    ns = json.loads(got.stdout)
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in ns["status"].get("conditions") or ()}


def test_a_terminating_namespace_says_what_remains_until_it_is_gone(served):
    served.kubectl("create", "namespace", "leaving")
    served.kubectl("apply", "-f", "-", input=HELD)
    served.kubectl("delete", "namespace", "leaving", "--wait=false")
    remaining = (
        "True",
        "SomeResourcesRemain",
        "Some resources are remaining: configmaps. has 1 resource instances",
    )
    conds = until(lambda: (c := namespace_conditions(served)) and c.get("NamespaceContentRemaining") == remaining and c)
    assert conds, namespace_conditions(served)
    assert conds["NamespaceDeletionDiscoveryFailure"] == (
        "False",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    )
    assert list(conds) == [
        "NamespaceDeletionDiscoveryFailure",
        "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure",
        "NamespaceContentRemaining",
        "NamespaceFinalizersRemaining",
    ]
    served.kubectl(
        "patch", "configmap", "held", "-n", "leaving", "--type=merge", "-p", '{"metadata":{"finalizers":null}}'
    )
    assert until(lambda: namespace_conditions(served) is None), "the namespace was not removed"
