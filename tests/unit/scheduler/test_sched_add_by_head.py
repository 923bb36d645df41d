"""New pending pods behind a backlog are queued as their bytes, never decoded, when a pod
with the same encoded spec, labels and namespace was parsed lately (``_add_by_head``,
``PodInfo.from_head``). Whatever comes that way must be what parsing the object and then
keeping it as bytes gives: these tests compare the two, pod by pod and for whole streams.
"""

from __future__ import annotations

import copy
import random

import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.api.codec import encode
from cluster.api.podhead import bound_key_from_bytes, bound_spec_key, read_head
from cluster.runtime.component import WatchEvent
from cluster.scheduler import Scheduler, intake
from cluster.scheduler.podinfo import PodInfo, ResourceColumns

_SKIP = {"_pod", "_raw", "node", "_template"}


def slots(pinfo: PodInfo) -> dict:
    out = {name: getattr(pinfo, name) for name in PodInfo.__slots__ if name not in _SKIP}
    out["terms"] = pinfo.terms is not None  # parsed afresh per pod (never templated)
    out["raw"] = pinfo._raw
    out["compacted"] = pinfo.compacted
    return out


def shapes() -> list[dict]:
    base = make_pod("a", uid="ua").req(cpu="250m", memory="1Gi").label("app", "web").prio(7)
    started = copy.deepcopy(base)
    started["status"] = {"phase": "Pending", "startTime": "2026-01-01T00:00:05Z"}
    return [
        base,
        make_pod("b", uid="ub"),  # no requests, no labels
        make_pod("c", namespace="team", uid="uc").req(cpu="1").host_port(8080),
        copy.deepcopy(base).scheduler("other-scheduler"),
        started,
        _gated(copy.deepcopy(base)),
        copy.deepcopy(base).nominated("n2"),
    ]


def _gated(pod: dict) -> dict:
    pod["spec"]["schedulingGates"] = [{"name": "example.com/wait"}, {"name": "second"}]
    return pod


@pytest.mark.parametrize("pod", shapes(), ids=lambda p: p["metadata"]["name"] + str(len(encode(p))))
def test_a_pod_from_its_head_is_the_parsed_pod_kept_as_bytes(pod):
    columns = ResourceColumns(lambda: None)
    raw = encode(pod)
    head = read_head(raw)
    columns.remember_head(head, PodInfo(copy.deepcopy(pod), columns))
    template = columns.template_of_head(head)
    assert template is not None
    want = PodInfo(copy.deepcopy(pod), columns)
    want.compact(raw, head=head)
    assert slots(PodInfo.from_head(head, raw, template)) == slots(want)
    assert PodInfo.from_head(head, raw, template).pod == pod


def test_templates_are_kept_by_bytes_for_the_last_few_and_never_with_terms():
    columns = ResourceColumns(lambda: None)
    heads = []
    for i in range(6):
        pod = make_pod(f"p{i}", uid=f"u{i}").label("v", str(i))
        heads.append(read_head(encode(pod)))
        columns.remember_head(heads[-1], PodInfo(pod, columns))
    assert [columns.template_of_head(h) is not None for h in heads] == [False, False, True, True, True, True]
    with_terms = make_pod("t", uid="ut").label("app", "x").pod_affinity("kubernetes.io/hostname", {"app": "x"})
    head = read_head(encode(with_terms))
    columns.remember_head(head, PodInfo(with_terms, columns))
    assert columns.template_of_head(head) is None


def _event(pod: dict) -> WatchEvent:
    return WatchEvent("Pod", "ADDED", raw=encode(pod))


def test_behind_a_backlog_the_pods_of_a_template_are_queued_undecoded(monkeypatch):
    monkeypatch.setattr(intake, "DECODED_BACKLOG", 0)
    s = make_scheduler(nodes=[make_node(f"n{i}") for i in range(4)])
    pods = [make_pod(f"w{i}", uid=f"w{i}").req(cpu="100m").label("app", "web") for i in range(5)]
    events = [_event(pod) for pod in pods]
    for ev in events:
        s.on_pod_event(ev, 0.0)
    # The first is decoded: the queue was empty and no template known. From the second
    # on, the queue holds more than DECODED_BACKLOG pods and the template is known.
    assert [ev._obj is None for ev in events] == [False, True, True, True, True]
    assert all(s.queue.get(f"w{i}").pinfo.compacted for i in range(5))
    out = s.schedule(1.0, 10)
    assert sorted(b[1] for b in out.binds) == [f"w{i}" for i in range(5)]
    # The first went through the full cycle; the run knew the others' kind by their bytes
    # and placed them without decoding them.
    assert s.kind_run_pods == 4
    assert [s.cache.pod_info(f"w{i}").compacted for i in range(5)] == [False, True, True, True, True]
    # Each bind coming back is recognised by its head, the undecoded pods' too.
    for pod, (_, _, uid, node) in zip(pods, sorted(out.binds, key=lambda b: b[1])):
        bound = copy.deepcopy(pod)
        bound["spec"]["nodeName"] = node
        ev = WatchEvent("Pod", "MODIFIED", raw=encode(bound))
        s.on_pod_event(ev, 1.0)
        assert ev._obj is None and not s.cache.is_assumed(uid) and s.cache.pod_node(uid) == node


def test_without_a_backlog_new_pods_are_decoded_and_held_so():
    s = make_scheduler(nodes=[make_node("n1")])
    events = [_event(make_pod(f"w{i}", uid=f"w{i}").label("app", "web")) for i in range(3)]
    for ev in events:
        s.on_pod_event(ev, 0.0)
    assert all(ev._obj is not None for ev in events)
    assert not any(s.queue.get(f"w{i}").pinfo.compacted for i in range(3))


def _stream(seed: int) -> list[dict]:
    rng = random.Random(seed)
    templates = shapes()
    templates.append(
        make_pod("t", uid="ut").label("app", "web").pod_anti_affinity("kubernetes.io/hostname", {"app": "web"})
    )
    terminating = copy.deepcopy(templates[0])
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    templates.append(terminating)
    out = []
    for _ in range(120):
        pod = copy.deepcopy(rng.choice(templates))
        uid = f"s{rng.randrange(100)}"  # some uids come again: an update of a queued pod
        pod["metadata"].update(name=uid, uid=uid)
        out.append(pod)
    return out


def _queue_state(s: Scheduler) -> tuple:
    queued = sorted((qp.pinfo.uid, tuple(sorted(slots(qp.pinfo).items(), key=str))) for qp in s.queue.queued())
    nominated = sorted(s.queue.nominator._node_of.items())
    return queued, nominated, s.queue.active_count(), len(s.queue)


@pytest.mark.parametrize("seed", range(4))
def test_a_stream_leaves_the_queue_and_the_placements_as_parsing_every_pod_would(monkeypatch, seed):
    monkeypatch.setattr(intake, "DECODED_BACKLOG", 3)
    nodes = [make_node(f"n{i}", cpu="8") for i in range(3)]
    fast, slow = make_scheduler(nodes=nodes), make_scheduler(nodes=copy.deepcopy(nodes))
    monkeypatch.setattr(slow, "_add_by_head", lambda ev, head, now: False)
    for pod in _stream(seed):
        fast.on_pod_event(_event(pod), 0.0)
        slow.on_pod_event(_event(pod), 0.0)
        assert _queue_state(fast) == _queue_state(slow)
    a, b = fast.schedule(1.0, 200), slow.schedule(1.0, 200)
    assert sorted(a.binds) == sorted(b.binds) and len(a.binds) > 0
    assert [e["reason"] for e in a.events] == [e["reason"] for e in b.events]


def _spec_with_keys(n: int) -> dict:
    pod = make_pod("k", uid="uk").req(cpu="1").label("app", "web")
    for i in range(n - len(pod["spec"])):
        pod["spec"][f"x{i}"] = i
    assert len(pod["spec"]) == n
    return pod


@pytest.mark.parametrize("keys", [2, 14, 15, 16, 40])
@pytest.mark.parametrize("node", ["n1", "n" * 31, "n" * 32, "node-" * 60])
def test_the_key_a_bind_gives_is_found_from_the_bytes(keys, node):
    pod = _spec_with_keys(keys)
    head = read_head(encode(pod))
    key = bound_key_from_bytes(bytes(head.spec_raw), bytes(head.labels_raw), node)
    assert key == bound_spec_key(pod, node)
    bound = copy.deepcopy(pod)
    bound["spec"]["nodeName"] = node  # as the apiserver's bind writes it
    assert key == read_head(encode(bound)).spec_key


def test_a_spec_that_names_a_node_already_is_left_to_the_object():
    pod = make_pod("k", uid="uk")
    pod["spec"]["nodeName"] = ""
    head = read_head(encode(pod))
    assert bound_key_from_bytes(bytes(head.spec_raw), bytes(head.labels_raw), "n1") is None
    assert bound_key_from_bytes(b"\x93\x01\x02\x03", b"\xc0", "n1") is None  # not a map


def test_a_pod_from_its_head_expects_the_bound_version_the_parsed_pod_would():
    columns = ResourceColumns(lambda: None)
    pod = make_pod("a", uid="ua").req(cpu="1").label("app", "web")
    raw = encode(pod)
    head = read_head(raw)
    columns.remember_head(head, PodInfo(copy.deepcopy(pod), columns))
    fast = PodInfo.from_head(head, raw, columns.template_of_head(head))
    slow = PodInfo(copy.deepcopy(pod), columns)
    for p in (fast, slow):
        p.expand()
        p.expect_bound("n7")
    assert (fast._fp_node, fast._fp_key) == (slow._fp_node, slow._fp_key)
    slow.pod = copy.deepcopy(pod)
    fast.pod = copy.deepcopy(pod)  # another version: no longer the template's bytes
    assert fast._template is None


def test_owners_and_a_nomination_are_part_of_what_a_template_is_known_by():
    columns = ResourceColumns(lambda: None)
    a = make_pod("a", uid="ua").req(cpu="1")
    owned = copy.deepcopy(a)
    owned["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "rs", "uid": "r1", "controller": True}]
    head_a, head_owned = read_head(encode(a)), read_head(encode(owned))
    columns.remember_head(head_a, PodInfo(copy.deepcopy(a), columns))
    assert columns.template_of_head(head_owned) is None  # other owners: another template
    nominated = copy.deepcopy(a).nominated("n1")
    head_n = read_head(encode(nominated))
    assert columns.template_of_head(head_n) is not None  # the same bytes where they count
    assert PodInfo.from_head(head_n, encode(nominated), columns.template_of_head(head_n)).template is None
    assert PodInfo.from_head(head_a, encode(a), columns.template_of_head(head_a)).template is not None


def test_a_run_takes_a_pod_of_other_owners_only_by_value(monkeypatch):
    monkeypatch.setattr(intake, "DECODED_BACKLOG", 0)
    s = make_scheduler(nodes=[make_node("n1"), make_node("n2")])
    pods = [make_pod(f"w{i}", uid=f"w{i}").req(cpu="100m") for i in range(3)]
    pods[2]["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "rs", "uid": "r1", "controller": True}]
    for pod in pods:
        s.on_pod_event(_event(pod), 0.0)
    out = s.schedule(1.0, 10)
    assert len(out.binds) == 3
    assert s.kind_run_pods == 1  # w1; w2's owners make it another kind: its own full cycle
