"""ResourceQuota arithmetic against upstream's vectors: canonical quantities, what a pod,
a service, a claim and any other object use, scopes, and the admission check's messages
(``pkg/quota/v1/evaluator/core`` and the quota admission plugin's ``CheckRequest``)."""

from fractions import Fraction

import pytest

from cluster.api.quota import (
    Qty,
    QuotaRefusal,
    add,
    check,
    count_name,
    qty,
    quota_used,
    render,
    render_list,
    scope_matches,
    usage,
)
from cluster.clock import rfc3339


def pod(*containers, init=(), phase="Pending", pc="", deadline=None, deleted_at=None, grace=None):
    spec = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    if pc:
        spec["priorityClassName"] = pc
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    meta = {"name": "p", "namespace": "ns"}
    if deleted_at is not None:
        meta.update(deletionTimestamp=deleted_at, deletionGracePeriodSeconds=grace)
    return {"kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def c(name="c", requests=None, limits=None):
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": "x", "resources": res}


def quota(hard, used=None, scopes=None, selector=None, name="q"):
    spec = {"hard": hard}
    if scopes:
        spec["scopes"] = scopes
    if selector:
        spec["scopeSelector"] = {"matchExpressions": selector}
    status = {"hard": dict(hard), "used": dict(used if used is not None else {k: "0" for k in hard})}
    return {"kind": "ResourceQuota", "metadata": {"name": name, "namespace": "ns"}, "spec": spec, "status": status}


@pytest.mark.parametrize(
    "given,want",
    [
        ("700Mi", "700Mi"),
        ("1536Mi", "1536Mi"),
        ("1.5Gi", "1536Mi"),
        ("2048Mi", "2Gi"),
        ("1000m", "1"),
        ("1500m", "1500m"),
        ("0.5", "500m"),
        ("2000", "2k"),
        ("1G", "1G"),
        ("1e3", "1k"),
        ("10", "10"),
        ("0", "0"),
        ("512Ki", "512Ki"),
        ("0.5Ki", "512"),
    ],
)
def test_quantities_print_in_upstreams_canonical_form(given, want):
    assert render(qty(given)) == want


def test_a_sum_keeps_the_format_of_its_first_non_zero_operand():
    assert render(add(Qty(Fraction(0)), qty("64Mi"))) == "64Mi"
    assert add(qty("64Mi"), qty("1G")).binary
    assert not add(qty("1G"), qty("64Mi")).binary


def test_pod_usage_counts_effective_requests_and_limits_and_extended_resources_as_requests():
    p = pod(
        c("a", {"cpu": "250m", "memory": "64Mi", "nvidia.com/gpu": "1"}, {"cpu": "500m", "memory": "128Mi"}),
        c("b", {"cpu": "250m", "memory": "64Mi"}),
        init=[c("i", {"cpu": "1", "memory": "32Mi"})],
    )
    assert render_list(usage("Pod", p, 0)) == {
        "count/pods": "1",
        "pods": "1",
        "cpu": "1",  # the init container's 1 beats the sum 500m
        "requests.cpu": "1",
        "memory": "128Mi",
        "requests.memory": "128Mi",
        "limits.cpu": "500m",
        "limits.memory": "128Mi",
        "requests.nvidia.com/gpu": "1",
    }


@pytest.mark.parametrize(
    "kwargs,compute",
    [
        ({}, True),
        ({"phase": "Succeeded"}, False),
        ({"phase": "Failed"}, False),
        ({"deleted_at": rfc3339(10), "grace": 30}, True),  # within its grace: still charged
        ({"deleted_at": rfc3339(10), "grace": 0}, False),  # past it
    ],
)
def test_only_live_pods_are_charged_compute_but_every_pod_counts_in_count_pods(kwargs, compute):
    u = usage("Pod", pod(c(requests={"cpu": "1"}), **kwargs), now=20.0)
    assert u["count/pods"] == qty("1")
    assert ("pods" in u, "requests.cpu" in u) == (compute, compute)


@pytest.mark.parametrize(
    "kind,obj,want",
    [
        ("Service", {"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}}, {"count/services": "1", "services": "1"}),
        (
            "Service",
            {"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 443}]}},
            {"count/services": "1", "services": "1", "services.nodeports": "2"},
        ),
        (
            "Service",
            {"spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}},
            {"count/services": "1", "services": "1", "services.loadbalancers": "1", "services.nodeports": "1"},
        ),
        (
            "PersistentVolumeClaim",
            {"spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "5Gi"}}}},
            {
                "count/persistentvolumeclaims": "1",
                "persistentvolumeclaims": "1",
                "requests.storage": "5Gi",
                "gold.storageclass.storage.k8s.io/requests.storage": "5Gi",
                "gold.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
            },
        ),
        ("ConfigMap", {}, {"count/configmaps": "1", "configmaps": "1"}),
        ("Secret", {}, {"count/secrets": "1", "secrets": "1"}),
        ("Deployment", {}, {"count/deployments.apps": "1"}),
        ("Job", {}, {"count/jobs.batch": "1"}),
    ],
)
def test_object_usage(kind, obj, want):
    assert render_list(usage(kind, obj, 0)) == want


def test_count_names_qualify_the_group():
    assert (count_name("Pod"), count_name("Deployment"), count_name("CronJob")) == (
        "count/pods",
        "count/deployments.apps",
        "count/cronjobs.batch",
    )


BEST_EFFORT = pod(c())
BURSTABLE = pod(c(requests={"cpu": "1"}))


@pytest.mark.parametrize(
    "req,obj,want",
    [
        ({"scopeName": "Terminating", "operator": "Exists"}, pod(c(), deadline=30), True),
        ({"scopeName": "Terminating", "operator": "Exists"}, pod(c()), False),
        ({"scopeName": "NotTerminating", "operator": "Exists"}, pod(c()), True),
        ({"scopeName": "NotTerminating", "operator": "Exists"}, pod(c(), deadline=0), False),
        ({"scopeName": "BestEffort", "operator": "Exists"}, BEST_EFFORT, True),
        ({"scopeName": "BestEffort", "operator": "Exists"}, BURSTABLE, False),
        ({"scopeName": "NotBestEffort", "operator": "Exists"}, BURSTABLE, True),
        ({"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}, pod(c(), pc="high"), True),
        ({"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}, pod(c(), pc="low"), False),
        ({"scopeName": "PriorityClass", "operator": "NotIn", "values": ["high"]}, pod(c(), pc="low"), True),
        ({"scopeName": "PriorityClass", "operator": "NotIn", "values": ["high"]}, pod(c()), True),
        ({"scopeName": "PriorityClass", "operator": "Exists"}, pod(c(), pc="low"), True),
        ({"scopeName": "PriorityClass", "operator": "Exists"}, pod(c()), False),
        ({"scopeName": "PriorityClass", "operator": "DoesNotExist"}, pod(c()), True),
    ],
)
def test_pod_scopes(req, obj, want):
    assert scope_matches(req, "Pod", obj) is want


def test_a_scoped_quota_never_covers_objects_other_than_pods():
    assert not scope_matches({"scopeName": "BestEffort", "operator": "Exists"}, "Service", {"spec": {}})


def refusal(quotas, obj, kind="Pod", old=None) -> str:
    with pytest.raises(QuotaRefusal) as e:
        check(quotas, kind, obj, old, 0)
    return str(e.value)


def test_exceeded_quota_names_only_the_exceeded_resources_sorted():
    q = quota(
        {"pods": "10", "requests.memory": "1Gi", "requests.cpu": "4"},
        {"pods": "3", "requests.memory": "700Mi", "requests.cpu": "3"},
    )
    p = pod(c(requests={"cpu": "2", "memory": "400Mi"}))
    assert refusal([q], p) == (
        "exceeded quota: q, requested: requests.cpu=2,requests.memory=400Mi, "
        "used: requests.cpu=3,requests.memory=700Mi, limited: requests.cpu=4,requests.memory=1Gi"
    )


def test_the_eleventh_pod():
    q = quota({"pods": "10"}, {"pods": "10"})
    assert refusal([q], pod(c())) == "exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10"


def test_an_admitted_object_charges_every_covering_quota():
    a, b = quota({"pods": "10"}, {"pods": "3"}, name="a"), quota({"count/pods": "5", "cpu": "2"}, name="b")
    charged = check([a, b], "Pod", pod(c(requests={"cpu": "500m"})), None, 0)
    assert [(q["metadata"]["name"], render_list(u)) for q, u in charged] == [
        ("a", {"pods": "4"}),
        ("b", {"count/pods": "1", "cpu": "500m"}),
    ]


def test_a_quota_on_cpu_or_memory_requires_every_container_to_declare_it():
    q = quota({"requests.cpu": "4", "limits.memory": "4Gi"})
    p = pod(c("a", {"cpu": "1"}), c("b"), init=[c("init", limits={"memory": "1Gi"})])
    assert refusal([q], p) == "failed quota: q: must specify limits.memory for: a,b; requests.cpu for: b,init"


def test_a_quota_on_extended_resources_requires_nothing():
    q = quota({"requests.nvidia.com/gpu": "1"}, {"requests.nvidia.com/gpu": "1"})
    assert refusal([q], pod(c(requests={"nvidia.com/gpu": "1"}))) == (
        "exceeded quota: q, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, "
        "limited: requests.nvidia.com/gpu=1"
    )
    assert check([q], "Pod", pod(c()), None, 0) == []  # asks for none: not charged


def test_a_quota_whose_usage_is_not_known_refuses_what_it_covers():
    q = quota({"pods": "10", "count/pods": "10"}, {"pods": "0"})
    assert refusal([q], pod(c())) == "status unknown for quota: q, resources: count/pods,pods"


def test_a_quota_without_status_covers_nothing_yet():
    q = quota({"pods": "0"})
    del q["status"]
    assert check([q], "Pod", pod(c()), None, 0) == []


def test_a_scoped_quota_only_sees_pods_in_its_scopes():
    q = quota({"pods": "0"}, scopes=["BestEffort"])
    assert check([q], "Pod", BURSTABLE, None, 0) == []
    assert refusal([q], BEST_EFFORT).startswith("exceeded quota: q")
    high = quota({"pods": "0"}, selector=[{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}])
    assert check([high], "Pod", pod(c(), pc="low"), None, 0) == []
    assert refusal([high], pod(c(), pc="high")).startswith("exceeded quota: q")


def test_an_update_is_charged_its_growth_only():
    q = quota({"services.nodeports": "2", "services": "5"}, {"services.nodeports": "1", "services": "1"})
    old = {"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}}
    new = {"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}}
    assert refusal([q], new, "Service", old) == (
        "exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=1, limited: services.nodeports=2"
    )
    assert check([q], "Service", old, old, 0) == []  # no growth: nothing to charge


def test_object_count_quotas():
    q = quota({"count/deployments.apps": "1", "configmaps": "2"}, {"count/deployments.apps": "1", "configmaps": "0"})
    assert refusal([q], {"spec": {}}, "Deployment") == (
        "exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=1, "
        "limited: count/deployments.apps=1"
    )
    assert [render_list(u) for _, u in check([q], "ConfigMap", {}, None, 0)] == [
        {"configmaps": "1", "count/deployments.apps": "1"}
    ]


def test_the_controllers_figure_sums_what_stands_in_scope_masked_to_hard():
    q = quota({"pods": "10", "requests.memory": "2Gi", "count/configmaps": "3", "example.com/thing": "1"})
    q["status"]["used"] = {"example.com/thing": "1"}
    objects = [
        ("Pod", pod(c(requests={"memory": "64Mi"}))),
        ("Pod", pod(c(requests={"memory": "64Mi"}), phase="Succeeded")),
        ("ConfigMap", {}),
        ("Secret", {}),
    ]
    assert render_list(quota_used(q, objects, 0)) == {
        "pods": "1",
        "requests.memory": "64Mi",
        "count/configmaps": "1",
        "example.com/thing": "1",  # nobody measures it: what admission charged stays
    }
