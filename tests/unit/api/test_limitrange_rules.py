"""LimitRange against upstream's LimitRanger vectors: defaults filled into containers that
omit them (with the ``kubernetes.io/limit-ranger`` annotation), and min, max and
maxLimitRequestRatio for the Container, Pod and PersistentVolumeClaim types, word for word."""

import pytest

from cluster.api.limitrange import ANNOTATION, fill_defaults, message, violations


def lr(*items):
    return {"kind": "LimitRange", "spec": {"limits": list(items)}}


def pod(*containers, init=()):
    spec = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def c(name="app", requests=None, limits=None):
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": name, "image": "x", "resources": res}


DEFAULTS = lr({"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"}})


def test_missing_limits_and_requests_are_filled_and_annotated():
    p = pod(c("a"), c("b", requests={"cpu": "1"}, limits={"memory": "1Gi"}), init=[c("i", limits={"cpu": "1"})])
    assert fill_defaults(p, [DEFAULTS])
    got = [x["resources"] for x in p["spec"]["containers"] + p["spec"]["initContainers"]]
    assert got == [
        {"requests": {"cpu": "100m"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
        {"requests": {"cpu": "1"}, "limits": {"memory": "1Gi", "cpu": "500m"}},
        {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "256Mi"}},
    ]
    assert p["metadata"]["annotations"][ANNOTATION] == (
        "LimitRanger plugin set: cpu request for container a; cpu, memory limit for container a; "
        "cpu limit for container b; cpu request for init container i; memory limit for init container i"
    )


def test_nothing_to_fill_sets_no_annotation():
    p = pod(c(requests={"cpu": "1"}, limits={"cpu": "1", "memory": "1Gi"}))
    assert not fill_defaults(p, [lr({"type": "Container", "default": {"cpu": "2"}})])
    assert "annotations" not in p["metadata"]
    assert not fill_defaults(pod(c()), [lr({"type": "Pod", "max": {"cpu": "2"}})])  # only Container items default


@pytest.mark.parametrize(
    "item,container,want",
    [
        ({"min": {"cpu": "100m"}}, c(), ["minimum cpu usage per Container is 100m.  No request is specified"]),
        (
            {"min": {"cpu": "100m"}},
            c(requests={"cpu": "50m"}),
            ["minimum cpu usage per Container is 100m, but request is 50m"],
        ),
        (
            {"min": {"memory": "64Mi"}},
            c(requests={"memory": "64Mi"}, limits={"memory": "32Mi"}),
            ["minimum memory usage per Container is 64Mi, but limit is 32Mi"],
        ),
        (
            {"max": {"cpu": "1"}},
            c(requests={"cpu": "1"}),
            ["maximum cpu usage per Container is 1.  No limit is specified"],
        ),
        ({"max": {"cpu": "1"}}, c(limits={"cpu": "2"}), ["maximum cpu usage per Container is 1, but limit is 2"]),
        (
            {"max": {"cpu": "1"}},
            c(requests={"cpu": "1500m"}, limits={"cpu": "1"}),
            ["maximum cpu usage per Container is 1, but request is 1500m"],
        ),
        (
            {"maxLimitRequestRatio": {"cpu": "2"}},
            c(limits={"cpu": "1"}),
            ["cpu max limit to request ratio per Container is 2, but no request is specified or request is 0"],
        ),
        (
            {"maxLimitRequestRatio": {"cpu": "2"}},
            c(requests={"cpu": "100m"}),
            ["cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0"],
        ),
        (
            {"maxLimitRequestRatio": {"cpu": "2"}},
            c(requests={"cpu": "100m"}, limits={"cpu": "250m"}),
            ["cpu max limit to request ratio per Container is 2, but provided ratio is 2.500000"],
        ),
        ({"maxLimitRequestRatio": {"cpu": "2"}}, c(requests={"cpu": "100m"}, limits={"cpu": "200m"}), []),
        ({"min": {"cpu": "100m"}, "max": {"cpu": "1"}}, c(requests={"cpu": "500m"}, limits={"cpu": "1"}), []),
    ],
)
def test_container_bounds(item, container, want):
    assert violations("Pod", pod(container), [lr({"type": "Container", **item})]) == want


def test_pod_bounds_check_the_pods_effective_totals():
    p = pod(
        c("a", requests={"cpu": "600m"}, limits={"cpu": "600m"}),
        c("b", requests={"cpu": "600m"}, limits={"cpu": "600m"}),
    )
    assert violations("Pod", p, [lr({"type": "Pod", "max": {"cpu": "1"}})]) == [
        "maximum cpu usage per Pod is 1, but limit is 1200m"
    ]


def test_claim_bounds_read_the_storage_request():
    claim = {"spec": {"resources": {"requests": {"storage": "20Gi"}}}}
    item = {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}
    assert violations("PersistentVolumeClaim", claim, [lr(item)]) == [
        "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    ]
    assert violations("PersistentVolumeClaim", {"spec": {}}, [lr(item)]) == [
        "minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified",
        "maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified",
    ]


def test_several_problems_read_as_one_bracketed_list():
    assert message(["a"]) == "a"
    assert message(["a", "b"]) == "[a, b]"
