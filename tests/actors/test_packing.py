"""The write blob between the components and the apiserver actor: every request type
survives the round trip as the same typed value, and a blob that is not a list is refused."""

from __future__ import annotations

import pickle

import pytest

from actors.packing import pack, unpack
from cluster.api.patches import PodConditions
from cluster.api.requests import Bind, Create, Delete, Evict, Patch, RecordEvent, Update, UpdateStatus

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {}}

REQUESTS = [
    Create(POD, slow_start=("rs-uid", 2)),
    Update(POD),
    UpdateStatus("Pod", "default", "p", "u1", {"phase": "Running"}),
    Patch("Pod", "default", "p", "u1", PodConditions(({"type": "DisruptionTarget", "status": "True"},))),
    Delete("Pod", "default", "p", "u1", 0, "Background"),
    Bind("default", "p", "u1", "n1"),
    Evict("default", "p", "u1", 30),
    RecordEvent({"kind": "Event", "reason": "Scheduled"}),
]


def test_every_request_type_comes_back_equal_and_typed():
    back = unpack(pack(REQUESTS))
    assert back == REQUESTS
    assert [type(r) for r in back] == [type(r) for r in REQUESTS]


def test_a_blob_that_is_not_a_list_of_requests_is_refused_in_one_line():
    with pytest.raises(TypeError, match=r"^write_packed: expected a pickled list of requests, got dict$"):
        unpack(pickle.dumps({"kind": "Pod"}))
