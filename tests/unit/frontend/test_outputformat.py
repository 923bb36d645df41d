"""What a resource request's Accept header gets: the object, a Table (meta.k8s.io v1 or v1beta1),
or upstream's 406 when nothing in it can be answered (``outputformat.py``)."""

import pytest
from http_builders import AUTH, CMS, call, config_map, serve

from cluster.api.errors import NotAcceptable
from cluster.frontend.outputformat import table_version

KUBECTL_GET = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
METADATA_CLIENT = (
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)
NOT_ACCEPTABLE = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"


@pytest.mark.parametrize(
    "accept, expected",
    [
        ("", ""),
        ("application/json", ""),
        ("application/json, */*", ""),
        ("application/vnd.kubernetes.protobuf,application/json", ""),
        ("*/*", ""),
        (KUBECTL_GET, "meta.k8s.io/v1"),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io", "meta.k8s.io/v1beta1"),
        ("application/yaml;as=Table;v=v1;g=meta.k8s.io", "meta.k8s.io/v1"),
        ("*/*;as=Table;v=v1;g=meta.k8s.io", "meta.k8s.io/v1"),
        # a clause it cannot answer is passed over for the next one
        ("application/json;as=Foo;v=v1;g=meta.k8s.io,application/json", ""),
        (
            "application/json;as=Table;v=v2;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            "meta.k8s.io/v1beta1",
        ),
        ("application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io", "meta.k8s.io/v1"),
        (METADATA_CLIENT, ""),
    ],
)
def test_what_each_accept_gets(accept, expected):
    assert table_version(accept) == expected


@pytest.mark.parametrize(
    "accept",
    [
        "application/json;as=Foo;v=v1;g=meta.k8s.io",
        "application/json;as=Table;v=v2;g=meta.k8s.io",
        "application/json;as=Table;v=v1;g=other.io",
        "application/json;as=Table",  # no group and version: upstream converts to nothing
        "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",  # Tables are JSON or YAML
        "text/html",
    ],
)
def test_nothing_answerable_is_406(accept):
    with pytest.raises(NotAcceptable) as e:
        table_version(accept)
    assert e.value.message == NOT_ACCEPTABLE


@pytest.fixture(scope="module")
def api():
    h, _ = serve()
    assert call(h, "POST", CMS, config_map("c", {"k": "v"}))[0] == 201
    return h


@pytest.mark.parametrize("path", [CMS, f"{CMS}/c"])
def test_a_406_is_upstreams_status_for_lists_gets_and_watches(api, path):
    code, status = call(api, "GET", path, headers={**AUTH, "accept": "application/json;as=Foo;v=v1;g=meta.k8s.io"})
    assert (code, status["reason"], status["message"]) == (406, "NotAcceptable", NOT_ACCEPTABLE)
    code, _ = call(api, "GET", CMS, headers={**AUTH, "accept": "application/json;as=Foo;v=v1;g=meta.k8s.io"}, watch=1)
    assert code == 406


def test_a_write_asking_for_nothing_answerable_is_refused_before_it_is_made(api):
    headers = {**AUTH, "accept": "application/json;as=Foo;v=v1;g=meta.k8s.io"}
    assert call(api, "POST", CMS, config_map("never"), headers=headers)[0] == 406
    assert call(api, "GET", f"{CMS}/never")[0] == 404
    assert call(api, "DELETE", f"{CMS}/c", headers=headers)[0] == 406
    assert call(api, "GET", f"{CMS}/c")[0] == 200


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_tables_of_both_versions(api, version):
    headers = {**AUTH, "accept": f"application/json;as=Table;v={version};g=meta.k8s.io"}
    for path in (CMS, f"{CMS}/c"):
        code, table = call(api, "GET", path, headers=headers)
        assert code == 200 and (table["kind"], table["apiVersion"]) == ("Table", f"meta.k8s.io/{version}")
        row = table["rows"][0]
        assert row["cells"][0] == "c" and row["object"]["apiVersion"] == f"meta.k8s.io/{version}"


def test_a_resource_without_tables_passes_table_clauses_over():
    assert table_version("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", convertible=False) == ""
    with pytest.raises(NotAcceptable):
        table_version("application/json;as=Table;v=v1;g=meta.k8s.io", convertible=False)


def test_upstreams_conformance_case_a_table_of_a_self_subject_access_review_is_406(api):
    """Upstream's "should return a 406 for a backend which does not implement metadata"."""
    url = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    sar = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}},
    }
    headers = {**AUTH, "accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    code, status = call(api, "POST", url, sar, headers=headers)
    assert (code, status["reason"], status["message"]) == (406, "NotAcceptable", NOT_ACCEPTABLE)
    assert call(api, "POST", url, sar)[0] == 201
