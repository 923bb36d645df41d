import pytest

from cluster.kubelet import NodeConfig
from cluster.kubelet.admission import NodeView, admit
from cluster.kubelet.cpumanager import (
    CpuAllocationError,
    CpuManager,
    CpusetError,
    Topology,
    format_cpuset,
    parse_cpuset,
    take_by_topology,
)


def container(name, cpu, memory="64Mi", limit_cpu=None, restart=None):
    res = {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": limit_cpu or cpu, "memory": memory}}
    c = {"name": name, "image": "x", "resources": res}
    if restart:
        c["restartPolicy"] = restart
    return c


def pod(uid, *containers, init=()):
    spec = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"metadata": {"name": uid, "namespace": "default", "uid": uid}, "spec": spec}


def static(cpus=8, reserved_milli=1000, **kw):
    return CpuManager(cpus, reserved_milli, policy="static", **kw)


# ---- cpuset strings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, cpus",
    [
        ("", set()),
        ("0", {0}),
        ("0-3", {0, 1, 2, 3}),
        ("0-3,5,7-8", {0, 1, 2, 3, 5, 7, 8}),
        ("3,1,2", {1, 2, 3}),
        ("2-2", {2}),
        ("1,1", {1}),
    ],
)
def test_parse_cpuset(text, cpus):
    assert parse_cpuset(text) == cpus


@pytest.mark.parametrize(
    "cpus, text",
    [
        (set(), ""),
        ({0}, "0"),
        ({0, 1}, "0-1"),
        ({0, 1, 2, 3, 5, 7, 8}, "0-3,5,7-8"),
        ({9, 3, 4, 5}, "3-5,9"),
    ],
)
def test_format_cpuset_round_trips(cpus, text):
    assert format_cpuset(cpus) == text
    assert parse_cpuset(text) == cpus


@pytest.mark.parametrize(
    "bad, message",
    [
        ("0-", "'0-' is not a cpuset (use e.g. 0-3,5,7-8)"),
        ("a", "'a' is not a cpuset (use e.g. 0-3,5,7-8)"),
        ("1,,2", "'1,,2' is not a cpuset (use e.g. 0-3,5,7-8)"),
        (" 1", "' 1' is not a cpuset (use e.g. 0-3,5,7-8)"),
        ("-1", "'-1' is not a cpuset (use e.g. 0-3,5,7-8)"),
        ("3-1", "'3-1' is not a cpuset: range '3-1' runs backwards"),
        (3, "3 is not a cpuset (use e.g. 0-3,5,7-8)"),
    ],
)
def test_bad_cpuset_names_the_value(bad, message):
    with pytest.raises(CpusetError) as e:
        parse_cpuset(bad)
    assert str(e.value) == message


# ---- topology --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tpc, available, n, want",
    [
        (1, "0-7", 3, "0-2"),
        (1, "1,3,5", 2, "1,3"),
        (1, "0-3", 5, None),
        (2, "0-7", 2, "0-1"),  # one whole core
        (2, "1-7", 2, "2-3"),  # a whole core beats the half-free core 0
        (2, "1-7", 3, "1-3"),  # one whole core, then the lone thread of the half-used core
        (2, "1-7", 1, "1"),  # a single CPU packs the half-used core
        (2, "0-2,4-7", 4, "0-1,4-5"),  # whole cores, lowest first
        (2, "0-2,4-7", 5, "0-2,4-5"),
        (2, "0-6", 7, "0-6"),
    ],
)
def test_take_by_topology(tpc, available, n, want):
    got = take_by_topology(Topology(8, tpc), parse_cpuset(available), n)
    assert (None if got is None else format_cpuset(got)) == want


def test_odd_cpu_count_has_a_one_thread_last_core():
    topo = Topology(5, 2)
    assert topo.core_size(2) == 1
    # CPU 4 is a whole (one-thread) core, and whole cores go first
    assert format_cpuset(take_by_topology(topo, frozenset({1, 4}), 1)) == "4"
    assert format_cpuset(take_by_topology(topo, frozenset({1, 2, 4}), 2)) == "1,4"


# ---- construction ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw, reserved",
    [
        ({"reserved_milli": 100}, "0"),
        ({"reserved_milli": 1500}, "0-1"),
        ({"reserved_milli": 2000, "threads_per_core": 2}, "0-1"),
        ({"reserved_milli": 1000, "threads_per_core": 2}, "0"),
        ({"reserved_milli": 100, "reserved_cpus": "6-7"}, "6-7"),
    ],
)
def test_reserved_cpus(kw, reserved):
    cm = CpuManager(8, policy="static", **kw)
    assert format_cpuset(cm.reserved) == reserved
    assert cm.shared_pool() == "0-7"  # reserved CPUs stay in the shared pool


def test_fractional_capacity_rounds_down():
    assert CpuManager("3500m", 1000, policy="static").shared_pool() == "0-2"
    assert CpuManager(2.9).shared_pool() == "0-1"


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"policy": "Static"}, "cpuManagerPolicy: 'Static' is not a CPU manager policy (use none or static)"),
        (
            {"policy": "static"},
            'cpuManagerPolicy: "static" needs a cpu reservation greater than zero (reserved cpu, or reservedSystemCPUs)',
        ),
        (
            {"policy": "static", "reserved_cpus": "0-x"},
            "reservedSystemCPUs: '0-x' is not a cpuset (use e.g. 0-3,5,7-8)",
        ),
        (
            {"policy": "static", "reserved_cpus": "2-5"},
            "reservedSystemCPUs: '2-5' names CPUs the node does not have (4-5; it has 4)",
        ),
        ({"policy": "static", "reserved_milli": 4500}, "reserved.cpu: 4500m needs 5 whole CPU(s); the node has 4"),
        ({"reserved_milli": -1}, "reserved.cpu: -1m must be greater than or equal to 0"),
        ({"threads_per_core": 0}, "threads_per_core: 0 must be a whole number >= 1"),
    ],
)
def test_bad_configuration_is_one_line_naming_the_field(kw, message):
    with pytest.raises(ValueError) as e:
        CpuManager(4, **kw)
    assert str(e.value) == message


def test_bad_capacity():
    with pytest.raises(ValueError, match=r"^capacity.cpu: '4x' is not a quantity$"):
        CpuManager("4x")


def test_from_node_config():
    cfg = NodeConfig(
        "n", {"cpu": "4", "memory": "8Gi"}, reserved={"cpu": "100m"}, kubelet={"cpuManagerPolicy": "static"}
    )
    cm = CpuManager.from_node_config(cfg)
    assert (cm.policy, format_cpuset(cm.reserved), cm.shared_pool()) == ("static", "0", "0-3")
    cfg = NodeConfig("n", {"cpu": "4"}, kubelet={"cpuManagerPolicy": "static", "reservedSystemCPUs": "3"})
    assert format_cpuset(CpuManager.from_node_config(cfg).reserved) == "3"
    assert CpuManager.from_node_config(NodeConfig("n", {"cpu": "4"})).policy == "none"
    with pytest.raises(ValueError, match=r"^reserved.cpu: '1x' is not a quantity$"):
        CpuManager.from_node_config(NodeConfig("n", {"cpu": "4"}, reserved={"cpu": "1x"}))


# ---- allocation ------------------------------------------------------------------------------


def test_none_policy_gives_nothing():
    cm = CpuManager(8)
    assert cm.allocate("a", pod("a", container("c", "2"))) == {}
    assert cm.cpuset_of("a") is None
    assert cm.checkpoint() == {"policyName": "none", "defaultCpuSet": "", "entries": {}}


def test_guaranteed_integer_cpu_gets_exclusive_cpus_and_release_returns_them():
    cm = static()
    assert cm.allocate("a", pod("a", container("c", "2"))) == {"c": "1-2"}
    assert cm.allocate("b", pod("b", container("c", "3"))) == {"c": "3-5"}
    assert cm.shared_pool() == "0,6-7"
    assert (cm.cpuset_of("a"), cm.cpuset_of("b")) == ("1-2", "3-5")
    cm.release("a")
    assert cm.shared_pool() == "0-2,6-7"
    assert cm.cpuset_of("a") is None
    assert cm.allocate("c", pod("c", container("c", "2"))) == {"c": "1-2"}


@pytest.mark.parametrize(
    "containers, why",
    [
        ([container("c", "1500m")], "fractional cpu"),
        ([container("c", "1", limit_cpu="2")], "Burstable"),
        ([{"name": "c", "image": "x"}], "BestEffort"),
    ],
)
def test_shared_pool_pods_get_the_pool(containers, why):
    cm = static()
    assert cm.allocate("a", pod("a", container("x", "2"))) == {"x": "1-2"}
    assert cm.allocate("s", pod("s", *containers)) == {}, why
    assert cm.cpuset_of("s") == "0,3-7"
    cm.release("a")
    assert cm.cpuset_of("s") == "0-7"  # the pool grows back, and so does the shared pod's set


def test_mixed_guaranteed_pod_has_its_cpus_plus_the_pool():
    cm = static()
    assert cm.allocate("m", pod("m", container("whole", "2"), container("part", "500m"))) == {"whole": "1-2"}
    assert cm.cpuset_of("m") == "0-7"
    assert cm.shared_pool() == "0,3-7"


def test_not_enough_cpus_is_an_unexpected_admission_error_and_changes_nothing():
    cm = static()
    cm.allocate("a", pod("a", container("c", "4")))
    with pytest.raises(CpuAllocationError) as e:
        cm.allocate("b", pod("b", container("c1", "2"), container("c2", "2")))
    assert e.value.rejection.reason == "UnexpectedAdmissionError"
    assert e.value.rejection.message == (
        "Allocate failed due to not enough cpus available to satisfy request: "
        "requested=2, available=1, which is unexpected"
    )
    assert cm.shared_pool() == "0,5-7"
    assert cm.cpuset_of("b") is None


def test_the_whole_node_minus_reserved():
    # upstream's policy test: 8 CPUs, 1 reserved, a pod asking for 8
    rej = static().admit("a", pod("a", container("c", "8")))
    assert rej.message == (
        "Allocate failed due to not enough cpus available to satisfy request: "
        "requested=8, available=7, which is unexpected"
    )
    assert static().admit("a", pod("a", container("c", "7"))) is None


def test_whole_cores_first_with_hyperthreads():
    cm = static(threads_per_core=2)  # reserves core 0 = CPU 0 only (1 CPU)
    assert cm.allocate("a", pod("a", container("c", "1"))) == {"c": "1"}  # packs core 0
    assert cm.allocate("b", pod("b", container("c", "2"))) == {"c": "2-3"}
    assert cm.allocate("c", pod("c", container("c", "3"))) == {"c": "4-6"}


def test_allocate_is_idempotent():
    cm = static()
    first = cm.allocate("a", pod("a", container("c", "2")))
    assert cm.allocate("a", pod("a", container("c", "2"))) == first
    assert cm.shared_pool() == "0,3-7"


def test_init_container_cpus_are_reused_and_the_rest_returned():
    cm = static()
    p = pod("a", container("app", "2"), init=[container("init", "4")])
    assert cm.allocate("a", p) == {"init": "1-4", "app": "1-2"}
    assert cm.shared_pool() == "0,3-7"
    assert cm.assignments() == {"a": {"app": "1-2"}}
    assert cm.cpuset_of("a") == "1-2"


def test_sidecar_cpus_are_kept_and_not_reused():
    cm = static()
    p = pod("a", container("app", "2"), init=[container("side", "1", restart="Always"), container("init", "2")])
    assert cm.allocate("a", p) == {"side": "1", "init": "2-3", "app": "2-3"}
    assert cm.assignments() == {"a": {"side": "1", "app": "2-3"}}
    assert cm.shared_pool() == "0,4-7"


def test_init_container_larger_than_free_cpus_fails():
    cm = static(cpus=4)
    rej = cm.admit("a", pod("a", container("app", "1"), init=[container("init", "4")]))
    assert rej.message.endswith("requested=4, available=3, which is unexpected")


# ---- admission chain -------------------------------------------------------------------------


def test_cpu_manager_runs_before_the_predicates_and_is_undone_by_them():
    view = NodeView("n", {"cpu": 8000, "memory": 2**30, "pods": 10}, {}, 0)
    cm = static()
    p = pod("a", container("c", "2"))
    assert admit(p, {"cpu": 2000, "memory": 64 * 2**20}, view, cpus=cm) is None
    assert cm.cpuset_of("a") == "1-2"
    # a pod failing both: upstream's resource-allocation handler comes first in the chain
    big = pod("b", container("c", "8"))
    assert admit(big, {"cpu": 8000}, view, cpus=cm).reason == "UnexpectedAdmissionError"
    # failing only a later check: the CPUs it got are handed back
    wrong = pod("w", container("c", "2"))
    wrong["spec"]["nodeName"] = "other"
    assert admit(wrong, {"cpu": 2000}, view, cpus=cm).reason == "NodeName"
    assert cm.shared_pool() == "0,3-7"
    assert cm.cpuset_of("w") is None


# ---- checkpoint ------------------------------------------------------------------------------


def test_checkpoint_round_trip():
    cm = static()
    cm.allocate("a", pod("a", container("c", "2")))
    cm.allocate("b", pod("b", container("x", "1"), container("y", "1")))
    state = cm.checkpoint()
    assert state == {
        "policyName": "static",
        "defaultCpuSet": "0,5-7",
        "entries": {"a": {"c": "1-2"}, "b": {"x": "3", "y": "4"}},
    }
    fresh = static()
    fresh.restore(state)
    assert fresh.checkpoint() == state
    assert fresh.cpuset_of("b") == "3-4"
    # re-admission after a restart keeps the same CPUs
    assert fresh.allocate("a", pod("a", container("c", "2"))) == {"c": "1-2"}
    fresh.release("b")
    assert fresh.shared_pool() == "0,3-7"


def test_restored_init_container_entries_are_freed_on_readmission():
    cm = static()
    # an upstream kubelet may checkpoint an init container's CPUs before it finished
    cm.restore({"policyName": "static", "defaultCpuSet": "0,5-7", "entries": {"a": {"init": "3-4", "app": "1-2"}}})
    p = pod("a", container("app", "2"), init=[container("init", "2")])
    assert cm.allocate("a", p) == {"app": "1-2"}
    assert cm.shared_pool() == "0,3-7"
    assert cm.cpuset_of("a") == "1-2"


def test_restore_of_an_empty_state_starts_fresh():
    cm = static()
    cm.restore({"policyName": "static", "defaultCpuSet": "", "entries": {}})
    assert cm.shared_pool() == "0-7"


@pytest.mark.parametrize(
    "state, message",
    [
        (
            {"policyName": "none"},
            "cpu_manager_state.policyName: configured policy 'static' differs from state checkpoint policy 'none'",
        ),
        (
            {"policyName": "static", "defaultCpuSet": "1-7"},
            "cpu_manager_state: not all reserved cpus '0' are present in defaultCpuSet '1-7'",
        ),
        (
            {"policyName": "static", "defaultCpuSet": "0-7", "entries": {"a": {"c": "1"}}},
            "cpu_manager_state: pod a container c cpuset '1' overlaps the defaultCpuSet or another assignment",
        ),
        (
            {"policyName": "static", "defaultCpuSet": "0-5"},
            "cpu_manager_state: the node's CPUs '0-7' do not match the CPUs in the state '0-5'",
        ),
        (
            {"policyName": "static", "defaultCpuSet": "0-x"},
            "cpu_manager_state.defaultCpuSet: '0-x' is not a cpuset (use e.g. 0-3,5,7-8)",
        ),
        (
            {"policyName": "static", "defaultCpuSet": "0-6", "entries": {"a": {"c": "7-"}}},
            "cpu_manager_state.entries[a][c]: '7-' is not a cpuset (use e.g. 0-3,5,7-8)",
        ),
    ],
)
def test_restore_rejects_inconsistent_state(state, message):
    cm = static()
    with pytest.raises(ValueError) as e:
        cm.restore(state)
    assert str(e.value) == message
    assert cm.shared_pool() == "0-7"
