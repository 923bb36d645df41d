"""Time series of a run, sampled from the driver's watch view, for the report's pictures.

Owns the report's additive ``series`` and ``heatmap`` sections: at each observation
(``ScenarioRun.observe``) it samples the mirror (pods by phase, the pending pods by what the
watch shows of them, nodes Ready and not, cumulative pods created, bound and started, and
per node the share of allocatable CPU and memory its running pods request), and at the end
it turns the mirror's creation and Running times into startup latency percentiles per
interval and a CDF. Everything stays bounded whatever the run's size: at most
``MAX_SAMPLES`` samples (when full, every other one is dropped and the spacing doubles; the
cumulative counts keep every bind between samples), at most ``MAX_ROWS`` heatmap rows (past
that, nodes are bucketed in name order and a row is its bucket's mean) and at most
``CDF_POINTS`` points of the CDF. Sampling also keeps within ``BUDGET`` of the run's time,
so a 100,000-node run is not slowed by its pictures.

The pending pods are split as a user sees them with ``kubectl get -w``: ``unschedulable``
(condition PodScheduled False, reason Unschedulable), ``nominated`` (a nominatedNodeName,
waiting for victims to go) and ``waiting`` (not yet tried, or backing off: the scheduler's
activeQ and backoffQ, which no watch tells apart).
"""

from __future__ import annotations

import time
from typing import Any

from ..api.objects import condition, node_name_of, phase_of
from .mirror import Mirror

MAX_SAMPLES = 300
MAX_ROWS = 200
CDF_POINTS = 400
LATENCY_BINS = 60
BUDGET = 0.05  # the share of the run's real time sampling may take (past one second)
PHASES = ("Pending", "Running", "Succeeded", "Failed")


class Sampler:
    def __init__(self) -> None:
        self.t: list[float] = []
        self.columns: dict[str, list[int]] = {}
        self.cpu: list[list[float]] = []  # per sample, per heatmap row
        self.memory: list[list[float]] = []
        self.rows: list[str] = []
        self._groups: list[list[str]] = []
        self._node_set: frozenset[str] = frozenset()
        self.spacing = 0.0
        self._spent = 0.0
        self._started = time.perf_counter()  # the sampling budget only: samples are stamped in emulated time

    def observe(self, mirror: Mirror, now: float, final: bool = False) -> None:
        if self.t and not final and (now - self.t[-1] < self.spacing or self._over_budget()):
            return
        t0 = time.perf_counter()
        if self.t and now <= self.t[-1]:
            self._drop_last()  # one sample per instant: the latest view wins
        self._sample(mirror, now)
        if len(self.t) > MAX_SAMPLES:
            self._thin()
        self._spent += time.perf_counter() - t0

    def _over_budget(self) -> bool:
        return self._spent > 1.0 + BUDGET * (time.perf_counter() - self._started)

    def _sample(self, mirror: Mirror, now: float) -> None:
        counts = dict.fromkeys(
            ("Pending", "Running", "Succeeded", "Failed", "Terminating", "waiting", "unschedulable", "nominated"), 0
        )
        for pod in mirror.pods.values():
            phase = phase_of(pod)
            if phase in counts:
                counts[phase] += 1
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                counts["Terminating"] += 1
            if phase == "Pending" and not node_name_of(pod):
                counts[_pending_state(pod)] += 1
        ready = sum((condition(n, "Ready") or {}).get("status") == "True" for n in mirror.nodes.values())
        counts.update(
            nodesReady=ready,
            nodesNotReady=len(mirror.nodes) - ready,
            created=len(mirror.created_at),
            scheduled=len(mirror.bound_at),
            started=len(mirror.running_at),
        )
        self.t.append(round(now, 3))
        for k, v in counts.items():
            self.columns.setdefault(k, []).append(v)
        self._sample_nodes(mirror)

    def _sample_nodes(self, mirror: Mirror) -> None:
        names = frozenset(mirror.nodes)
        if names - self._node_set:  # new nodes: regroup (rows never shrink, so a gone node keeps its row)
            self._regroup(self._node_set | names)
        cpu, mem = [], []
        for group in self._groups:
            c = m = 0.0
            for name in group:
                alloc = mirror._alloc.get(name) or {}
                used = mirror._node_sum.get(name) or {}
                c += _share(used.get("cpu", 0), alloc.get("cpu", 0))
                m += _share(used.get("memory", 0), alloc.get("memory", 0))
            cpu.append(round(c / len(group), 3))
            mem.append(round(m / len(group), 3))
        self.cpu.append(cpu)
        self.memory.append(mem)

    def _regroup(self, names: frozenset[str]) -> None:
        """Rows: one per node, or past ``MAX_ROWS`` nodes, buckets of consecutive names.
        Earlier samples are re-expressed over the new rows as the old rows' values (a
        node that was not there yet reads 0)."""
        old = {n: i for i, g in enumerate(self._groups) for n in g}
        ordered = sorted(names, key=_natural)
        size = -(-len(ordered) // MAX_ROWS)
        groups = [ordered[i : i + size] for i in range(0, len(ordered), size)]
        for series in (self.cpu, self.memory):
            for k, row in enumerate(series):
                series[k] = [round(sum(row[old[n]] if n in old else 0.0 for n in g) / len(g), 3) for g in groups]
        self._groups, self._node_set = groups, names
        self.rows = [g[0] if len(g) == 1 else f"{g[0]} … {g[-1]} ({len(g)})" for g in groups]

    def _drop_last(self) -> None:
        self.t.pop()
        for v in self.columns.values():
            v.pop()
        self.cpu.pop()
        self.memory.pop()

    def _thin(self) -> None:
        keep = list(range(0, len(self.t) - 1, 2)) + [len(self.t) - 1]
        self.t = [self.t[i] for i in keep]
        self.columns = {k: [v[i] for i in keep] for k, v in self.columns.items()}
        self.cpu = [self.cpu[i] for i in keep]
        self.memory = [self.memory[i] for i in keep]
        self.spacing = (self.t[-1] - self.t[0]) / (MAX_SAMPLES / 2)

    def report(self, mirror: Mirror) -> dict[str, Any]:
        """The ``series`` and ``heatmap`` sections (see the module's docstring)."""
        latencies = sorted(
            (mirror.running_at[uid], mirror.running_at[uid] - created)
            for uid, created in mirror.created_at.items()
            if uid in mirror.running_at
        )
        return {
            "series": {
                "t": self.t,
                "unit": "emulated seconds",
                **{k: v for k, v in self.columns.items()},
                "startupLatency": latency_bins(latencies, self.t[0] if self.t else 0.0, self.t[-1] if self.t else 0.0),
                "startupCdf": cdf([lat for _, lat in latencies]),
            },
            "heatmap": {"rows": self.rows, "t": self.t, "cpu": _transpose(self.cpu), "memory": _transpose(self.memory)},
        }


def _pending_state(pod: dict) -> str:
    if (pod.get("status") or {}).get("nominatedNodeName"):
        return "nominated"
    scheduled = condition(pod, "PodScheduled") or {}
    if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
        return "unschedulable"
    return "waiting"


def _share(used: int, alloc: int) -> float:
    return used / alloc if alloc > 0 else 0.0


def _natural(name: str) -> tuple:
    """node-2 before node-10: a name's trailing number sorts as a number."""
    head = name.rstrip("0123456789")
    tail = name[len(head) :]
    return (head, int(tail) if tail else -1, name)


def _transpose(samples: list[list[float]]) -> list[list[float]]:
    """Per sample, per row → per row, per sample (the heatmap's z)."""
    return [list(row) for row in zip(*samples)] if samples else []


def latency_bins(started: list[tuple[float, float]], t0: float, t1: float) -> dict[str, list]:
    """Startup latency p50/p90/p99 of the pods that became Running in each of at most
    ``LATENCY_BINS`` equal intervals of [t0, t1]; ``t`` is each interval's end, and an
    interval in which no pod started is left out."""
    from .report import percentile  # the report's one percentile rule

    out: dict[str, list] = {"t": [], "p50": [], "p90": [], "p99": [], "count": []}
    if not started:
        return out
    t1 = max(t1, started[-1][0])
    width = max((t1 - t0) / LATENCY_BINS, 1e-9)
    bins: dict[int, list[float]] = {}
    for at, lat in started:
        bins.setdefault(min(LATENCY_BINS - 1, max(0, int((at - t0) / width))), []).append(lat)
    for k in sorted(bins):
        values = bins[k]
        out["t"].append(round(t0 + (k + 1) * width, 3))
        for p in (50, 90, 99):
            out[f"p{p}"].append(round(percentile(values, p) or 0.0, 3))
        out["count"].append(len(values))
    return out


def cdf(latencies: list[float]) -> dict[str, list[float]]:
    """The CDF of ``latencies``: at most ``CDF_POINTS`` (seconds, fraction) points, the
    slowest pod always last."""
    s = sorted(latencies)
    n = len(s)
    if not n:
        return {"seconds": [], "fraction": []}
    step = max(1, -(-n // CDF_POINTS))
    idx = list(range(step - 1, n, step))
    if idx[-1] != n - 1:
        idx.append(n - 1)
    return {"seconds": [round(s[i], 3) for i in idx], "fraction": [round((i + 1) / n, 4) for i in idx]}
