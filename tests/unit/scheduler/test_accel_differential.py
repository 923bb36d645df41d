"""Acceleration changes speed, never decisions: random workloads through the scheduler
component's watch-event path, with every accelerator on and with all of them off (the
plain reference cycle), and with each one alone, must write the same binds, events,
nominations and victim deletions in the same order.

The workloads use every default plugin: requests, priorities and preemption (victims
terminate first and go later, as with a grace period), taints and tolerations, node
selectors and node affinity, inter-pod affinity and anti-affinity, topology spread, host
ports, scheduling gates lifted later, and nominated pods; some clusters are large enough
that the round-robin search stops early (percentageOfNodesToScore). Objects arrive as
watch events with their encoded bytes, as the runtimes deliver them, and every write the
component makes comes back as the watch event it causes.
"""

from __future__ import annotations

import copy
import random

import pytest
from sched_builders import make_node, make_pod

from cluster.api.codec import encode
from cluster.api.patches import PodConditions
from cluster.api.requests import Bind, Delete, Patch, RecordEvent
from cluster.runtime.component import START, Batch, WatchEvent
from cluster.scheduler import SchedulerConfig
from cluster.scheduler.accel import ACCELERATORS, Accelerate
from cluster.scheduler.component import SchedulerComponent
from cluster.scheduler.framework import CycleState, ProfileConfig
from cluster.scheduler.plugins import DEFAULT_PLUGINS

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
SEEDS = range(200)


def _node(i: int, rng: random.Random):
    n = make_node(f"n{i:03d}", cpu=rng.choice(["2", "4", "8"]), memory=rng.choice(["4Gi", "16Gi"]), pods="8")
    n.label(ZONE, f"z{i % 3}").label(HOST, f"n{i:03d}")
    if rng.random() < 0.3:
        n.label("disk", "ssd")
    if rng.random() < 0.15:
        n.taint("dedicated", rng.choice(["NoSchedule", "PreferNoSchedule"]))
    extra = random.Random(i * 7919 + len(n["metadata"]["labels"]))  # the main stream stays as it was
    if extra.random() < 0.1:
        n.unschedulable()
    if extra.random() < 0.1:
        n.taint("gpu", "NoSchedule")
    if extra.random() < 0.3:
        n.image(extra.choice([300, 900]) * 1024 * 1024, extra.choice(["img:a", "img:b"]))
    return n


def _pod(i: int, rng: random.Random):
    """One pod of a few kinds (so the memos and runs have repeats to serve)."""
    kind = rng.randrange(8)
    app = f"app{kind % 4}"
    extra = random.Random(i * 104729 + kind)  # the main stream stays as it was
    p = make_pod(f"p{i}").label("app", app).req(cpu=rng.choice(["500m", "1", "2"]), memory="1Gi")
    p.prio(rng.choice([0, 0, 10, 100]))
    if kind == 1:
        p.toleration(extra.choice(["dedicated", "gpu"]), "Exists", effect=extra.choice(["", "PreferNoSchedule"]))
    elif kind == 2:
        p.node_selector(**extra.choice([{"disk": "ssd"}, {ZONE: "z1"}]))
    elif kind == 3:
        p.pod_anti_affinity(HOST, {"matchLabels": {"app": app}})
    elif kind == 4:
        p.spread(ZONE, max_skew=1)
    elif kind == 5:
        p.host_port(extra.choice([8080, 9090]))
    elif kind == 6 and extra.random() < 0.5:
        p.pod_affinity(ZONE, {"matchLabels": {"app": "app0"}}, weight=50)
    if extra.random() < 0.3:
        p.image(extra.choice(["img:a", "img:b"]))
    if extra.random() < 0.1:
        p.toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")
    if kind == 7 and extra.random() < 0.5:
        p.spread(ZONE, max_skew=1, when="ScheduleAnyway")
    if rng.random() < 0.1:
        p["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    if rng.random() < 0.05:
        p["spec"]["preemptionPolicy"] = "Never"
    return p


def _event(kind: str, type_: str, obj: dict) -> WatchEvent:
    return WatchEvent(kind, type_, raw=encode(obj))


class _Cluster:
    """The objects as the apiserver holds them; turns the component's writes into the
    watch events they cause (a victim is first seen terminating, then gone)."""

    def __init__(self) -> None:
        self.pods: dict[str, dict] = {}
        self.terminating: list[str] = []

    def apply(self, writes: list) -> tuple[list[WatchEvent], list[tuple]]:
        events, trail = [], []
        for w in writes:
            if isinstance(w, Bind):
                trail.append(("Bind", w.name, w.node))
                pod = self.pods.get(w.name)
                if pod is not None and not pod["spec"].get("nodeName"):
                    pod = self.pods[w.name] = copy.deepcopy(pod)
                    pod["spec"]["nodeName"] = w.node
                    events.append(_event("Pod", "MODIFIED", pod))
            elif isinstance(w, Patch) and isinstance(w.patch, PodConditions):
                conds = tuple((c.get("reason"), c.get("message")) for c in w.patch.conditions)
                trail.append(("Patch", w.name, conds, w.patch.nominated_node))
                pod = self.pods.get(w.name)
                if pod is not None:
                    pod = self.pods[w.name] = copy.deepcopy(pod)
                    if w.patch.apply(pod):
                        events.append(_event("Pod", "MODIFIED", pod))
            elif isinstance(w, Patch):  # e.g. a victim's DisruptionTarget condition
                trail.append(("Patch", w.name, repr(w.patch), None))
            elif isinstance(w, Delete):
                trail.append(("Delete", w.name))
                pod = self.pods.get(w.name)
                if pod is not None and "deletionTimestamp" not in pod["metadata"]:
                    pod = self.pods[w.name] = copy.deepcopy(pod)
                    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
                    self.terminating.append(w.name)
                    events.append(_event("Pod", "MODIFIED", pod))
            elif isinstance(w, RecordEvent):
                ev = w.event
                trail.append(("Event", ev["involvedObject"]["name"], ev["reason"], ev.get("message")))
        return events, trail

    def reap(self) -> list[WatchEvent]:
        """The victims marked terminating earlier are gone now."""
        gone = [_event("Pod", "DELETED", self.pods.pop(name)) for name in self.terminating if name in self.pods]
        self.terminating = []
        return gone


def _shape(seed: int) -> tuple[int, int]:
    """(nodes, percentageOfNodesToScore): every fourth seed a cluster over 100 nodes whose
    search stops before it has looked at every node."""
    rng = random.Random(seed * 7919)
    if seed % 4 == 3:
        return rng.randrange(110, 150), rng.choice([0, 10, 30])
    return rng.randrange(4, 24), rng.choice([0, 0, 50, 100])


def drive(
    seed: int, accelerate: Accelerate, rounds: int = 10, without: tuple[str, ...] = (), explain: str = "failed"
) -> list:
    """The trail of writes of one random workload (the same for the same seed); the
    default plugins but ``without``; ``explain``: the SchedulingResults recorded."""
    rng = random.Random(seed)
    n, pct = _shape(seed)
    config = SchedulerConfig(percentage_of_nodes_to_score=pct, accelerate=accelerate, explain=explain)
    if without:
        plugins = tuple(spec for spec in DEFAULT_PLUGINS if spec.name not in without)
        config = SchedulerConfig(
            profiles=(ProfileConfig(plugins=plugins),),
            percentage_of_nodes_to_score=pct,
            accelerate=accelerate,
            explain=explain,
        )
    component = SchedulerComponent(config, seed=seed)
    cluster = _Cluster()
    nodes = [_node(i, rng) for i in range(n)]
    events = [_event("Node", "ADDED", node) for node in nodes]
    trail: list = []
    now, count, boot = 1.0, 0, START
    for _ in range(rounds):
        for _ in range(rng.randint(2, min(10, max(3, n // 2)))):
            pod = _pod(count, rng)
            count += 1
            cluster.pods[pod["metadata"]["name"]] = pod
            events.append(_event("Pod", "ADDED", pod))
        gated = [p for p in cluster.pods.values() if p["spec"].get("schedulingGates")]
        if gated and rng.random() < 0.5:  # a controller lifts a gate
            pod = copy.deepcopy(rng.choice(gated))
            del pod["spec"]["schedulingGates"]
            cluster.pods[pod["metadata"]["name"]] = pod
            events.append(_event("Pod", "MODIFIED", pod))
        placed = [p for p in cluster.pods.values() if p["spec"].get("nodeName") and p["metadata"]["name"]]
        if placed and rng.random() < 0.3:  # a pod completes and is deleted
            pod = cluster.pods.pop(rng.choice(placed)["metadata"]["name"])
            events.append(_event("Pod", "DELETED", pod))
        result = component.reconcile(Batch(now, events, boot=boot))
        boot = ""
        events, writes = cluster.apply(result.writes)
        trail.append(writes)
        events += cluster.reap()
        now += rng.choice([0.5, 2.0, 11.0])  # past the backoff now and then
    result = component.reconcile(Batch(now, events))
    trail.append(cluster.apply(result.writes)[1])
    return trail


def drive_basic(seed: int, accelerate: Accelerate) -> list:
    """PreemptionBasic's shape, small: 4-CPU nodes filled with four 900m priority-0 pods,
    then a wave of 3-CPU priority-10 pods (some more than the nodes) arriving at once, so
    that many preemptors are nominated while their victims are terminating."""
    rng = random.Random(seed)
    n = rng.randrange(5, 40)
    component = SchedulerComponent(SchedulerConfig(accelerate=accelerate), seed=seed)
    cluster = _Cluster()
    events = [_event("Node", "ADDED", make_node(f"n{i:03d}", cpu="4", memory="16Gi")) for i in range(n)]
    waves = [
        [make_pod(f"low{i}").req(cpu="900m", memory="500Mi").prio(0) for i in range(4 * n)],
        [make_pod(f"high{i}").req(cpu="3", memory="500Mi").prio(10) for i in range(n + rng.choice([-n // 2, 0, 3]))],
    ]
    trail: list = []
    now, boot = 1.0, START
    for r in range(8):
        for pod in waves[r] if r < len(waves) else ():
            cluster.pods[pod["metadata"]["name"]] = pod
            events.append(_event("Pod", "ADDED", pod))
        result = component.reconcile(Batch(now, events, boot=boot))
        boot = ""
        events, writes = cluster.apply(result.writes)
        trail.append(writes)
        events += cluster.reap()
        now += rng.choice([0.5, 2.0, 11.0])
    return trail


def test_preemption_basic_waves_decide_alike():
    for seed in range(12):
        got, want = drive_basic(seed, Accelerate()), drive_basic(seed, Accelerate.all(False))
        assert got == want, f"seed {seed}: the accelerated scheduler decided differently"
        counts = _summary([got])
        # Every high pod that can fit preempted three low ones and was bound.
        assert counts["Delete"] >= 3 and counts["Bind"] > 4 * 5, (seed, counts)


def _summary(trails: list[list]) -> dict:
    flat = [w for trail in trails for rnd in trail for w in rnd]
    return {kind: sum(1 for w in flat if w[0] == kind) for kind in ("Bind", "Patch", "Delete", "Event")}


def test_acceleration_on_and_off_decide_alike_over_200_seeds():
    on, off = [], []
    for seed in SEEDS:
        got, want = drive(seed, Accelerate()), drive(seed, Accelerate.all(False))
        assert got == want, f"seed {seed}: the accelerated scheduler decided differently"
        on.append(got)
        off.append(want)
    counts = _summary(on)
    # The workloads exercised what they are meant to: binds, failures, preemption.
    assert counts["Bind"] > 2000 and counts["Delete"] > 50 and counts["Patch"] > 500, counts
    nominations = [w for t in on for rnd in t for w in rnd if w[0] == "Patch" and w[3]]
    assert len(nominations) > 50


@pytest.mark.parametrize("name", sorted(ACCELERATORS))
def test_each_accelerator_alone_decides_as_the_reference_cycle(name):
    for seed in range(0, 200, 8):
        alone = drive(seed, Accelerate.only(name))
        assert alone == drive(seed, Accelerate.all(False)), f"{name}, seed {seed}"


# Per default plugin that signs: the plugins left out of the profile for its mutation,
# because they read the same part of the pod (their fragment would still tell the pods
# apart). NodeName and VolumeBinding are not here: every pod the
# scheduler sees has no spec.nodeName, and VolumeBinding signs only a pod without claims,
# so their fragments are the same for every signed pod (test_constant_fragments).
MUTATIONS = {
    "NodeUnschedulable": ("TaintToleration",),
    "TaintToleration": ("NodeUnschedulable",),
    "NodeAffinity": (),
    "NodePorts": ("NodeResourcesFit", "NodeResourcesBalancedAllocation"),
    "NodeResourcesFit": ("NodeResourcesBalancedAllocation",),
    "NodeResourcesBalancedAllocation": ("NodeResourcesFit",),
    "ImageLocality": (),
}
# InterPodAffinity's and PodTopologySpread's fragments matter only to a kind run (they
# sign only pods their PreFilter skipped, and their Score normalizes), so the random
# workloads rarely show them: ``drive_pairs`` pops pods of one kind in a row that differ
# only in a preferred affinity term or a soft spread constraint.
PAIR_MUTATIONS = ("InterPodAffinity", "PodTopologySpread")


def drive_pairs(seed: int, accelerate: Accelerate, terms: str) -> list:
    """Web pods of one kind, each with or without (at random) a preferred zone affinity to
    the db pods (``terms`` "InterPodAffinity") or a soft zone spread (else), all pending at
    once so one ``schedule`` call pops them in a row; the db pods placed first, in zone z0."""
    rng = random.Random(seed)
    n = rng.randrange(6, 16)
    component = SchedulerComponent(SchedulerConfig(accelerate=accelerate), seed=seed)
    cluster = _Cluster()
    events = []
    for i in range(n):
        node = make_node(f"n{i:02d}", cpu=rng.choice(["4", "8"]), memory="16Gi", pods="32")
        events.append(_event("Node", "ADDED", node.label(ZONE, f"z{i % 3}").label(HOST, f"n{i:02d}")))
    waves = [[make_pod(f"db{i}").label("app", "db").req(cpu="1").node_selector(**{ZONE: "z0"}) for i in range(2)]]
    web = []
    for i in range(rng.randrange(8, 24)):
        p = make_pod(f"web{i}").label("app", "web").req(cpu="500m", memory="1Gi")
        if rng.random() < 0.5:
            if terms == "InterPodAffinity":
                p.pod_affinity(ZONE, {"matchLabels": {"app": "db"}}, weight=rng.choice([10, 100]))
            else:
                p.spread(ZONE, max_skew=1, when="ScheduleAnyway")
        web.append(p)
    waves.append(web)
    trail: list = []
    now, boot = 1.0, START
    for wave in waves:
        for pod in wave:
            cluster.pods[pod["metadata"]["name"]] = pod
            events.append(_event("Pod", "ADDED", pod))
        result = component.reconcile(Batch(now, events, boot=boot))
        boot = ""
        events, writes = cluster.apply(result.writes)
        trail.append(writes)
        now += 1.0
    return trail


@pytest.mark.parametrize("plugin", PAIR_MUTATIONS)
def test_pods_differing_only_in_soft_terms_decide_alike(plugin):
    for seed in range(40):
        got = drive_pairs(seed, Accelerate(), plugin)
        assert got == drive_pairs(seed, Accelerate.all(False), plugin), f"{plugin}, seed {seed}"
    assert _summary([got])["Bind"] >= 10


@pytest.mark.parametrize("plugin", PAIR_MUTATIONS)
def test_the_paired_workload_catches_a_signature_missing_a_soft_terms_fragment(monkeypatch, plugin):
    """As above, for the plugins whose fragment only a kind run reads."""
    cls = type(SchedulerComponent(SchedulerConfig()).scheduler.frameworks["default-scheduler"].plugins[plugin])
    real = cls.sign

    def dropped(self, pod, state):
        return None if real(self, pod, state) is None else ()

    monkeypatch.setattr(cls, "sign", dropped)
    differ = any(
        drive_pairs(seed, Accelerate(), plugin) != drive_pairs(seed, Accelerate.all(False), plugin)
        for seed in range(40)
    )
    assert differ, f"dropping {plugin}'s fragment from the signature went unnoticed"


@pytest.mark.parametrize("plugin", sorted(MUTATIONS))
def test_the_differential_test_catches_a_signature_missing_one_plugins_fragment(monkeypatch, plugin):
    """A mutation: ``plugin`` signs every pod it signs with an empty fragment, so pods that
    differ in what it reads share memos and runs, and the comparison must see it."""
    cls = type(SchedulerComponent(SchedulerConfig()).scheduler.frameworks["default-scheduler"].plugins[plugin])
    real = cls.sign

    def dropped(self, pod, state):
        return None if real(self, pod, state) is None else ()

    monkeypatch.setattr(cls, "sign", dropped)
    without = MUTATIONS[plugin]
    differ = any(
        drive(seed, Accelerate(), without=without) != drive(seed, Accelerate.all(False), without=without)
        for seed in range(40)
    )
    assert differ, f"dropping {plugin}'s fragment from the signature went unnoticed"


def test_constant_fragments():
    """The two default plugins left out of the mutations sign every signed pod alike."""
    component = SchedulerComponent(SchedulerConfig())
    fwk = component.scheduler.frameworks["default-scheduler"]
    state = CycleState()
    state.skip_filter.add("VolumeBinding")
    pods = [make_pod("a").req(cpu="1"), make_pod("b").label("x", "y").host_port(80)]
    for name in ("NodeName", "VolumeBinding"):
        fragments = {fwk.plugins[name].sign(component.scheduler.cache.new_pod_info(p), state) for p in pods}
        assert len(fragments) == 1, name
    assert fwk.plugins["VolumeBinding"].sign(component.scheduler.cache.new_pod_info(pods[0]), CycleState()) is None


@pytest.mark.parametrize(
    "raw,want",
    [
        (None, Accelerate()),
        (True, Accelerate()),
        (False, Accelerate.all(False)),
        ({"rowMemo": False}, Accelerate(row_memo=False)),
        ({"kindRuns": False, "fastPreemption": False}, Accelerate(kind_runs=False, fast_preemption=False)),
    ],
)
def test_the_setting_reads_true_false_or_accelerators_by_name(raw, want):
    assert Accelerate.parse(raw) == want


@pytest.mark.parametrize(
    "raw,message",
    [
        ("yes", 'accelerate: "yes" must be true, false or a mapping of accelerators'),
        ({"rowmemo": False}, "accelerate.rowmemo: unknown accelerator (known: lazyFilter, rowMemo,"),
        ({"rowMemo": "off"}, 'accelerate.rowMemo: "off" must be true or false'),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_field(raw, message):
    with pytest.raises(ValueError) as e:
        Accelerate.parse(raw)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)
