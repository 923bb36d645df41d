"""The controller runtime: the work queue's back-off and order, and a reconciler's loop
(events to keys, requeue, errors and refused writes coming back rate-limited)."""

from __future__ import annotations

import pytest

from cluster.api.errors import AlreadyExists, Conflict
from cluster.api.requests import Create, UpdateStatus
from cluster.controllers.manager import ControllerManager
from cluster.controllers.reconciler import Key, ObjectCache, Outcome, ReconcilerStep, Watches
from cluster.controllers.workqueue import RateLimiter, WorkQueue
from cluster.controllers.writes import requests


def test_exponential_backoff_per_key_and_forget():
    rl = RateLimiter()
    delays = [rl.when("a", 0.0) for _ in range(5)]
    assert delays == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    assert rl.when("b", 0.0) == pytest.approx(0.005)  # per key
    rl.forget("a")
    assert rl.when("a", 0.0) == pytest.approx(0.005)


def test_backoff_caps_at_1000_seconds():
    rl = RateLimiter(qps=1e9, burst=10**9)
    for _ in range(30):
        d = rl.when("a", 0.0)
    assert d == 1000.0


def test_bucket_allows_burst_then_paces_at_qps():
    rl = RateLimiter()
    delays = [rl.when(i, 0.0) for i in range(102)]
    assert delays[:100] == pytest.approx([0.005] * 100)
    assert delays[100] == pytest.approx(0.1)  # the 101st waits for a token: 1/10 s
    assert delays[101] == pytest.approx(0.2)


def test_queue_dedups_and_keeps_fifo_order():
    q = WorkQueue()
    for k in ["b", "a", "b", "c"]:
        q.add(k)
    assert q.pop_ready(0.0) == ["b", "a", "c"]
    assert q.pop_ready(0.0) == []


def test_add_after_holds_until_due_and_earlier_wins():
    q = WorkQueue()
    q.add_after("a", 10.0, 0.0)
    q.add_after("a", 5.0, 0.0)
    q.add_after("b", 7.0, 0.0)
    assert q.next_ready() == 5.0
    assert q.pop_ready(4.9) == []
    assert q.pop_ready(5.0) == ["a"]
    assert q.next_ready() == 7.0
    assert q.pop_ready(20.0) == ["b"]
    assert q.next_ready() is None


class _Counter:
    """Counts ConfigMaps: a Create of a Status-like ConfigMap per namespace; fails on demand."""

    name = "counter"
    watches = (Watches("ConfigMap"), Watches("Secret", keys=lambda t, o: ((o["metadata"]["namespace"], "count"),)))
    indexers = (("ConfigMap", "namespace", lambda o: (o["metadata"]["namespace"],)),)

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache
        self.calls: list[tuple[Key, float]] = []
        self.fail: set[Key] = set()

    def reconcile(self, key: Key, now: float) -> Outcome:
        self.calls.append((key, now))
        if key in self.fail:
            return Outcome(error="boom")
        n = len(self.cache.by_index("ConfigMap", "namespace", key[0]))
        status = UpdateStatus("ConfigMap", key[0], key[1], "", {"n": n})
        return Outcome(writes=[status], requeue_after=30.0 if key[1] == "poll" else None)


def _cm(ns: str, name: str) -> dict:
    return {"kind": "ConfigMap", "metadata": {"namespace": ns, "name": name}}


def test_step_reconciles_each_named_key_once_per_sync():
    step = ReconcilerStep(_Counter)
    step.on_event("ConfigMap", "ADDED", _cm("a", "x"), 0.0)
    step.on_event("ConfigMap", "MODIFIED", _cm("a", "x"), 0.0)
    step.on_event("Secret", "ADDED", {"metadata": {"namespace": "b", "name": "s"}}, 0.0)
    w = step.sync(0.0)
    assert step.reconciler.calls == [(("a", "x"), 0.0), (("b", "count"), 0.0)]
    assert [(r.namespace, r.name, r.status) for r in w.requests] == [("a", "x", {"n": 1}), ("b", "count", {"n": 0})]
    assert step.sync(1.0).requests == []


def test_requeue_after_wakes_the_key():
    step = ReconcilerStep(_Counter)
    step.on_event("ConfigMap", "ADDED", _cm("a", "poll"), 0.0)
    step.sync(0.0)
    assert step.next_wakeup() == 30.0
    step.sync(30.0)
    assert step.reconciler.calls == [(("a", "poll"), 0.0), (("a", "poll"), 30.0)]


def test_error_retries_with_growing_backoff_until_it_succeeds():
    step = ReconcilerStep(_Counter)
    r = step.reconciler
    r.fail.add(("a", "x"))
    step.on_event("ConfigMap", "ADDED", _cm("a", "x"), 0.0)
    now, waits = 0.0, []
    for _ in range(4):
        step.sync(now)
        nxt = step.next_wakeup()
        waits.append(nxt - now)
        now = nxt
    assert waits == pytest.approx([0.005, 0.01, 0.02, 0.04])
    r.fail.clear()
    assert step.sync(now).requests  # succeeds, failures forgotten
    assert step.next_wakeup() is None
    assert step.metrics()["controller_runtime_reconcile_errors_total"] == 4
    r.fail.add(("a", "x"))
    step.on_event("ConfigMap", "MODIFIED", _cm("a", "x"), now)
    step.sync(now)
    assert step.next_wakeup() - now == pytest.approx(0.005)  # back-off starts over


def test_refused_write_comes_back_to_its_key_through_the_manager():
    step = ReconcilerStep(_Counter)
    m = ControllerManager([step])
    m.on_events([("ConfigMap", "ADDED", _cm("a", "x"), None)], 0.0)
    reqs = requests(m.sync(0.0))
    assert [type(r) for r in reqs] == [UpdateStatus]
    m.on_failed(reqs[0], Conflict("stale"), 0.0)
    assert m.next_wakeup() == pytest.approx(0.005)
    m.sync(0.005)
    assert [c[0] for c in step.reconciler.calls] == [("a", "x"), ("a", "x")]


def test_refusal_of_a_write_nobody_asked_for_is_ignored():
    step = ReconcilerStep(_Counter)
    step.on_failed(Create(_cm("z", "q")), AlreadyExists("x"), 0.0)
    assert step.next_wakeup() is None


def test_cache_index_follows_updates_and_deletes():
    c = ObjectCache()
    c.add_indexer("Pod", "node", lambda o: (o["spec"]["nodeName"],))
    c.apply("Pod", "ADDED", {"metadata": {"namespace": "d", "name": "p"}, "spec": {"nodeName": "n1"}})
    c.apply("Pod", "MODIFIED", {"metadata": {"namespace": "d", "name": "p"}, "spec": {"nodeName": "n2"}})
    assert c.by_index("Pod", "node", "n1") == []
    assert [o["spec"]["nodeName"] for o in c.by_index("Pod", "node", "n2")] == ["n2"]
    c.apply("Pod", "DELETED", {"metadata": {"namespace": "d", "name": "p"}, "spec": {"nodeName": "n2"}})
    assert c.by_index("Pod", "node", "n2") == [] and c.get("Pod", "d", "p") is None


def test_put_reads_back_until_the_watch_answers_and_unput_restores_the_watch_copy():
    c = ObjectCache()
    c.add_indexer("ConfigMap", "v", lambda o: (o["data"]["v"],))
    c.apply("ConfigMap", "ADDED", {"metadata": {"namespace": "d", "name": "a"}, "data": {"v": "1"}})
    c.put("ConfigMap", {"metadata": {"namespace": "d", "name": "a"}, "data": {"v": "2"}})
    assert [o["data"]["v"] for o in c.by_index("ConfigMap", "v", "2")] == ["2"]
    c.unput("ConfigMap", "d", "a")  # refused: the watch's copy again
    assert c.get("ConfigMap", "d", "a")["data"]["v"] == "1" and c.by_index("ConfigMap", "v", "2") == []
    c.put("ConfigMap", {"metadata": {"namespace": "d", "name": "new"}, "data": {"v": "3"}})
    c.unput("ConfigMap", "d", "new")  # never seen by the watch: nothing again
    assert c.get("ConfigMap", "d", "new") is None and c.by_index("ConfigMap", "v", "3") == []
    c.put("ConfigMap", {"metadata": {"namespace": "d", "name": "a"}, "data": {"v": "4"}})
    c.apply("ConfigMap", "MODIFIED", {"metadata": {"namespace": "d", "name": "a"}, "data": {"v": "5"}})
    c.unput("ConfigMap", "d", "a")  # the watch answered already: nothing to undo
    assert c.get("ConfigMap", "d", "a")["data"]["v"] == "5"


def test_names_only_and_projected_kinds_keep_little_and_an_update_of_the_same_projection_names_no_key():
    class _R:
        name = "r"
        watches = (
            Watches("Pod", keys=lambda t, o: (("", o["metadata"]["namespace"]),), names_only=True),
            Watches("Node", project=lambda o: bool(o.get("spec", {}).get("taints")), on_change=True),
        )
        indexers = ()

        def __init__(self, cache):
            self.cache = cache

        def reconcile(self, key, now):
            return Outcome()

    step = ReconcilerStep(_R)
    step.on_event("Pod", "ADDED", {"metadata": {"namespace": "a", "name": "p"}}, 0.0)
    step.on_event("Pod", "MODIFIED", {"metadata": {"namespace": "b", "name": "q"}}, 0.0)  # an update: not read
    assert step.cache.names("Pod", "a") == ["p"] and step.cache.names("Pod", "b") == []
    assert step.queue.pop_ready(0.0) == [("", "a")]
    step.on_event("Node", "ADDED", {"metadata": {"name": "n"}, "spec": {}}, 0.0)
    assert step.cache.projected("Node", "", "n") is False and step.queue.pop_ready(0.0) == [("", "n")]
    step.on_event("Node", "MODIFIED", {"metadata": {"name": "n", "resourceVersion": "2"}, "spec": {}}, 0.0)
    assert step.queue.pop_ready(0.0) == []  # what the cache keeps did not change
    step.on_event("Node", "MODIFIED", {"metadata": {"name": "n"}, "spec": {"taints": [{"key": "k"}]}}, 0.0)
    assert step.queue.pop_ready(0.0) == [("", "n")]
