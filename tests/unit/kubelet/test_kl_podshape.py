"""``podshape.shape_of``: the QoS class, requests and cgroup values kept per shape of pod are
exactly what working them out for each pod gives, and pods differing in anything they read
never share them."""

from __future__ import annotations

import copy

import pytest

from cluster.api.qos import pod_qos_class
from cluster.api.resources import pod_requests
from cluster.kubelet import podshape
from cluster.kubelet.cgroups import pod_cgroups, without_parent


def _pod(*containers: dict, init: tuple = (), overhead: dict | None = None) -> dict:
    spec: dict = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    if overhead is not None:
        spec["overhead"] = overhead
    return {"metadata": {"name": "p", "uid": "u"}, "spec": spec}


def _c(name: str = "app", requests: dict | None = None, limits: dict | None = None, **extra) -> dict:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    return {"name": name, "image": "pause", "resources": resources, **extra}


BURSTABLE = _pod(_c(requests={"cpu": "100m", "memory": "500Mi"}))
VARIANTS = {
    "burstable": BURSTABLE,
    "best effort": _pod(_c()),
    "guaranteed": _pod(_c(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"})),
    "limits only": _pod(_c(limits={"cpu": "2", "memory": "1Gi"})),
    "another name": _pod(_c("web", requests={"cpu": "100m", "memory": "500Mi"})),
    "another cpu": _pod(_c(requests={"cpu": "200m", "memory": "500Mi"})),
    "two containers": _pod(_c(requests={"cpu": "100m"}), _c("side", requests={"cpu": "50m", "memory": "64Mi"})),
    "init container": _pod(_c(requests={"cpu": "100m"}), init=(_c("setup", requests={"cpu": "2"}),)),
    "sidecar": _pod(_c(requests={"cpu": "100m"}), init=(_c("setup", requests={"cpu": "2"}, restartPolicy="Always"),)),
    "overhead": _pod(_c(requests={"cpu": "100m", "memory": "500Mi"}), overhead={"cpu": "250m"}),
}


@pytest.mark.parametrize("name", VARIANTS)
def test_a_shape_gives_what_working_out_the_pod_gives(name):
    for pod in VARIANTS.values():  # every other shape is met first, so the memo is full
        podshape.shape_of(pod)
    pod = copy.deepcopy(VARIANTS[name])
    shape = podshape.shape_of(pod)
    assert shape.qos == pod_qos_class(pod)
    assert shape.requests == pod_requests(pod)
    for qos in ("BestEffort", "Burstable", "Guaranteed"):
        assert shape.cgroup(qos) == without_parent(pod_cgroups(pod, "u", qos))


def test_pods_of_one_shape_share_it_and_other_fields_do_not_matter():
    a = copy.deepcopy(BURSTABLE)
    b = copy.deepcopy(BURSTABLE)
    b["metadata"] = {"name": "other", "uid": "v", "labels": {"app": "x"}}
    b["spec"]["containers"][0]["image"] = "nginx"
    b["spec"]["nodeName"] = "n1"
    assert podshape.shape_of(a) is podshape.shape_of(b)
    assert podshape.shape_of(a).cgroup("Burstable") is podshape.shape_of(b).cgroup("Burstable")


def test_the_shapes_kept_stay_bounded(monkeypatch):
    monkeypatch.setattr(podshape, "_SHAPES", {})
    for i in range(podshape.SHAPES_MAX + 5):
        podshape.shape_of(_pod(_c(requests={"cpu": f"{i + 1}m"})))
    assert len(podshape._SHAPES) == podshape.SHAPES_MAX


def test_a_pod_msgpack_cannot_hold_is_worked_out_alone():
    pod = _pod(_c(requests={"cpu": 2**70}))  # beyond msgpack's integers: no key for it
    shape = podshape.shape_of(pod)
    assert shape.requests == pod_requests(pod) and shape is not podshape.shape_of(pod)
