import pytest

from cluster.kubelet.cgroups import (
    MIN_MILLI_CPU_LIMIT,
    milli_cpu_to_quota,
    milli_cpu_to_shares,
    pod_cgroup,
    quota_to_milli_cpu,
    shares_to_milli_cpu,
)

MI = 2**20


@pytest.mark.parametrize(
    "milli, shares",
    [
        (0, 2),
        (1, 2),
        (100, 102),
        (200, 204),
        (1000, 1024),
        (300_000, 262144),
    ],
)
def test_shares(milli, shares):
    assert milli_cpu_to_shares(milli) == shares


@pytest.mark.parametrize(
    "milli, quota",
    [
        (0, 0),
        (1, 1000),
        (5, 1000),
        (10, 1000),
        (11, 1100),
        (250, 25000),
        (2000, 200000),
    ],
)
def test_quota_has_a_floor_of_one_ms(milli, quota):
    assert milli_cpu_to_quota(milli) == quota


def test_quota_with_period_and_inverses():
    assert milli_cpu_to_quota(500, 50000) == 25000
    assert MIN_MILLI_CPU_LIMIT == 10
    assert shares_to_milli_cpu(102) == 100
    assert shares_to_milli_cpu(1) == 0
    assert quota_to_milli_cpu(25000) == 250
    assert quota_to_milli_cpu(-1) == 0


def _pod(*containers):
    return {"spec": {"containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(containers)]}}


def test_guaranteed_pod_cgroup():
    res = {"requests": {"cpu": "1500m", "memory": "256Mi"}, "limits": {"cpu": "1500m", "memory": "256Mi"}}
    assert pod_cgroup(_pod(res, res), "u1") == {
        "parent": "kubepods/podu1",
        "cpuShares": 3072,
        "cpuQuota": 300000,
        "cpuPeriod": 100000,
        "memoryLimit": 512 * MI,
    }


def test_burstable_with_all_limits_declared():
    res = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}
    assert pod_cgroup(_pod(res), "u2") == {
        "parent": "kubepods/burstable/podu2",
        "cpuShares": 102,
        "cpuQuota": 20000,
        "cpuPeriod": 100000,
        "memoryLimit": 128 * MI,
    }


def test_burstable_with_a_container_lacking_limits_sets_no_quota_or_memory():
    limited = {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m", "memory": "128Mi"}}
    unlimited = {"requests": {"cpu": "100m"}}
    assert pod_cgroup(_pod(limited, unlimited), "u3") == {
        "parent": "kubepods/burstable/podu3",
        "cpuShares": 204,
        "cpuQuota": None,
        "cpuPeriod": None,
        "memoryLimit": None,
    }


def test_burstable_cpu_limit_only():
    res = {"requests": {"memory": "64Mi"}, "limits": {"cpu": "1"}}
    assert pod_cgroup(_pod(res), "u4") == {
        "parent": "kubepods/burstable/podu4",
        "cpuShares": 2,
        "cpuQuota": 100000,
        "cpuPeriod": 100000,
        "memoryLimit": None,
    }


def test_best_effort_gets_only_minimum_shares():
    assert pod_cgroup(_pod({}), "u5") == {
        "parent": "kubepods/besteffort/podu5",
        "cpuShares": 2,
        "cpuQuota": None,
        "cpuPeriod": None,
        "memoryLimit": None,
    }


def test_init_container_max_rule_feeds_shares():
    pod = _pod({"requests": {"cpu": "100m"}})
    pod["spec"]["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": "2"}}}]
    assert pod_cgroup(pod, "u6")["cpuShares"] == 2048


@pytest.mark.parametrize(
    "resources, expected",
    [
        # requests and limits: shares from the request, quota from the limit
        (
            {"requests": {"cpu": "250m"}, "limits": {"cpu": "1", "memory": "128Mi"}},
            {"cpuShares": 256, "cpuQuota": 100000, "cpuPeriod": 100000, "memoryLimit": 128 * MI},
        ),
        # a limit alone: the request defaults to it
        ({"limits": {"cpu": "500m"}}, {"cpuShares": 512, "cpuQuota": 50000, "cpuPeriod": 100000, "memoryLimit": None}),
        # nothing: minimum shares, no quota (the period is still written), no memory limit
        ({}, {"cpuShares": 2, "cpuQuota": None, "cpuPeriod": 100000, "memoryLimit": None}),
        # an explicit request of 0 is kept (upstream defaults only a missing request to the limit)
        (
            {"requests": {"cpu": "0"}, "limits": {"cpu": "500m"}},
            {"cpuShares": 2, "cpuQuota": 50000, "cpuPeriod": 100000, "memoryLimit": None},
        ),
        # a tiny limit gets the 1 ms quota floor
        ({"limits": {"cpu": "5m"}}, {"cpuShares": 5, "cpuQuota": 1000, "cpuPeriod": 100000, "memoryLimit": None}),
    ],
)
def test_container_cgroup(resources, expected):
    from cluster.kubelet.cgroups import container_cgroup

    assert container_cgroup({"name": "c", "resources": resources}) == expected


def test_pod_cgroups_list_sidecars_and_app_containers_only():
    from cluster.kubelet.cgroups import pod_cgroups

    pod = {
        "spec": {
            "initContainers": [{"name": "setup"}, {"name": "proxy", "restartPolicy": "Always"}],
            "containers": [{"name": "app"}],
        }
    }
    assert list(pod_cgroups(pod, "u")["containers"]) == ["proxy", "app"]


def test_qos_cgroups():
    from cluster.kubelet.cgroups import qos_cgroups

    assert qos_cgroups(3500, 7 * 2**30, 1500) == {
        "kubepods": {"cpuShares": 3584, "memoryLimit": 7 * 2**30},
        "kubepods/burstable": {"cpuShares": 1536},
        "kubepods/besteffort": {"cpuShares": 2},
    }
    assert qos_cgroups(1000, None, 0)["kubepods/burstable"] == {"cpuShares": 2}


def test_pods_of_one_template_share_their_cgroup_values_and_keep_their_own_parent(driver, pod):
    """The kubelet keeps one copy of what pods of one template have alike; what each pod
    reports is still its own whole cgroup (its parent names its uid)."""
    from cluster.kubelet.cgroups import pod_cgroups

    d = driver()
    a, b = pod("a", cpu="100m", memory="64Mi"), pod("b", cpu="100m", memory="64Mi")
    other = pod("c", cpu="200m", memory="64Mi", limits={"cpu": "200m", "memory": "64Mi"})
    d.feed([("ADDED", a), ("ADDED", b), ("ADDED", other)], 0.0)
    kubelet = d.host.kubelet("node-0")
    recs = {p["metadata"]["name"]: kubelet._pods[p["metadata"]["uid"]] for p in (a, b, other)}
    assert recs["a"].cgroup is recs["b"].cgroup and recs["a"].requests is recs["b"].requests
    assert recs["c"].cgroup is not recs["a"].cgroup and recs["c"].cgroup["cpuQuota"] == 20000
    for p in (a, b, other):
        uid = p["metadata"]["uid"]
        assert kubelet.cgroup_of(uid) == pod_cgroups(p, uid, recs[p["metadata"]["name"]].qos)
    assert kubelet.cgroup_of(a["metadata"]["uid"])["parent"] == f"kubepods/burstable/pod{a['metadata']['uid']}"


def test_shared_keeps_an_unhashable_value_as_its_own():
    from cluster.kubelet.pods import shared

    odd = (("c", {"not": "hashable"}),)
    assert shared(odd) is odd
    # Built at run time (equal literals in one function may be one constant), and named
    # so that no other test's record holds an equal value in this process's table.
    first, again = (tuple([("only-this-test", f"{n}Mi")]) for n in (64, 64))
    assert first is not again and shared(first) is first and shared(again) is first
    unencodable = {"c": object()}
    assert shared(unencodable) is unencodable
