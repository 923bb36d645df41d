"""Pod readiness gates: Ready waits for the gates' conditions, which others set."""

from cluster.clock import rfc3339 as ts


def gated(pod, *types, conditions=()):
    p = pod()
    p["spec"]["readinessGates"] = [{"conditionType": t} for t in types]
    if conditions:
        p["status"]["conditions"] = list(conditions)
    return p


def with_conditions(p, *conds, st=None):
    """The pod as the apiserver shows it after a client patched conditions into its status."""
    status = dict(st or p["status"])
    kept = [c for c in status.get("conditions") or () if c["type"] not in {x["type"] for x in conds}]
    status["conditions"] = kept + list(conds)
    return {**p, "status": status}


def ready(st):
    c = next(c for c in st["conditions"] if c["type"] == "Ready")
    return (c["status"], c.get("reason"), c.get("message"), c["lastTransitionTime"])


def containers_ready(st):
    return next(c for c in st["conditions"] if c["type"] == "ContainersReady")["status"]


def test_a_missing_gate_condition_keeps_ready_false_with_upstreams_message(driver, pod):
    d = driver()
    d.send("ADDED", gated(pod, "example.com/a", "example.com/b"))
    st = d.statuses["p"]
    msg = (
        'corresponding condition of pod readiness gate "example.com/a" does not exist., '
        'corresponding condition of pod readiness gate "example.com/b" does not exist.'
    )
    assert st["phase"] == "Running" and containers_ready(st) == "True"
    assert ready(st) == ("False", "ReadinessGatesNotReady", msg, ts(0))


def test_patching_the_conditions_flips_ready_and_back(driver, pod):
    d = driver()
    p = gated(pod, "example.com/a")
    d.send("ADDED", p)
    d.clock.set(7)
    false = {"type": "example.com/a", "status": "False", "lastTransitionTime": ts(7)}
    d.send("MODIFIED", with_conditions(p, false, st=d.statuses["p"]))
    msg = 'the status of pod readiness gate "example.com/a" is not "True", but False'
    assert ready(d.statuses["p"]) == ("False", "ReadinessGatesNotReady", msg, ts(0))
    assert false in d.statuses["p"]["conditions"]  # kept, as the client wrote it
    d.clock.set(9)
    true = {**false, "status": "True", "lastTransitionTime": ts(9)}
    d.send("MODIFIED", with_conditions(p, true, st=d.statuses["p"]))
    assert ready(d.statuses["p"]) == ("True", None, None, ts(9))
    assert true in d.statuses["p"]["conditions"]
    writes = len(d.log)
    d.send("MODIFIED", {**p, "status": d.statuses["p"]})  # the echo of the kubelet's own write
    assert len(d.log) == writes


def test_a_gate_holds_nothing_until_the_containers_are_ready(driver, pod):
    d = driver()
    p = gated(pod, "g", conditions=[{"type": "g", "status": "True"}])
    p["metadata"]["annotations"] = {"kubemu.io/start-seconds": "5"}
    d.send("ADDED", p)
    st = d.statuses["p"]
    assert ready(st)[:2] == ("False", "ContainersNotReady")
    d.run_until(5)
    assert ready(d.statuses["p"])[:2] == ("True", None)


def test_a_pod_without_gates_ignores_foreign_conditions(driver, pod):
    d = driver()
    p = pod()
    d.send("ADDED", p)
    writes = len(d.log)
    d.send("MODIFIED", with_conditions(p, {"type": "x", "status": "True"}, st=d.statuses["p"]))
    assert len(d.log) == writes
