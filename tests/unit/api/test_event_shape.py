"""The Event a component writes: its shape, built from the object or from its identity,
and the times of two events written at different moments."""

from cluster.api.events import event_about, make_event

POD = {"kind": "Pod", "metadata": {"name": "web-1", "namespace": "prod", "uid": "u1"}}
NODE = {"kind": "Node", "metadata": {"name": "n1", "uid": "u2"}}


def test_a_scheduled_event_names_the_pod_and_the_time():
    ev = make_event(POD, "Scheduled", "Successfully assigned prod/web-1 to n1", 61.25, component="default-scheduler")
    assert ev["metadata"] == {
        "generateName": "web-1.default-scheduler.",
        "namespace": "prod",
        "annotations": {"kubemu.io/time": "61.25"},
    }
    assert ev["involvedObject"] == {
        "kind": "Pod",
        "namespace": "prod",
        "name": "web-1",
        "uid": "u1",
        "apiVersion": "v1",
    }
    assert (ev["firstTimestamp"], ev["lastTimestamp"], ev["count"]) == ("2026-01-01T00:01:01Z",) * 2 + (1,)
    assert ev["source"] == {"component": "default-scheduler"}


def test_the_identity_gives_the_same_event_as_the_object():
    for obj, ns in ((POD, "prod"), (NODE, "")):
        m = obj["metadata"]
        for host in ("", "n1"):
            want = make_event(obj, "R", "msg", 7.5, type="Warning", component="kubelet", host=host)
            got = event_about(obj["kind"], ns, m["name"], m["uid"], "R", "msg", 7.5, "Warning", "kubelet", host)
            assert got == want
    assert make_event(NODE, "R", "m", 0.0)["metadata"]["namespace"] == "default"  # cluster-scoped: default


def test_events_at_different_times_keep_their_own_times():
    # The strings of the last time are kept for the next event of the same batch: a new
    # time must not reuse them.
    a = make_event(POD, "R", "m", 1.0)
    b = make_event(POD, "R", "m", 3601.5)
    c = make_event(POD, "R", "m", 1.0)
    assert [e["metadata"]["annotations"]["kubemu.io/time"] for e in (a, b, c)] == ["1.0", "3601.5", "1.0"]
    assert [e["firstTimestamp"] for e in (a, b, c)] == ["2026-01-01T00:00:01Z", "2026-01-01T01:00:01Z"] + [
        "2026-01-01T00:00:01Z"
    ]
