"""Updates through the apiserver logic: what a stored object's update may change
(cluster/api/updatevalidation.py), with upstream's messages, and a refused update changes
nothing."""

import copy
import re

import pytest
from store_builders import make_pod

from cluster.api.errors import Invalid
from cluster.apiserver.apiserver import APIServer

TOL = {"key": "gpu", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}
ZONE_A = {"key": "zone", "operator": "In", "values": ["a"]}
GPU = {"key": "gpu", "operator": "Exists"}


def affinity(*terms):
    """Required node affinity with one term per list of match expressions."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]
            }
        }
    }


def stored_pod(api, **spec):
    containers = [
        {"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": "100m"}}},
        {"name": "d", "image": "redis:7"},
    ]
    return api.create(make_pod("p", containers=containers, **spec), 0)


def edited(obj, change):
    new = copy.deepcopy(obj)
    change(new)
    return new


def set_path(*path_and_value):
    *path, value = path_and_value

    def change(obj):
        at = obj
        for key in path[:-1]:
            at = at[key]
        if value is DROP:
            del at[path[-1]]
        else:
            at[path[-1]] = value

    return change


DROP = object()


def leave_out_defaults(pod):
    for field in ("terminationGracePeriodSeconds", "priority", "preemptionPolicy", "tolerations", "dnsPolicy"):
        pod["spec"].pop(field)


@pytest.mark.parametrize(
    "spec, change",
    [
        ({}, set_path("spec", "containers", 0, "image", "nginx:2")),
        ({}, set_path("spec", "containers", 1, "image", "redis:8")),
        ({}, set_path("spec", "activeDeadlineSeconds", 30)),  # set where there was none
        ({"activeDeadlineSeconds": 30}, set_path("spec", "activeDeadlineSeconds", 10)),  # shortened
        ({"activeDeadlineSeconds": 30}, set_path("spec", "activeDeadlineSeconds", 30)),
        ({"tolerations": [TOL]}, lambda p: p["spec"]["tolerations"].append({"key": "x", "operator": "Exists"})),
        ({"tolerations": [TOL]}, lambda p: p["spec"]["tolerations"][0].update(tolerationSeconds=5)),
        ({"schedulingGates": [{"name": "a"}, {"name": "b"}]}, set_path("spec", "schedulingGates", [{"name": "b"}])),
        ({"schedulingGates": [{"name": "a"}]}, set_path("spec", "schedulingGates", DROP)),
        ({"schedulingGates": [{"name": "a"}], "nodeSelector": {"z": "1"}}, set_path("spec", "nodeSelector", "r", "2")),
        ({}, set_path("metadata", "labels", {"tier": "front"})),
        # A gated pod's node affinity: set where there was none, or its terms narrowed.
        ({"schedulingGates": [{"name": "a"}]}, set_path("spec", "affinity", affinity([ZONE_A]))),
        (
            {"schedulingGates": [{"name": "a"}], "affinity": affinity([ZONE_A])},
            set_path("spec", "affinity", affinity([ZONE_A, GPU])),
        ),
        (
            {"schedulingGates": [{"name": "a"}], "affinity": {**affinity([ZONE_A]), "podAntiAffinity": {}}},
            lambda p: p["spec"]["affinity"]["nodeAffinity"].update(preferredDuringSchedulingIgnoredDuringExecution=[]),
        ),
        # Fields the apiserver defaults and the Priority plugin set, left out by the update.
        ({}, leave_out_defaults),
    ],
)
def test_pod_updates_upstream_allows(spec, change):
    api = APIServer()
    pod = stored_pod(api, **spec)
    wanted = edited(pod, change)
    api.update(wanted, 1)
    stored = api.get("Pod", "default", "p")
    if change is leave_out_defaults:  # given back as they were
        assert stored["spec"] == pod["spec"]
    else:
        assert (stored["spec"], stored["metadata"].get("labels")) == (wanted["spec"], wanted["metadata"].get("labels"))


@pytest.mark.parametrize(
    "spec, change, message",
    [
        (
            {},
            set_path("spec", "containers", 0, "resources", "requests", "cpu", "200m"),
            "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
            "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
            "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
            'previously negative)\n  spec.containers[0].resources.requests.cpu: "100m" -> "200m"',
        ),
        (
            {},
            lambda p: p["spec"]["containers"].pop(),
            "spec.containers: Forbidden: pod updates may not add or remove containers",
        ),
        (
            {"activeDeadlineSeconds": 30},
            set_path("spec", "activeDeadlineSeconds", 31),
            "spec.activeDeadlineSeconds: Invalid value: 31: must be less than or equal to previous value",
        ),
        (
            {"activeDeadlineSeconds": 30},
            set_path("spec", "activeDeadlineSeconds", DROP),
            "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value",
        ),
        (
            {"tolerations": [TOL]},
            lambda p: p["spec"]["tolerations"][0].update(key="tpu"),
            "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds",
        ),
        (
            {"schedulingGates": [{"name": "a"}]},
            set_path("spec", "schedulingGates", [{"name": "a"}, {"name": "b"}]),
            "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'b'",
        ),
        (
            {"schedulingGates": [{"name": "a"}], "nodeSelector": {"z": "1"}},
            set_path("spec", "nodeSelector", "z", "2"),
            "spec.nodeSelector: Invalid value: ",
        ),
        (
            {"schedulingGates": [{"name": "a"}], "affinity": affinity([ZONE_A])},
            set_path("spec", "affinity", affinity([GPU])),
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: "
            "Invalid value: ",
        ),
        (
            {"schedulingGates": [{"name": "a"}], "affinity": affinity([ZONE_A])},
            set_path("spec", "affinity", affinity([ZONE_A], [GPU])),
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
            "Invalid value: ",
        ),
        (
            {"affinity": affinity([ZONE_A])},  # not gated
            set_path("spec", "affinity", affinity([ZONE_A, GPU])),
            "spec: Forbidden: pod updates may not change fields other than",
        ),
        (
            {"nodeSelector": {"z": "1"}},  # not gated: no scheduling directive may change
            set_path("spec", "nodeSelector", "r", "2"),
            "spec: Forbidden: pod updates may not change fields other than",
        ),
        (
            {},
            set_path("spec", "priority", 7),
            "spec: Forbidden: pod updates may not change fields other than",
        ),
    ],
)
def test_pod_updates_upstream_refuses_change_nothing(spec, change, message):
    api = APIServer()
    pod = stored_pod(api, **spec)
    with pytest.raises(Invalid) as err:
        api.update(edited(pod, change), 1)
    assert str(err.value.message).startswith(message)
    assert api.get("Pod", "default", "p") == pod


def test_the_diff_lists_each_changed_path_up_to_a_limit():
    api = APIServer()
    pod = stored_pod(api)

    def many(p):
        p["spec"]["hostname"] = "h"
        p["spec"]["containers"][0]["ports"] = [{"containerPort": 80 + i} for i in range(12)]

    with pytest.raises(Invalid) as err:
        api.update(edited(pod, many), 1)
    lines = str(err.value.message).splitlines()[1:]
    # The ports as stored: defaulted (protocol TCP) before the update is compared.
    assert lines[0] == "  spec.containers[0].ports: <unset> -> [" + (
        ", ".join(f'{{"containerPort": {80 + i}, "protocol": "TCP"}}' for i in range(12)) + "]"
    )
    assert lines[1] == '  spec.hostname: <unset> -> "h"'


WORKLOAD = {
    "Deployment": ("apps/v1", {"replicas": 1}),
    "ReplicaSet": ("apps/v1", {"replicas": 1}),
    "DaemonSet": ("apps/v1", {}),
    "StatefulSet": ("apps/v1", {"replicas": 1, "serviceName": "web"}),
}


def workload(kind):
    version, spec = WORKLOAD[kind]
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    return {
        "apiVersion": version,
        "kind": kind,
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {**spec, "selector": {"matchLabels": {"app": "web"}}, "template": template},
    }


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "DaemonSet"])
def test_a_workload_selector_is_immutable(kind):
    api = APIServer()
    stored = api.create(workload(kind), 0)
    changed = edited(stored, set_path("spec", "selector", {"matchLabels": {"app": "web", "v": "2"}}))
    changed["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    # %#v of the Go struct, as upstream's message prints it.
    shown = 'v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}'
    with pytest.raises(
        Invalid, match="^" + re.escape(f"spec.selector: Invalid value: {shown}: field is immutable") + "$"
    ):
        api.update(changed, 1)
    assert api.get(kind, "default", "web") == stored
    api.update(edited(stored, set_path("spec", "template", "spec", "containers", 0, "image", "nginx:2")), 1)


def test_a_statefulset_spec_changes_only_in_the_listed_fields():
    api = APIServer()
    stored = api.create(workload("StatefulSet"), 0)
    for field, value in (("replicas", 3), ("minReadySeconds", 5), ("revisionHistoryLimit", 2)):
        stored = api.update(edited(stored, set_path("spec", field, value)), 1)
    for field, value in (("serviceName", "other"), ("podManagementPolicy", "Parallel")):
        with pytest.raises(
            Invalid, match="^spec: Forbidden: updates to statefulset spec for fields other than 'replicas'"
        ):
            api.update(edited(stored, set_path("spec", field, value)), 2)
    assert api.get("StatefulSet", "default", "web") == stored


def job(**spec):
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {"template": template, **spec},
    }


def test_a_jobs_template_is_immutable_but_for_a_suspended_jobs_scheduling_directives():
    api = APIServer()
    running = api.create(job(), 0)
    with pytest.raises(Invalid, match=r"^spec.template: Invalid value: .*: field is immutable$"):
        api.update(edited(running, set_path("spec", "template", "spec", "nodeSelector", {"zone": "a"})), 1)
    suspended = api.create(edited(job(suspend=True), set_path("metadata", "name", "s")), 0)
    moved = api.update(edited(suspended, set_path("spec", "template", "spec", "nodeSelector", {"zone": "a"})), 1)
    with pytest.raises(Invalid, match="^spec.template: "):
        api.update(edited(moved, set_path("spec", "template", "spec", "containers", 0, "image", "alpine")), 2)


def test_a_jobs_completions_change_only_with_parallelism_when_indexed():
    api = APIServer()
    indexed = api.create(job(completions=3, parallelism=3, completionMode="Indexed"), 0)
    grown = edited(indexed, lambda j: j["spec"].update(completions=5, parallelism=5))
    api.update(grown, 1)
    plain = api.create(edited(job(completions=3, parallelism=3), set_path("metadata", "name", "k")), 0)
    with pytest.raises(Invalid, match="^spec.completions: Invalid value: 5: field is immutable$"):
        api.update(edited(plain, lambda j: j["spec"].update(completions=5, parallelism=5)), 1)


def test_a_priority_class_keeps_its_value_and_policy():
    api = APIServer()
    pc = api.create(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 10}, 0
    )
    pc = api.update(edited(pc, set_path("description", "batch")), 1)
    with pytest.raises(Invalid, match=r"^value: Forbidden: may not be changed in an update\.$"):
        api.update(edited(pc, set_path("value", 11)), 1)
    with pytest.raises(Invalid, match='^preemptionPolicy: Invalid value: "Never": field is immutable$'):
        api.update(edited(pc, set_path("preemptionPolicy", "Never")), 1)
    api.update(edited(pc, set_path("preemptionPolicy", DROP)), 1)  # defaulted as before: unchanged


@pytest.mark.parametrize(
    "selector, shown",
    [
        (None, "null"),
        (
            {
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["a", "b"]},
                    {"key": "x", "operator": "Exists"},
                ]
            },
            'v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"tier", Operator:"In", Values:[]string{"a", "b"}}, v1.LabelSelectorRequirement{Key:"x", Operator:"Exists", Values:[]string(nil)}}}',
        ),
        (
            {"matchLabels": {}},
            "v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}",
        ),
    ],
)
def test_a_label_selector_is_shown_as_go_prints_it(selector, shown):
    from cluster.api.workloadvalidation import label_selector_shown

    assert label_selector_shown(selector) == shown
