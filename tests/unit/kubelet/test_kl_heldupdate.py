"""A pod held by a configuration error its own metadata can fix: an update of the pod's
annotations or labels is read again (upstream's next sync of the pod reads the new
object), as upstream's e2e "a failing subpath expansion can be modified during the
lifecycle of a container" does it."""

import copy

import pytest

ANNOTATION = {"name": "ANNOTATION", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['mysubpath']"}}}
LABEL = {"name": "TIER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['tier']"}}}


def held_pod(pod, env, expr):
    c = {
        "name": "c",
        "image": "busybox",
        "env": [{"name": "POD_NAME", "value": "foo"}, env],
        "volumeMounts": [{"name": "w", "mountPath": "/subpath_mount", "subPathExpr": expr}],
    }
    p = pod(containers=[c])
    p["metadata"]["annotations"] = {"notmysubpath": "mypath"}
    return p


def updated(p, field, key, value):
    out = copy.deepcopy(p)
    out["metadata"].setdefault(field, {})[key] = value
    return out


def waiting(status):
    return [
        (cs["name"], cs["state"]["waiting"]["reason"], cs["state"]["waiting"].get("message"))
        for cs in status.get("containerStatuses") or ()
        if "waiting" in cs["state"]
    ]


@pytest.mark.parametrize(
    "env, expr, field, key, missing",
    [
        (ANNOTATION, "$(ANNOTATION)/$(POD_NAME)", "annotations", "mysubpath", "ANNOTATION"),
        (LABEL, "$(TIER)", "labels", "tier", "TIER"),
    ],
)
def test_the_missing_field_added_by_an_update_lets_the_container_start(driver, pod, env, expr, field, key, missing):
    d = driver()
    p = held_pod(pod, env, expr)
    d.send("ADDED", p)
    assert waiting(d.statuses["p"]) == [("c", "CreateContainerConfigError", f"missing value for {missing}")]
    d.run_until(120)
    assert d.statuses["p"]["phase"] == "Pending"  # nothing else makes it start
    d.send("MODIFIED", updated(p, field, key, "mypath"))
    assert d.statuses["p"]["phase"] == "Running"
    assert [(t, r) for t, _, r, _ in d.events] == [(0, "Failed")]  # told once, while held


def test_an_update_that_does_not_touch_the_field_leaves_it_held(driver, pod):
    d = driver()
    p = held_pod(pod, ANNOTATION, "$(ANNOTATION)")
    d.send("ADDED", p)
    d.clock.set(5)
    d.send("MODIFIED", updated(p, "annotations", "other", "x"))
    d.send("MODIFIED", updated(p, "annotations", "mysubpath", ""))  # still empty: still missing
    assert waiting(d.statuses["p"]) == [("c", "CreateContainerConfigError", "missing value for ANNOTATION")]
    assert len(d.events) == 1  # the same message is not told again


def test_an_update_with_a_bad_value_turns_into_that_error(driver, pod):
    d = driver()
    p = held_pod(pod, ANNOTATION, "$(ANNOTATION)")
    d.send("ADDED", p)
    d.send("MODIFIED", updated(p, "annotations", "mysubpath", "/abs"))
    message = "error SubPath `/abs` must not be an absolute path"
    assert waiting(d.statuses["p"]) == [("c", "CreateContainerConfigError", message)]
    assert [m for _, _, _, m in d.events] == ["Error: missing value for ANNOTATION", f"Error: {message}"]
