"""A CustomResourceDefinition with several versions: every served version reachable with every
verb, objects stored once at the storage version, conversion ``None`` (apiVersion rewritten,
fields as they are; a ``Webhook`` strategy calls its webhook), field validation by the
schema of the version the URL names, defaults on write and on read, and the kinds table."""

import pytest
from http_builders import (
    AUTH,
    CRDS,
    call,
    multi_version_crd,
    names,
    serve,
    watch,
    widget,
    widgets,
)

from cluster.api import kinds
from cluster.frontend.customresources import view_from

MERGE = {**AUTH, "content-type": "application/merge-patch+json"}
SERVED = ["v2", "v1", "v1beta1"]  # upstream's priority order: the preferred version first


@pytest.fixture
def api():
    h, cluster = serve()
    code, out = call(h, "POST", CRDS, multi_version_crd())
    assert code == 201, out
    yield h, cluster
    call(h, "DELETE", f"{CRDS}/widgets.example.com")  # the registry is the process's


def stored(cluster, name="w"):
    return cluster.api.store.get("Widget", "default", name)


def test_the_kinds_table_stores_at_the_storage_version_and_serves_every_served_one(api):
    assert kinds.CUSTOM["Widget"].version == "v1" and kinds.BY_KIND["Widget"].api_version == "example.com/v1"
    assert [r.version for r in kinds.CUSTOM_VERSIONS["Widget"]] == SERVED
    assert [r.version for r in kinds.served() if r.kind == "Widget"] == SERVED
    for v in SERVED:
        assert kinds.at_version("example.com", v, "widgets").version == v
    assert kinds.at_version("example.com", "v1alpha1", "widgets") is None  # defined, not served
    assert kinds.at_version("apps", "v1", "deployments") is kinds.BY_KIND["Deployment"]
    assert kinds.at_version("apps", "v2", "deployments") is None


@pytest.mark.parametrize("version", SERVED)
def test_discovery_lists_each_served_version(api, version):
    h, _ = api
    code, listing = call(h, "GET", f"/apis/example.com/{version}")
    assert code == 200 and [r["name"] for r in listing["resources"]] == ["widgets"]
    assert call(h, "GET", "/apis/example.com/v1alpha1")[0] == 404


@pytest.mark.parametrize("version", SERVED)
def test_every_verb_at_every_served_version_stores_once_at_the_storage_version(api, version):
    h, cluster = api
    code, created = call(h, "POST", widgets(version), widget("w", version, size=3))
    assert code == 201 and created["apiVersion"] == f"example.com/{version}" and created["spec"]["size"] == 3
    assert stored(cluster)["apiVersion"] == "example.com/v1"
    for v in SERVED:  # one object, read at every version
        code, got = call(h, "GET", f"{widgets(v)}/w")
        assert code == 200 and got["apiVersion"] == f"example.com/{v}" and got["spec"]["size"] == 3
    code, listing = call(h, "GET", widgets(version))
    assert (listing["kind"], listing["apiVersion"], names(listing)) == ("WidgetList", f"example.com/{version}", ["w"])
    assert listing["items"][0]["apiVersion"] == f"example.com/{version}"
    got["spec"]["size"] = 4
    got["apiVersion"] = f"example.com/{version}"
    code, updated = call(h, "PUT", f"{widgets(version)}/w", got)
    assert code == 200 and updated["apiVersion"] == f"example.com/{version}" and updated["spec"]["size"] == 4
    code, patched = call(h, "PATCH", f"{widgets(version)}/w", {"spec": {"size": 5}}, headers=MERGE)
    assert code == 200 and patched["apiVersion"] == f"example.com/{version}" and patched["spec"]["size"] == 5
    assert stored(cluster)["apiVersion"] == "example.com/v1" and stored(cluster)["spec"]["size"] == 5
    code, gone = call(h, "DELETE", f"{widgets(version)}/w")
    assert code == 200 and gone["details"]["kind"] == "widgets" and stored(cluster) is None


def test_an_unserved_version_is_404_for_every_verb(api):
    h, _ = api
    url = widgets("v1alpha1")
    for method, path, body in (
        ("GET", url, None),
        ("POST", url, widget("w", "v1alpha1")),
        ("DELETE", f"{url}/w", None),
    ):
        assert call(h, method, path, body)[0] == 404


def test_writes_are_checked_by_the_schema_of_the_version_the_url_names(api):
    h, cluster = api
    # color is in v1's schema, not in v1beta1's.
    code, status = call(h, "POST", widgets("v1beta1"), widget("w", "v1beta1", color="red"), fieldValidation="Strict")
    assert (code, status["message"]) == (
        400,
        'Widget in version "v1beta1" cannot be handled as a Widget: strict decoding error: unknown field "spec.color"',
    )
    assert stored(cluster) is None
    code, status = call(h, "POST", widgets("v2"), widget("w", "v2", size="big"))
    assert code == 422 and "spec.size in body must be of type integer" in status["message"]
    assert call(h, "POST", widgets("v1"), widget("w", "v1", color="red"), fieldValidation="Strict")[0] == 201
    assert stored(cluster)["spec"] == {"color": "red"}


def test_conversion_none_keeps_the_fields_and_reads_prune_by_the_stored_versions_schema(api):
    """Upstream's None strategy: the object is stored at v1 with every field it was written
    with; a read decodes it with v1's schema (defaults and pruning of the stored version)."""
    h, cluster = api
    code, created = call(h, "POST", widgets("v2"), widget("w", "v2"))
    assert code == 201 and created["spec"] == {"size": 1}  # v2's defaults; shape is not in v1's schema
    assert stored(cluster)["spec"] == {"size": 1, "shape": "round"}
    assert call(h, "GET", f"{widgets('v2')}/w")[1]["spec"] == {"size": 1}


def test_watch_at_a_served_version_sends_that_version(api):
    h, _ = api

    def act(h):
        call(h, "POST", widgets("v1"), widget("w", "v1", size=2))
        call(h, "PATCH", f"{widgets('v1')}/w", {"spec": {"size": 3}}, headers=MERGE)

    events = watch(h, widgets("v1beta1"), act, 2)
    assert [(e["type"], e["object"]["apiVersion"], e["object"]["spec"]["size"]) for e in events] == [
        ("ADDED", "example.com/v1beta1", 2),
        ("MODIFIED", "example.com/v1beta1", 3),
    ]


def test_a_webhook_conversion_strategy_needs_its_webhook_off_the_storage_version(api):
    # The webhook itself: test_crd_conversion_webhook.py.
    h, cluster = api
    call(h, "DELETE", f"{CRDS}/widgets.example.com")
    crd = multi_version_crd("Webhook")
    crd["spec"]["conversion"]["webhook"] = {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"service": {"namespace": "ops", "name": "convert", "port": 443}},
    }
    code, out = call(h, "POST", CRDS, crd)
    assert code == 201 and out["spec"]["conversion"]["strategy"] == "Webhook"
    assert call(h, "POST", widgets("v1"), widget("w", "v1", size=7))[0] == 201
    code, got = call(h, "GET", f"{widgets('v1beta1')}/w")
    assert code == 500 and 'cannot reach service "ops/convert"' in got["message"]


def test_a_new_storage_version_leaves_stored_objects_where_they_are(api):
    h, cluster = api
    assert call(h, "POST", widgets("v1"), widget("old", "v1", size=1))[0] == 201
    _, crd = call(h, "GET", f"{CRDS}/widgets.example.com")
    for v in crd["spec"]["versions"]:
        v["storage"] = v["name"] == "v2"
    assert call(h, "PUT", f"{CRDS}/widgets.example.com", crd)[0] == 200
    assert kinds.CUSTOM["Widget"].version == "v2"
    assert call(h, "POST", widgets("v1"), widget("new", "v1", size=2))[0] == 201
    assert stored(cluster, "old")["apiVersion"] == "example.com/v1"
    assert stored(cluster, "new")["apiVersion"] == "example.com/v2"
    listing = call(h, "GET", widgets("v1beta1"))[1]
    assert [(o["metadata"]["name"], o["apiVersion"]) for o in listing["items"]] == [
        ("new", "example.com/v1beta1"),
        ("old", "example.com/v1beta1"),
    ]
    # A later write moves the old one to the new storage version.
    assert call(h, "PATCH", f"{widgets('v1')}/old", {"spec": {"size": 9}}, headers=MERGE)[0] == 200
    assert stored(cluster, "old")["apiVersion"] == "example.com/v2"


def test_a_version_no_longer_served_goes_from_the_paths(api):
    h, _ = api
    assert call(h, "POST", widgets("v1"), widget("w", "v1"))[0] == 201
    _, crd = call(h, "GET", f"{CRDS}/widgets.example.com")
    for v in crd["spec"]["versions"]:
        if v["name"] == "v1beta1":
            v["served"] = False
    assert call(h, "PUT", f"{CRDS}/widgets.example.com", crd)[0] == 200
    assert call(h, "GET", f"{widgets('v1beta1')}/w")[0] == 404
    assert call(h, "GET", "/apis/example.com/v1beta1")[0] == 404
    assert call(h, "GET", f"{widgets('v2')}/w")[0] == 200


def test_view_from_reads_schemas_storage_and_served_versions():
    crd = multi_version_crd()
    r = kinds.Resource("Widget", "example.com", "v2", "widgets", True)
    view = view_from(crd, r)
    assert (view.api_version, view.storage_version) == ("example.com/v2", "v1")
    assert set(view.schemas) == {"v1beta1", "v1", "v2", "v1alpha1"}
    assert view.schema["properties"]["spec"]["properties"]["shape"]["default"] == "round"
    assert view_from(crd, kinds.Resource("Widget", "example.com", "v1alpha1", "widgets", True)) is None
    foreign = {"apiVersion": "other.com/v1", "kind": "Widget"}
    assert view.to_storage(dict(foreign)) == foreign  # left for validation to refuse
    assert view.to_storage({"apiVersion": "example.com/v1beta1"}) == {"apiVersion": "example.com/v1"}


def test_openapi_describes_every_served_version(api):
    h, _ = api
    code, doc = call(h, "GET", "/openapi/v2")
    assert code == 200
    assert {f"com.example.{v}.Widget" for v in SERVED} <= set(doc["definitions"])
    assert "com.example.v1alpha1.Widget" not in doc["definitions"]
    for v in SERVED:
        assert f"/apis/example.com/{v}/namespaces/{{namespace}}/widgets/{{name}}" in doc["paths"]
