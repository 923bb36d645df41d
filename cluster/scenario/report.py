"""The JSON report of a run (docs/architecture.md §9) and the terminal summary printed after it.

Owns the report's shape: ``scenario``, ``passed``, ``expectations``, ``pods``, ``nodes``,
``events`` and ``metrics``. Built from the mirror (what was observed), the tracker's
verdicts and the counters the driver collected from the components.
"""

from __future__ import annotations

from ..api.events import event_time, involved_ref
from ..api.objects import condition, labels_of, node_name_of, phase_of, priority_of
from ..api.quantity import format_resource
from ..api.resources import node_allocatable
from ..kubelet.cgroups import pod_cgroup
from .mirror import Mirror
from .runner import ScenarioRun


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile (p in 0..100) of a list, None when empty."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


# Below this many binds the first-to-last window is a few milliseconds and its rate is noise.
MIN_BINDS_FOR_THROUGHPUT = 100


def metrics(mirror: Mirror, counters: dict) -> dict:
    latencies = [
        mirror.running_at[uid] - created for uid, created in mirror.created_at.items() if uid in mirror.running_at
    ]
    bound = sorted(mirror.bound_at.values())
    span = bound[-1] - bound[0] if len(bound) > 1 else 0.0
    reasons = [ev.get("reason") for ev in mirror.events]
    return {
        "podsScheduled": counters.get("scheduled", len(bound)),
        "schedulingThroughput": round(len(bound) / span, 1)
        if span > 0 and len(bound) >= MIN_BINDS_FOR_THROUGHPUT
        else None,
        "podStartupLatency": {
            "p50": _round(percentile(latencies, 50)),
            "p90": _round(percentile(latencies, 90)),
            "p99": _round(percentile(latencies, 99)),
            "unit": "emulated seconds",
        },
        "preemptions": reasons.count("Preempted"),
        "evictions": reasons.count("Evicted"),
        "bindConflicts": counters.get("bindConflicts", 0),
    }


def _round(v):
    return None if v is None else round(v, 3)


def build(run: ScenarioRun, mirror: Mirror, counters: dict, wall_seconds: float) -> dict:
    s = run.scenario
    return {
        "scenario": s.metadata.name,
        "description": s.metadata.description,
        "passed": run.passed,
        "endedAt": run.ended_at,
        "wallSeconds": round(wall_seconds, 2),
        "expectations": [
            {
                "index": i,
                "spec": e.model_dump(exclude_none=True),
                "ok": v.ok,
                "detail": v.detail,
                "decidedAt": v.decided_at,
                "implicit": i >= run.implicit_from,
            }
            for i, (e, v) in enumerate(zip(run.tracker.expectations, run.tracker.verdicts))
        ],
        "pods": [_pod(p, mirror) for _, p in sorted(mirror.pods.items())],
        "nodes": [_node(n, mirror) for _, n in sorted(mirror.nodes.items())],
        "events": [_event(ev) for ev in sorted(mirror.events, key=event_time)],
        "metrics": metrics(mirror, counters),
        "schedulingResults": scheduling_results(mirror),
        # The pictures' data (additive: ``sampler.py``, ``preemptions``).
        **run.sampler.report(mirror),
        "preemptions": preemptions(mirror.events),
    }


def scheduling_results(mirror: Mirror) -> list[dict]:
    """The scheduler's explanations (``SchedulingResult``, ``cluster/scheduler/explain.py``)
    of the pods still there: every pod that failed an attempt, every pod with ``explain: all``."""
    found = mirror.objects.get("SchedulingResult", {})
    return [{"namespace": ns, "name": name, **(obj.get("status") or {})} for (ns, name), obj in sorted(found.items())]


def preemptions(events: list[dict]) -> list[dict]:
    """Who preempted whom: per preemptor (the default scheduler names it by uid and node in
    its Preempted event; YuniKorn by what took the room), the victims in the order evicted."""
    out: dict[str, dict] = {}
    for ev in sorted((e for e in events if e.get("reason") == "Preempted"), key=event_time):
        message = ev.get("message") or ""
        by, _, node = message.removeprefix("Preempted by ").removeprefix("pod ").partition(" on node ")
        entry = out.setdefault(by, {"time": event_time(ev), "preemptor": by, "node": node or None, "victims": []})
        entry["victims"].append(involved_ref(ev))
    return list(out.values())


def _usage(usage: dict | None) -> dict | None:
    if not usage:
        return None
    return {
        "memory": None if usage.get("memory") is None else format_resource("memory", usage["memory"]),
        "cpu": None if usage.get("cpu") is None else format_resource("cpu", usage["cpu"]),
        "cpuThrottled": usage.get("cpuThrottled", False),
    }


def _pod(p: dict, mirror: Mirror) -> dict:
    m, st = p["metadata"], p.get("status") or {}
    running = phase_of(p) == "Running"
    held = mirror.resources.get(m.get("uid", ""))
    if held is not None:
        cgroup = held.get("cgroup")
    else:  # no kubelet view (its node was killed): what the kubelet would have written
        cgroup = pod_cgroup(p, m.get("uid", "")) if running else None
    return {
        "namespace": m.get("namespace"),
        "name": m["name"],
        "uid": m.get("uid"),
        "labels": labels_of(p),
        "phase": phase_of(p),
        "reason": st.get("reason"),
        "message": st.get("message"),
        "nodeName": node_name_of(p) or None,
        "nominatedNodeName": st.get("nominatedNodeName"),
        "qosClass": st.get("qosClass"),
        "priority": priority_of(p),
        "deletionTimestamp": m.get("deletionTimestamp"),
        "startTime": st.get("startTime"),
        "restartCount": sum(c.get("restartCount", 0) for c in st.get("containerStatuses") or ()),
        # What the kubelet holds for the pod (its PodResources view): the pod cgroup with
        # the containers' values (as upstream's kubelet writes them), exclusive CPUs, devices and their env.
        "cgroup": cgroup,
        "cpuset": (held or {}).get("cpuset"),
        "devices": (held or {}).get("devices") or {},
        "env": (held or {}).get("env") or {},
        "usage": _usage((held or {}).get("usage")),
    }


def _node(n: dict, mirror: Mirror) -> dict:
    name = n["metadata"]["name"]
    ready = (condition(n, "Ready") or {}).get("status") == "True"
    held = mirror.node_resources.get(name) or {}
    return {
        "name": name,
        "ready": ready,
        "conditions": {c["type"]: c.get("status") for c in (n.get("status") or {}).get("conditions") or ()},
        "taints": (n.get("spec") or {}).get("taints") or [],
        "capacity": dict((n.get("status") or {}).get("capacity") or {}),
        "allocatable": {r: format_resource(r, v) for r, v in node_allocatable(n).items()},
        "requested": {r: format_resource(r, v) for r, v in mirror.requested_on(name).items() if v},
        "cgroups": held.get("cgroups"),
        "sharedCpus": held.get("sharedCpus"),
        "devices": held.get("devices") or {},
    }


def _event(ev: dict) -> dict:
    return {
        "time": event_time(ev),
        "type": ev.get("type"),
        "reason": ev.get("reason"),
        "object": involved_ref(ev),
        "message": ev.get("message"),
        "count": ev.get("count") or 1,
    }


def yunikorn(view: dict) -> dict:
    """YuniKorn mode's part of the report: its counters and, per queue (depth first),
    guaranteed, max, allocated, pending and preempting resources (YuniKorn's units: vcore
    in millicores, memory in bytes) and the victims taken from its subtree."""
    queues = []

    def walk(q: dict) -> None:
        queues.append(
            {
                "queue": q["queuename"],
                "leaf": q["isLeaf"],
                "guaranteed": q["guaranteedResource"],
                "max": q["maxResource"],
                "allocated": q["allocatedResource"],
                "pending": q["pendingResource"],
                "preempting": q["preemptingResource"],
                "preemptions": q.get("preemptionVictims", 0),
            }
        )
        for child in q["children"]:
            walk(child)

    walk(view["queues"])
    counters = {k: v for k, v in view.items() if isinstance(v, int) and not isinstance(v, bool)}
    return {"counters": counters, "queues": queues}


def _yk_res(r: dict) -> str:
    parts = []
    for k in sorted(r):
        v = r[k]
        if k == "vcore":
            parts.append(f"cpu={format_resource('cpu', v)}")
        elif k in ("memory", "ephemeral-storage"):
            parts.append(f"{k}={format_resource(k, v)}")
        elif k != "pods":
            parts.append(f"{k}={v}")
    return ",".join(parts) or "-"


def _yunikorn_lines(yk: dict) -> list[str]:
    c = yk["counters"]
    lines = [
        f"  yunikorn: {c.get('scheduled', 0)} scheduled, {c.get('preemptions', 0)} preempted, "
        f"{c.get('pending', 0)} pending, {c.get('configReloads', 0)} config reloads "
        f"({c.get('configRejected', 0)} refused)"
    ]
    for q in yk["queues"]:
        lines.append(
            f"    {q['queue']}: guaranteed {_yk_res(q['guaranteed'])} max {_yk_res(q['max'])} "
            f"allocated {_yk_res(q['allocated'])} pending {_yk_res(q['pending'])} "
            f"preemptions {q['preemptions']}"
        )
    return lines


def summary(report: dict) -> str:
    """The readable terminal summary of a report."""
    lines = [
        f"scenario {report['scenario']}: {'PASSED' if report['passed'] else 'FAILED'} "
        f"(ended at {report['endedAt']:.1f}s emulated, {report['wallSeconds']:.1f}s wall)"
    ]
    held = []
    for e in report["expectations"]:
        if e.get("implicit") and e["ok"]:
            held.append(e["spec"]["invariant"])
            continue
        mark = "ok  " if e["ok"] else "FAIL"
        lines.append(f"  {mark} [{e['index']}] {e['detail']}")
    if held:
        lines.append(f"  ok   invariants checked in every run hold: {', '.join(held)}")
    phases: dict[str, int] = {}
    for p in report["pods"]:
        phases[p["phase"] or "?"] = phases.get(p["phase"] or "?", 0) + 1
    ready = sum(1 for n in report["nodes"] if n["ready"])
    lines.append(
        f"  nodes: {ready}/{len(report['nodes'])} Ready; pods: "
        + (", ".join(f"{v} {k}" for k, v in sorted(phases.items())) or "none")
    )
    m = report["metrics"]
    lat = m["podStartupLatency"]
    lines.append(
        f"  scheduled {m['podsScheduled']} pods"
        + (f" at {m['schedulingThroughput']} pods/s" if m["schedulingThroughput"] else "")
        + (
            f"; startup latency p50 {lat['p50']}s p90 {lat['p90']}s p99 {lat['p99']}s (emulated)"
            if lat["p50"] is not None
            else "; no pod started, so no startup latency"
        )
    )
    if "yunikorn" in report:
        lines += _yunikorn_lines(report["yunikorn"])
    return "\n".join(lines)
