"""Usage-driven kubelet behaviour through a NodeHost: OOM kills, CPU throttling, the
eviction manager's loop (order, grace, conditions, admission), and the pressure action."""

from cluster.clock import rfc3339 as ts
from cluster.kubelet.eviction import EVICTION_MONITORING_PERIOD

MI, GI = 2**20, 2**30
LEAK = "ramp(100Mi, 400Mi, 20s)"  # passes 256Mi 10.4 s after each start


def _leaky(pod, name="leaky", policy=None):
    return pod(
        name,
        requests={"memory": "128Mi"},
        limits={"memory": "256Mi"},
        restart_policy=policy,
        annotations={"memory-usage": LEAK},
    )


def _conditions(st):
    return {c["type"]: (c["status"], c["reason"]) for c in st["conditions"]}


# ---- OOM -------------------------------------------------------------------------------------


def test_memory_above_limit_is_oom_killed_at_the_crossing_and_restarted_with_backoff(driver, pod):
    d = driver()
    d.send("ADDED", _leaky(pod))
    d.run_until(55)
    # (The kill is at the first instant usage exceeds 256Mi by a byte: 10.4 s plus 64 ns.)
    assert [(round(t, 6), *rest) for t, *rest in d.trace("leaky")] == [
        (0.0, "Running", 0, "running"),
        (10.4, "Running", 1, "waiting"),  # OOM-killed, back-off 10 s
        (20.4, "Running", 1, "running"),
        (30.8, "Running", 2, "waiting"),  # back-off 20 s
        (50.8, "Running", 2, "running"),
    ]
    cs = d.statuses["leaky"]["containerStatuses"][0]  # running again, the last run's end kept
    assert cs["state"] == {"running": {"startedAt": ts(50.8)}}
    assert cs["lastState"] == {
        "terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": ts(20.4), "finishedAt": ts(30.8)}
    }
    reasons = [(round(t, 6), obj, r) for t, obj, r, _ in d.events]
    assert reasons[:2] == [(10.4, "node-0", "OOMKilling"), (10.4, "leaky", "BackOff")]
    # The OOM event is node-problem-detector's (the kubelet records none for a container).
    assert d.raw_events[0]["source"] == {"component": "kernel-monitor", "host": "node-0"}


def test_oom_with_restart_policy_never_fails_the_pod(driver, pod):
    d = driver()
    d.send("ADDED", _leaky(pod, policy="Never"))
    d.run_until(30)
    st = d.statuses["leaky"]
    assert st["phase"] == "Failed"
    assert st["containerStatuses"][0]["state"]["terminated"]["reason"] == "OOMKilled"
    assert st["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137
    assert d.host.kubelet("node-0").requested() == {"pods": 0}


def test_usage_below_limit_or_without_limit_is_never_killed(driver, pod):
    d = driver()
    d.send("ADDED", pod("unlimited", annotations={"memory-usage": "2Gi"}))
    d.send("ADDED", pod("under", limits={"memory": "1Gi"}, annotations={"memory-usage": "spike(100Mi, 1Gi, 5s, 5s)"}))
    d.run_until(100)
    assert d.trace("unlimited") == [(0.0, "Running", 0, "running")]
    assert d.trace("under") == [(0.0, "Running", 0, "running")]  # exactly at the limit is not above it


def test_cpu_above_limit_is_throttled_not_killed(driver, pod):
    d = driver()
    p = pod("spin", requests={"cpu": "250m"}, limits={"cpu": "500m"}, annotations={"cpu-usage": "2"})
    d.send("ADDED", p)
    d.run_until(100)
    assert d.trace("spin") == [(0.0, "Running", 0, "running")]
    view = d.host.pod_resources(100.0)[p["metadata"]["uid"]]
    assert view["usage"] == {"memory": None, "cpu": 2000, "cpuThrottled": True}
    assert view["cgroup"]["containers"]["c"]["cpuQuota"] == 50000


def test_deleting_a_pod_cancels_its_oom(driver, pod, deleting):
    d = driver()
    p = _leaky(pod)
    d.send("ADDED", p)
    d.run_until(5)
    d.send("MODIFIED", deleting(p, 30))
    d.run_until(60)
    assert d.deletes == [(5.0, "leaky")]
    assert [r for _, _, r, _ in d.events] == ["Killing"]


# ---- eviction --------------------------------------------------------------------------------


def _pressure_node(config, **kubelet):
    base = {"evictionHard": {"memory.available": "500Mi"}, "evictionPressureTransitionPeriod": "30s"}
    return config(memory="8Gi", kubelet={**base, **kubelet})


def _workload(pod):
    def p(name, usage, requests=None, limits=None, priority=0):
        out = pod(name, requests=requests, limits=limits, annotations={"memory-usage": usage})
        out["spec"]["priority"] = priority
        return out

    g = {"cpu": "500m", "memory": "1Gi"}
    return [
        p("g1", "900Mi", g, g),
        p("g2", "900Mi", g, g),
        p("over", "1500Mi", {"memory": "512Mi"}),
        p("be-low", "600Mi"),
        p("be-high", "800Mi", priority=1000),
    ]


def test_memory_pressure_evicts_one_pod_per_pass_in_upstream_order(driver, config, pod):
    d = driver(_pressure_node(config))
    for p in _workload(pod):
        d.send("ADDED", p)
    d.run_until(15)
    d.host.pressure("node-0", {"memory": 5632 * MI}, 15.0, 60)
    d.flush()
    d.run_until(100)
    evicted = [(t, name) for t, name, r, _ in d.events if r == "Evicted"]
    # Over its request first, then lower priority beats a larger excess; the cleanup of a
    # pod that stops at once takes one 1 s poll before the next pass.
    assert evicted == [(20.0, "over"), (21.0, "be-low"), (22.0, "be-high")]
    assert d.statuses["g1"]["phase"] == d.statuses["g2"]["phase"] == "Running"
    node_events = [(t, r) for t, name, r, _ in d.events if name == "node-0"]
    # Last seen at 22 s; False at the first pass 30 s later (passes at 23, 33, 43, 53).
    assert node_events == [(20.0, "NodeHasInsufficientMemory"), (53.0, "NodeHasSufficientMemory")]
    (t1, _, st1), (t2, _, st2) = d.node_statuses
    assert t1 == 20.0 and _conditions(st1)["MemoryPressure"] == ("True", "KubeletHasInsufficientMemory")
    assert t2 == 53.0 and _conditions(st2)["MemoryPressure"] == ("False", "KubeletHasSufficientMemory")
    mp = next(c for c in st2["conditions"] if c["type"] == "MemoryPressure")
    assert mp["lastTransitionTime"] == ts(53) and mp["message"] == "kubelet has sufficient memory available"


def test_evicted_pod_status(driver, config, pod):
    d = driver(_pressure_node(config))
    for p in _workload(pod):
        d.send("ADDED", p)
    d.host.pressure("node-0", {"memory": 5632 * MI}, 0.0)
    d.flush()
    d.run_until(11)
    st = d.statuses["over"]
    assert st["phase"] == "Failed" and st["reason"] == "Evicted"
    assert st["message"] == (
        "The node was low on resource: memory. Threshold quantity: 500Mi, available: 0. "
        "Container c was using 1500Mi, request is 512Mi, has larger consumption of memory. "
    )
    dt = next(c for c in st["conditions"] if c["type"] == "DisruptionTarget")
    assert (dt["status"], dt["reason"], dt["message"]) == ("True", "TerminationByKubelet", st["message"])
    # The container stopped on SIGTERM (stop-seconds 0 < grace 1 s): 128 + 15.
    assert st["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143
    assert d.host.kubelet("node-0").requested()["memory"] == 2 * GI  # over's request released
    ev = next(e for e in d.raw_events if e["reason"] == "Evicted")
    assert (ev["type"], ev["message"], ev["source"]["component"]) == ("Warning", st["message"], "kubelet")
    assert {k: v for k, v in ev["metadata"]["annotations"].items() if k != "kubemu.io/time"} == {
        "offending_containers": "c",
        "offending_containers_usage": "1500Mi",
        "starved_resource": "memory",
    }


def test_memory_pressure_refuses_best_effort_pods_unless_they_tolerate_it(driver, config, pod):
    d = driver(_pressure_node(config))
    d.send("ADDED", pod("hog", annotations={"memory-usage": "7800Mi"}))
    d.run_until(10)  # hog (BestEffort) is evicted at the 10 s pass; the condition stays
    d.send("ADDED", pod("be"))
    tolerant = pod("tolerant")
    tolerant["spec"]["tolerations"] = [
        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}
    ]
    d.send("ADDED", tolerant)
    d.send("ADDED", pod("burstable", memory="64Mi"))
    assert d.statuses["be"]["phase"] == "Failed"
    assert (d.statuses["be"]["reason"], d.statuses["be"]["message"]) == (
        "Evicted",
        "Pod was rejected: The node had condition: [MemoryPressure]. ",
    )
    assert d.statuses["tolerant"]["phase"] == d.statuses["burstable"]["phase"] == "Running"


def test_soft_threshold_evicts_only_after_its_grace_period(driver, config, pod):
    d = driver(
        config(
            memory="4Gi",
            kubelet={
                "evictionSoft": {"memory.available": "1Gi"},
                "evictionSoftGracePeriod": {"memory.available": "30s"},
                "evictionMaxPodGracePeriod": 10,
                "evictionPressureTransitionPeriod": "20s",
            },
        )
    )
    p = pod("hungry", memory="256Mi", annotations={"memory-usage": "1Gi", "stop-seconds": 30})
    d.send("ADDED", p)
    d.host.pressure("node-0", {"memory": int(2.5 * GI)}, 5.0, 60)
    d.flush()
    d.run_until(39.9)
    assert [r for _, _, r, _ in d.events] == ["NodeHasInsufficientMemory"]  # seen at 10, grace running
    d.run_until(100)
    assert [(t, r) for t, _, r, _ in d.events if r in ("Evicted", "Killing")] == [(40.0, "Evicted"), (40.0, "Killing")]
    # The stop is capped by evictionMaxPodGracePeriod: SIGKILL at 50 s.
    term = d.statuses["hungry"]["containerStatuses"][0]["state"]["terminated"]
    assert (term["exitCode"], term["finishedAt"]) == (137, ts(50))


def test_pressure_ends_after_its_duration_and_the_loop_stops(driver, config, pod):
    d = driver(_pressure_node(config))
    d.host.pressure("node-0", {"memory": 7900 * MI}, 0.0, 25)
    d.flush()
    d.run_until(200)
    assert [(t, r) for t, _, r, _ in d.events] == [
        (10.0, "NodeHasInsufficientMemory"),
        (50.0, "NodeHasSufficientMemory"),
    ]
    assert d.host.next_timer() == 210.0  # only the lease is left


def test_an_idle_node_runs_no_eviction_loop(driver, pod):
    d = driver()
    d.send("ADDED", pod("plain", cpu="1"))
    d.run_until(EVICTION_MONITORING_PERIOD * 3)
    k = d.host.kubelet("node-0")
    assert k._evict_timer is None and len(d.host.timers) == 1  # the lease


def test_disk_and_pid_pressure(driver, config, pod):
    d = driver(config(kubelet={"evictionHard": {"nodefs.available": "10Gi", "pid.available": "1000"}}))
    d.send("ADDED", pod("a"))
    d.host.pressure("node-0", {"disk": 95 * GI, "pids": 32000}, 0.0)
    d.flush()
    d.run_until(10)
    conds = _conditions(d.node_statuses[-1][2])
    assert conds["DiskPressure"] == ("True", "KubeletHasDiskPressure")
    assert conds["PIDPressure"] == ("True", "KubeletHasInsufficientPID")
    assert d.statuses["a"]["reason"] == "Evicted"
    assert d.statuses["a"]["message"].startswith(
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 5Gi. "
    )
