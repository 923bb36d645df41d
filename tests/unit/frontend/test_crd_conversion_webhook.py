"""CustomResourceDefinition conversion webhooks given by URL: the ConversionReview kubemu
sends, every check on the answer (each failure a 500 Status in upstream's words that changes
nothing), and the verbs at a version other than the storage version converting through a
local webhook server (HTTP and HTTPS with the caBundle trusted)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson
import pytest
from aiohttp import web
from http_builders import AUTH, CRDS, TABLE, call, multi_version_crd, names, run, serve, watch, widget, widgets
from webhookserver import WebhookServer, converted

from cluster.frontend import crdconversion
from cluster.frontend.crdconversion import ConversionFailed, Webhook

MERGE = {**AUTH, "content-type": "application/merge-patch+json"}
WIDGET = "example.com/v1, Kind=Widget"


def _rename(obj: dict[str, Any]) -> dict[str, Any]:
    """v1 keeps ``spec.color``, v2 calls it ``spec.shape``."""
    spec = dict(obj.get("spec") or {})
    if obj["apiVersion"] == "example.com/v2" and "color" in spec:
        spec["shape"] = spec.pop("color")
    if obj["apiVersion"] == "example.com/v1" and "shape" in spec:
        spec["color"] = spec.pop("shape")
    return {**obj, "spec": spec}


class Converter(WebhookServer):
    """Conversion webhooks by name; ``reviews`` holds what each received."""

    def __init__(self, tls: bool = False) -> None:
        self.reviews: list[tuple[str, dict[str, Any]]] = []
        super().__init__(tls)

    async def convert(self, name: str, review: dict[str, Any], request: web.Request) -> dict[str, Any]:
        self.reviews.append((f"{name}?{request.query_string}", review))
        answer = converted(review, _rename)
        response = answer["response"]
        if name == "failure":
            response["result"] = {"status": "Failure", "message": "v2 is not ready"}
        elif name == "wrong-uid":
            response["uid"] = "not-the-request"
        elif name == "fewer":
            response["convertedObjects"] = response["convertedObjects"][1:]
        elif name == "renamed":
            response["convertedObjects"][0]["metadata"]["name"] = "other"
        elif name == "wrong-version":
            response["convertedObjects"][0]["apiVersion"] = "example.com/v1beta1"
        elif name == "slow":
            await asyncio.sleep(2)
        return answer


@pytest.fixture(scope="module")
def hooks():
    s = Converter()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def tls_hooks():
    s = Converter(tls=True)
    yield s
    s.stop()


def _crd(client_config: dict[str, Any], versions: tuple[str, ...] = ("v1",)) -> dict[str, Any]:
    crd = multi_version_crd("Webhook")
    crd["spec"]["conversion"]["webhook"] = {"conversionReviewVersions": list(versions), "clientConfig": client_config}
    return crd


@pytest.fixture
def api():
    h, cluster = serve()

    def define(client_config: dict[str, Any], versions: tuple[str, ...] = ("v1",)) -> None:
        """The definition with this webhook: created, or updated (its objects stay)."""
        crd = _crd(client_config, versions)
        code, current = call(h, "GET", f"{CRDS}/widgets.example.com")
        if code == 404:
            code, out = call(h, "POST", CRDS, crd)
            assert code == 201, out
            return
        current["spec"]["conversion"] = crd["spec"]["conversion"]
        code, out = call(h, "PUT", f"{CRDS}/widgets.example.com", current)
        assert code == 200, out

    yield h, cluster, define
    call(h, "DELETE", f"{CRDS}/widgets.example.com")  # the registry is the process's


def _stored(cluster, name: str = "w") -> dict[str, Any]:
    return cluster.api.store.get("Widget", "default", name)


# ---- the review and the checks on its answer --------------------------------------------------


def _obj(name: str = "w", version: str = "v1", **spec: Any) -> dict[str, Any]:
    out = widget(name, version, **spec)
    out["metadata"] |= {"namespace": "default", "uid": f"uid-{name}", "resourceVersion": "7"}
    return out


def test_webhook_of_reads_the_definitions_conversion():
    assert crdconversion.webhook_of(multi_version_crd("None")) is None
    assert crdconversion.webhook_of(multi_version_crd()) is None
    hook = crdconversion.webhook_of(_crd({"url": "https://x/convert", "caBundle": "Zm9v"}, ("v1beta1", "v1")))
    assert hook == Webhook("widgets.example.com", {"url": "https://x/convert", "caBundle": "Zm9v"}, ("v1beta1", "v1"))
    assert hook.timeout == 30.0  # upstream's webhook client's, conversion webhooks name none


@pytest.mark.parametrize(
    "versions, sent", [(("v1",), "v1"), (("v1beta1", "v1"), "v1beta1"), (("v2", "v1"), "v1"), (("v2",), "")]
)
def test_the_review_is_of_the_first_version_kubemu_knows(versions, sent):
    hook = Webhook("widgets.example.com", {}, versions)
    if not sent:
        with pytest.raises(ConversionFailed, match="^no supported conversion review versions$"):
            crdconversion.review(hook, [_obj()], "example.com/v2", "u1")
        return
    version, body = crdconversion.review(hook, [_obj()], "example.com/v2", "u1")
    assert (version, body["apiVersion"], body["kind"]) == (sent, f"apiextensions.k8s.io/{sent}", "ConversionReview")
    assert body["request"] == {"uid": "u1", "desiredAPIVersion": "example.com/v2", "objects": [_obj()]}


def _answer(uid: str = "u1", **response: Any) -> bytes:
    body = {"uid": uid, "result": {"status": "Success"}, "convertedObjects": []} | response
    return orjson.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": body})


@pytest.mark.parametrize(
    "version, body, error",
    [
        ("v1", _answer("u2"), 'expected response.uid="u1", got "u2"'),
        ("v1", _answer(result={"status": "Failure", "message": "no"}), "no"),
        ("v1", _answer(result={"status": "Failure"}), "response.result.status was 'Failure', not 'Success'"),
        ("v1", _answer(result={}), "response.result.status was '', not 'Success'"),
        ("v1", b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}', "no response provided"),
        (
            "v1",
            b'{"apiVersion":"v1","kind":"Status","response":{}}',
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status",
        ),
        ("v1", b"[]", "the answer is not a ConversionReview object"),
        ("v1", b"{not json", "unexpected character"),
    ],
)
def test_a_bad_answer_says_what_is_wrong(version, body, error):
    with pytest.raises(crdconversion._Bad) as e:
        crdconversion.converted_objects("u1", version, body)
    assert str(e.value).startswith(error)


def test_a_v1beta1_answer_is_not_held_to_the_uid():
    got = crdconversion.converted_objects("u1", "v1beta1", _answer("other", convertedObjects=[{"a": 1}]))
    assert got == [{"a": 1}]


def _bad(change: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {**_obj(version="v2"), **change}
    if meta is not None:
        out["metadata"] = {**out["metadata"], **meta}
    return out


@pytest.mark.parametrize(
    "converted_obj, index, error",
    [
        (_bad({"apiVersion": "example.com/v1"}), None, "returned invalid object at index 0: invalid groupVersion "),
        (
            _bad({"apiVersion": "example.com/v1"}),
            2,
            "returned invalid converted object at index 2: invalid groupVersion ",
        ),
        (_bad({"kind": "Gadget"}), None, "invalid object at index 0: invalid kind (expected Widget, received Gadget)"),
        (_bad({}, {"name": "x"}), None, "returned invalid object: must have the same name: w != x"),
        (_bad({}, {"name": "x"}), 0, "returned invalid converted object at index 0: must have the same name: w != x"),
        (_bad({}, {"namespace": "x"}), None, "must have the same namespace: default != x"),
        (_bad({}, {"uid": "x"}), None, "must have the same UID: uid-w != x"),
        # Without (readable) metadata the name is the first thing found to differ, as upstream's.
        (
            {k: v for k, v in _bad({}).items() if k != "metadata"},
            None,
            "invalid object: must have the same name: w != ",
        ),
        (_bad({"metadata": "m"}), 1, "invalid converted object at index 1: must have the same name: w != "),
        (
            _bad({}, {"annotations": ["a"]}),
            1,
            "invalid metadata in object at index 1: invalid metadata.annotations of type",
        ),
        (_bad({}, {"labels": {"a": 1}}), None, "invalid metadata: metadata.labels[a] must be a string, but is int64"),
        (_bad({}, {"labels": {"a b": "c"}}), None, 'invalid metadata: metadata.labels: Invalid value: "a b"'),
        ("text", None, "returned invalid object at index 0: Object 'Kind' is missing in '\"text\"'"),
    ],
)
def test_each_converted_object_is_checked(converted_obj, index, error):
    with pytest.raises(ConversionFailed) as e:
        crdconversion.checked(_obj(), converted_obj, "example.com/v2", WIDGET, index)
    assert e.value.message.startswith(f"conversion webhook for {WIDGET} ")
    assert error in e.value.message
    status = e.value.status()
    assert (status["code"], "reason" in status, status["status"]) == (500, False, "Failure")


def test_a_converted_object_keeps_its_metadata_but_labels_and_annotations():
    original = _obj()
    original["metadata"] |= {"labels": {"a": "1"}, "annotations": {"n": "1"}, "generation": 3}
    said = _obj(version="v2", size=2)
    said["metadata"] = {
        "name": "w",
        "namespace": "default",
        "uid": "uid-w",
        "labels": {"a": "2"},
        "generation": 99,
        "resourceVersion": "1",
    }
    got = crdconversion.checked(original, said, "example.com/v2", WIDGET, None)
    assert got["metadata"] == {  # annotations gone with the webhook's; the rest the original's
        "name": "w",
        "namespace": "default",
        "uid": "uid-w",
        "resourceVersion": "7",
        "labels": {"a": "2"},
        "generation": 3,
    }
    assert got["spec"] == {"size": 2} and original["metadata"]["labels"] == {"a": "1"}


def test_only_objects_at_another_version_are_sent(hooks):
    hook = Webhook("w", {"url": hooks.url("convert/ok")}, ("v1",))
    objs = [_obj("a", "v2"), _obj("b", "v1", color="red"), _obj("c", "v2")]
    hooks.reviews.clear()
    got = run(crdconversion.convert(hook, copy.deepcopy(objs), "example.com/v2"))
    assert [r["request"]["objects"] for _, r in hooks.reviews] == [[objs[1]]]
    assert got[0] == objs[0] and got[2] == objs[2]
    assert got[1]["spec"] == {"shape": "red"} and got[1]["apiVersion"] == "example.com/v2"
    hooks.reviews.clear()
    assert run(crdconversion.convert(hook, [objs[0]], "example.com/v2")) == [objs[0]]
    assert hooks.reviews == []  # nothing to convert: no call


@pytest.mark.parametrize(
    "url, error",
    [
        ("convert/fewer", f"conversion webhook for {WIDGET} returned 1 objects, expected 2"),
        ("convert/failure", f"conversion webhook for {WIDGET} failed: v2 is not ready"),
        ("convert/wrong-uid", f'conversion webhook for {WIDGET} failed: expected response.uid="'),
        ("convert/renamed", "returned invalid converted object at index 0: must have the same name: a != other"),
        (
            "convert/wrong-version",
            "index 0: invalid groupVersion (expected example.com/v2, received example.com/v1beta1)",
        ),
    ],
)
def test_a_list_converted_wrongly_fails_whole(hooks, url, error):
    hook = Webhook("w", {"url": hooks.url(url)}, ("v1",))
    with pytest.raises(ConversionFailed) as e:
        run(crdconversion.convert(hook, [_obj("a"), _obj("b")], "example.com/v2"))
    assert error in e.value.message


def test_an_unreachable_webhook_and_a_slow_one_fail(hooks):
    closed = Webhook("w", {"url": "http://127.0.0.1:9/convert"}, ("v1",))
    with pytest.raises(ConversionFailed) as e:
        run(crdconversion.convert(closed, [_obj()], "example.com/v2", single=True))
    assert e.value.message.startswith(
        f'conversion webhook for {WIDGET} failed: Post "http://127.0.0.1:9/convert?timeout=30s": '
    )
    slow = Webhook("w", {"url": hooks.url("convert/slow")}, ("v1",), timeout=0.3)
    with pytest.raises(ConversionFailed) as e:
        run(crdconversion.convert(slow, [_obj()], "example.com/v2", single=True))
    assert e.value.message == (
        f'conversion webhook for {WIDGET} failed: Post "{hooks.url("convert/slow")}?timeout=0s": context deadline exceeded'
    )


def test_a_service_cannot_be_reached():
    hook = Webhook("w", {"service": {"namespace": "ops", "name": "conv", "port": 443}}, ("v1",))
    with pytest.raises(ConversionFailed) as e:
        run(crdconversion.convert(hook, [_obj()], "example.com/v2", single=True))
    assert e.value.message == (
        f'conversion webhook for {WIDGET} failed: kubemu cannot reach service "ops/conv": '
        "its pods are emulated and serve no HTTP (give the webhook a url)"
    )


# ---- the verbs at a version other than the storage version ------------------------------------


def test_a_write_at_another_version_is_stored_converted_and_answered_converted(api, hooks):
    h, cluster, define = api
    define({"url": hooks.url("convert/ok")})
    hooks.reviews.clear()
    code, out = call(h, "POST", widgets("v2"), widget("w", "v2", size=3, shape="square"))
    assert code == 201, out
    assert (out["apiVersion"], out["spec"]) == ("example.com/v2", {"size": 3, "shape": "square"})
    assert _stored(cluster)["apiVersion"] == "example.com/v1"
    assert _stored(cluster)["spec"] == {"size": 3, "color": "square"}
    sent = [(path, r["apiVersion"], r["request"]["desiredAPIVersion"]) for path, r in hooks.reviews]
    assert sent == [
        ("ok?timeout=30s", "apiextensions.k8s.io/v1", "example.com/v1"),  # to store
        ("ok?timeout=30s", "apiextensions.k8s.io/v1", "example.com/v2"),  # to answer
    ]
    hooks.reviews.clear()
    code, got = call(h, "GET", f"{widgets('v1')}/w")  # the storage version: no call
    assert (code, got["spec"], hooks.reviews) == (200, {"size": 3, "color": "square"}, [])
    code, got = call(h, "GET", f"{widgets('v2')}/w")
    assert (code, got["apiVersion"], got["spec"]) == (200, "example.com/v2", {"size": 3, "shape": "square"})
    assert got["metadata"]["uid"] == _stored(cluster)["metadata"]["uid"]


def test_a_list_at_another_version_is_converted_in_one_review(api, hooks):
    h, cluster, define = api
    define({"url": hooks.url("convert/ok")})
    for name in ("a", "b"):
        assert call(h, "POST", widgets("v1"), widget(name, "v1", color="red"))[0] == 201
    hooks.reviews.clear()
    code, got = call(h, "GET", widgets("v2"))
    assert code == 200 and (got["kind"], got["apiVersion"], names(got)) == ("WidgetList", "example.com/v2", ["a", "b"])
    assert [i["spec"] for i in got["items"]] == [{"shape": "red", "size": 1}] * 2  # v2's default too
    assert [len(r["request"]["objects"]) for _, r in hooks.reviews] == [2]
    code, table = call(h, "GET", widgets("v2"), headers=TABLE, includeObject="Object")
    assert code == 200 and [r["cells"][0] for r in table["rows"]] == ["a", "b"]
    assert {(r["object"]["apiVersion"], r["object"]["spec"]["shape"]) for r in table["rows"]} == {
        ("example.com/v2", "red")
    }


def test_a_patch_and_a_watch_at_another_version(api, hooks):
    h, cluster, define = api
    define({"url": hooks.url("convert/ok")})
    assert call(h, "POST", widgets("v1"), widget("w", "v1", color="red", size=2))[0] == 201
    code, got = call(h, "PATCH", f"{widgets('v2')}/w", {"spec": {"shape": "blue"}}, MERGE)
    assert (code, got["spec"]) == (200, {"size": 2, "shape": "blue"}), got
    assert _stored(cluster)["spec"] == {"size": 2, "color": "blue"}

    def act(h):
        call(h, "PATCH", f"{widgets('v1')}/w", {"spec": {"color": "green"}}, MERGE)

    events = watch(h, widgets("v2"), act, 2)
    assert [(e["type"], e["object"]["apiVersion"], e["object"]["spec"]["shape"]) for e in events] == [
        ("ADDED", "example.com/v2", "blue"),
        ("MODIFIED", "example.com/v2", "green"),
    ]


def test_a_failing_webhook_answers_500_and_changes_nothing(api, hooks):
    h, cluster, define = api
    define({"url": hooks.url("convert/ok")})
    assert call(h, "POST", widgets("v1"), widget("w", "v1", color="red"))[0] == 201
    define({"url": hooks.url("convert/failure")})
    expected = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"conversion webhook for {WIDGET} failed: v2 is not ready",
        "code": 500,
    }
    assert call(h, "GET", f"{widgets('v2')}/w") == (500, expected)
    assert call(h, "GET", widgets("v2")) == (500, expected)
    before = _stored(cluster)
    code, out = call(h, "PATCH", f"{widgets('v2')}/w", {"spec": {"shape": "blue"}}, MERGE)
    assert code == 500 and _stored(cluster) == before
    code, out = call(h, "POST", widgets("v2"), widget("x", "v2", shape="blue"))
    assert (code, out["message"]) == (500, "conversion webhook for example.com/v2, Kind=Widget failed: v2 is not ready")
    assert call(h, "GET", f"{widgets('v1')}/x")[0] == 404
    assert call(h, "GET", f"{widgets('v1')}/w")[0] == 200  # the storage version needs no webhook


def test_a_webhook_as_a_service_is_refused_clearly(api):
    h, cluster, define = api
    define({"service": {"namespace": "ops", "name": "conv", "port": 443}})
    code, out = call(h, "POST", widgets("v2"), widget("x", "v2", shape="blue"))
    assert code == 500 and 'kubemu cannot reach service "ops/conv"' in out["message"]
    assert call(h, "GET", f"{widgets('v1')}/x")[0] == 404


def test_https_trusts_the_ca_bundle_and_only_it(api, tls_hooks):
    h, cluster, define = api
    define({"url": tls_hooks.url("convert/ok"), "caBundle": tls_hooks.ca_bundle})
    code, out = call(h, "POST", widgets("v2"), widget("w", "v2", shape="blue"))
    assert (code, out["spec"]) == (201, {"shape": "blue", "size": 1}), out
    define({"url": tls_hooks.url("convert/ok")})  # no caBundle: the system's roots do not know it
    code, out = call(h, "GET", f"{widgets('v2')}/w")
    assert code == 500 and "certificate verify failed" in out["message"], out


def test_a_v1beta1_review_is_sent_when_the_definition_asks_for_it(api, hooks):
    h, cluster, define = api
    define({"url": hooks.url("convert/ok")}, ("v1beta1",))
    hooks.reviews.clear()
    assert call(h, "POST", widgets("v2"), widget("w", "v2", shape="blue"))[0] == 201
    assert {r["apiVersion"] for _, r in hooks.reviews} == {"apiextensions.k8s.io/v1beta1"}
