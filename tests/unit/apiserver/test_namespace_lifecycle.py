"""Namespace lifecycle in the apiserver: creation defaults, deletion to Terminating, the
built-in namespaces, creates refused while terminating, and the namespace going once the
namespace controller's finalizer is gone (with its Events)."""

import pytest
from store_builders import make_pod

from cluster.api.errors import Forbidden
from cluster.api.patches import FinalizeNamespace, RemoveFinalizer
from cluster.api.requests import Create, Patch, RecordEvent
from cluster.clock import rfc3339


def namespace(name="team", finalizers=None):
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    if finalizers is not None:
        ns["spec"] = {"finalizers": list(finalizers)}
    return ns


def deployment(name="web", ns="team", generate=False):
    meta = {"generateName": f"{name}-"} if generate else {"name": name}
    template = {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    spec = {"selector": {"matchLabels": {"app": name}}, "template": template}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {**meta, "namespace": ns}, "spec": spec}


def event(name, ns="team"):
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": "p"},
        "reason": "Scheduled",
        "message": "m",
    }


def _ns(api, name="team"):
    return api.store.get("Namespace", "", name)


@pytest.mark.parametrize("given,expected", [(None, ["kubernetes"]), (["x/y"], ["x/y", "kubernetes"])])
def test_a_created_namespace_is_active_with_the_kubernetes_finalizer(api, given, expected):
    api.create(namespace(finalizers=given), now=0)
    ns = _ns(api)
    assert ns["spec"]["finalizers"] == expected and ns["status"] == {"phase": "Active"}


def test_deleting_a_namespace_marks_it_terminating_and_keeps_it(api):
    api.create(namespace(), now=0)
    assert api.delete("Namespace", "", "team", None, None, now=7) is False
    ns = _ns(api)
    assert ns["metadata"]["deletionTimestamp"] == rfc3339(7) and ns["status"]["phase"] == "Terminating"
    assert ns["spec"]["finalizers"] == ["kubernetes"]
    rv = ns["metadata"]["resourceVersion"]
    assert api.delete("Namespace", "", "team", None, None, now=8) is False  # pending: content left
    assert _ns(api)["metadata"]["resourceVersion"] == rv


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_the_built_in_namespaces_may_not_be_deleted(api, name):
    with pytest.raises(Forbidden) as e:
        api.delete("Namespace", "", name, None, None, now=1)
    assert e.value.message == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    assert e.value.code == 403 and "deletionTimestamp" not in _ns(api, name)["metadata"]


REFUSED = [
    # (case, object, the name in the message, the resource in the message)
    ("a pod", make_pod("p", ns="team"), "p", "pods"),
    ("an apps kind names its group", deployment(), "web", "deployments.apps"),
    ("generateName before a name is drawn", deployment(generate=True), "web-", "deployments.apps"),
    ("an event", event("e1"), "e1", "events"),
]


@pytest.mark.parametrize("case,obj,name,resource", REFUSED, ids=[c[0] for c in REFUSED])
def test_creating_in_a_terminating_namespace_is_forbidden(api, case, obj, name, resource):
    api.create(namespace(), now=0)
    api.delete("Namespace", "", "team", None, None, now=1)
    rv = api.store.rv
    (err,) = api.write([Create(obj)], 2)
    assert isinstance(err, Forbidden) and err.message == (
        f'{resource} "{name}" is forbidden: unable to create new content in namespace team because it is being terminated'
    )
    assert [(c.type, c.field) for c in err.causes] == [("NamespaceTerminating", "metadata.namespace")]
    assert api.store.rv == rv


def test_creating_in_an_active_namespace_still_works(api):
    api.create(namespace(), now=0)
    assert api.write([Create(make_pod("p", ns="team"))], 1) == [None]


def test_the_namespace_goes_once_finalized_and_takes_its_events(api):
    api.create(namespace(), now=0)
    api.write([RecordEvent(event("e1")), RecordEvent(event("e2")), RecordEvent(event("keep", ns="default"))], 0)
    api.delete("Namespace", "", "team", None, None, now=1)
    uid = _ns(api)["metadata"]["uid"]
    assert api.write([Patch("Namespace", "", "team", uid, FinalizeNamespace())], 2) == [None]
    assert _ns(api) is None
    assert [e["metadata"]["name"] for e in api.store.objects("Event")] == ["keep"]


def test_a_gc_finalizer_holds_a_finalized_namespace_until_removed(api):
    api.create(namespace(), now=0)
    api.delete("Namespace", "", "team", None, None, now=1, propagation="Orphan")
    uid = _ns(api)["metadata"]["uid"]
    assert _ns(api)["metadata"]["finalizers"] == ["orphan"]
    api.write([Patch("Namespace", "", "team", uid, FinalizeNamespace())], 2)
    assert _ns(api)["spec"].get("finalizers") is None and _ns(api)["metadata"]["finalizers"] == ["orphan"]
    api.write([Patch("Namespace", "", "team", uid, RemoveFinalizer("orphan"))], 3)
    assert _ns(api) is None


def test_a_namespace_without_the_kubernetes_finalizer_goes_on_the_next_delete(api):
    api.create(namespace(), now=0)
    api.delete("Namespace", "", "team", None, None, now=1)
    api.write([Patch("Namespace", "", "team", "", FinalizeNamespace("nope"))], 2)  # not there: no write
    assert _ns(api)["spec"]["finalizers"] == ["kubernetes"]
    ns = _ns(api)
    ns["spec"]["finalizers"] = []  # as if another finalizer controller had emptied it
    api.store.put("Namespace", ns, "MODIFIED")
    assert api.delete("Namespace", "", "team", None, None, now=3) is True
