"""Leases read by their head (cluster/api/leasehead.py) in the controller manager, and the
node lifecycle controller's deadline queues: the same outcome as decoding every Lease and
as a heap of deadlines."""

import random

from controller_builders import lease, node, summary

from cluster.api.codec import encode
from cluster.api.leasehead import LeaseHead, read_lease_head
from cluster.controllers.manager import ControllerManager, default_controllers
from cluster.controllers.nodelifecycle import node_lifecycle_step
from cluster.runtime.component import WatchEvent


def test_a_plain_lease_has_a_head_and_any_other_shape_none():
    plain = lease("n1", renew=3.5)
    plain["metadata"]["uid"] = "u1"
    assert read_lease_head(encode(plain)) == LeaseHead("kube-node-lease", "n1", "u1", "2026-01-01T00:00:03.500000Z")
    empty = {**plain, "metadata": {**plain["metadata"], "finalizers": [], "ownerReferences": None}}
    assert read_lease_head(encode(empty)) == LeaseHead("kube-node-lease", "n1", "u1", "2026-01-01T00:00:03.500000Z")
    assert read_lease_head(encode({**plain, "spec": {}})).renew_time is None
    for meta in (
        {"ownerReferences": [{"kind": "Node", "name": "n1", "uid": "x", "apiVersion": "v1"}]},
        {"finalizers": ["keep"]},
        {"deletionTimestamp": "2026-01-01T00:00:09Z"},
        {"name": ""},
    ):
        assert read_lease_head(encode({**plain, "metadata": {**plain["metadata"], **meta}})) is None
    assert read_lease_head(encode({**plain, "spec": {"renewTime": 5}})) is None  # not a time string
    assert read_lease_head(b"\x93\x01\x02\x03") is None


def _random_events(rng, nodes, steps):
    """(time, kind, type, object) with heartbeats, stale and odd leases, node writes."""
    t, out = 0.0, [(0.0, "Node", "ADDED", node(f"n{i}", ready=None if i % 5 == 0 else "True")) for i in range(nodes)]
    for _ in range(steps):
        t += rng.choice((0.0, 0.5, 3.0, 11.0))
        name = f"n{rng.randrange(nodes)}"
        roll = rng.random()
        if roll < 0.6:
            obj = lease(name, renew=max(0.0, t - rng.choice((0.0, 0.0, 30.0))))  # sometimes not later
            if rng.random() < 0.1:
                obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": "u"}]
            if rng.random() < 0.05:
                obj["metadata"]["namespace"] = "default"
            out.append((t, "Lease", rng.choice(("MODIFIED", "MODIFIED", "ADDED", "DELETED")), obj))
        elif roll < 0.9:
            out.append((t, "Node", "MODIFIED", node(name, heartbeat=t if rng.random() < 0.5 else 0.0, rv=str(t))))
        else:
            out.append((t, "sync", "", None))
    return out


def test_lease_heads_leave_the_controllers_as_decoded_leases_do():
    rng = random.Random(4)
    for _ in range(5):
        fast, slow = ControllerManager(default_controllers()), ControllerManager(default_controllers())
        assert fast.lazy_kinds == set(fast.kinds)  # every event read from its bytes by the manager
        for t, kind, etype, obj in _random_events(rng, nodes=6, steps=300):
            if kind == "sync":
                assert summary(fast.sync(t)) == summary(slow.sync(t))
                assert fast.next_wakeup() == slow.next_wakeup()
                continue
            fast.on_events([WatchEvent(kind, etype, raw=encode(obj))], t)  # read by head where it can be
            slow.on_events([(kind, etype, obj, None)], t)  # decoded: every controller's on_event
        nl_fast, nl_slow = fast.controllers[0], slow.controllers[0]
        assert nl_fast.name == "node-lifecycle"
        assert {n: nl_fast.reconciler.probe_time(n) for n in map("n{}".format, range(6))} == {
            n: nl_slow.reconciler.probe_time(n) for n in map("n{}".format, range(6))
        }


def test_the_deadline_queues_wake_at_the_earliest_deadline_to_come():
    """Against a model: each node's deadline is its probe plus its grace. Synced after each
    event, as the component does, the controller wakes at the earliest deadline or retry
    still to come (the exact-trace tests in test_nodelifecycle.py judge the nodes then)."""
    rng = random.Random(11)
    c = node_lifecycle_step()
    for t, kind, etype, obj in _random_events(rng, nodes=8, steps=400):
        if kind != "sync":
            c.on_event(kind, etype, obj, t)
        c.sync(t)
        coming = [h.deadline() for h in c.reconciler._health.values() if h.deadline() > t]
        coming += [h.retry_at for h in c.reconciler._health.values() if h.retry_at > t]
        assert c.next_wakeup() == min(coming, default=None)
