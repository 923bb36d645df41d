"""The real kubectl (the machine's dispatcher picks 1.33 from our /version) against a
``kubemu serve`` process: what a user types, and what it prints."""

import json
import time

from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

POD = """
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]
"""
CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}
"""


def test_version_and_nodes(served):
    assert "Server Version: v1.33.0-kubemu" in served.kubectl("version").stdout
    lines = served.kubectl("get", "nodes").stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [line.split()[:2] for line in lines[1:]] == [["node-0", "Ready"], ["node-1", "Ready"], ["node-2", "Ready"]]


def test_create_get_wide_apply_twice_label_describe_delete(served):
    assert served.kubectl("create", "-f", "-", input=POD).stdout.strip() == "pod/web created"
    row = until(
        lambda: [
            ln for ln in served.kubectl("get", "pods", "-A", "-o", "wide").stdout.splitlines() if " Running " in ln
        ]
    )
    assert row and row[0].split()[:4] == ["default", "web", "1/1", "Running"]
    assert served.kubectl("apply", "-f", "-", input=POD).stdout.strip() == "pod/web configured"
    assert served.kubectl("apply", "-f", "-", input=POD).stdout.strip() == "pod/web unchanged"
    served.kubectl("label", "pod", "web", "tier=front")
    assert "tier=front" in served.kubectl("get", "pod", "web", "--show-labels").stdout
    described = served.kubectl("describe", "pod", "web").stdout
    assert "Successfully assigned default/web to node-" in described
    assert served.kubectl("delete", "pod", "web").stdout.strip() == 'pod "web" deleted'
    missing = served.kubectl("get", "pod", "web", check=False)
    assert missing.returncode == 1 and 'pods "web" not found' in missing.stderr


def test_stored_kinds_apply_server_side_and_read_back(served):
    assert (
        "configmap/settings serverside-applied"
        in served.kubectl("apply", "--server-side", "-f", "-", input=CONFIGMAP).stdout
    )
    got = json.loads(served.kubectl("get", "configmap", "settings", "-o", "json").stdout)
    assert got["data"] == {"mode": "fast"} and got["kind"] == "ConfigMap"


def test_cordon_taint_and_uncordon_a_node(served):
    served.kubectl("cordon", "node-2")
    assert "Ready,SchedulingDisabled" in served.kubectl("get", "node", "node-2").stdout
    served.kubectl("taint", "node", "node-2", "dedicated=gpu:NoSchedule")
    taints = json.loads(served.kubectl("get", "node", "node-2", "-o", "jsonpath={.spec.taints}").stdout)
    assert {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"} in taints
    served.kubectl("uncordon", "node-2")
    assert "SchedulingDisabled" not in served.kubectl("get", "node", "node-2").stdout


def test_a_missing_token_is_refused(served):
    served.kubectl("config", "set-credentials", "kubemu-admin", "--token=wrong")
    try:
        refused = served.kubectl("get", "pods", check=False)
        assert refused.returncode == 1 and "You must be logged in to the server" in refused.stderr
    finally:
        served.kubectl("config", "set-credentials", "kubemu-admin", f"--token={served.token}")


def test_every_served_kind_lists_in_one_get(served):
    kinds = "pods,nodes,events,namespaces,leases,configmaps,deployments,services,clusterroles"
    out = served.kubectl("get", kinds, "-A").stdout
    assert "node/node-0" in out and "namespace/kube-system" in out and "lease.coordination.k8s.io/node-0" in out


REPLICASET = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}
"""


def running(served, selector):
    out = served.kubectl("get", "pods", "-l", selector, "--no-headers").stdout
    return [line.split() for line in out.splitlines() if " Running " in line]


def test_scale_a_replicaset_then_drain_a_node_through_evictions(served):
    served.kubectl("apply", "-f", "-", input=REPLICASET)
    served.kubectl("scale", "replicaset", "api", "--replicas=4")
    assert len(until(lambda: len(running(served, "app=api")) == 4 and running(served, "app=api"))) == 4
    on_node = {row[0] for row in running(served, "app=api")}
    drained = served.kubectl("drain", "node-0", "--ignore-daemonsets", "--force", "--timeout=30s")
    assert "node/node-0 drained" in drained.stdout
    wide = served.kubectl("get", "pods", "-l", "app=api", "-o", "wide", "--no-headers").stdout
    assert " node-0 " not in wide and on_node  # every api pod left node-0 and was replaced elsewhere
    served.kubectl("uncordon", "node-0")


def test_wait_for_ready_and_a_forced_delete(served):
    served.kubectl("run", "waiter", "--image=busybox")
    assert "condition met" in served.kubectl("wait", "--for=condition=Ready", "pod/waiter", "--timeout=20s").stdout
    forced = served.kubectl("delete", "pod", "waiter", "--grace-period=0", "--force")
    assert 'pod "waiter" force deleted' in forced.stdout


def test_get_watch_prints_changes_as_they_happen(served):
    import subprocess

    env = {"KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(served.cache), "PATH": "/usr/bin:/bin"}
    watcher = subprocess.Popen(["kubectl", "get", "pods", "-w"], env=env, stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    served.kubectl("run", "watched", "--image=busybox")
    time.sleep(1.0)
    watcher.terminate()
    out, _ = watcher.communicate(timeout=10)
    assert [line.split()[0] for line in out.splitlines()].count("watched") >= 1


def test_metrics_show_requests_storage_and_the_schedulers_counters(served):
    served.kubectl("run", "counted", "--image=busybox")
    until(lambda: running(served, "run=counted"))
    text = served.kubectl("get", "--raw", "/metrics").stdout
    assert 'apiserver_storage_objects{resource="nodes"} 3.0' in text
    assert 'apiserver_request_total{code="201",resource="pods",verb="POST"}' in text
    scheduled = [
        line
        for line in text.splitlines()
        if line.startswith('scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}')
    ]
    assert scheduled and float(scheduled[0].split()[-1]) >= 1


def test_generator_commands_that_send_protobuf(served):
    assert served.kubectl("create", "namespace", "team-a").stdout.strip() == "namespace/team-a created"
    assert (
        "configmap/flags created"
        in served.kubectl("create", "configmap", "flags", "-n", "team-a", "--from-literal=x=1").stdout
    )
    assert (
        "priorityclass.scheduling.k8s.io/urgent created"
        in served.kubectl("create", "priorityclass", "urgent", "--value=1000").stdout
    )
    assert (
        "deployment.apps/web created"
        in served.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2").stdout
    )
    got = json.loads(served.kubectl("get", "configmap", "flags", "-n", "team-a", "-o", "json").stdout)
    assert got["data"] == {"x": "1"}
    pc = json.loads(served.kubectl("get", "priorityclass", "urgent", "-o", "json").stdout)
    assert pc["value"] == 1000
    deploy = json.loads(served.kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert deploy["spec"]["replicas"] == 2 and deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"


def test_delete_cascades_orphans_and_a_namespace_empties(served):
    rs = REPLICASET.replace("name: api", "name: kept").replace("app: api", "app: kept")
    served.kubectl("apply", "-f", "-", input=rs)
    assert until(lambda: len(running(served, "app=kept")) == 2)
    served.kubectl("delete", "replicaset", "kept", "--cascade=orphan")
    time.sleep(1.0)
    orphans = json.loads(served.kubectl("get", "pods", "-l", "app=kept", "-o", "json").stdout)["items"]
    assert len(orphans) == 2 and all(not p["metadata"].get("ownerReferences") for p in orphans)
    gone = REPLICASET.replace("name: api", "name: gone").replace("app: api", "app: gone")
    served.kubectl("apply", "-f", "-", input=gone)
    assert until(lambda: len(running(served, "app=gone")) == 2)
    served.kubectl("delete", "replicaset", "gone")  # background: the collector takes the pods
    assert until(lambda: served.kubectl("get", "pods", "-l", "app=gone", "--no-headers").stdout.strip() == "", 20)
    served.kubectl("create", "namespace", "scratch")
    served.kubectl("run", "temp", "--image=x", "-n", "scratch")
    served.kubectl("delete", "namespace", "scratch", "--timeout=30s")
    missing = served.kubectl("get", "namespace", "scratch", check=False)
    assert missing.returncode == 1 and "not found" in missing.stderr


WIDGET_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
"""
WIDGET = """
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
"""


def test_a_custom_resource_definition_adds_a_kind_kubectl_can_use(served):
    served.kubectl("apply", "-f", "-", input=WIDGET_CRD)
    assert served.kubectl("apply", "-f", "-", input=WIDGET).stdout.strip() == "widget.example.com/w1 created"
    assert served.kubectl("get", "wd", "--no-headers").stdout.split()[0] == "w1"
    assert served.kubectl("get", "widget", "w1", "-o", "jsonpath={.spec.size}").stdout == "3"
    served.kubectl("delete", "crd", "widgets.example.com")
    gone = served.kubectl("get", "widgets.example.com", check=False)
    assert gone.returncode == 1


def test_api_resources_and_every_listable_kind(served):
    names = served.kubectl("api-resources", "--verbs=list", "-o", "name").stdout.split()
    assert {"pods", "nodes", "configmaps", "deployments.apps", "leases.coordination.k8s.io"} <= set(names)
    wide = served.kubectl("api-resources").stdout
    assert any(line.split()[:2] == ["pods", "po"] for line in wide.splitlines())
    served.kubectl("get", ",".join(names), "-A")  # every kind kubemu serves lists


def test_describe_a_node_and_annotate_a_pod(served):
    described = served.kubectl("describe", "node", "node-0").stdout
    assert "Name:               node-0" in described and "Conditions:" in described and "Ready" in described
    served.kubectl("run", "noted", "--image=busybox")
    served.kubectl("annotate", "pod", "noted", "team=blue")
    got = json.loads(served.kubectl("get", "pod", "noted", "-o", "json").stdout)
    assert got["metadata"]["annotations"]["team"] == "blue"


def test_a_pod_spec_edit_is_refused_and_a_shorter_deadline_fails_the_pod(served):
    served.kubectl("run", "capped", "--image=busybox")
    assert until(lambda: " Running " in served.kubectl("get", "pod", "capped").stdout)
    bigger = '{"spec":{"containers":[{"name":"capped","resources":{"requests":{"cpu":"1"}}}]}}'
    refused = served.kubectl("patch", "pod", "capped", "-p", bigger, check=False)
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        'The Pod "capped" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`"
    )
    assert "spec.containers[0].resources.requests: <unset> -> {" in refused.stderr
    served.kubectl("patch", "pod", "capped", "-p", '{"spec":{"activeDeadlineSeconds":1}}')
    # Past already (the pod started seconds ago): the kubelet stops it at once.
    status = until(
        lambda: json.loads(served.kubectl("get", "pod", "capped", "-o", "json").stdout)["status"].get("reason")
    )
    assert status == "DeadlineExceeded"
    got = json.loads(served.kubectl("get", "pod", "capped", "-o", "json").stdout)["status"]
    assert got["phase"] == "Failed" and got["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143
    longer = served.kubectl("patch", "pod", "capped", "-p", '{"spec":{"activeDeadlineSeconds":100}}', check=False)
    assert longer.returncode == 1 and longer.stderr.strip() == (
        'The Pod "capped" is invalid: spec.activeDeadlineSeconds: Invalid value: 100: '
        "must be less than or equal to previous value"
    )
    events = served.kubectl("get", "events", "--field-selector", "involvedObject.name=capped").stdout
    assert "DeadlineExceeded" in events and "Pod was active on the node longer than the specified deadline" in events


TYPO = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: typo}
spec:
  replcas: 4
  selector: {matchLabels: {app: typo}}
  template:
    metadata: {labels: {app: typo}}
    spec:
      containers: [{name: c, image: nginx}]
"""


def test_kubectl_refuses_a_typo_by_default_warns_with_validate_warn_and_drops_it_with_ignore(served):
    refused = served.kubectl("apply", "-f", "-", input=TYPO, check=False)
    assert refused.returncode == 1
    assert 'strict decoding error: unknown field "spec.replcas"' in refused.stderr
    assert served.kubectl("get", "deployment", "typo", check=False).returncode == 1  # nothing stored
    warned = served.kubectl("create", "--validate=warn", "-f", "-", input=TYPO)
    assert warned.stdout.strip() == "deployment.apps/typo created"
    assert 'Warning: unknown field "spec.replcas"' in warned.stderr
    stored = json.loads(served.kubectl("get", "deployment", "typo", "-o", "json").stdout)
    assert "replcas" not in stored["spec"] and stored["spec"]["replicas"] == 1  # dropped; the default applies
    served.kubectl("delete", "deployment", "typo")
    ignored = served.kubectl("create", "--validate=false", "-f", "-", input=TYPO)
    assert ignored.stdout.strip() == "deployment.apps/typo created" and "Warning" not in ignored.stderr
    mistyped = served.kubectl("apply", "-f", "-", input=TYPO.replace("replcas: 4", 'replicas: "four"'), check=False)
    assert mistyped.returncode == 1 and "cannot unmarshal string into Go struct field" in mistyped.stderr
    served.kubectl("delete", "deployment", "typo")


RC = """
apiVersion: v1
kind: ReplicationController
metadata: {name: rc-web}
spec:
  replicas: 1
  selector: {app: rc-web}
  template:
    metadata: {labels: {app: rc-web}}
    spec:
      containers: [{name: c, image: %s, ports: [{containerPort: 80}]}]
"""


def test_a_changed_replication_controller_is_applied_again_by_strategic_merge(served):
    assert (
        served.kubectl("apply", "-f", "-", input=RC % "nginx").stdout.strip() == "replicationcontroller/rc-web created"
    )
    again = served.kubectl("apply", "-f", "-", input=RC % "nginx:1.27")
    assert again.stdout.strip() == "replicationcontroller/rc-web configured"
    image = served.kubectl("get", "rc", "rc-web", "-o", "jsonpath={.spec.template.spec.containers[0].image}").stdout
    assert image == "nginx:1.27"
    served.kubectl("delete", "rc", "rc-web")
