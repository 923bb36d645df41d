"""Query parameters of list/watch/get/delete requests (cluster/frontend/query.py)."""

import base64
import json
import pickle

import pytest

from cluster.api.errors import BadRequest, Cause, Expired, Invalid
from cluster.api.selectors import LabelSelector
from cluster.frontend import query
from cluster.frontend.query import (
    ContinueExpired,
    ListOptions,
    check_continue,
    delete_options,
    list_resource_version,
    matches,
    paginate,
    parse_list_options,
    watch_start,
)
from cluster.frontend.query_fields import FieldSelector


def parse(kind="Pod", **q):
    return parse_list_options({k: str(v) for k, v in q.items()}, kind)


def pod(name, ns="default", labels=None, **fields):
    obj = {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "spec": {}, "status": {}}
    for path, value in fields.items():
        head, _, leaf = path.partition("__")
        obj[head][leaf] = value
    return obj


# ---- each parameter ----------------------------------------------------------------------


def test_defaults():
    assert parse_list_options({}, "Pod") == ListOptions()
    opts = ListOptions()
    assert (opts.limit, opts.watch, opts.include_object, opts.send_initial_events) == (0, False, "Metadata", None)


@pytest.mark.parametrize(
    "q, attr, expected",
    [
        ({"labelSelector": "app=web"}, "label_selector", LabelSelector.parse("app=web")),
        ({"labelSelector": ""}, "label_selector", None),
        ({"fieldSelector": "spec.nodeName=n1"}, "field_selector", FieldSelector.parse("spec.nodeName=n1", "Pod")),
        ({"fieldSelector": ""}, "field_selector", None),
        ({"fieldSelector": ","}, "field_selector", None),
        ({"limit": "500"}, "limit", 500),
        ({"limit": "0"}, "limit", 0),
        ({"limit": "-1"}, "limit", 0),  # upstream pages only when limit > 0
        ({"limit": "+7"}, "limit", 7),
        ({"resourceVersion": "42"}, "resource_version", "42"),
        ({"resourceVersion": "0"}, "resource_version", "0"),
        ({"resourceVersion": "42", "resourceVersionMatch": "Exact"}, "resource_version_match", "Exact"),
        ({"resourceVersion": "42", "resourceVersionMatch": "NotOlderThan"}, "resource_version_match", "NotOlderThan"),
        ({"watch": "true"}, "watch", True),
        ({"allowWatchBookmarks": "true"}, "allow_watch_bookmarks", True),
        ({"timeoutSeconds": "300"}, "timeout_seconds", 300),
        ({"timeoutSeconds": "0"}, "timeout_seconds", 0),
        ({"timeoutSeconds": "-5"}, "timeout_seconds", -5),  # upstream: the watch ends at once
        ({}, "timeout_seconds", None),
        ({"includeObject": "Object"}, "include_object", "Object"),
        ({"includeObject": "None"}, "include_object", "None"),
        ({"includeObject": "Metadata"}, "include_object", "Metadata"),
        ({"includeObject": ""}, "include_object", "Metadata"),
        ({"timeout": "32s", "fieldManager": "kubectl", "pretty": "true"}, "limit", 0),  # unknown: ignored
    ],
)
def test_parameter(q, attr, expected):
    assert getattr(parse_list_options(q, "Pod"), attr) == expected


@pytest.mark.parametrize(
    "q, expected",
    [
        ({"watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"}, True),
        ({"watch": "1", "sendInitialEvents": "false", "resourceVersionMatch": "NotOlderThan"}, False),
        ({"watch": "1"}, None),
    ],
)
def test_send_initial_events(q, expected):
    assert parse_list_options(q, "Pod").send_initial_events is expected


@pytest.mark.parametrize(
    "value, expected",
    [
        ("true", True),
        ("True", True),
        ("1", True),
        ("false", False),
        ("False", False),
        ("FALSE", False),
        ("0", False),
        # upstream's Convert_Slice_string_To_bool: anything else, even "", is true
        ("", True),
        ("yes", True),
        ("no", True),
    ],
)
def test_booleans_as_upstream(value, expected):
    assert parse_list_options({"watch": value}, "Pod").watch is expected
    assert parse_list_options({"allowWatchBookmarks": value}, "Pod").allow_watch_bookmarks is expected


# ---- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "q, kind, message",
    [
        ({"limit": "x"}, "Pod", 'limit: "x" is not an integer'),
        ({"limit": "1.5"}, "Pod", 'limit: "1.5" is not an integer'),
        ({"limit": "9223372036854775808"}, "Pod", 'limit: "9223372036854775808" is not an integer'),
        ({"timeoutSeconds": "5s"}, "Pod", 'timeoutSeconds: "5s" is not an integer'),
        ({"labelSelector": "a in"}, "Pod", "cannot parse label selector 'a in': expected '(' after in/notin"),
        ({"labelSelector": "a>1"}, "Pod", "cannot parse label selector 'a>1': unsupported operator '>' after key 'a'"),
        ({"fieldSelector": "foo"}, "Pod", "invalid selector: 'foo'; can't understand 'foo'"),
        ({"fieldSelector": "a=b,foo"}, "Pod", "invalid selector: 'a=b,foo'; can't understand 'foo'"),
        ({"fieldSelector": "spec.nodeName=a\\b"}, "Pod", "invalid field selector: invalid escape sequence: \\b"),
        ({"fieldSelector": "spec.nodeName=a\\"}, "Pod", "invalid field selector: invalid escape sequence: \\"),
        ({"fieldSelector": "spec.nodeName=a=b"}, "Pod", "invalid field selector: unescaped character in value: 61"),
        ({"fieldSelector": "spec.foo=x"}, "Pod", "field label not supported: spec.foo"),
        ({"fieldSelector": "metadata.namespace=x"}, "Node", "field label not supported: metadata.namespace"),
        ({"fieldSelector": "status.phase=x"}, "Node", "field label not supported: status.phase"),
        ({"fieldSelector": "metadata.namespace=x"}, "Namespace", "field label not supported: metadata.namespace"),
        ({"fieldSelector": "involvedObject.foo=x"}, "Event", "field label not supported: involvedObject.foo"),
        ({"fieldSelector": "spec.foo=x"}, "Job", 'field label "spec.foo" not supported for Job'),
        (
            {"fieldSelector": "status.replicas=0"},
            "ReplicaSet",
            '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
        ),
        (
            {"fieldSelector": "spec.replicas=1"},
            "Deployment",
            '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
        ),
        # terms are checked in sorted order, as upstream sorts them
        ({"fieldSelector": "z.b=1,a.b=1"}, "Pod", "field label not supported: a.b"),
        (
            {"includeObject": "All"},
            "Pod",
            'Unable to convert to Table as requested: includeObject: Invalid value: "All": '
            "must be 'Metadata', 'Object', 'None', or empty",
        ),
        (
            {"resourceVersion": "abc"},
            "Pod",
            'invalid resource version: resourceVersion: Invalid value: "abc": '
            'strconv.ParseUint: parsing "abc": invalid syntax',
        ),
        (
            {"resourceVersion": "-1"},
            "Pod",
            'invalid resource version: resourceVersion: Invalid value: "-1": '
            'strconv.ParseUint: parsing "-1": invalid syntax',
        ),
        (
            {"resourceVersion": "18446744073709551616"},
            "Pod",
            'invalid resource version: resourceVersion: Invalid value: "18446744073709551616": '
            'strconv.ParseUint: parsing "18446744073709551616": value out of range',
        ),
    ],
)
def test_bad_request(q, kind, message):
    with pytest.raises(BadRequest) as e:
        parse_list_options(q, kind)
    assert e.value.message == message
    assert e.value.status()["code"] == 400


INVALID = 'ListOptions.meta.k8s.io "" is invalid: '
RVM = "resourceVersionMatch"


@pytest.mark.parametrize(
    "q, detail, causes",
    [
        (
            {RVM: "Exact"},
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            [("FieldValueForbidden", RVM)],
        ),
        (
            {RVM: "NotOlderThan", "resourceVersion": "5", "continue": "x"},
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
            [("FieldValueForbidden", RVM)],
        ),
        (
            {RVM: "Newest", "resourceVersion": "5"},
            'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
            [("FieldValueNotSupported", RVM)],
        ),
        (
            {RVM: "Exact", "resourceVersion": "0"},
            'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
            [("FieldValueForbidden", RVM)],
        ),
        (
            {"sendInitialEvents": "true"},
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
            [("FieldValueForbidden", "sendInitialEvents")],
        ),
        (
            {RVM: "Newest"},
            "[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, "
            'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""]',
            [("FieldValueForbidden", RVM), ("FieldValueNotSupported", RVM)],
        ),
        (
            {"watch": "true", "sendInitialEvents": "true"},
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            [("FieldValueForbidden", RVM)],
        ),
        (
            {"watch": "true", RVM: "NotOlderThan", "resourceVersion": "5"},
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents "
            "is provided",
            [("FieldValueForbidden", RVM)],
        ),
        (
            {"watch": "true", "sendInitialEvents": "true", RVM: "Exact"},
            "[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
            'NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
            [("FieldValueForbidden", RVM), ("FieldValueNotSupported", RVM)],
        ),
    ],
)
def test_invalid_combinations(q, detail, causes):
    with pytest.raises(Invalid) as e:
        parse_list_options(q, "Pod")
    assert e.value.message == INVALID + detail
    assert [(c.type, c.field) for c in e.value.causes] == causes
    assert e.value.status()["code"] == 422


def test_upstream_order_validation_before_field_labels():
    # DecodeParameters, then ValidateListOptions, then the field-label conversion
    with pytest.raises(Invalid):
        parse_list_options({RVM: "Exact", "fieldSelector": "spec.foo=1"}, "Pod")
    with pytest.raises(BadRequest, match="field label not supported"):
        parse_list_options({"fieldSelector": "spec.foo=1", "resourceVersion": "abc"}, "Pod")


# ---- field selectors ---------------------------------------------------------------------

EVENT = {
    "metadata": {"name": "e1", "namespace": "ns"},
    "involvedObject": {
        "kind": "Pod",
        "namespace": "ns",
        "name": "p1",
        "uid": "u1",
        "apiVersion": "v1",
        "resourceVersion": "7",
        "fieldPath": "spec.containers{c}",
    },
    "reason": "Scheduled",
    "reportingComponent": "default-scheduler",
    "source": {"component": "kubelet"},
    "type": "Normal",
}
FULL_POD = {
    "metadata": {"name": "p1", "namespace": "ns"},
    "spec": {
        "nodeName": "n1",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default",
        "hostNetwork": True,
    },
    "status": {"phase": "Running", "podIP": "10.0.0.1", "nominatedNodeName": "n2"},
}
BARE_POD = {"metadata": {"name": "p2", "namespace": "ns"}}


@pytest.mark.parametrize(
    "kind, selector, obj, expected",
    [
        ("Pod", "metadata.name=p1", FULL_POD, True),
        ("Pod", "metadata.namespace=ns", FULL_POD, True),
        ("Pod", "metadata.namespace!=ns", FULL_POD, False),
        ("Pod", "spec.nodeName=n1", FULL_POD, True),
        ("Pod", "spec.nodeName==n1", FULL_POD, True),
        ("Pod", "spec.nodeName=", BARE_POD, True),  # unscheduled
        ("Pod", "spec.nodeName!=", FULL_POD, True),
        ("Pod", "spec.host=n1", FULL_POD, True),  # legacy alias of spec.nodeName
        ("Pod", "spec.restartPolicy=Always", FULL_POD, True),
        ("Pod", "spec.schedulerName=default-scheduler", FULL_POD, True),
        ("Pod", "spec.serviceAccountName=default", FULL_POD, True),
        ("Pod", "spec.hostNetwork=true", FULL_POD, True),
        ("Pod", "spec.hostNetwork=false", BARE_POD, True),  # absent reads "false"
        ("Pod", "spec.hostNetwork=", BARE_POD, False),
        ("Pod", "status.phase=Running", FULL_POD, True),
        ("Pod", "status.phase!=Succeeded,status.phase!=Failed", FULL_POD, True),
        ("Pod", "status.phase!=Running,status.phase!=Failed", FULL_POD, False),
        ("Pod", "status.podIP=10.0.0.1", FULL_POD, True),
        ("Pod", "status.podIP=10.0.0.9", {"status": {"podIPs": [{"ip": "10.0.0.9"}]}}, True),
        ("Pod", "status.podIPs=10.0.0.1", FULL_POD, False),  # accepted, never set upstream
        ("Pod", "status.podIPs=", FULL_POD, True),
        ("Pod", "status.nominatedNodeName=n2", FULL_POD, True),
        ("Pod", "status.phase=", BARE_POD, True),  # missing reads ""
        ("Pod", "spec.nodeName=n1,metadata.name=p2", FULL_POD, False),
        ("Node", "metadata.name=n1", {"metadata": {"name": "n1"}}, True),
        ("Node", "spec.unschedulable=true", {"metadata": {"name": "n1"}, "spec": {"unschedulable": True}}, True),
        ("Node", "spec.unschedulable=false", {"metadata": {"name": "n1"}}, True),
        ("Node", "spec.unschedulable!=true", {"metadata": {"name": "n1"}, "spec": {}}, True),
        ("Namespace", "status.phase=Active", {"metadata": {"name": "x"}, "status": {"phase": "Active"}}, True),
        ("Namespace", "status.phase=Terminating", {"metadata": {"name": "x"}}, False),
        ("Secret", "type=Opaque", {"metadata": {"name": "s"}, "type": "Opaque"}, True),
        ("Secret", "metadata.namespace=ns", {"metadata": {"name": "s", "namespace": "ns"}}, True),
        ("Service", "spec.type=ClusterIP", {"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1"}}, True),
        ("Service", "spec.clusterIP=10.96.0.1", {"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1"}}, True),
        ("ReplicationController", "status.replicas=3", {"status": {"replicas": 3}}, True),
        ("ReplicationController", "status.replicas=0", {"status": {}}, True),
        ("Job", "status.successful=1", {"status": {"succeeded": 1}}, True),  # reads status.succeeded
        ("Job", "status.successful=0", {}, True),
        ("Deployment", "metadata.name=d", {"metadata": {"name": "d", "namespace": "ns"}}, True),
        ("Deployment", "metadata.namespace!=ns", {"metadata": {"name": "d", "namespace": "ns"}}, False),
        ("PriorityClass", "metadata.namespace=", {"metadata": {"name": "high"}}, True),  # default conversion
        ("PriorityClass", "metadata.namespace=x", {"metadata": {"name": "high"}}, False),
        ("Pod", "spec.nodeName=a\\,b", {"spec": {"nodeName": "a,b"}}, True),  # escaped comma
        ("Pod", "spec.nodeName=a\\=b\\\\", {"spec": {"nodeName": "a=b\\"}}, True),
    ],
)
def test_field_selector_per_kind(kind, selector, obj, expected):
    assert FieldSelector.parse(selector, kind).matches(obj) is expected


@pytest.mark.parametrize(
    "label, value",
    [
        ("metadata.name", "e1"),
        ("metadata.namespace", "ns"),
        ("involvedObject.kind", "Pod"),
        ("involvedObject.namespace", "ns"),
        ("involvedObject.name", "p1"),
        ("involvedObject.uid", "u1"),
        ("involvedObject.apiVersion", "v1"),
        ("involvedObject.resourceVersion", "7"),
        ("involvedObject.fieldPath", "spec.containers{c}"),
        ("reason", "Scheduled"),
        ("reportingComponent", "default-scheduler"),
        ("source", "kubelet"),
        ("type", "Normal"),
    ],
)
def test_event_field_selectors(label, value):
    assert FieldSelector.parse(f"{label}={value}", "Event").matches(EVENT)
    assert not FieldSelector.parse(f"{label}!={value}", "Event").matches(EVENT)


def test_event_source_falls_back_to_reporting_component():
    event = {**EVENT, "source": {}}
    assert FieldSelector.parse("source=default-scheduler", "Event").matches(event)


def test_describe_node_event_selector():
    # kubectl describe node: involvedObject.namespace= with an empty value
    sel = FieldSelector.parse(
        "involvedObject.name=n1,involvedObject.namespace=,involvedObject.kind=Node,involvedObject.uid=n1", "Event"
    )
    event = {"involvedObject": {"kind": "Node", "name": "n1", "uid": "n1"}}
    assert sel.matches(event)
    assert not sel.matches({"involvedObject": {"kind": "Node", "name": "n1", "uid": "n1", "namespace": "x"}})


@pytest.mark.parametrize(
    "selector, expected",
    [
        ("spec.nodeName=n1", "n1"),
        ("spec.nodeName==n1", "n1"),
        ("spec.host=n1", "n1"),
        ("spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed", "n1"),
        ("spec.nodeName=", ""),
        ("spec.nodeName!=n1", None),
        ("status.phase=Running", None),
        ("spec.nodeName=a,spec.nodeName=b", None),
    ],
)
def test_node_name(selector, expected):
    assert FieldSelector.parse(selector, "Pod").node_name() == expected


def test_field_selector_value_semantics():
    sel = FieldSelector.parse("status.phase!=Failed,spec.nodeName==n1", "Pod")
    assert sel.requirements == (("spec.nodeName", "=", "n1"), ("status.phase", "!=", "Failed"))
    assert str(FieldSelector.parse("spec.nodeName=a\\,b", "Pod")) == "spec.nodeName=a\\,b"
    assert sel == FieldSelector.parse("spec.nodeName=n1,status.phase!=Failed", "Pod")
    assert len({sel, FieldSelector.parse("spec.nodeName=n1,status.phase!=Failed", "Pod")}) == 1
    assert sel != FieldSelector.parse("spec.nodeName=n1", "Pod")


# ---- matches -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "q, expected",
    [
        ({}, True),
        ({"labelSelector": "app=web"}, True),
        ({"labelSelector": "app=db"}, False),
        ({"labelSelector": "app in (web,db),!canary"}, True),
        ({"fieldSelector": "spec.nodeName=n1"}, True),
        ({"fieldSelector": "spec.nodeName=n2"}, False),
        ({"labelSelector": "app=web", "fieldSelector": "spec.nodeName=n1"}, True),
        ({"labelSelector": "app=db", "fieldSelector": "spec.nodeName=n1"}, False),
        ({"labelSelector": "app=web", "fieldSelector": "spec.nodeName=n2"}, False),
    ],
)
def test_matches(q, expected):
    obj = pod("p", labels={"app": "web"}, spec__nodeName="n1")
    assert matches(obj, parse_list_options(q, "Pod")) is expected


def test_matches_object_without_labels():
    assert matches({"metadata": {"name": "x"}}, parse(labelSelector="!app"))
    assert not matches({"metadata": {"name": "x"}}, parse(labelSelector="app"))


# ---- pagination --------------------------------------------------------------------------

ITEMS = sorted(
    (pod(f"p{i:04d}", ns=f"ns{i % 3}") for i in range(2500)),
    key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]),
)


def test_pagination_2500_items_in_pages_of_500():
    seen, token, pages, remaining_seen = [], "", 0, []
    while True:
        q = {"limit": "500"} | ({"continue": token} if token else {})
        opts = parse_list_options(q, "Pod", seed=b"s")
        page, token, remaining = paginate(ITEMS, opts, 100, b"s")
        pages += 1
        seen.extend(page)
        remaining_seen.append(remaining)
        assert len(page) == 500
        if not token:
            break
        assert parse_list_options({"continue": token}, "Pod", seed=b"s").continue_rv == 100
    assert pages == 5
    assert seen == ITEMS
    assert remaining_seen == [2000, 1500, 1000, 500, None]


def test_pagination_continued_pages_keep_the_first_resource_version():
    opts = parse(limit=500)
    _, token, _ = paginate(ITEMS, opts, 100)
    opts = parse(limit=500, **{"continue": token})
    assert list_resource_version(opts, 250) == 100
    _, token2, _ = paginate(ITEMS, opts, 250)
    assert parse(**{"continue": token2}).continue_rv == 100
    assert list_resource_version(parse(), 250) == 250


def test_pagination_uneven_last_page_and_no_limit():
    page, token, remaining = paginate(ITEMS[:1200], parse(limit=500), 9)
    assert (len(page), remaining) == (500, 700)
    page, token, remaining = paginate(ITEMS[:1200], parse(limit=500, **{"continue": token}), 9)
    page, token, remaining = paginate(ITEMS[:1200], parse(limit=500, **{"continue": token}), 9)
    assert (len(page), token, remaining) == (200, "", None)
    assert paginate(ITEMS, parse(), 9) == (ITEMS, "", None)
    assert paginate([], parse(limit=1), 9) == ([], "", None)
    assert paginate(ITEMS[:500], parse(limit=500), 9) == (ITEMS[:500], "", None)  # exactly full: no token


def test_pagination_continue_without_limit_returns_the_rest():
    _, token, _ = paginate(ITEMS, parse(limit=10), 9)
    page, token2, _ = paginate(ITEMS, parse(**{"continue": token}), 9)
    assert page == ITEMS[10:] and token2 == ""


def test_pagination_from_current_state_skips_deleted_and_shows_new():
    # kubemu serves continued pages from the current state: inconsistent, like upstream after expiry
    items = [pod(n) for n in ("a", "b", "c", "d")]
    page, token, _ = paginate(items, parse(limit=2), 5)
    assert [o["metadata"]["name"] for o in page] == ["a", "b"]
    now = [pod(n) for n in ("a", "bb", "d", "e")]  # c deleted, bb and e created
    page, _, _ = paginate(now, parse(limit=5, **{"continue": token}), 6)
    assert [o["metadata"]["name"] for o in page] == ["bb", "d", "e"]


@pytest.mark.parametrize(
    "q",
    [{"labelSelector": "app!=x"}, {"fieldSelector": "metadata.namespace!=x"}],
)
def test_no_remaining_item_count_with_selectors(q):
    _, token, remaining = paginate(ITEMS, parse_list_options({"limit": "500", **q}, "Pod"), 1)
    assert token and remaining is None


def _forge(token, **changes):
    body = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    body.update(changes)
    return base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()


def _token(rv=100, seed=query.DEFAULT_SEED):
    return paginate(ITEMS, parse(limit=5), rv, seed)[1]


BAD = "invalid continue token: continue key is not valid"


@pytest.mark.parametrize(
    "token, message",
    [
        (lambda: _forge(_token(), rv=1), BAD + ": the token was not issued by this server"),
        (lambda: _forge(_token(), start=["ns0", "zzz"]), BAD + ": the token was not issued by this server"),
        (lambda: _forge(_token(), mac=5), BAD + ": the token was not issued by this server"),
        (lambda: _token(seed=b"another server"), BAD + ": the token was not issued by this server"),
        (lambda: _forge(_token(), extra=1), BAD + ": unexpected fields"),
        (lambda: base64.urlsafe_b64encode(b"[1]").decode().rstrip("="), BAD + ": unexpected fields"),
        (lambda: base64.urlsafe_b64encode(b"{not json").decode().rstrip("="), BAD + ": Expecting property name"),
        (lambda: "%%%", BAD + ": Only base64 data is allowed"),
        (lambda: "é", BAD + ": string argument should contain only ASCII characters"),
    ],
)
def test_forged_or_garbled_continue_token(token, message):
    with pytest.raises(BadRequest) as e:
        parse(**{"continue": token()})
    assert e.value.message.startswith(message)
    assert "\n" not in e.value.message


def test_continue_token_with_resource_version():
    token = _token()
    with pytest.raises(BadRequest) as e:
        parse(resourceVersion="5", **{"continue": token})
    assert e.value.message == "specifying resource version is not allowed when using continue"
    assert parse(resourceVersion="0", **{"continue": token}).continue_rv == 100


def test_continue_token_ignored_by_a_watch():
    assert parse(watch="true", **{"continue": "garbage"}).continue_key is None


def test_continue_token_is_opaque_base64url():
    token = _token()
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    opts = parse(**{"continue": token})
    assert opts.continue_token == token
    assert opts.continue_key == ("ns0", ITEMS[4]["metadata"]["name"])


EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


def test_expired_continue_token():
    opts = parse(limit=5, **{"continue": _token(rv=100)})
    check_continue(opts, 100)  # still served
    check_continue(parse(), 10**9)  # no token
    with pytest.raises(Expired) as e:
        check_continue(opts, 101)
    err = e.value
    assert isinstance(err, ContinueExpired)
    assert err.message == EXPIRED
    status = err.status()
    assert (status["code"], status["reason"]) == (410, "Expired")
    # the Status carries a token that continues the same list from the latest state (rv -1)
    fresh = parse(limit=5, **{"continue": status["metadata"]["continue"]})
    assert fresh.continue_rv == -1 and fresh.continue_key == opts.continue_key
    check_continue(fresh, 10**9)  # never expires
    page, token, _ = paginate(ITEMS, fresh, 300)
    assert page == ITEMS[5:10]
    assert parse(**{"continue": token}).continue_rv == 300
    assert list_resource_version(fresh, 300) == 300
    assert pickle.loads(pickle.dumps(err)).status() == status


# ---- watch -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "q, expected",
    [
        ({}, None),
        ({"resourceVersion": ""}, None),
        ({"resourceVersion": "0"}, None),
        ({"resourceVersion": "42"}, 42),
        ({"sendInitialEvents": "true", RVM: "NotOlderThan"}, None),
        ({"sendInitialEvents": "true", RVM: "NotOlderThan", "resourceVersion": "42"}, None),
        ({"sendInitialEvents": "false", RVM: "NotOlderThan", "resourceVersion": "42"}, 42),
        ({"sendInitialEvents": "false", RVM: "NotOlderThan"}, 99),
        ({"sendInitialEvents": "false", RVM: "NotOlderThan", "resourceVersion": "0"}, 99),
    ],
)
def test_watch_start(q, expected):
    assert watch_start(parse_list_options({"watch": "true", **q}, "Pod"), 99) == expected


def test_watch_start_bad_resource_version():
    with pytest.raises(BadRequest, match='resourceVersion: Invalid value: "x1"'):
        watch_start(ListOptions(watch=True, resource_version="x1"), 5)


# ---- delete options ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "q, body, expected",
    [
        ({}, None, (None, "", {})),
        ({"gracePeriodSeconds": "0"}, None, (0, "", {})),
        ({"gracePeriodSeconds": "30"}, None, (30, "", {})),
        ({"gracePeriodSeconds": "-5"}, None, (1, "", {})),  # upstream: negative means 1s
        ({"propagationPolicy": "Foreground"}, None, (None, "Foreground", {})),
        ({"orphanDependents": "true"}, None, (None, "Orphan", {})),
        ({"orphanDependents": "false"}, None, (None, "Background", {})),
        ({}, {"propagationPolicy": "Background"}, (None, "Background", {})),  # kubectl delete
        ({}, {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 10}, (10, "", {})),
        ({}, {"gracePeriodSeconds": None, "propagationPolicy": None}, (None, "", {})),
        ({}, {"gracePeriodSeconds": -1}, (1, "", {})),
        (
            {},
            {"preconditions": {"uid": "u1", "resourceVersion": "7"}},
            (None, "", {"uid": "u1", "resourceVersion": "7"}),
        ),
        ({}, {"preconditions": {"uid": "u1", "resourceVersion": None}}, (None, "", {"uid": "u1"})),
        # a body wins outright: upstream decodes the query only when there is no body
        ({"gracePeriodSeconds": "0"}, {"propagationPolicy": "Orphan"}, (None, "Orphan", {})),
        ({"gracePeriodSeconds": "x"}, {}, (None, "", {})),
    ],
)
def test_delete_options(q, body, expected):
    assert delete_options(q, body) == expected


@pytest.mark.parametrize(
    "q, body, message",
    [
        ({"gracePeriodSeconds": "x"}, None, 'gracePeriodSeconds: "x" is not an integer'),
        ({}, {"gracePeriodSeconds": "30"}, 'gracePeriodSeconds: "30" is not an integer'),
        ({}, {"gracePeriodSeconds": 1.5}, "gracePeriodSeconds: 1.5 is not an integer"),
        ({}, {"gracePeriodSeconds": True}, "gracePeriodSeconds: true is not an integer"),
        ({}, {"propagationPolicy": 3}, "propagationPolicy: 3 is not a string"),
        ({}, {"orphanDependents": "yes"}, 'orphanDependents: "yes" is not a boolean'),
        ({}, {"preconditions": ["uid"]}, 'preconditions: ["uid"] is not an object'),
        ({}, {"preconditions": {"uid": 5}}, "preconditions.uid: 5 is not a string"),
        ({}, {"kind": "Pod"}, "decoded object cannot be converted to DeleteOptions"),
    ],
)
def test_delete_options_bad_request(q, body, message):
    with pytest.raises(BadRequest) as e:
        delete_options(q, body)
    assert e.value.message == message


@pytest.mark.parametrize(
    "q, body, detail, causes",
    [
        (
            {"propagationPolicy": "Later"},
            None,
            'propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"',
            [
                Cause(
                    "FieldValueNotSupported",
                    'Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"',
                    "propagationPolicy",
                )
            ],
        ),
        (
            {},
            {"propagationPolicy": ""},
            'propagationPolicy: Unsupported value: "": supported values: "Foreground", "Background", "Orphan", "nil"',
            None,
        ),
        (
            {},
            {"propagationPolicy": "Orphan", "orphanDependents": True},
            'propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
            [
                Cause(
                    "FieldValueInvalid",
                    'Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
                    "propagationPolicy",
                )
            ],
        ),
    ],
)
def test_delete_options_invalid(q, body, detail, causes):
    with pytest.raises(Invalid) as e:
        delete_options(q, body)
    assert e.value.message == 'DeleteOptions.meta.k8s.io "" is invalid: ' + detail
    if causes is not None:
        assert list(e.value.causes) == causes
