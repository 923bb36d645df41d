"""LimitRanger and ResourceQuota admission in the apiserver: refusals with upstream's 403
messages that store nothing, charges that the next create of the same write batch sees,
dry runs checked but not charged, defaults filled at pod create."""

from cluster.api.errors import Forbidden
from cluster.api.requests import Create, Update


def pod(name, memory="300Mi", ns="default", **spec):
    res = {"requests": {"memory": memory, "cpu": "100m"}} if memory else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": res}], **spec},
    }


def with_quota(api, hard, used=None):
    q = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "default"},
        "spec": {"hard": hard},
    }
    api.create(q, 0)
    api.update_status("ResourceQuota", "default", "q", "", {"hard": dict(hard), "used": used or {k: "0" for k in hard}})


def used(api):
    return api.get("ResourceQuota", "default", "q")["status"]["used"]


def test_a_batch_sees_the_charges_of_its_earlier_creates(api):
    with_quota(api, {"pods": "2", "requests.memory": "1Gi"})
    out = api.write(
        [Create(pod("a")), Create(pod("b", "800Mi")), Create(pod("c", "700Mi")), Create(pod("d", "24Mi"))], 1
    )
    assert out[0] is None
    assert out[1] == Forbidden(
        'pods "b" is forbidden: exceeded quota: q, requested: requests.memory=800Mi, '
        "used: requests.memory=300Mi, limited: requests.memory=1Gi"
    )
    assert out[2] is None  # 300Mi + 700Mi fits
    assert out[3] == Forbidden(
        'pods "d" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2'
    )
    assert used(api) == {"pods": "2", "requests.memory": "1000Mi"}
    assert not api.store.has("Pod", "default", "b")


def test_a_refusal_changes_nothing(api):
    with_quota(api, {"pods": "0"})
    rv = api.store.rv
    assert api.write([Create(pod("a"))], 1)[0].code == 403
    assert api.store.rv == rv


def test_a_dry_run_is_checked_but_not_charged(api):
    with_quota(api, {"pods": "1"})
    with api.dry_run():
        assert api.write([Create(pod("a"))], 1) == [None]
        assert isinstance(api.write([Create(pod("b"))], 1)[0], Forbidden)  # the first is charged within it
    assert used(api) == {"pods": "0"}
    assert not api.store.has("Pod", "default", "a")


def test_a_pod_without_the_tracked_request_is_refused(api):
    with_quota(api, {"requests.memory": "1Gi"})
    got = api.write([Create(pod("a", memory=None))], 1)[0]
    assert got == Forbidden('pods "a" is forbidden: failed quota: q: must specify requests.memory for: c')


def test_a_generated_name_is_named_in_the_refusal(api):
    with_quota(api, {"pods": "0"})
    p = pod("x")
    del p["metadata"]["name"]
    p["metadata"]["generateName"] = "web-"
    err = api.write([Create(p)], 1)[0]
    assert err.message.startswith('pods "web-') and '" is forbidden: exceeded quota: q' in err.message


def test_quota_in_another_namespace_does_not_apply(api):
    with_quota(api, {"pods": "0"})
    assert api.write([Create(pod("a", ns="kube-system"))], 1) == [None]


def test_pod_updates_are_not_charged_or_refused(api):
    api.create(pod("a"), 0)
    with_quota(api, {"pods": "0"}, {})  # usage unknown: would refuse a create
    p = api.get("Pod", "default", "a")
    p["metadata"]["labels"] = {"x": "y"}
    assert api.write([Update(p)], 1) == [None]


def test_object_counts_are_charged_for_any_kind(api):
    with_quota(api, {"count/configmaps": "1"})
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}
    cm2 = {**cm, "metadata": {"name": "b", "namespace": "default"}}
    out = api.write([Create(cm), Create(cm2)], 1)
    assert out[0] is None
    assert out[1] == Forbidden(
        'configmaps "b" is forbidden: exceeded quota: q, requested: count/configmaps=1, '
        "used: count/configmaps=1, limited: count/configmaps=1"
    )


def limit_range(api, ns="default", **item):
    lr = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "lr", "namespace": ns},
        "spec": {"limits": [item]},
    }
    api.create(lr, 0)


def test_limit_range_defaults_fill_a_created_pod_before_its_qos_class(api):
    limit_range(api, type="Container", default={"cpu": "1", "memory": "1Gi"})
    got = api.create(pod("a", memory=None), 1)
    assert got["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "1", "memory": "1Gi"},  # defaultRequest defaults to default
        "limits": {"cpu": "1", "memory": "1Gi"},
    }
    assert got["status"]["qosClass"] == "Guaranteed"
    assert got["metadata"]["annotations"]["kubernetes.io/limit-ranger"].startswith(
        "LimitRanger plugin set: cpu, memory"
    )


def test_limit_range_refuses_out_of_bounds_pods_and_claims(api):
    limit_range(api, type="Container", max={"memory": "100Mi"})
    err = api.write([Create(pod("a"))], 1)[0]  # its limit defaults to the max (the LimitRange's default)
    assert err == Forbidden('pods "a" is forbidden: maximum memory usage per Container is 100Mi, but request is 300Mi')
    assert not api.store.has("Pod", "default", "a")
    limit_range(api, ns="kube-system", type="PersistentVolumeClaim", max={"storage": "1Gi"})
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "kube-system"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}},
    }
    err = api.write([Create(claim)], 1)[0]
    assert err == Forbidden(
        'persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 1Gi, '
        "but request is 2Gi"
    )
