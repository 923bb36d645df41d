"""A pod's head read from its bytes agrees with the decoded pod, field by field."""

from __future__ import annotations

import copy

import pytest

from cluster.api.codec import encode
from cluster.api.podhead import head_of, read_head, spec_key

BASE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "pause"}], "nodeName": "n1", "terminationGracePeriodSeconds": 10},
    "status": {"phase": "Running", "startTime": "2026-01-01T00:00:05Z"},
}


def variant(**changes) -> dict:
    pod = copy.deepcopy(BASE)
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target = pod
        for p in parents:
            target = target.setdefault(p, {})
        if value is None:
            target.pop(leaf, None)
        else:
            target[leaf] = value
    return pod


CASES = {
    "running": variant(),
    "pending, unbound, no status": variant(spec__nodeName=None, status=None),
    "deleting with a grace": variant(
        metadata__deletionTimestamp="2026-01-01T00:01:00Z", metadata__deletionGracePeriodSeconds=0
    ),
    "succeeded": variant(status__phase="Succeeded"),
    "no labels, no spec grace": variant(metadata__labels=None, spec__terminationGracePeriodSeconds=None),
    "made-up DELETED (key only)": {"kind": "Pod", "metadata": {"namespace": "shop", "name": "web-1"}},
}


@pytest.mark.parametrize("pod", CASES.values(), ids=CASES.keys())
def test_read_head_agrees_with_the_decoded_pod(pod):
    from_bytes, from_dict = read_head(encode(pod)), head_of(pod)
    assert from_bytes[:9] == from_dict[:9]
    assert from_bytes.spec_key == from_dict.spec_key == spec_key(pod)


def test_the_fields_read():
    h = read_head(encode(CASES["deleting with a grace"]))
    assert (h.namespace, h.name, h.uid, h.node_name) == ("shop", "web-1", "u-1", "n1")
    assert (h.phase, h.start_time, h.deleting, h.grace, h.spec_grace) == (
        "Running",
        "2026-01-01T00:00:05Z",
        True,
        0,
        10,
    )
    assert not h.terminal and read_head(encode(CASES["succeeded"])).terminal


@pytest.mark.parametrize(
    "change",
    [
        {"metadata__labels": {"app": "db"}},
        {"spec__nodeName": "n2"},
        {"spec__containers": [{"name": "c", "image": "v2"}]},
    ],
    ids=["relabelled", "moved", "new image"],
)
def test_spec_key_changes_with_the_spec_or_the_labels(change):
    assert read_head(encode(variant(**change))).spec_key != read_head(encode(BASE)).spec_key


def test_spec_key_ignores_status_and_bookkeeping():
    touched = variant(status__phase="Failed", metadata__resourceVersion="9", metadata__deletionTimestamp="x")
    assert read_head(encode(touched)).spec_key == read_head(encode(BASE)).spec_key


@pytest.mark.parametrize(
    "data",
    [encode({"metadata": "not a map"}), encode({"metadata": {"name": 7}}), encode([1, 2]), b"\xc1"],
    ids=["metadata not a map", "name not a string", "not a map", "not msgpack"],
)
def test_bytes_that_are_not_a_pod_head_raise_value_error(data):
    with pytest.raises(ValueError, match="not a pod head"):
        read_head(data)
