"""A watch with a selector follows which objects match, as upstream's watch cache does: an object
that stops matching is sent as DELETED (its last matching state at the change's
resourceVersion), one that starts matching as ADDED; changes of an object that matches neither
before nor after are not sent. Upstream's conformance test "should observe an object deletion
if it stops meeting the requirements of the selector" is the first case."""

import pytest
from http_builders import CMS, PODS, TABLE, call, config_map, pod, serve, watch


@pytest.fixture
def api():
    return serve()


def _update(h, name, labels=None, data=None):
    _, cm = call(h, "GET", f"{CMS}/{name}")
    if labels is not None:
        cm["metadata"]["labels"] = labels
    if data is not None:
        cm["data"] = data
    code, out = call(h, "PUT", f"{CMS}/{name}", cm)
    assert code == 200, out
    return out


def _seen(events):
    return [(e["type"], e["object"]["metadata"]["name"], e["object"].get("data")) for e in events]


def test_the_upstream_conformance_sequence(api):
    h, _ = api
    label = {"watch-this-configmap": "label-changed-and-restored"}
    wrong = {"watch-this-configmap": "wrong-value"}
    rvs = {}

    def act(h):
        call(h, "POST", CMS, config_map("cm", None, **label))
        _update(h, "cm", data={"mutation": "1"})
        rvs["left"] = _update(h, "cm", labels=wrong)["metadata"]["resourceVersion"]
        _update(h, "cm", data={"mutation": "2"})  # not sent: it does not match
        _update(h, "cm", labels=label)
        _update(h, "cm", data={"mutation": "3"})
        call(h, "DELETE", f"{CMS}/cm")

    events = watch(h, CMS, act, 6, labelSelector="watch-this-configmap=label-changed-and-restored")
    assert _seen(events) == [
        ("ADDED", "cm", {}),
        ("MODIFIED", "cm", {"mutation": "1"}),
        ("DELETED", "cm", {"mutation": "1"}),  # the last state that matched ...
        ("ADDED", "cm", {"mutation": "2"}),  # the label restored: it is back
        ("MODIFIED", "cm", {"mutation": "3"}),
        ("DELETED", "cm", {"mutation": "3"}),
    ]
    left = events[2]["object"]["metadata"]
    assert left["resourceVersion"] == rvs["left"] and left["labels"] == label  # ... at the change's rv


def test_an_object_that_matches_from_the_initial_list_leaves_too(api):
    h, _ = api
    call(h, "POST", CMS, config_map("old", app="web"))
    call(h, "POST", CMS, config_map("other", app="db"))

    def act(h):
        _update(h, "other", labels={"app": "db", "tier": "x"})  # never matched: not sent
        _update(h, "old", labels={"app": "api"})

    events = watch(h, CMS, act, 2, labelSelector="app=web")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "old"), ("DELETED", "old")]


def test_a_watch_from_a_resource_version_knows_what_matched_when_it_started(api):
    h, _ = api
    _, cm = call(h, "POST", CMS, config_map("c", app="web"))
    rv = cm["metadata"]["resourceVersion"]

    def act(h):
        _update(h, "c", labels={"app": "api"})

    events = watch(h, CMS, act, 1, labelSelector="app=web", resourceVersion=rv)
    assert [(e["type"], e["object"]["metadata"]["labels"]) for e in events] == [("DELETED", {"app": "web"})]


@pytest.mark.parametrize("field_selector", [False, True])
def test_a_watch_from_before_a_change_and_a_delete_replays_them_as_they_were(api, field_selector):
    """Upstream's "should be able to start watching from a specific resource version": the
    object is changed twice and deleted, then watched from its first change; it is gone
    when the watch starts, and the second change still comes as MODIFIED."""
    h, _ = api
    label = {"watch-this-configmap": "from-resource-version"}
    call(h, "POST", CMS, config_map("cm", None, **label))
    rv = _update(h, "cm", data={"mutation": "1"})["metadata"]["resourceVersion"]
    _update(h, "cm", data={"mutation": "2"})
    call(h, "DELETE", f"{CMS}/cm")
    query = {"labelSelector": "watch-this-configmap=from-resource-version", "resourceVersion": rv}
    if field_selector:
        query["fieldSelector"] = "metadata.name=cm"
    events = watch(h, CMS, lambda h: None, 2, **query)
    assert _seen(events) == [("MODIFIED", "cm", {"mutation": "2"}), ("DELETED", "cm", {"mutation": "2"})]


def test_a_replayed_change_into_the_selector_after_one_out_of_it_is_an_add(api):
    """Once the watch has seen an object outside the selector, its return is an ADDED. (Its
    first replayed change, out of the selector, is not sent: kubemu keeps no previous
    objects, so the watch cannot tell it matched before; upstream sends a DELETED.)"""
    h, _ = api
    call(h, "POST", CMS, config_map("cm", None, app="web"))
    rv = _update(h, "cm", data={"a": "1"})["metadata"]["resourceVersion"]
    _update(h, "cm", labels={"app": "api"})
    _update(h, "cm", labels={"app": "web"})
    call(h, "DELETE", f"{CMS}/cm")
    events = watch(h, CMS, lambda h: None, 2, labelSelector="app=web", resourceVersion=rv)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]


def test_a_field_selector_leaves_and_enters_as_well(api):
    h, cluster = api
    p = pod("p")
    p["spec"]["schedulerName"] = "elsewhere"  # stays Pending until bound by hand

    def act(h):
        call(h, "POST", PODS, p)
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"name": "n-0"}}
        call(h, "POST", f"{PODS}/p/binding", body)

    events = watch(h, PODS, act, 2, fieldSelector="spec.nodeName=")
    assert [(e["type"], e["object"]["spec"].get("nodeName", "")) for e in events] == [("ADDED", ""), ("DELETED", "")]


def test_without_a_selector_every_change_is_sent_as_it_is(api):
    h, _ = api

    def act(h):
        call(h, "POST", CMS, config_map("x", app="a"))
        _update(h, "x", labels={"app": "b"})

    events = watch(h, CMS, act, 3)  # with the namespace's kube-root-ca.crt, published meanwhile
    assert [e["type"] for e in events if e["object"]["metadata"]["name"] == "x"] == ["ADDED", "MODIFIED"]


def test_a_table_watch_sends_the_leave_as_a_deleted_row(api):
    h, _ = api
    call(h, "POST", CMS, config_map("t", app="web"))

    def act(h):
        _update(h, "t", labels={"app": "api"})

    events = watch(h, CMS, act, 2, headers=TABLE, labelSelector="app=web")
    assert [(e["type"], e["object"]["kind"], e["object"]["rows"][0]["cells"][0]) for e in events] == [
        ("ADDED", "Table", "t"),
        ("DELETED", "Table", "t"),
    ]
