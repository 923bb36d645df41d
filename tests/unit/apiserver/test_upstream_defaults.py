"""Objects as kubemu stores them, field by field against upstream's defaulting tables
(upstream's SetDefaults_* functions): a Pod, a Deployment, a Service and a Job
created bare, the image pull policy by tag, the other kinds' defaults, an update
defaulted as a create, and the messages and timestamps upstream gives."""

import pytest

from cluster.api.errors import AlreadyExists, Invalid, NotFound
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.defaults import pull_policy
from cluster.clock import rfc3339

# The least a volume and a claim need to pass validation.
PV_SPEC = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}
CLAIM_SPEC = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}

CONTAINER = {"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}


def at(obj, path: str):
    """The value at a dotted path (``[i]`` for list items); KeyError when absent."""
    for part in path.replace("[", ".[").split("."):
        obj = obj[int(part[1:-1])] if part.startswith("[") else obj[part]
    return obj


def create(obj, api=None, now=5.0):
    return (api or APIServer()).create(obj, now)


def pod(**spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [CONTAINER], **spec}}


def template(**spec):
    return {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [CONTAINER], **spec}}


# §5.1: the PodSpec's and the container's defaults, for a Pod and for a template.
POD_SPEC_TABLE = [
    ("restartPolicy", "Always"),
    ("dnsPolicy", "ClusterFirst"),
    ("securityContext", {}),
    ("terminationGracePeriodSeconds", 30),
    ("schedulerName", "default-scheduler"),
    ("containers[0].imagePullPolicy", "IfNotPresent"),
    ("containers[0].terminationMessagePath", "/dev/termination-log"),
    ("containers[0].terminationMessagePolicy", "File"),
    ("containers[0].ports[0].protocol", "TCP"),
]
POD_ONLY_TABLE = [("enableServiceLinks", True), ("priority", 0), ("preemptionPolicy", "PreemptLowerPriority")]


@pytest.mark.parametrize("path, want", POD_SPEC_TABLE + POD_ONLY_TABLE)
def test_a_bare_pod_as_stored(path, want):
    assert at(create(pod())["spec"], path) == want


@pytest.mark.parametrize("path, want", POD_SPEC_TABLE)
def test_a_bare_deployments_template_as_stored(path, want):
    d = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
    }
    assert at(create(d)["spec"]["template"]["spec"], path) == want


@pytest.mark.parametrize(
    "path, want",
    [
        ("replicas", 1),
        ("strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
        ("revisionHistoryLimit", 10),
        ("progressDeadlineSeconds", 600),
    ],
)
def test_a_bare_deployment_as_stored(path, want):
    d = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
    }
    assert at(create(d)["spec"], path) == want


def test_template_only_defaults_stay_out_of_templates():
    d = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
    }
    spec = create(d)["spec"]["template"]["spec"]
    assert "enableServiceLinks" not in spec and "priority" not in spec  # Pod only (SetDefaults_Pod, admission)


SERVICE_TABLE = [
    ("type", "ClusterIP"),
    ("sessionAffinity", "None"),
    ("ports[0].protocol", "TCP"),
    ("ports[0].targetPort", 8080),
    ("ports[1].targetPort", "http"),
    ("ipFamilyPolicy", "SingleStack"),
    ("ipFamilies", ["IPv4"]),
    ("internalTrafficPolicy", "Cluster"),
]


@pytest.mark.parametrize("path, want", SERVICE_TABLE)
def test_a_bare_service_as_stored(path, want):
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"app": "web"},
            "ports": [{"name": "a", "port": 8080}, {"name": "b", "port": 81, "targetPort": "http"}],
        },
    }
    stored = create(svc)
    assert at(stored["spec"], path) == want
    assert stored["status"] == {"loadBalancer": {}}
    assert stored["spec"]["clusterIPs"] == [stored["spec"]["clusterIP"]]  # allocated (serviceips.py)


@pytest.mark.parametrize(
    "spec, want",
    [
        ({"type": "NodePort"}, {"externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Cluster"}),
        ({"type": "LoadBalancer"}, {"allocateLoadBalancerNodePorts": True, "externalTrafficPolicy": "Cluster"}),
        ({"type": "ExternalName", "externalName": "x.example"}, {"sessionAffinity": "None"}),
        ({"sessionAffinity": "ClientIP"}, {"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}}}),
        (
            {"clusterIP": "None"},
            {"ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv4", "IPv6"]},
        ),  # headless without selector
        ({"clusterIP": "None", "selector": {"a": "b"}}, {"ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"]}),
    ],
)
def test_service_defaults_by_type(spec, want):
    stored = create(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}], **spec}}
    )["spec"]
    assert {k: stored.get(k) for k in want} == want
    if spec.get("type") == "ExternalName":
        assert "ipFamilyPolicy" not in stored and "internalTrafficPolicy" not in stored


JOB_TABLE = [
    ("spec.completions", 1),
    ("spec.parallelism", 1),
    ("spec.backoffLimit", 6),
    ("spec.completionMode", "NonIndexed"),
    ("spec.suspend", False),
    ("spec.template.spec.dnsPolicy", "ClusterFirst"),
    ("spec.template.spec.containers[0].terminationMessagePolicy", "File"),
    ("metadata.labels.app", "web"),  # the template's labels when the Job has none
]


@pytest.mark.parametrize("path, want", JOB_TABLE)
def test_a_bare_job_as_stored(path, want):
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi"},
        "spec": {"template": template(restartPolicy="Never")},
    }
    assert at(create(job), path) == want


def test_a_cronjobs_job_template_gets_only_pod_defaults():
    cj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "tick"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template(restartPolicy="Never")}}},
    }
    spec = create(cj)["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    job_spec = spec["jobTemplate"]["spec"]
    assert "backoffLimit" not in job_spec and "completions" not in job_spec  # the Job's own come at its create
    assert job_spec["template"]["spec"]["schedulerName"] == "default-scheduler"


def daemonset(**spec):
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), **spec},
    }


def test_a_daemonset_rolls_one_at_a_time_and_counts_template_generations():
    api = APIServer()
    ds = create(daemonset(), api)
    assert ds["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert ds["spec"]["revisionHistoryLimit"] == 10
    assert ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    ds["metadata"]["labels"] = {"x": "y"}  # not the template: the generation stays
    ds = api.update(ds, 6)
    assert ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    del ds["metadata"]["annotations"]  # whatever the update sends, the server keeps count
    ds = api.update(ds, 7)
    assert ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"


def test_on_delete_daemonsets_and_replicasets():
    assert create(daemonset(updateStrategy={"type": "OnDelete"}))["spec"]["updateStrategy"] == {"type": "OnDelete"}
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
    }
    spec = create(rs)["spec"]
    assert spec["replicas"] == 1 and spec["template"]["spec"]["restartPolicy"] == "Always"


def test_a_statefulset_keeps_a_given_type_without_adding_rolling_update():
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), "serviceName": "db"},
    }
    assert create(sts)["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    sts["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    assert create(sts)["spec"]["updateStrategy"] == {"type": "RollingUpdate"}


@pytest.mark.parametrize(
    "image, policy",
    [
        ("nginx", "Always"),  # neither tag nor digest
        ("nginx:latest", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),  # digest only
        ("nginx:latest@sha256:" + "a" * 64, "Always"),
        ("localhost:5000/team/app", "Always"),  # a registry port is not a tag
        ("registry.k8s.io/pause:3.9", "IfNotPresent"),
        ("Nginx", "IfNotPresent"),  # does not parse: upper case repository
        ("", "IfNotPresent"),
        ("a" * 64, "IfNotPresent"),  # an image id, not a name
    ],
)
def test_image_pull_policy_by_tag(image, policy):
    assert pull_policy(image) == policy


def test_a_pathological_image_name_is_refused_quickly():
    assert pull_policy("a-" * 5000 + "!") == "IfNotPresent"


@pytest.mark.parametrize(
    "field, value, want",
    [
        ("livenessProbe", {"httpGet": {"port": 80}}, {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                                                       "timeoutSeconds": 1, "periodSeconds": 10,
                                                       "successThreshold": 1, "failureThreshold": 3}),
        ("readinessProbe", {"grpc": {"port": 9}, "periodSeconds": 5}, {"grpc": {"port": 9, "service": ""},
                                                                        "periodSeconds": 5, "timeoutSeconds": 1,
                                                                        "successThreshold": 1, "failureThreshold": 3}),
        ("env", [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
         [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}}]),
        ("lifecycle", {"preStop": {"httpGet": {"port": 80}}},
         {"preStop": {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}}}),
    ],
)  # fmt: skip
def test_what_a_container_holds_is_defaulted(field, value, want):
    stored = create(pod(containers=[dict(CONTAINER, **{field: value})]))
    assert stored["spec"]["containers"][0][field] == want


@pytest.mark.parametrize(
    "volume, want",
    [
        ({"name": "v"}, {"name": "v", "emptyDir": {}}),
        ({"name": "v", "secret": {"secretName": "s"}}, {"name": "v", "secret": {"secretName": "s", "defaultMode": 420}}),
        ({"name": "v", "configMap": {"name": "c"}}, {"name": "v", "configMap": {"name": "c", "defaultMode": 420}}),
        ({"name": "v", "hostPath": {"path": "/x"}}, {"name": "v", "hostPath": {"path": "/x", "type": ""}}),
        (
            {"name": "v", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {"name": "v", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}]}},
        ),
    ],
)  # fmt: skip
def test_volumes_are_defaulted(volume, want):
    assert create(pod(volumes=[volume]))["spec"]["volumes"] == [want]


def test_host_network_pods_get_host_ports():
    stored = create(pod(hostNetwork=True))
    assert stored["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]


def test_explicit_values_are_kept():
    c = dict(CONTAINER, imagePullPolicy="Never", terminationMessagePolicy="FallbackToLogsOnError")
    spec = create(pod(containers=[c], restartPolicy="Never", dnsPolicy="Default", enableServiceLinks=False))["spec"]
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["enableServiceLinks"]) == ("Never", "Default", False)
    assert (spec["containers"][0]["imagePullPolicy"], spec["containers"][0]["terminationMessagePolicy"]) == (
        "Never",
        "FallbackToLogsOnError",
    )


@pytest.mark.parametrize(
    "kind, obj, path, want",
    [
        ("Secret", {}, "type", "Opaque"),
        ("Namespace", {}, "metadata.labels", {"kubernetes.io/metadata.name": "x"}),
        ("PersistentVolume", {"spec": PV_SPEC}, "spec.persistentVolumeReclaimPolicy", "Retain"),
        ("PersistentVolume", {"spec": PV_SPEC}, "spec.volumeMode", "Filesystem"),
        ("PersistentVolumeClaim", {"spec": CLAIM_SPEC}, "spec.volumeMode", "Filesystem"),
        ("PersistentVolumeClaim", {"spec": CLAIM_SPEC}, "status.phase", "Pending"),
        ("StorageClass", {"provisioner": "p"}, "reclaimPolicy", "Delete"),
        ("StorageClass", {"provisioner": "p"}, "volumeBindingMode", "Immediate"),
        ("Endpoints", {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]},
         "subsets[0].ports[0].protocol", "TCP"),
        (
            "LimitRange",
            {"spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}}]}},
            "spec.limits[0]",
            {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}, "default": {"cpu": "2"},
             "defaultRequest": {"cpu": "2", "memory": "1Mi"}},
        ),
        (
            "ReplicationController",
            {"spec": {"template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [CONTAINER]}}}},
            "spec.selector",
            {"a": "b"},
        ),
    ],
)  # fmt: skip
def test_the_other_kinds_defaults(kind, obj, path, want):
    api_version = {"StorageClass": "storage.k8s.io/v1"}.get(kind, "v1")
    stored = create({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, **obj})
    assert at(stored, path) == want


def test_an_update_is_defaulted_as_a_create_is():
    api = APIServer()
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    created = api.create(svc, 1)
    again = dict(svc, metadata={"name": "s", "namespace": "default"})
    updated = api.update(again, 2)
    assert updated["spec"] == created["spec"]
    stored = api.create(pod(), 1)
    bare = pod()
    bare["metadata"]["namespace"] = "default"
    assert api.update(bare, 2)["spec"] == stored["spec"]  # nothing changed, nothing refused


def test_a_mistyped_field_is_refused_before_defaults_read_it():
    api = APIServer()
    eps = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "s"}, "subsets": "80"}
    with pytest.raises(Invalid, match='subsets: Invalid value: "80": must be a list'):
        api.create(eps, 1)
    assert api.store.peek("Endpoints", "default", "s") is None


def test_a_gated_pod_is_scheduling_gated():
    stored = create(pod(schedulingGates=[{"name": "example.com/wait"}]))
    assert stored["status"]["conditions"] == [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }
    ]
    assert "conditions" not in create(pod())["status"]


@pytest.mark.parametrize(
    "obj, message",
    [
        (
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": "std"},
                "provisioner": "p",
            },
            'storageclasses.storage.k8s.io "std" already exists',
        ),
        (
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 5},
            'priorityclasses.scheduling.k8s.io "hi" already exists',
        ),
        ({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"}}, 'endpoints "e" already exists'),
    ],
)
def test_messages_name_the_registrys_plural(obj, message):
    api = APIServer()
    api.create(obj, 1)
    with pytest.raises(AlreadyExists) as e:
        api.create(obj, 2)
    assert e.value.message == message


def test_not_found_names_the_group_too():
    with pytest.raises(NotFound) as e:
        APIServer().get("Deployment", "default", "nope")
    assert e.value.message == 'deployments.apps "nope" not found'


def test_built_in_objects_are_created_at_the_clusters_start():
    api = APIServer(start=86400.0)
    for kind, name in (("Namespace", "kube-system"), ("PriorityClass", "system-node-critical")):
        assert api.get(kind, "", name)["metadata"]["creationTimestamp"] == rfc3339(86400.0)
    assert APIServer().get("Namespace", "", "default")["metadata"]["creationTimestamp"] == rfc3339(0.0)


def test_a_pod_stored_before_these_defaults_can_still_be_labelled():
    api = APIServer()
    stored = api.create(pod(), 1)
    old = api.store.get("Pod", "default", "p")
    for c in old["spec"]["containers"]:  # as an older kubemu stored it
        del c["terminationMessagePath"], c["imagePullPolicy"]
    del old["spec"]["securityContext"]
    api.store.put("Pod", old, "MODIFIED")
    old["metadata"]["labels"] = {"tier": "front"}
    assert api.update(old, 2)["metadata"]["labels"] == {"tier": "front"}
    assert api.get("Pod", "default", "p")["spec"] == stored["spec"]
