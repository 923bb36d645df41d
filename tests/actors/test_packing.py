"""The blobs between the components and the apiserver actor: every request type and a
watch reply survive the round trip as the same typed values, and a blob of the wrong shape
is refused."""

from __future__ import annotations

import pickle

import pytest

from actors.packing import pack, pack_reply, unpack, unpack_reply
from cluster.api.errors import Expired
from cluster.api.patches import PodConditions
from cluster.api.requests import Bind, Create, Delete, Evict, Patch, RecordEvent, Update, UpdateStatus, WatchChunk

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


def test_a_watch_reply_comes_back_equal_and_typed():
    reply = {"Pod": WatchChunk([("ADDED", b"\x81\xa1a\x01"), ("DELETED", b"\x80")], 7), "Node": Expired("too old")}
    back = unpack_reply(pack_reply(reply))
    assert back == reply
    assert type(back["Pod"]) is WatchChunk and type(back["Node"]) is Expired and str(back["Node"]) == "too old"


def test_a_blob_that_is_not_a_watch_reply_is_refused_in_one_line():
    with pytest.raises(TypeError, match=r"^watch_packed: expected a pickled dict of watch chunks, got list$"):
        unpack_reply(pickle.dumps([1]))
