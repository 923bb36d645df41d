"""Containers that cannot be created: image pulls as data, configuration errors, exact traces."""

import pytest

from cluster.api.validation import ValidationError, validate
from cluster.kubelet.creation import creation_of
from cluster.kubelet.images import DEFAULT_UNPULLABLE, normalise, pull_error, unpullable_patterns
from cluster.kubelet.kubeletconfig import check_kubelet
from cluster.runtime.component import WatchEvent

BAD = "gcr.io/k8s-conform/invalid-image:v1"


def ctr(name="c", image="busybox", **fields):
    return {"name": name, "image": image, **fields}


def waiting(st, key="containerStatuses"):
    return [(s["name"], *((s["state"].get("waiting") or {}).get(k) for k in ("reason", "message"))) for s in st[key]]


def send_object(d, kind, etype, name, data, namespace="default"):
    obj = {"kind": kind, "metadata": {"name": name, "namespace": namespace}, "data": data}
    d.host.on_watch([WatchEvent(kind, etype, obj=obj)], d.now)
    d.flush()


# ---- which images pull -------------------------------------------------------------------


@pytest.mark.parametrize(
    "image, ref",
    [
        ("busybox", "docker.io/library/busybox:latest"),
        ("foo:non-existent", "docker.io/library/foo:non-existent"),
        ("team/app:1", "docker.io/team/app:1"),
        ("localhost:5000/x", "localhost:5000/x:latest"),
        ("registry.k8s.io/pause@sha256:ab", "registry.k8s.io/pause@sha256:ab"),
    ],
)
def test_references_are_normalised_as_containerd_names_them(image, ref):
    assert normalise(image) == ref


@pytest.mark.parametrize(
    "image, secrets, fails_with",
    [
        ("registry.k8s.io/e2e-test-images/agnhost:2.45", False, None),
        ("busybox", False, None),
        ("invalid.registry.k8s.io/invalid/alpine:3.1", False, "lookup invalid.registry.k8s.io: no such host"),
        (BAD, False, f"{BAD}: not found"),
        ("foo:non-existent", False, "docker.io/library/foo:non-existent: not found"),
        ("webserver:404", False, "docker.io/library/webserver:404: not found"),
        ("gcr.io/google_samples/gb-redisslave:nonexistent", False, "not found"),
        ("localhost/app:1", False, "dial tcp 127.0.0.1:443: connect: connection refused"),
        ("registry.invalid/app", False, "lookup registry.invalid: no such host"),
        ("gcr.io/authenticated-image-pulling/alpine:3.7", False, "authorization failed"),
        ("gcr.io/authenticated-image-pulling/alpine:3.7", True, None),
    ],
)
def test_the_default_patterns_cover_the_conformance_suites_unpullable_images(image, secrets, fails_with):
    err = pull_error(image, {}, "c", secrets, DEFAULT_UNPULLABLE)
    if fails_with is None:
        assert err is None
    else:
        assert err is not None and err.startswith("rpc error: code = ") and fails_with in err


def test_the_annotation_fails_or_passes_a_pull_per_pod_or_container():
    ann = {"kubemu.io/image-pull": "fail", "kubemu.io/image-pull.side": "pass"}
    assert "busybox:latest: not found" in pull_error("busybox", ann, "c", False, DEFAULT_UNPULLABLE)
    assert pull_error("busybox", ann, "side", False, DEFAULT_UNPULLABLE) is None
    assert pull_error(BAD, {"kubemu.io/image-pull": "pass"}, "c", False, DEFAULT_UNPULLABLE) is None


def test_a_node_configures_its_own_patterns():
    assert unpullable_patterns({}) == DEFAULT_UNPULLABLE
    mine = unpullable_patterns({"unpullableImages": ["*:broken"]})
    assert pull_error("app:broken", {}, "c", False, mine) is not None
    assert pull_error(BAD, {}, "c", False, mine) is None  # the list replaces the defaults


@pytest.mark.parametrize("value", ["*:broken", [""], [3], {"a": 1}])
def test_a_bad_pattern_list_is_one_line_naming_the_field(config, value):
    if value == "*:broken":
        assert check_kubelet(config(kubelet={"unpullableImages": [value]})) is None
        return
    err = check_kubelet(config(kubelet={"unpullableImages": value}))
    assert err.startswith("kubelet.unpullableImages: ") and "must be a list of image patterns" in err


@pytest.mark.parametrize("value, ok", [("fail", True), ("pass", True), ("sometimes", False)])
def test_the_annotation_is_validated_at_create(pod, value, ok):
    p = pod(annotations={"image-pull.c": value})
    if ok:
        validate(p)
        return
    with pytest.raises(ValidationError) as e:
        validate(p)
    assert "kubemu.io/image-pull.c" in str(e.value) and "sometimes" in str(e.value) and "fail, pass" in str(e.value)


def test_a_plain_pod_keeps_nothing(pod):
    assert creation_of(pod(), DEFAULT_UNPULLABLE) is None


# ---- the pull back-off trace ----------------------------------------------------------------


def test_an_unpullable_image_alternates_err_image_pull_and_back_off_doubling_to_300s(driver, pod):
    d = driver()
    d.send("ADDED", pod(containers=[ctr(image=BAD)]))
    d.run_until(1300)
    pulls = [t for t, _, r, _ in d.events if r == "Pulling"]
    assert pulls == [0, 10, 30, 70, 150, 310, 610, 910, 1210]
    backoffs = [t for t, _, r, _ in d.events if r == "BackOff"]
    assert backoffs == [t + 1 for t in pulls]
    st = d.statuses["p"]
    assert st["phase"] == "Pending"
    assert waiting(st) == [("c", "ImagePullBackOff", f'Back-off pulling image "{BAD}"')]
    assert {c["type"]: c["status"] for c in st["conditions"]}["Ready"] == "False"
    assert d.host.next_change() is None  # pull retries are background: a scenario can settle


def test_the_events_and_messages_of_one_failed_pull(driver, pod):
    d = driver()
    d.send("ADDED", pod(containers=[ctr(image="foo:non-existent")]))
    err = pull_error("foo:non-existent", {}, "c", False, DEFAULT_UNPULLABLE)
    assert waiting(d.statuses["p"]) == [("c", "ErrImagePull", err)]
    assert [(r, m) for _, _, r, m in d.events] == [
        ("Pulling", 'Pulling image "foo:non-existent"'),
        ("Failed", f'Failed to pull image "foo:non-existent": {err}'),
        ("Failed", "Error: ErrImagePull"),
    ]
    types = {(e["reason"], e["message"]): e["type"] for e in d.raw_events}
    assert types[("Pulling", 'Pulling image "foo:non-existent"')] == "Normal"
    assert types[("Failed", "Error: ErrImagePull")] == "Warning"


def test_pull_policy_never_with_the_image_absent_waits_for_good(driver, pod):
    d = driver()
    d.send("ADDED", pod(containers=[ctr(image=BAD, imagePullPolicy="Never")]))
    d.run_until(1000)
    msg = f'Container image "{BAD}" is not present with pull policy of Never'
    assert waiting(d.statuses["p"]) == [("c", "ErrImageNeverPull", msg)]
    assert [(t, r, m) for t, _, r, m in d.events] == [
        (0, "ErrImageNeverPull", msg),
        (0, "Failed", "Error: ErrImageNeverPull"),
    ]
    assert d.host.next_timer() > 1000  # nothing to retry


def test_a_pullable_sibling_waits_in_container_creating(driver, pod):
    d = driver()
    d.send("ADDED", pod(containers=[ctr("a"), ctr("b", image=BAD)]))
    err = pull_error(BAD, {}, "b", False, DEFAULT_UNPULLABLE)
    assert waiting(d.statuses["p"]) == [("a", "ContainerCreating", None), ("b", "ErrImagePull", err)]


def test_an_init_container_that_cannot_pull_holds_the_pod_and_the_ones_before_it_ran(driver, pod):
    d = driver()
    inits = [ctr("first"), ctr("second", image=BAD), ctr("third")]
    d.send("ADDED", pod(containers=[ctr()], init_containers=inits))
    d.run_until(5)
    st = d.statuses["p"]
    assert st["phase"] == "Pending"
    init = [
        (s["name"], next(iter(s["state"])), (s["state"].get("waiting") or {}).get("reason"))
        for s in st["initContainerStatuses"]
    ]
    assert init == [
        ("first", "terminated", None),
        ("second", "waiting", "ImagePullBackOff"),
        ("third", "waiting", "PodInitializing"),
    ]
    assert waiting(st) == [("c", "PodInitializing", None)]
    initialized = next(c for c in st["conditions"] if c["type"] == "Initialized")
    assert (
        initialized["status"] == "False"
        and initialized["message"] == "containers with incomplete status: [second third]"
    )


def test_a_held_pod_deleted_is_confirmed_at_once_and_its_retries_stop(driver, pod, deleting):
    d = driver()
    p = pod(containers=[ctr(image=BAD)])
    d.send("ADDED", p)
    d.send("MODIFIED", deleting(p, 30))
    assert d.deletes == [(0, "p")]
    d.run_until(100)
    assert [t for t, _, r, _ in d.events if r == "Pulling"] == [0]


# ---- configuration errors ------------------------------------------------------------------


def cm_env(name="settings", key="mode", optional=None):
    ref = {"name": name, "key": key, **({"optional": optional} if optional is not None else {})}
    return [{"name": "MODE", "valueFrom": {"configMapKeyRef": ref}}]


@pytest.mark.parametrize(
    "container, message",
    [
        (ctr(env=cm_env()), 'configmap "settings" not found'),
        (ctr(env=cm_env(optional=True)), None),
        (
            ctr(env=[{"name": "T", "valueFrom": {"secretKeyRef": {"name": "tok", "key": "k"}}}]),
            'secret "tok" not found',
        ),
        (ctr(envFrom=[{"configMapRef": {"name": "settings"}}]), 'configmap "settings" not found'),
        (ctr(envFrom=[{"secretRef": {"name": "tok", "optional": True}}]), None),
    ],
)
def test_a_missing_configmap_or_secret_is_a_config_error(driver, pod, container, message):
    d = driver()
    d.send("ADDED", pod(containers=[container]))
    if message is None:
        assert d.statuses["p"]["phase"] == "Running"
        return
    assert waiting(d.statuses["p"]) == [("c", "CreateContainerConfigError", message)]
    assert [(r, m) for _, _, r, m in d.events] == [("Failed", f"Error: {message}")]


def test_a_configmap_created_later_lets_the_container_start(driver, pod):
    d = driver()
    d.send("ADDED", pod(containers=[ctr(env=cm_env())]))
    d.clock.set(5)
    send_object(d, "ConfigMap", "ADDED", "settings", {"other": "x"})
    msg = "couldn't find key mode in ConfigMap default/settings"
    assert waiting(d.statuses["p"]) == [("c", "CreateContainerConfigError", msg)]
    d.clock.set(9)
    send_object(d, "ConfigMap", "MODIFIED", "settings", {"mode": "fast"})
    assert d.statuses["p"]["phase"] == "Running"
    assert [(t, r, m) for t, _, r, m in d.events] == [
        (0, "Failed", 'Error: configmap "settings" not found'),
        (5, "Failed", f"Error: {msg}"),
    ]


def test_a_secret_in_another_namespace_does_not_count(driver, pod):
    d = driver()
    d.send(
        "ADDED", pod(containers=[ctr(env=[{"name": "T", "valueFrom": {"secretKeyRef": {"name": "tok", "key": "k"}}}])])
    )
    send_object(d, "Secret", "ADDED", "tok", {"k": "dmFsdWU="}, namespace="other")
    assert waiting(d.statuses["p"])[0][1] == "CreateContainerConfigError"
    send_object(d, "Secret", "ADDED", "tok", {"k": "dmFsdWU="})
    assert d.statuses["p"]["phase"] == "Running"


def sub(expr, env=()):
    return ctr(env=list(env), volumeMounts=[{"name": "v", "mountPath": "/data", "subPathExpr": expr}])


POD_NAME = {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}


@pytest.mark.parametrize(
    "container, message",
    [
        (sub("$(POD_NAME)", [POD_NAME]), None),
        (sub("logs/$(POD_IP)", [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]), None),
        (sub("/$(POD_NAME)", [POD_NAME]), "error SubPath `/p` must not be an absolute path"),
        (sub("$(ABS)", [{"name": "ABS", "value": "/tmp"}]), "error SubPath `/tmp` must not be an absolute path"),
        (sub("$(UP)", [{"name": "UP", "value": ".."}]), "unable to provision SubPath `..`: must not contain '..'"),
        (
            sub("a/$(B)/c", [{"name": "A", "value": "x"}, {"name": "B", "value": "$(A)/.."}]),
            "unable to provision SubPath `a/x/../c`: must not contain '..'",
        ),
        (sub("$(NOPE)/$(ALSO)"), "missing value for ALSO, NOPE"),
        (sub("$(EMPTY)", [{"name": "EMPTY", "value": ""}]), "missing value for EMPTY"),
    ],
)
def test_subpath_expr_expands_from_the_containers_env(driver, pod, container, message):
    d = driver()
    d.send("ADDED", pod(containers=[container]))
    if message is None:
        assert d.statuses["p"]["phase"] == "Running"
        return
    assert waiting(d.statuses["p"]) == [("c", "CreateContainerConfigError", message)]
    d.run_until(600)
    assert len(d.events) == 1  # a spec that cannot change is not retried


def test_a_pull_failure_comes_before_a_config_error(driver, pod):
    d = driver()
    d.send("ADDED", pod(containers=[ctr(image=BAD, env=cm_env())]))
    assert waiting(d.statuses["p"])[0][1] == "ErrImagePull"
