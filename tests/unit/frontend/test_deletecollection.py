"""DELETE on a collection URL: selectors, limit/continue, DeleteOptions
(propagation, grace, preconditions, dryRun), the List of what was listed before the deletes,
cluster-scoped and custom kinds, and the refusals."""

import pytest
from http_builders import AUTH, CMS, CRDS, PODS, call, config_map, names, pod, serve


@pytest.fixture
def api():
    h, cluster = serve()
    for name, app in (("a", "x"), ("b", "x"), ("c", "y"), ("d", "")):
        assert call(h, "POST", CMS, config_map(name, {"k": name}, **({"app": app} if app else {})))[0] == 201
    return h, cluster


ROOT_CA = "kube-root-ca.crt"  # every namespace's, published by the ServiceAccount controller


def cm_names(h, ns="default"):
    return [n for n in names(call(h, "GET", f"/api/v1/namespaces/{ns}/configmaps")[1]) if n != ROOT_CA]


@pytest.mark.parametrize(
    "query, deleted",
    [
        ({}, ["a", "b", "c", "d"]),  # kubectl delete cm --all
        ({"labelSelector": "app=x"}, ["a", "b"]),  # kubectl delete cm -l app=x
        ({"labelSelector": "app"}, ["a", "b", "c"]),
        ({"labelSelector": "app=nope"}, []),
        ({"fieldSelector": "metadata.name=c"}, ["c"]),
        ({"fieldSelector": "metadata.name!=c", "labelSelector": "app in (x,y)"}, ["a", "b"]),
        ({"limit": 3}, ["a", "b", "c"]),  # only the first page goes
    ],
)
def test_it_deletes_what_the_selectors_select_and_answers_the_list(api, query, deleted):
    h, _ = api
    code, listing = call(h, "DELETE", CMS, **query)
    assert code == 200 and (listing["kind"], listing["apiVersion"]) == ("ConfigMapList", "v1")
    items = [o for o in listing["items"] if o["metadata"]["name"] != ROOT_CA]
    assert [o["metadata"]["name"] for o in items] == deleted and int(listing["metadata"]["resourceVersion"]) > 0
    assert [o["data"] for o in items] == [{"k": n} for n in deleted]  # the objects, not Statuses
    assert cm_names(h) == sorted(set("abcd") - set(deleted))
    assert ("continue" in listing["metadata"]) == ("limit" in query)


def test_limit_and_continue_delete_page_after_page(api):
    h, _ = api
    _, first = call(h, "DELETE", CMS, limit=2)
    assert names(first) == ["a", "b"] and cm_names(h) == ["c", "d"]
    _, second = call(h, "DELETE", CMS, limit=2, **{"continue": first["metadata"]["continue"]})
    assert names(second) == ["c", "d"] and cm_names(h) == []


def test_other_namespaces_are_untouched(api):
    h, _ = api
    assert call(h, "POST", "/api/v1/namespaces", {"metadata": {"name": "other"}})[0] == 201
    assert call(h, "POST", "/api/v1/namespaces/other/configmaps", config_map("a", app="x"))[0] == 201
    assert names(call(h, "DELETE", CMS, labelSelector="app=x")[1]) == ["a", "b"]
    assert cm_names(h, "other") == ["a"]


def test_across_namespaces_it_is_not_served(api):
    """Upstream registers deletecollection on the namespaced collection only."""
    h, _ = api
    code, status = call(h, "DELETE", "/api/v1/configmaps")
    assert (code, status["reason"]) == (405, "MethodNotAllowed") and cm_names(h) == ["a", "b", "c", "d"]


@pytest.mark.parametrize("where", ["query", "body"])
def test_dry_run_lists_and_deletes_nothing(api, where):
    h, cluster = api
    rv = cluster.api.store.rv
    if where == "query":
        code, listing = call(h, "DELETE", CMS, dryRun="All", labelSelector="app=x")
    else:
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}
        code, listing = call(h, "DELETE", CMS, body, labelSelector="app=x")
    assert code == 200 and names(listing) == ["a", "b"]
    assert cm_names(h) == ["a", "b", "c", "d"] and cluster.api.store.rv == rv


@pytest.mark.parametrize(
    "query, body, code, message",
    [
        ({"dryRun": "Some"}, None, 422, 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value'),
        ({"propagationPolicy": "Sideways"}, None, 422, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy'),
        ({"labelSelector": "a in (b"}, None, 400, ""),
        ({"fieldSelector": "spec.nope=1"}, None, 400, ""),
        ({}, {"gracePeriodSeconds": "soon"}, 400, 'gracePeriodSeconds: "soon" is not an integer'),
    ],
)
def test_bad_options_are_refused_before_anything_is_deleted(api, query, body, code, message):
    h, cluster = api
    rv = cluster.api.store.rv
    got, status = call(h, "DELETE", CMS, body, **query)
    assert got == code and status["kind"] == "Status" and status["message"].startswith(message)
    assert cluster.api.store.rv == rv and cm_names(h) == ["a", "b", "c", "d"]


def test_a_uid_precondition_no_item_has_stops_at_the_first_item(api):
    h, _ = api
    body = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "not-a-uid"}}
    code, status = call(h, "DELETE", CMS, body)
    assert (code, status["reason"]) == (409, "Conflict") and cm_names(h) == ["a", "b", "c", "d"]


def test_pods_are_deleted_gracefully_and_listed_as_they_were(api):
    h, cluster = api
    for name in ("p1", "p2"):
        assert call(h, "POST", PODS, pod(name, app="web"))[0] == 201
    run_settle(cluster)
    code, listing = call(h, "DELETE", PODS, labelSelector="app=web")
    assert code == 200 and listing["kind"] == "PodList" and names(listing) == ["p1", "p2"]
    assert not any(p["metadata"].get("deletionTimestamp") for p in listing["items"])  # as listed before
    left = call(h, "GET", PODS)[1]["items"]
    assert all(p["metadata"].get("deletionTimestamp") for p in left)  # bound pods terminate gracefully
    _, now = call(h, "DELETE", PODS, gracePeriodSeconds=0)
    assert names(now) == ["p1", "p2"] and names(call(h, "GET", PODS)[1]) == []


def test_propagation_reaches_every_item(api):
    h, _ = api
    body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"}
    code, listing = call(h, "DELETE", CMS, body, labelSelector="app=x")
    assert code == 200 and names(listing) == ["a", "b"]
    # Foreground adds the finalizer (the collector, which has not run yet, would remove it).
    for name in ("a", "b"):
        meta = call(h, "GET", f"{CMS}/{name}")[1]["metadata"]
        assert meta["finalizers"] == ["foregroundDeletion"] and meta["deletionTimestamp"]
    assert "deletionTimestamp" not in call(h, "GET", f"{CMS}/c")[1]["metadata"]


def test_cluster_scoped_kinds(api):
    h, _ = api
    pcs = "/apis/scheduling.k8s.io/v1/priorityclasses"
    for name in ("low", "high"):
        body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": 1}
        body["metadata"]["labels"] = {"team": "t"}
        assert call(h, "POST", pcs, body)[0] == 201
    code, listing = call(h, "DELETE", pcs, labelSelector="team=t")
    assert (code, names(listing)) == (200, ["high", "low"])
    left = names(call(h, "GET", pcs)[1])
    assert "low" not in left and "system-node-critical" in left


def test_custom_resources(api):
    h, _ = api
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    assert call(h, "POST", CRDS, crd)[0] == 201
    url = "/apis/example.com/v1/namespaces/default/gadgets"
    for name in ("g1", "g2"):
        body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": name}}
        assert call(h, "POST", url, body)[0] == 201
    code, listing = call(h, "DELETE", url)
    assert (code, listing["kind"], listing["apiVersion"], names(listing)) == (
        200,
        "GadgetList",
        "example.com/v1",
        ["g1", "g2"],
    )
    assert names(call(h, "GET", url)[1]) == []


def test_an_empty_collection_answers_an_empty_list(api):
    h, _ = api
    code, listing = call(h, "DELETE", "/api/v1/namespaces/default/secrets")
    assert (code, listing["kind"], listing["items"]) == (200, "SecretList", [])


def test_a_table_accept_gets_a_table_of_what_went(api):
    h, _ = api
    headers = {**AUTH, "accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    code, table = call(h, "DELETE", CMS, headers=headers, labelSelector="app=y")
    assert code == 200 and table["kind"] == "Table" and [r["cells"][0] for r in table["rows"]] == ["c"]


def run_settle(cluster):
    import asyncio

    asyncio.run(cluster.settle())


def test_a_kind_whose_verbs_lack_it_answers_405(api, monkeypatch):
    from dataclasses import replace

    from cluster.api import kinds

    h, _ = api
    cms = kinds.BY_PLURAL[("", "configmaps")]
    monkeypatch.setitem(kinds.BY_PLURAL, ("", "configmaps"), replace(cms, verbs=("get", "list", "delete")))
    code, status = call(h, "DELETE", CMS)
    assert (code, status["reason"]) == (405, "MethodNotAllowed") and cm_names(h) == ["a", "b", "c", "d"]
