"""A restarted host's kubelets adopt the pods bound to their nodes (reconcile.py): what runs
keeps running with its resources and remaining time, without status writes or events."""

import copy

from cluster.clock import rfc3339 as ts

GPU = "nvidia.com/gpu"


def listed(d, *pods):
    """The pods as the apiserver lists them: with the latest status the old host wrote."""
    out = []
    for p in pods:
        p = copy.deepcopy(p)
        if p["metadata"]["name"] in d.statuses:
            p["status"] = copy.deepcopy(d.statuses[p["metadata"]["name"]])
        out.append(p)
    return out


def restarted(old, configs, now, pods):
    """A new host process with ``old``'s configs at ``now``: it registers again, then its
    informer's first batch lists the pods as ADDED events."""
    d = type(old)(configs)  # conftest's Driver
    d.clock.set(now)
    d.host.register_all(now, restarted=True)
    d.flush()
    # A restarted kubelet announces itself, without the first status's Events.
    assert [e[2] for e in d.events] == ["Starting", "NodeAllocatableEnforced"] * len(configs)
    d.events, d.raw_events = [], []
    d.feed([("ADDED", p) for p in pods], now)
    d.host.tick(now)  # the actor's loop ticks after every batch
    d.flush()
    return d


def test_running_pods_keep_running_with_their_resources_and_remaining_time(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    web = pod("web", cpu="1", memory="1Gi", limits={"memory": "2Gi"})
    job = pod("job", cpu="500m", restart_policy="Never", annotations={"start-seconds": 10, "run-seconds": 100})
    guaranteed = pod("g", requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"})
    for p in (web, job, guaranteed):
        d.send("ADDED", p)
    d.run_until(50)
    old = d.host.kubelet("node-0")
    assert d.trace("job") == [(0.0, "Pending", 0, "waiting"), (10.0, "Running", 0, "running")]

    d2 = restarted(d, configs, 50, listed(d, web, job, guaranteed))
    k = d2.host.kubelet("node-0")
    assert (d2.log, d2.events, d2.deletes) == ([], [], [])  # nothing restarted, announced or written
    assert k.pods() == {p["metadata"]["uid"]: "Running" for p in (web, job, guaranteed)}
    assert k.requested() == old.requested() == {"cpu": 2500, "memory": 2 * 1024**3, "pods": 3}
    assert k.pod_resources(50) == old.pod_resources(50)  # cgroups per pod and container
    assert k.node_resources() == old.node_resources()  # the QoS cgroups (Burstable cpu shares)

    d2.run_until(200)
    assert d2.trace("job") == [(110.0, "Succeeded", 0, "terminated")]  # 100 s from its start at 10
    st = d2.statuses["job"]
    assert st["startTime"] == ts(0)
    assert st["containerStatuses"][0]["state"]["terminated"] == {
        "exitCode": 0,
        "reason": "Completed",
        "startedAt": ts(10),
        "finishedAt": ts(110),
    }
    assert d2.trace("web") == [] and k.requested() == {"cpu": 2000, "memory": 2 * 1024**3, "pods": 2}


def test_the_restarted_node_registers_again_and_posts_ready_status_and_lease(driver, config):
    configs = [config("node-0"), config("node-1")]
    d = driver(*configs)
    d.host.kill_node("node-1")  # revived by the restart: the process restart revives every kubelet
    d.run_until(30)
    d2 = restarted(d, configs, 42, [])
    assert d2.host.node_names() == {"node-0", "node-1"}
    assert [n["metadata"]["name"] for n in d2.node_creates] == ["node-0", "node-1"]  # the apiserver says 409
    ready = {name: [c for c in st["conditions"] if c["type"] == "Ready"][0] for _, name, st in d2.node_statuses}
    assert {n: (c["status"], c["lastHeartbeatTime"]) for n, c in ready.items()} == {
        "node-0": ("True", ts(42)),
        "node-1": ("True", ts(42)),
    }
    d2.run_until(52)
    assert d2.leases == [(42, "node-0", 42), (42, "node-1", 42), (52, "node-0", 52), (52, "node-1", 52)]


def test_a_first_registration_posts_no_extra_status(driver):
    d = driver()
    assert d.node_statuses == [] and len(d.node_creates) == 1


def test_a_pending_pod_the_old_kubelet_never_admitted_is_admitted(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    fresh = pod("fresh", cpu="1")
    d2 = restarted(d, configs, 50, [fresh])
    assert d2.trace("fresh") == [(50.0, "Running", 0, "running")]
    assert d2.statuses["fresh"]["startTime"] == ts(50)


def test_adopted_pods_take_their_resources_before_anything_new_is_admitted(driver, pod, config):
    configs = [config(cpu="2")]
    d = driver(*configs)
    big = pod("big", cpu="1500m")
    d.send("ADDED", big)
    late = pod("late", cpu="1")  # bound while the host was down; listed first
    d2 = restarted(d, configs, 20, [late, *listed(d, big)])
    assert d2.trace("late") == [(20.0, "Failed", 0, "-")]
    assert d2.statuses["late"]["reason"] == "OutOfcpu"
    assert d2.trace("big") == []
    assert d2.host.kubelet("node-0").requested() == {"cpu": 1500, "pods": 1}


def test_a_new_pod_after_the_restart_gets_a_fresh_address(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    pods = [pod(f"p{i}") for i in range(3)]
    for p in pods:
        d.send("ADDED", p)
    d2 = restarted(d, configs, 5, listed(d, *pods))
    d2.send("ADDED", pod("new"))
    assert [d.statuses[f"p{i}"]["podIP"] for i in range(3)] == ["10.244.0.2", "10.244.0.3", "10.244.0.4"]
    assert d2.statuses["new"]["podIP"] == "10.244.0.5"  # the adopted pods keep theirs


def test_an_admitted_pending_pod_starts_on_its_schedule(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    slow = pod("slow", cpu="1", annotations={"start-seconds": 30})
    d.send("ADDED", slow)
    d2 = restarted(d, configs, 10, listed(d, slow))
    assert d2.log == [] and d2.host.kubelet("node-0").requested() == {"cpu": 1000, "pods": 1}
    d2.run_until(40)
    assert d2.trace("slow") == [(30.0, "Running", 0, "running")]
    assert d2.statuses["slow"]["startTime"] == ts(0)


def test_a_crash_looping_pod_resumes_its_back_off(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    crash = pod("crash", annotations={"run-seconds": 5, "exit-code": 1})
    d.send("ADDED", crash)
    d.run_until(8)  # ran 0-5, back-off 10 s: the restart is due at 15
    d2 = restarted(d, configs, 8, listed(d, crash))
    assert d2.log == [] and d2.events == []
    d2.run_until(41)
    assert d2.trace("crash") == [
        (15.0, "Running", 1, "running"),
        (20.0, "Running", 2, "waiting"),
        (40.0, "Running", 2, "running"),
    ]  # the back-off doubled to 20 s


def test_a_run_that_ended_while_the_kubelet_was_down_ends_at_its_own_time(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    short = pod("short", restart_policy="Never", annotations={"run-seconds": 20})
    d.send("ADDED", short)
    d2 = restarted(d, configs, 50, listed(d, short))
    assert d2.trace("short") == [(50.0, "Succeeded", 0, "terminated")]
    assert d2.statuses["short"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"] == ts(20)
    assert d2.host.kubelet("node-0").requested() == {"pods": 0}


def test_terminal_pods_are_remembered_and_terminating_ones_confirmed(driver, pod, config, deleting):
    configs = [config()]
    d = driver(*configs)
    done = pod("done", restart_policy="Never", annotations={"run-seconds": 1})
    stopping = pod("stopping", grace=30, annotations={"stop-seconds": 5})
    waiting = pod("waiting", annotations={"start-seconds": 100})
    for p in (done, stopping, waiting):
        d.send("ADDED", p)
    d.run_until(10)
    # Deleted while the host was down: the new kubelet sees them terminating in the list.
    gone = [deleting(p, 30, at=8) for p in listed(d, stopping, waiting)]
    d2 = restarted(d, configs, 10, [*listed(d, done), *gone])
    k = d2.host.kubelet("node-0")
    assert k.state_of(done["metadata"]["uid"]) == "Succeeded"
    assert d2.deletes == [(10, "waiting")]  # never ran: confirmed at once
    assert [(t, n, r) for t, n, r, _ in d2.events] == [(10, "stopping", "Killing")]
    d2.run_until(20)
    assert d2.deletes == [(10, "waiting"), (15, "stopping")]  # the normal stop: 5 s, then grace 0
    assert d2.log == [] and k.requested() == {"pods": 0}


def test_exclusive_cpus_and_devices_are_allocated_again(driver, pod, config):
    cfg = config(cpu="4", reserved={"cpu": "500m"}, extra={GPU: "2"}, kubelet={"cpuManagerPolicy": "static"})
    d = driver(cfg)
    pinned = pod(
        "pinned", requests={"cpu": "2", "memory": "1Gi", GPU: "1"}, limits={"cpu": "2", "memory": "1Gi", GPU: "1"}
    )
    d.send("ADDED", pinned)
    old = d.host.kubelet("node-0").pod_resources(1)[pinned["metadata"]["uid"]]
    assert old["exclusiveCpus"] and old["devices"] == {GPU: ["node-0-gpu-0"]}
    d2 = restarted(d, [cfg], 1, listed(d, pinned))
    k = d2.host.kubelet("node-0")
    # Same list order, same allocators: the same choice (an emptier node could choose otherwise).
    assert k.pod_resources(1)[pinned["metadata"]["uid"]] == old
    assert k.node_resources() == d.host.kubelet("node-0").node_resources()


def test_an_eviction_in_progress_finishes(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    victim = pod("victim", annotations={"stop-seconds": 10})
    d.send("ADDED", victim)
    (shown,) = listed(d, victim)
    shown["status"]["conditions"].append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "TerminationByKubelet",
            "message": "The node was low on resource: memory.",
            "lastTransitionTime": ts(45),
        }
    )
    d2 = restarted(d, configs, 50, [shown])
    st = d2.statuses["victim"]
    assert (st["phase"], st["reason"], st["message"]) == ("Failed", "Evicted", "The node was low on resource: memory.")
    # The hard eviction grace (1 s) ran out before the 10 s stop: SIGKILL.
    assert st["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137


def test_an_adopted_pod_is_still_oom_killed_when_its_memory_passes_the_limit(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    leak = pod(
        "leak",
        restart_policy="Never",
        limits={"memory": "1Gi"},
        annotations={"start-seconds": 5, "memory-usage": "ramp(0, 2Gi, 100s)"},
    )  # 1Gi after 50 s
    d.send("ADDED", leak)
    d.run_until(20)
    d2 = restarted(d, configs, 20, listed(d, leak))
    assert d2.log == []
    d2.run_until(100)
    st = d2.statuses["leak"]["containerStatuses"][0]["state"]["terminated"]
    assert (st["reason"], st["exitCode"], st["startedAt"], st["finishedAt"]) == ("OOMKilled", 137, ts(5), ts(55))
    assert [r for _, _, r, _ in d2.events] == ["OOMKilling"]
