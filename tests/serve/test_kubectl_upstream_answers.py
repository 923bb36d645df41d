"""The real kubectl against ``kubemu serve`` (at 20x time): what users found differed from
upstream answers alike now: defaults on what is stored, ``SchedulingGated`` pods, one
counted Event for a pod that keeps failing to schedule, ages of the built-in objects,
plurals in messages, and ``kubectl top`` and the HPA reading the same figures."""

import json

import pytest
from servedcluster import Served, needs_kubectl, until

pytestmark = needs_kubectl


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("serve"), nodes=2, extra=("--time-scale", "20"))
    yield s
    s.stop()


SERVICE = """
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""
DAEMONSET = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, image: agent, ports: [{containerPort: 9100}]}]}
"""


def get(served, *what) -> dict:
    return json.loads(served.kubectl("get", *what, "-o", "json").stdout)


def test_stored_objects_carry_upstreams_defaults_and_apply_twice_is_unchanged(served):
    served.kubectl("apply", "-f", "-", input=SERVICE)
    spec = get(served, "service", "web")["spec"]
    assert (spec["type"], spec["sessionAffinity"], spec["ipFamilyPolicy"]) == ("ClusterIP", "None", "SingleStack")
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert served.kubectl("apply", "-f", "-", input=SERVICE).stdout.strip() == "service/web unchanged"
    served.kubectl("apply", "-f", "-", input=DAEMONSET)
    ds = get(served, "daemonset", "agent")
    assert ds["spec"]["updateStrategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}
    container = ds["spec"]["template"]["spec"]["containers"][0]
    assert (container["ports"][0]["protocol"], container["imagePullPolicy"]) == ("TCP", "Always")
    assert served.kubectl("apply", "-f", "-", input=DAEMONSET).stdout.strip() == "daemonset.apps/agent unchanged"
    rolled = served.kubectl("rollout", "status", "daemonset/agent", "--timeout=40s")
    assert 'daemon set "agent" successfully rolled out' in rolled.stdout


def test_a_gated_pod_shows_scheduling_gated(served):
    doc = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: gated}\n"
        "spec: {schedulingGates: [{name: example.com/wait}], containers: [{name: c, image: x}]}\n"
    )
    served.kubectl("create", "-f", "-", input=doc)
    row = served.kubectl("get", "pod", "gated").stdout.splitlines()[1].split()
    assert row[:3] == ["gated", "0/1", "SchedulingGated"]
    served.kubectl("patch", "pod", "gated", "--type=json", "-p", '[{"op": "remove", "path": "/spec/schedulingGates"}]')
    running = until(lambda: " Running " in served.kubectl("get", "pod", "gated").stdout, 30)
    assert running  # the scheduler's bind replaced the condition


def test_a_pod_failing_to_schedule_has_one_counted_event(served):
    doc = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '100'}}}]}\n"
    )
    served.kubectl("create", "-f", "-", input=doc)

    def failures():
        items = get(served, "events")["items"]
        mine = [e for e in items if e["involvedObject"]["name"] == "huge" and e["reason"] == "FailedScheduling"]
        return mine if mine and mine[0]["count"] >= 2 else None

    events = until(failures, 60)  # the scheduler retries an unschedulable pod every 5 emulated minutes
    assert events and len(events) == 1
    assert events[0]["firstTimestamp"] < events[0]["lastTimestamp"]


def test_built_in_namespaces_are_as_young_as_the_server(served):
    for line in served.kubectl("get", "namespaces").stdout.splitlines()[1:]:
        name, _, age = line.split()
        assert age.endswith(("s", "m")), f"namespace {name} is {age} old"  # not 338d


def test_already_exists_names_the_plural(served):
    doc = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: example.com/x\n"
    served.kubectl("create", "-f", "-", input=doc)
    again = served.kubectl("create", "-f", "-", input=doc, check=False)
    assert again.returncode == 1
    assert 'storageclasses.storage.k8s.io "fast" already exists' in again.stderr


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}, annotations: {annotations}}}
    spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: 500m}}}}}}]}}
"""


@pytest.mark.parametrize(
    "name, annotations, cpu, percent", [("busy", "{kubemu.io/cpu-usage: 250m}", "250m", 50), ("idle", "{}", "0m", 0)]
)
def test_top_and_the_hpa_read_the_same_figures(served, name, annotations, cpu, percent):
    served.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(name=name, annotations=annotations))
    served.kubectl("autoscale", "deployment", name, "--cpu-percent=50", "--min=2", "--max=4")

    def tops():
        rows = [r.split() for r in served.kubectl("top", "pods", "-l", f"app={name}", check=False).stdout.splitlines()]
        return rows[1:] if len(rows) == 3 else None

    rows = until(tops, 30)
    assert rows and {r[1] for r in rows} == {cpu}

    def measured():
        current = (get(served, "hpa", name).get("status") or {}).get("currentMetrics") or []
        return current[0]["resource"]["current"] if current else None

    current = until(measured, 30)
    assert current == {"averageUtilization": percent, "averageValue": cpu.removesuffix("m") + "m" if percent else "0"}
