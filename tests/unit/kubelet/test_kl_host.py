import tracemalloc

from cluster.api.codec import encode
from cluster.api.requests import ListResult, Watch
from cluster.kubelet import NodeHost
from cluster.kubelet.outbox import Outbox
from cluster.runtime.reflector import Reflector

GI, MI = 2**30, 2**20


def test_register_emits_the_node_object(driver, config):
    d = driver(
        config(
            "gpu-1",
            reserved={"cpu": "100m"},
            labels={"zone": "a"},
            taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
            extra={"nvidia.com/gpu": "2"},
        )
    )
    (node,) = d.node_creates
    assert node["metadata"] == {
        "name": "gpu-1",
        "labels": {
            "zone": "a",
            "kubernetes.io/hostname": "gpu-1",
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": "kubemu",
        },
    }
    assert node["spec"]["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    st = node["status"]
    assert st["capacity"] == {
        "cpu": "4",
        "memory": "8Gi",
        "pods": "110",
        "ephemeral-storage": "100Gi",
        "nvidia.com/gpu": "2",
    }
    assert st["allocatable"] == {
        "cpu": "3900m",
        "memory": "8092Mi",
        "pods": "110",
        "ephemeral-storage": "100Gi",
        "nvidia.com/gpu": "2",
    }
    conds = {c["type"]: (c["status"], c["reason"]) for c in st["conditions"]}
    assert conds == {
        "Ready": ("True", "KubeletReady"),
        "MemoryPressure": ("False", "KubeletHasSufficientMemory"),
        "DiskPressure": ("False", "KubeletHasNoDiskPressure"),
        "PIDPressure": ("False", "KubeletHasSufficientPID"),
    }
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert ready["message"] == "kubelet is posting ready status"
    assert st["addresses"] == [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "gpu-1"}]
    assert (st["nodeInfo"]["kubeletVersion"], st["nodeInfo"]["operatingSystem"], st["nodeInfo"]["architecture"]) == (
        "v1.31.0-kubemu",
        "linux",
        "amd64",
    )


def test_lease_renewed_every_ten_seconds(driver, config):
    d = driver(config("a"), config("b"))
    d.run_until(35)
    assert d.leases == [(t, n, t) for t in (0.0, 10.0, 20.0, 30.0) for n in ("a", "b")]


def test_late_tick_renews_once_and_keeps_cadence(driver):
    d = driver()
    d.host.tick(13.0)
    assert d.host.drain().leases == {"node-0": 13.0}
    assert d.host.next_timer() == 20.0
    d.host.tick(55.0)  # fell more than a period behind: renew now, next in 10 s
    assert d.host.drain().leases == {"node-0": 55.0}
    assert d.host.next_timer() == 65.0


def test_events_routed_by_node_name(driver, config, pod):
    d = driver(config("a"), config("b"))
    pa, pb = pod("pa", node="a", cpu="1"), pod("pb", node="b", cpu="2")
    d.feed([("ADDED", pa), ("ADDED", pb), ("ADDED", pod("px", node="elsewhere"))], 0.0)
    d.flush()
    a, b = d.host.kubelet("a"), d.host.kubelet("b")
    assert a.pods() == {pa["metadata"]["uid"]: "Running"} and b.pods() == {pb["metadata"]["uid"]: "Running"}
    assert a.requested() == {"cpu": 1000, "pods": 1} and b.requested() == {"cpu": 2000, "pods": 1}
    assert d.statuses["pb"]["hostIP"] == "10.0.0.2" and d.statuses["pb"]["podIP"] == "10.244.1.2"
    assert "px" not in d.statuses
    d.send("DELETED", pb)
    assert b.pods() == {} and a.state_of(pa["metadata"]["uid"]) == "Running"


def test_timers_routed_to_their_kubelet(driver, config, pod):
    d = driver(config("a"), config("b"))
    d.feed(
        [
            ("ADDED", pod("pa", node="a", annotations={"start-seconds": 3})),
            ("ADDED", pod("pb", node="b", annotations={"start-seconds": 1})),
        ],
        0.0,
    )
    d.flush()
    d.run_until(5)
    assert d.trace("pa") == [(0.0, "Pending", 0, "waiting"), (3.0, "Running", 0, "running")]
    assert d.trace("pb") == [(0.0, "Pending", 0, "waiting"), (1.0, "Running", 0, "running")]


def test_events_batch_runs_due_timers_first(driver, pod, deleting):
    d = driver()
    p = pod("p", annotations={"start-seconds": 2, "stop-seconds": 5})
    d.send("ADDED", p)
    # No tick at 2: the batch at 4 must see the pod Running, so the delete stops it for 5 s.
    d.feed([("MODIFIED", deleting(p, 30))], 4.0)
    d.clock.set(4.0)
    d.flush()
    d.run_until(20)
    assert d.deletes == [(9.0, "p")]


def test_kill_node_stops_only_that_kubelet(driver, config, pod):
    d = driver(config("a"), config("b"))
    d.host.kill_node("a")
    d.feed([("ADDED", pod("pa", node="a")), ("ADDED", pod("pb", node="b"))], 1.0)
    d.run_until(25)
    assert d.host.node_names() == {"b"}
    assert [n for t, n, _ in d.leases if t > 0] == ["b", "b"]
    assert "pa" not in d.statuses and d.statuses["pb"]["phase"] == "Running"


def test_outbox_drain_and_coalescing():
    box = Outbox()
    assert box.empty()
    box.pod_status["u"] = ("ns", "p", "u", {"phase": "Pending"})
    box.pod_status["u"] = ("ns", "p", "u", {"phase": "Running"})
    box.leases["n"] = 0.0
    box.leases["n"] = 10.0
    out = box.drain()
    assert box.empty() and not out.empty()
    assert out.pod_status == {"u": ("ns", "p", "u", {"phase": "Running"})}
    assert out.leases == {"n": 10.0}


def test_post_node_status_last_wins(driver):
    d = driver()
    k = d.host.kubelet("node-0")
    k.post_node_status(1.0)
    k.post_node_status(2.0)
    out = d.host.drain()
    assert list(out.node_status) == ["node-0"]
    ready = next(c for c in out.node_status["node-0"]["conditions"] if c["type"] == "Ready")
    assert ready["lastHeartbeatTime"] == "2026-01-01T00:00:02Z"


def test_memory_per_node_is_small(config):
    configs = [config(f"n-{i}") for i in range(1000)]
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    host = NodeHost(configs)
    host.register_all(0.0)
    host.drain()  # the shell sends the Node objects away
    for t in range(0, 60, 10):
        host.tick(float(t))
        host.drain()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown / len(configs) < 4_000, grown / len(configs)


def test_partition_stops_heartbeats_not_pods_then_heals(driver, config, pod):
    d = driver(config("a"), config("b"))
    d.host.partition("a", 5.0, 30.0)
    d.feed([("ADDED", pod("pa", node="a"))], 6.0)
    d.flush()
    d.host.pressure("a", {"memory": 1}, 7.0)  # a status change during the partition is not posted
    d.flush()
    d.run_until(39)
    # Leases: a at registration, then nothing until the heal at 35 s; b every 10 s.
    assert [(t, n) for t, n, _ in d.leases] == [
        (0.0, "a"),
        (0.0, "b"),
        (10.0, "b"),
        (20.0, "b"),
        (30.0, "b"),
        (35.0, "a"),
    ]
    assert [(t, n) for t, n, _ in d.node_statuses] == [(35.0, "a")]  # the full status, once back
    assert d.statuses["pa"]["phase"] == "Running"  # its pods kept running all along
    assert not d.host.kubelet("a").partitioned
    d.run_until(50)
    assert [t for t, n, _ in d.leases if n == "a"] == [0.0, 35.0, 40.0, 50.0]  # the old cadence resumes


def test_partition_without_duration_lasts_and_a_dead_node_ignores_it(driver, config):
    d = driver(config("a"), config("b"))
    d.host.partition("a", 1.0, None)
    d.host.kill_node("b")
    d.host.partition("b", 1.0, 5.0)
    d.run_until(100)
    assert [n for t, n, _ in d.leases if t > 0] == []
    assert d.host.kubelet("a").partitioned and not d.host.kubelet("b").partitioned


def _listed(d, r: Reflector, *pods) -> None:
    """A (re)list of ``pods``, through the host's reflector, into the host."""
    d.host.on_watch(r.on_list("Pod", ListResult(1, [encode(p) for p in pods])), d.now)
    d.flush()


def test_a_pod_a_relist_reports_deleted_is_released(driver, config, pod):
    d = driver(config("a"), config("b"))
    r = Reflector([Watch("Pod", heads=True)])
    pa, pb = pod("pa", node="a", cpu="1"), pod("pb", node="b", cpu="2")
    _listed(d, r, pa, pb)
    _listed(d, r, pa)  # pb was deleted while the host was not watching
    a, b = d.host.kubelet("a"), d.host.kubelet("b")
    assert b.pods() == {} and b.requested() == {"pods": 0}
    assert a.pods() == {pa["metadata"]["uid"]: "Running"}


def test_a_pod_a_relist_shows_recreated_under_its_name_replaces_the_old_one(driver, config, pod):
    d = driver(config("a"))
    r = Reflector([Watch("Pod", heads=True)])
    _listed(d, r, pod("web-0", node="a", cpu="2"))
    # Deleted and created again under the same name while the host was not watching: the
    # list shows the same name with a new uid.
    _listed(d, r, pod("web-0", node="a", cpu="1", uid="uid-web-0-again"))
    a = d.host.kubelet("a")
    assert a.pods() == {"uid-web-0-again": "Running"}
    assert a.requested()["cpu"] == 1000  # the old pod's 2 CPUs are released
