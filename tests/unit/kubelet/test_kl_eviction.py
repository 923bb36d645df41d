"""Node-pressure eviction: config parsing, observations, thresholds, the synchronize loop,
ranking, the eviction message and admission under pressure."""

from __future__ import annotations

import pytest

from cluster.kubelet.eviction import (
    CONDITION_TAINTS,
    EVICTION_MONITORING_PERIOD,
    IMMEDIATE_EVICTION_GRACE_PERIOD,
    ContainerStats,
    EvictionManager,
    NodeStats,
    Observation,
    PodStats,
    admit,
    observe,
    rank_pods,
    thresholds_met,
)
from cluster.kubelet.evictionconfig import (
    DEFAULT_EVICTION_HARD,
    EvictionConfigError,
    Threshold,
    ThresholdValue,
    declared_string,
    parse_eviction_config,
    quantity_string,
)

KI, MI, GI = 2**10, 2**20, 2**30


# ---- builders -------------------------------------------------------------------------------


def config(**kubelet):
    return parse_eviction_config(kubelet)


def described(cfg):
    return [t.describe() for t in cfg.thresholds]


def mem_node(available, capacity=8 * GI):
    """A node whose only measured signal is memory, ``available`` bytes free."""
    return NodeStats(memory_capacity=capacity, memory_working_set=capacity - available)


def disk_node(available=100 * GI, capacity=100 * GI, inodes=1_000_000, inodes_free=1_000_000):
    return NodeStats(
        nodefs_capacity=capacity, nodefs_available=available, nodefs_inodes=inodes, nodefs_inodes_free=inodes_free
    )


def pod(
    name,
    usage=0,
    request=0,
    priority=0,
    *,
    ns="default",
    measured=True,
    static=False,
    grace=None,
    disk=0,
    disk_request=0,
    inodes=0,
    processes=0,
    containers=None,
):
    if containers is None:
        containers = (
            ContainerStats(
                "c",
                memory_usage=usage,
                memory_request=request or None,
                disk_usage=disk,
                disk_request=disk_request or None,
            ),
        )
    return PodStats(
        uid=f"uid-{name}",
        namespace=ns,
        name=name,
        priority=priority,
        static=static,
        grace_period=grace,
        memory_request=request,
        disk_request=disk_request,
        memory_usage=usage,
        disk_usage=disk,
        inodes_used=inodes,
        processes=processes,
        containers=tuple(containers),
        measured=measured,
    )


def names(pods):
    return [p.name for p in pods]


# ---- configuration --------------------------------------------------------------------------


def test_defaults_are_upstreams_linux_hard_thresholds_plus_the_allocatable_copy():
    cfg = config()
    assert described(cfg) == [
        "memory.available<100Mi",
        "nodefs.available<10%",
        "nodefs.inodesFree<5%",
        "imagefs.available<15%",
        "imagefs.inodesFree<5%",
        "allocatableMemory.available<100Mi",
    ]
    assert all(t.hard and t.min_reclaim is None for t in cfg.thresholds)
    assert (cfg.max_pod_grace_period, cfg.pressure_transition_period) == (0, 300.0)
    assert DEFAULT_EVICTION_HARD["memory.available"] == "100Mi"


@pytest.mark.parametrize(
    "hard, expected",
    [
        # A given evictionHard replaces the defaults, except memory.available (kubemu, as node.py).
        ({"nodefs.available": "5%"}, ["memory.available<100Mi", "nodefs.available<5%"]),
        ({}, ["memory.available<100Mi"]),
        ({"memory.available": "1Gi", "pid.available": 1000}, ["memory.available<1Gi", "pid.available<1k"]),
        ({"memory.available": "0%"}, []),  # "0%" and "100%" are ignored
        ({"memory.available": "100%", "nodefs.inodesFree": "0%"}, []),
        (
            {"memory.available": "500M", "imagefs.available": "2.5%"},
            ["memory.available<500M", "imagefs.available<2.5%"],
        ),
    ],
)
def test_eviction_hard_replaces_defaults_but_keeps_memory(hard, expected):
    cfg = config(evictionHard=hard, enforceNodeAllocatable=[])
    assert described(cfg) == expected


def test_allocatable_copy_only_of_hard_memory_and_only_when_pods_are_enforced():
    soft = {"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "1m"}}
    assert described(config(**soft)).count("allocatableMemory.available<100Mi") == 1
    assert "allocatableMemory.available<1Gi for 60s" not in described(config(**soft))
    assert not any("allocatable" in d for d in described(config(enforceNodeAllocatable=["system-reserved"])))


def test_soft_thresholds_grace_periods_min_reclaim_and_durations():
    cfg = config(
        evictionHard={"memory.available": "100Mi"},
        evictionSoft={"memory.available": "1Gi", "nodefs.available": "20%"},
        evictionSoftGracePeriod={"memory.available": "1m30s", "nodefs.available": 45, "pid.available": "5m"},
        evictionMinimumReclaim={"memory.available": "500Mi", "nodefs.available": "5%"},
        evictionMaxPodGracePeriod=60,
        evictionPressureTransitionPeriod="30s",
        enforceNodeAllocatable=[],
    )
    assert described(cfg) == ["memory.available<100Mi", "memory.available<1Gi for 90s", "nodefs.available<20% for 45s"]
    reclaim = [t.min_reclaim for t in cfg.thresholds]
    assert reclaim[0] == reclaim[1] == ThresholdValue(quantity=500 * MI, text="500Mi")
    assert reclaim[2].amount(1000) == 50
    assert (cfg.max_pod_grace_period, cfg.pressure_transition_period) == (60, 30.0)


def test_percentage_amounts_use_upstreams_float32_fraction():
    value = config(evictionHard={"nodefs.available": "10%"}).thresholds[1].value
    # float32(0.1) is slightly above 0.1: upstream's threshold is 160 bytes above an exact 10%.
    assert value.amount(100 * GI) == 10_737_418_400
    assert value.amount(1000) == 100
    assert ThresholdValue(quantity=7).amount(10**12) == 7


def test_zero_minimum_reclaim_quantity_is_allowed():
    cfg = config(
        evictionHard={"memory.available": "1Gi"},
        evictionMinimumReclaim={"memory.available": "0"},
        enforceNodeAllocatable=[],
    )
    assert cfg.thresholds[0].min_reclaim.amount(GI) == 0


@pytest.mark.parametrize(
    "kubelet, message",
    [
        (
            {"evictionSoft": {"memory.available": "abc"}, "evictionSoftGracePeriod": {"memory.available": "1m"}},
            'kubelet.evictionSoft.memory.available: "abc" is not a quantity or percentage',
        ),
        (
            {"evictionHard": {"memory.available": "ten%"}},
            'kubelet.evictionHard.memory.available: "ten%" is not a quantity or percentage',
        ),
        (
            {"evictionHard": {"memory.available": True}},
            "kubelet.evictionHard.memory.available: true is not a quantity or percentage",
        ),
        ({"evictionHard": {"memory.available": "0"}}, 'kubelet.evictionHard.memory.available: "0" must be positive'),
        (
            {"evictionHard": {"memory.available": "-1Gi"}},
            'kubelet.evictionHard.memory.available: "-1Gi" must be positive',
        ),
        (
            {"evictionHard": {"nodefs.available": "150%"}},
            'kubelet.evictionHard.nodefs.available: "150%" must be between 0% and 100%',
        ),
        (
            {"evictionHard": {"nodefs.available": "-5%"}},
            'kubelet.evictionHard.nodefs.available: "-5%" must be between 0% and 100%',
        ),
        ({"evictionHard": {"memory.bogus": "1Gi"}}, 'kubelet.evictionHard: unsupported eviction signal "memory.bogus"'),
        (
            {"evictionHard": "memory.available<1Gi"},
            'kubelet.evictionHard: "memory.available<1Gi" is not a mapping of eviction signal to value',
        ),
        (
            {"evictionSoft": {"memory.available": "1Gi"}},
            'kubelet.evictionSoft.memory.available: "1Gi": grace period must be specified for the soft '
            "eviction threshold memory.available",
        ),
        (
            {"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"nodefs.available": "1m"}},
            'kubelet.evictionSoft.memory.available: "1Gi": grace period must be specified for the soft '
            "eviction threshold memory.available",
        ),
        (
            {"evictionSoftGracePeriod": {"memory.available": "soon"}},
            'kubelet.evictionSoftGracePeriod.memory.available: "soon" is not a duration (use e.g. 30s, 5m, 1m30s)',
        ),
        (
            {"evictionSoftGracePeriod": {"memory.available": "-1m"}},
            'kubelet.evictionSoftGracePeriod.memory.available: "-1m" is not a duration (use e.g. 30s, 5m, 1m30s)',
        ),
        (
            {"evictionSoftGracePeriod": {"disk.available": "1m"}},
            'kubelet.evictionSoftGracePeriod: unsupported eviction signal "disk.available"',
        ),
        (
            {"evictionMinimumReclaim": {"memory.available": "0%"}},
            'kubelet.evictionMinimumReclaim.memory.available: "0%" must be a positive percentage',
        ),
        (
            {"evictionMinimumReclaim": {"memory.available": "-1Mi"}},
            'kubelet.evictionMinimumReclaim.memory.available: "-1Mi" must not be negative',
        ),
        (
            {"evictionMinimumReclaim": {"memory.available": "lots"}},
            'kubelet.evictionMinimumReclaim.memory.available: "lots" is not a quantity or percentage',
        ),
        (
            {"evictionMinimumReclaim": {"swap.available": "1Gi"}},
            'kubelet.evictionMinimumReclaim: unsupported eviction signal "swap.available"',
        ),
        (
            {"evictionMaxPodGracePeriod": "30s"},
            'kubelet.evictionMaxPodGracePeriod: "30s" is not a whole number of seconds >= 0',
        ),
        (
            {"evictionMaxPodGracePeriod": -1},
            "kubelet.evictionMaxPodGracePeriod: -1 is not a whole number of seconds >= 0",
        ),
        (
            {"evictionPressureTransitionPeriod": "5 minutes"},
            'kubelet.evictionPressureTransitionPeriod: "5 minutes" is not a duration (use e.g. 30s, 5m, 1m30s)',
        ),
        ({"enforceNodeAllocatable": "pods"}, 'kubelet.enforceNodeAllocatable: "pods" is not a list'),
    ],
)
def test_config_errors_name_the_field_and_value(kubelet, message):
    with pytest.raises(EvictionConfigError) as err:
        parse_eviction_config(kubelet)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError)


def test_ignored_soft_threshold_needs_no_grace_period():
    assert described(config(evictionHard={}, evictionSoft={"memory.available": "0%"}, enforceNodeAllocatable=[])) == [
        "memory.available<100Mi"
    ]


@pytest.mark.parametrize(
    "amount, style, text",
    [
        (0, "BinarySI", "0"),
        (1000, "BinarySI", "1k"),
        (1023, "BinarySI", "1023"),
        (1024, "BinarySI", "1Ki"),
        (1500, "BinarySI", "1500"),
        (100 * MI, "BinarySI", "100Mi"),
        (1536 * MI, "BinarySI", "1536Mi"),
        (8 * 2**60, "BinarySI", "8Ei"),
        (-2048, "BinarySI", "-2Ki"),
        (1000, "DecimalSI", "1k"),
        (1500, "DecimalSI", "1500"),
        (1_500_000, "DecimalSI", "1500k"),
        (2 * 10**9, "DecimalSI", "2G"),
        (-5000, "DecimalSI", "-5k"),
        (2000, "DecimalExponent", "2e3"),
        (7, "DecimalExponent", "7"),
    ],
)
def test_quantity_string_matches_upstream_canonical_forms(amount, style, text):
    assert quantity_string(amount, style) == text


@pytest.mark.parametrize(
    "raw, text",
    [
        ("100Mi", "100Mi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("128M", "128M"),
        ("1000", "1k"),
        (1000, "1k"),
        ("1e9", "1e9"),
        ("1E", "1E"),
        (None, "0"),
        ("512Ki", "512Ki"),
    ],
)
def test_declared_quantities_keep_their_format(raw, text):
    assert declared_string(raw) == text


# ---- observations and thresholds met --------------------------------------------------------


def test_observations():
    stats = NodeStats(
        memory_capacity=8 * GI,
        memory_working_set=6 * GI,
        allocatable_memory=7 * GI,
        pods_working_set=5 * GI,
        nodefs_capacity=100 * GI,
        nodefs_available=40 * GI,
        nodefs_inodes=1000,
        nodefs_inodes_free=300,
        pid_max=4096,
        pid_running=100,
    )
    obs = observe(stats)
    assert obs == {
        "memory.available": Observation(2 * GI, 8 * GI),
        "allocatableMemory.available": Observation(2 * GI, 7 * GI),
        "nodefs.available": Observation(40 * GI, 100 * GI),
        "nodefs.inodesFree": Observation(300, 1000),
        # no dedicated imagefs: the image signals see nodefs
        "imagefs.available": Observation(40 * GI, 100 * GI),
        "imagefs.inodesFree": Observation(300, 1000),
        "pid.available": Observation(3996, 4096),
    }


def test_observations_dedicated_imagefs_overcommitted_memory_and_unmeasured_signals():
    stats = NodeStats(
        memory_capacity=GI,
        memory_working_set=GI + MI,
        nodefs_capacity=10,
        nodefs_available=5,
        imagefs_capacity=50,
        imagefs_available=20,
        imagefs_inodes=9,
        imagefs_inodes_free=1,
    )
    assert observe(stats) == {
        # available is floored at 0, so capacity is the working set (upstream: available + working set)
        "memory.available": Observation(0, GI + MI),
        "nodefs.available": Observation(5, 10),
        "imagefs.available": Observation(20, 50),
        "imagefs.inodesFree": Observation(1, 9),
    }
    assert observe(NodeStats()) == {}


def test_thresholds_met_is_strict_and_adds_min_reclaim_only_when_enforced():
    t = Threshold("memory.available", ThresholdValue(quantity=100), min_reclaim=ThresholdValue(quantity=50))
    pct = Threshold("nodefs.available", ThresholdValue(fraction=0.5), min_reclaim=ThresholdValue(fraction=0.25))
    cases = [  # (memory available, nodefs available, enforce, met signals)
        (99, 60, False, ["memory.available"]),
        (100, 49, False, ["nodefs.available"]),  # 100 > 100 is false
        (120, 60, False, []),
        (120, 60, True, ["memory.available", "nodefs.available"]),  # 150 > 120, 75 > 60
        (150, 75, True, []),
    ]
    for mem, disk, enforce, expected in cases:
        obs = {"memory.available": Observation(mem, 1000), "nodefs.available": Observation(disk, 100)}
        assert [x.signal for x in thresholds_met([t, pct], obs, enforce)] == expected, (mem, disk, enforce)
    assert thresholds_met([t], {}, False) == []  # an unobserved signal is never met


# ---- synchronize ----------------------------------------------------------------------------


HARD_MEMORY = {"evictionHard": {"memory.available": "100Mi"}, "enforceNodeAllocatable": []}


def test_hard_threshold_evicts_at_once_with_the_upstream_message():
    m = EvictionManager(config(**HARD_MEMORY))
    pods = [
        pod("guaranteed", usage=GI, request=GI),
        pod(
            "hog",
            containers=[
                ContainerStats("a", 200 * MI, "100Mi"),
                ContainerStats("b", 10 * MI, "64Mi"),
                ContainerStats("c", 300 * MI),
            ],
            usage=510 * MI,
            request=164 * MI,
        ),
    ]
    r = m.synchronize(0.0, mem_node(50 * MI), pods)
    assert r.conditions == ("MemoryPressure",) == m.conditions
    assert [t.describe() for t in r.thresholds_met] == ["memory.available<100Mi"]
    assert r.thresholds_pending == ()
    ev = r.eviction
    assert (ev.uid, ev.namespace, ev.name, ev.reason, ev.resource) == ("uid-hog", "default", "hog", "Evicted", "memory")
    assert ev.grace_period == IMMEDIATE_EVICTION_GRACE_PERIOD == 1
    assert ev.message == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container a was using 200Mi, request is 100Mi, has larger consumption of memory. "
        "Container c was using 300Mi, request is 0, has larger consumption of memory. "
    )
    assert ev.annotations() == {
        "offending_containers": "a,c",
        "offending_containers_usage": "200Mi,300Mi",
        "starved_resource": "memory",
    }
    assert EVICTION_MONITORING_PERIOD == 10.0


def test_no_pressure_no_eviction():
    m = EvictionManager(config(**HARD_MEMORY))
    r = m.synchronize(0.0, mem_node(100 * MI), [pod("a", usage=GI)])  # exactly at the threshold: not met
    assert (r.conditions, r.thresholds_met, r.eviction) == ((), (), None)


SOFT_MEMORY = {
    "evictionHard": {"memory.available": "100Mi"},
    "evictionSoft": {"memory.available": "1Gi"},
    "evictionSoftGracePeriod": {"memory.available": "90s"},
    "evictionMaxPodGracePeriod": 30,
    "enforceNodeAllocatable": [],
}


def test_soft_threshold_evicts_only_after_its_grace_period():
    m = EvictionManager(config(**SOFT_MEMORY))
    pods = [pod("a", usage=GI, grace=10), pod("b", usage=2 * GI, grace=60)]
    steps = []
    for now in (0.0, 10.0, 80.0, 90.0):
        r = m.synchronize(now, mem_node(512 * MI), pods)
        steps.append((now, r.conditions, len(r.thresholds_pending), r.eviction and r.eviction.name))
    assert steps == [
        (0.0, ("MemoryPressure",), 1, None),
        (10.0, ("MemoryPressure",), 1, None),
        (80.0, ("MemoryPressure",), 1, None),
        (90.0, ("MemoryPressure",), 0, "b"),
    ]
    assert r.eviction.grace_period == 30  # min(evictionMaxPodGracePeriod 30, pod's 60)
    r = m.synchronize(100.0, mem_node(512 * MI), [pods[0]])
    assert r.eviction.grace_period == 10  # min(30, pod's 10)
    r = m.synchronize(110.0, mem_node(512 * MI), [pod("c", usage=GI)])
    assert r.eviction.grace_period == 30  # pod grace unknown: the config's maximum


def test_soft_grace_restarts_when_the_signal_clears_in_between():
    m = EvictionManager(config(**SOFT_MEMORY))
    pods = [pod("a", usage=GI)]
    assert m.synchronize(0.0, mem_node(512 * MI), pods).eviction is None
    assert m.synchronize(50.0, mem_node(2 * GI), pods).thresholds_pending == ()
    assert m.synchronize(60.0, mem_node(512 * MI), pods).eviction is None
    assert m.synchronize(140.0, mem_node(512 * MI), pods).eviction is None
    assert m.synchronize(150.0, mem_node(512 * MI), pods).eviction.name == "a"


def test_hard_wins_over_soft_on_the_same_signal():
    m = EvictionManager(config(**SOFT_MEMORY))
    r = m.synchronize(0.0, mem_node(50 * MI), [pod("a", usage=GI, grace=60)])
    assert [t.describe() for t in r.thresholds_met] == ["memory.available<100Mi"]
    assert [t.describe() for t in r.thresholds_pending] == ["memory.available<1Gi for 90s"]
    assert r.eviction.grace_period == 1
    assert "Threshold quantity: 100Mi, available: 50Mi. " in r.eviction.message


def test_min_reclaim_keeps_a_met_threshold_until_enough_is_free():
    m = EvictionManager(config(**HARD_MEMORY, evictionMinimumReclaim={"memory.available": "200Mi"}))
    pods = [pod("a", usage=GI)]
    trace = [
        (now, bool(m.synchronize(now, mem_node(free), pods).eviction))
        for now, free in ((0.0, 90 * MI), (10.0, 250 * MI), (20.0, 299 * MI), (30.0, 300 * MI), (40.0, 250 * MI))
    ]
    # Once acted on, memory.available stays met while available < 100Mi + 200Mi; after it
    # clears the plain 100Mi threshold applies again.
    assert trace == [(0.0, True), (10.0, True), (20.0, True), (30.0, False), (40.0, False)]


def test_pressure_condition_stays_for_the_transition_period():
    m = EvictionManager(config(**HARD_MEMORY))
    seen = {
        now: m.synchronize(now, mem_node(50 * MI if now in (0.0, 20.0) else GI), []).conditions
        for now in (0.0, 10.0, 20.0, 30.0, 310.0, 319.0, 320.0, 330.0)
    }
    assert seen == {
        0.0: ("MemoryPressure",),
        10.0: ("MemoryPressure",),
        20.0: ("MemoryPressure",),
        30.0: ("MemoryPressure",),
        310.0: ("MemoryPressure",),
        319.0: ("MemoryPressure",),
        320.0: (),
        330.0: (),
    }


def test_transition_period_is_configurable_and_zero_hides_conditions_as_upstream():
    short = EvictionManager(config(**HARD_MEMORY, evictionPressureTransitionPeriod="30s"))
    assert short.synchronize(0.0, mem_node(50 * MI), []).conditions == ("MemoryPressure",)
    assert short.synchronize(29.0, mem_node(GI), []).conditions == ("MemoryPressure",)
    assert short.synchronize(30.0, mem_node(GI), []).conditions == ()
    zero = EvictionManager(config(**HARD_MEMORY, evictionPressureTransitionPeriod="0s"))
    r = zero.synchronize(0.0, mem_node(50 * MI), [pod("a", usage=GI)])
    assert (r.conditions, r.eviction.name) == ((), "a")


def test_conditions_per_signal_in_fixed_order():
    m = EvictionManager(
        config(
            evictionHard={"memory.available": "100Mi", "nodefs.available": "10%", "pid.available": "100"},
            enforceNodeAllocatable=[],
        )
    )
    stats = NodeStats(
        memory_capacity=GI,
        memory_working_set=GI,
        nodefs_capacity=100,
        nodefs_available=5,
        pid_max=1000,
        pid_running=950,
    )
    r = m.synchronize(0.0, stats, [pod("a", usage=MI, disk=10, processes=40)])
    assert r.conditions == ("MemoryPressure", "DiskPressure", "PIDPressure")
    assert [t.signal for t in r.thresholds_met] == ["memory.available", "nodefs.available", "pid.available"]
    assert r.eviction.resource == "memory"  # memory is reclaimed first


def test_disk_before_pid_and_disk_message():
    m = EvictionManager(config(evictionHard={"nodefs.available": "10Gi", "pid.available": "100"}))
    stats = NodeStats(
        memory_capacity=8 * GI, nodefs_capacity=100 * GI, nodefs_available=5 * GI, pid_max=1000, pid_running=950
    )
    pods = [
        pod("small", disk=GI),
        pod(
            "big", containers=[ContainerStats("c", disk_usage=2 * GI, disk_request="1Gi")], disk=3 * GI, disk_request=GI
        ),
    ]
    ev = m.synchronize(0.0, stats, pods).eviction
    assert (ev.name, ev.resource) == ("big", "ephemeral-storage")
    assert ev.message == (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, "
        "available: 5Gi. Container c was using 2Gi, request is 1Gi, has larger consumption "
        "of ephemeral-storage. "
    )


def test_inode_and_pid_messages_have_no_container_part_and_decimal_counts():
    inode = EvictionManager(config(evictionHard={"nodefs.inodesFree": "1000"}, enforceNodeAllocatable=[]))
    ev = inode.synchronize(0.0, disk_node(inodes=10_000, inodes_free=500), [pod("a", inodes=5)]).eviction
    assert ev.message == "The node was low on resource: inodes. Threshold quantity: 1k, available: 500. "
    pct = EvictionManager(config(evictionHard={"pid.available": "10%"}, enforceNodeAllocatable=[]))
    ev = pct.synchronize(0.0, NodeStats(pid_max=4096, pid_running=4000), [pod("a", processes=3)]).eviction
    # A percentage threshold prints as a binary quantity, as upstream's GetThresholdQuantity makes it.
    assert ev.message == "The node was low on resource: pids. Threshold quantity: 409, available: 96. "
    assert (ev.resource, ev.offending_containers) == ("pids", ())


def test_critical_pods_are_never_evicted():
    m = EvictionManager(config(**HARD_MEMORY))
    node = mem_node(50 * MI)
    critical = pod("system", usage=4 * GI, priority=2_000_000_000)
    static = pod("static", usage=3 * GI, static=True)
    assert critical.critical and static.critical and not pod("x", priority=1_999_999_999).critical
    r = m.synchronize(0.0, node, [critical, static])
    assert (r.conditions, r.eviction) == (("MemoryPressure",), None)
    r = m.synchronize(10.0, node, [critical, static, pod("user", usage=MI, request=GI, priority=1000)])
    assert r.eviction.name == "user"


def test_at_most_one_pod_per_call():
    m = EvictionManager(config(**HARD_MEMORY))
    pods = [pod(f"p{i}", usage=GI) for i in range(5)]
    evicted = [m.synchronize(10.0 * i, mem_node(MI), pods[i:]).eviction.name for i in range(5)]
    assert evicted == ["p0", "p1", "p2", "p3", "p4"]  # ties fall back to namespace/name


# ---- ranking --------------------------------------------------------------------------------


def test_memory_ranking():
    pods = [
        pod("guaranteed", usage=GI, request=GI),
        pod("burstable-under", usage=100 * MI, request=GI),
        pod("burstable-over", usage=2 * GI, request=GI),
        pod("best-effort", usage=500 * MI),
        pod("best-effort-big", usage=900 * MI),
        pod("best-effort-high", usage=2 * GI, priority=100),
        pod("best-effort-low", usage=MI, priority=-5),
        pod("unmeasured", measured=False, priority=10),
        pod("unmeasured-low", measured=False, priority=1),
    ]
    assert names(rank_pods("memory.available", pods)) == [
        "unmeasured-low",
        "unmeasured",  # no stats first, then by priority
        "best-effort-low",  # over request: lower priority first
        "burstable-over",
        "best-effort-big",
        "best-effort",  # then larger excess over request first
        "best-effort-high",
        "guaranteed",
        "burstable-under",  # within requests last: excess 0 before -924Mi
    ]
    assert names(rank_pods("allocatableMemory.available", pods)) == names(rank_pods("memory.available", pods))


def test_memory_ranking_priority_beats_excess_within_a_group():
    pods = [
        pod("huge-high", usage=8 * GI, priority=1),
        pod("tiny-low", usage=MI, priority=0),
        pod("b", usage=MI, ns="a"),
        pod("a", usage=MI, ns="b"),
    ]
    assert names(rank_pods("memory.available", pods)) == ["b", "a", "tiny-low", "huge-high"]


def test_pid_ranking_priority_first_then_no_stats_then_process_count():
    pods = [
        pod("many", processes=500, priority=10),
        pod("few-low", processes=2),
        pod("more-low", processes=50),
        pod("unmeasured-high", measured=False, priority=10),
        pod("unmeasured", measured=False),
    ]
    assert names(rank_pods("pid.available", pods)) == ["unmeasured", "more-low", "few-low", "unmeasured-high", "many"]


def test_disk_ranking():
    pods = [
        pod("within", disk=GI, disk_request=2 * GI),
        pod("over", disk=3 * GI, disk_request=GI),
        pod("over-more", disk=5 * GI, disk_request=GI),
        pod("over-low", disk=GI + 1, disk_request=GI, priority=-1),
        pod("unmeasured", measured=False, priority=5),
    ]
    for signal in ("nodefs.available", "imagefs.available"):
        assert names(rank_pods(signal, pods)) == ["unmeasured", "over-low", "over-more", "over", "within"]


def test_inode_ranking_uses_inode_counts_minus_the_storage_request_as_upstream():
    pods = [
        pod("no-inodes", inodes=0),
        pod("few", inodes=10),
        pod("many-but-requests", inodes=1000, disk_request=5000),
        pod("many", inodes=1000),
    ]
    # Every pod using an inode "exceeds" its (absent) inode request; the excess subtracts the
    # ephemeral-storage request from the inode count.
    assert names(rank_pods("nodefs.inodesFree", pods)) == ["many", "few", "many-but-requests", "no-inodes"]


# ---- admission under pressure and taints ----------------------------------------------------


MP_TOLERATION = {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    "qos, tolerations, critical, conditions, expected",
    [
        ("BestEffort", [], False, [], None),
        ("BestEffort", [], False, ["MemoryPressure"], ("Evicted", "The node had condition: [MemoryPressure]. ")),
        ("Burstable", [], False, ["MemoryPressure"], None),
        ("Guaranteed", [], False, ["MemoryPressure"], None),
        ("BestEffort", [MP_TOLERATION], False, ["MemoryPressure"], None),
        ("BestEffort", [{"operator": "Exists"}], False, ["MemoryPressure"], None),
        ("BestEffort", [{"key": "node.kubernetes.io/memory-pressure"}], False, ["MemoryPressure"], None),
        (
            "BestEffort",
            [{**MP_TOLERATION, "effect": "NoExecute"}],
            False,
            ["MemoryPressure"],
            ("Evicted", "The node had condition: [MemoryPressure]. "),
        ),
        (
            "BestEffort",
            [{"key": "node.kubernetes.io/memory-pressure", "value": "x"}],
            False,
            ["MemoryPressure"],
            ("Evicted", "The node had condition: [MemoryPressure]. "),
        ),
        ("BestEffort", [], True, ["MemoryPressure"], None),
        ("Guaranteed", [], False, ["DiskPressure"], ("Evicted", "The node had condition: [DiskPressure]. ")),
        (
            "Guaranteed",
            [MP_TOLERATION],
            False,
            ["PIDPressure", "MemoryPressure"],
            ("Evicted", "The node had condition: [MemoryPressure PIDPressure]. "),
        ),
        ("BestEffort", [], True, ["DiskPressure", "PIDPressure"], None),
    ],
)
def test_admit_under_pressure(qos, tolerations, critical, conditions, expected):
    assert admit(qos, tolerations, critical, conditions) == expected


def test_manager_admit_uses_its_current_conditions():
    m = EvictionManager(config(**HARD_MEMORY))
    assert m.admit("BestEffort", None, False) is None
    m.synchronize(0.0, mem_node(MI), [])
    assert m.admit("BestEffort", None, False) == ("Evicted", "The node had condition: [MemoryPressure]. ")
    assert m.admit("Burstable", None, False) is None


def test_condition_taints():
    assert CONDITION_TAINTS == {
        "MemoryPressure": "node.kubernetes.io/memory-pressure",
        "DiskPressure": "node.kubernetes.io/disk-pressure",
        "PIDPressure": "node.kubernetes.io/pid-pressure",
    }
