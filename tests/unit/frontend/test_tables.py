"""Server-side Tables (cluster/frontend/tables.py): columns, cells and the Table envelope,
checked against upstream's printers (pkg/printers/internalversion/printers.go)."""

import pytest

from cluster.clock import rfc3339
from cluster.frontend.tables import PRINTERS, human_duration, table

NOW = 100_000.0
MIN, HOUR, DAY, YEAR = 60, 3600, 86_400, 365 * 86_400


# ---- builders -------------------------------------------------------------------------------


def ago(seconds: float) -> str:
    return rfc3339(NOW - seconds)


def obj(kind, name="x", age=300, **fields):
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": name}}
    if age is not None:
        meta["creationTimestamp"] = ago(age)
    return {"kind": kind, "apiVersion": "v1", "metadata": meta, **fields}


def running(ready=True, restarts=0, finished_ago=None, name="c"):
    cs = {"name": name, "ready": ready, "started": True, "restartCount": restarts}
    cs["state"] = {"running": {"startedAt": ago(60)}}
    if finished_ago is not None:
        cs["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ago(finished_ago)}}
    return cs


def waiting(reason, restarts=0, finished_ago=None, name="c"):
    cs = running(False, restarts, finished_ago, name)
    cs["started"] = False
    cs["state"] = {"waiting": {"reason": reason}}
    return cs


def terminated(reason="", code=0, signal=0, name="c"):
    term = {"exitCode": code, "finishedAt": ago(10)}
    if reason:
        term["reason"] = reason
    if signal:
        term["signal"] = signal
    return {"name": name, "ready": False, "started": False, "restartCount": 0, "state": {"terminated": term}}


def cond(ctype, status="True", reason=""):
    return {"type": ctype, "status": status, **({"reason": reason} if reason else {})}


def pod(phase="Running", statuses=(), *, reason="", init=(), init_statuses=(), conditions=(), deleting=False, **status):
    containers = [{"name": cs.get("name", "c"), "image": "img"} for cs in statuses] or [{"name": "c", "image": "img"}]
    p = obj("Pod", "p", spec={"containers": containers, "initContainers": list(init)})
    p["status"] = {"phase": phase, "containerStatuses": list(statuses), "initContainerStatuses": list(init_statuses)}
    p["status"].update(status, conditions=list(conditions))
    if reason:
        p["status"]["reason"] = reason
    if deleting:
        p["metadata"]["deletionTimestamp"] = ago(5)
    return p


def row(kind, o):
    """{column name: cell} of the one row ``o`` makes."""
    t = table(kind, [o], NOW)
    names = [c["name"] for c in t["columnDefinitions"]]
    cells = t["rows"][0]["cells"]
    assert len(cells) == len(names)
    return dict(zip(names, cells))


# ---- human_duration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seconds, expected",
    [
        (-5, "<invalid>"),
        (-2, "<invalid>"),
        (-1.9, "0s"),  # up to a second of clock skew reads as now
        (-1, "0s"),
        (0, "0s"),
        (0.9, "0s"),
        (45, "45s"),
        (90, "90s"),
        (119, "119s"),  # seconds up to two minutes
        (120, "2m"),
        (150, "2m30s"),
        (200, "3m20s"),
        (599, "9m59s"),
        (10 * MIN, "10m"),  # minutes only from ten minutes
        (10 * MIN + 59, "10m"),
        (2 * HOUR, "120m"),
        (3 * HOUR - 1, "179m"),
        (3 * HOUR, "3h"),
        (3 * HOUR + 30 * MIN, "3h30m"),
        (8 * HOUR - 1, "7h59m"),
        (8 * HOUR, "8h"),  # hours only from eight hours
        (47 * HOUR + 59 * MIN, "47h"),
        (2 * DAY, "2d"),
        (2 * DAY + 5 * HOUR, "2d5h"),
        (8 * DAY - 1, "7d23h"),
        (8 * DAY, "8d"),
        (2 * YEAR - DAY, "729d"),
        (2 * YEAR, "2y"),
        (2 * YEAR + 30 * DAY, "2y30d"),
        (8 * YEAR - DAY, "7y364d"),
        (8 * YEAR, "8y"),
        (9 * YEAR + 100 * DAY, "9y"),
    ],
)
def test_human_duration(seconds, expected):
    assert human_duration(seconds) == expected


def test_age_is_unknown_without_a_readable_timestamp():
    assert row("Namespace", obj("Namespace", age=None))["Age"] == "<unknown>"
    bad = obj("Namespace")
    bad["metadata"]["creationTimestamp"] = "yesterday"
    assert row("Namespace", bad)["Age"] == "<unknown>"
    micro = obj("Namespace", age=None)
    micro["metadata"]["creationTimestamp"] = "2026-01-02T03:46:40.250000+00:00"  # NOW, another spelling
    assert row("Namespace", micro)["Age"] == "0s"


# ---- columns --------------------------------------------------------------------------------

COLUMNS = {
    "Pod": (["Name", "Ready", "Status", "Restarts", "Age"], ["IP", "Node", "Nominated Node", "Readiness Gates"]),
    "Node": (
        ["Name", "Status", "Roles", "Age", "Version"],
        ["Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"],
    ),
    "Event": (
        ["Last Seen", "Type", "Reason", "Object", "Message"],
        ["Subobject", "Source", "First Seen", "Count", "Name"],
    ),
    "Namespace": (["Name", "Status", "Age"], []),
    "ReplicaSet": (["Name", "Desired", "Current", "Ready", "Age"], ["Containers", "Images", "Selector"]),
    "ReplicationController": (["Name", "Desired", "Current", "Ready", "Age"], ["Containers", "Images", "Selector"]),
    "DaemonSet": (
        ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"],
        ["Containers", "Images", "Selector"],
    ),
    "Deployment": (["Name", "Ready", "Up-to-date", "Available", "Age"], ["Containers", "Images", "Selector"]),
    "StatefulSet": (["Name", "Ready", "Age"], ["Containers", "Images"]),
    "Job": (["Name", "Status", "Completions", "Duration", "Age"], ["Containers", "Images", "Selector"]),
    "CronJob": (
        ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age"],
        ["Containers", "Images", "Selector"],
    ),
    "HorizontalPodAutoscaler": (["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"], []),
    "PriorityClass": (["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"], []),
    "PodDisruptionBudget": (["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"], []),
    "Lease": (["Name", "Holder", "Age"], []),
    "ConfigMap": (["Name", "Data", "Age"], []),
    "Secret": (["Name", "Type", "Data", "Age"], []),
    "Service": (["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age"], ["Selector"]),
    # storage (tables_volumes.py; cells in tests/unit/frontend/test_tables_volumes.py)
    "PersistentVolume": (
        ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "Reason", "Age"],
        ["VolumeMode"],
    ),
    "PersistentVolumeClaim": (
        ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "Age"],
        ["VolumeMode"],
    ),
    "StorageClass": (["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"], []),
    "ClusterRole": (["Name", "Age"], []),  # any kind without a printer
    # networking, registration, admission and node kinds (tables_groups.py; cells in tests/unit/frontend/test_groups.py)
    "Ingress": (["Name", "Class", "Hosts", "Address", "Ports", "Age"], []),
    "IngressClass": (["Name", "Controller", "Parameters", "Age"], []),
    "NetworkPolicy": (["Name", "Pod-Selector", "Age"], []),
    "APIService": (["Name", "Service", "Available", "Age"], []),
    "MutatingWebhookConfiguration": (["Name", "Webhooks", "Age"], []),
    "ValidatingWebhookConfiguration": (["Name", "Webhooks", "Age"], []),
    "ValidatingAdmissionPolicy": (["Name", "Validations", "ParamKind", "Age"], []),
    "ValidatingAdmissionPolicyBinding": (["Name", "PolicyName", "ParamRef", "Age"], []),
    "RuntimeClass": (["Name", "Handler", "Age"], []),
    "Endpoints": (["Name", "Endpoints", "Age"], []),  # cells in test_tables_endpoints.py
    "EndpointSlice": (["Name", "AddressType", "Ports", "Endpoints", "Age"], []),
    # kubemu's own (tables_explain.py; cells in tests/unit/frontend/test_explain_frontend.py)
    "SchedulingResult": (["Name", "Attempts", "Result", "Node", "Reason", "Age"], ["Scheduler", "Last Attempt"]),
}


@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_columns_and_wide_priorities(kind):
    defs = table(kind, [], NOW)["columnDefinitions"]
    default, wide = COLUMNS[kind]
    assert [c["name"] for c in defs if c["priority"] == 0] == default  # kubectl get
    assert [c["name"] for c in defs if c["priority"] == 1] == wide  # kubectl get -o wide
    for c in defs:
        assert set(c) == {"name", "type", "format", "description", "priority"}
        assert c["type"] in ("string", "integer", "boolean") and c["description"]
        assert c["format"] == ("name" if c["name"] == "Name" else "")


@pytest.mark.parametrize("kind", sorted(COLUMNS))
@pytest.mark.parametrize("fields", [{}, {"spec": None, "status": None, "metadata": None}, {"spec": [], "status": 3}])
def test_cells_match_columns_even_for_sparse_objects(kind, fields):
    t = table(kind, [{**obj(kind), **fields}, {}], NOW)
    for r in t["rows"]:
        assert len(r["cells"]) == len(t["columnDefinitions"])


def test_every_printed_kind_is_tested():
    assert set(PRINTERS) <= set(COLUMNS)


# ---- Pod ------------------------------------------------------------------------------------

INIT = [{"name": "init", "image": "img"}]
SIDECAR = [{"name": "side", "image": "img", "restartPolicy": "Always"}]


@pytest.mark.parametrize(
    "p, ready, status",
    [
        (pod("Pending"), "0/1", "Pending"),
        (pod("Pending", [waiting("ContainerCreating")]), "0/1", "ContainerCreating"),
        (pod("Running", [running()]), "1/1", "Running"),
        (pod("Running", [running(ready=False)]), "0/1", "Running"),
        (pod("Running", [running(name="a"), running(name="b")]), "2/2", "Running"),
        (pod("Running", [waiting("CrashLoopBackOff", restarts=3)]), "0/1", "CrashLoopBackOff"),
        (pod("Running", [running(name="a"), waiting("ImagePullBackOff", name="b")]), "1/2", "ImagePullBackOff"),
        (pod("Succeeded", [terminated("Completed")]), "0/1", "Completed"),
        (pod("Failed", [terminated("Error", code=1)]), "0/1", "Error"),
        (pod("Failed", [terminated("OOMKilled", code=137)]), "0/1", "OOMKilled"),
        (pod("Failed", [terminated(code=2)]), "0/1", "ExitCode:2"),
        (pod("Failed", [terminated(code=137, signal=9)]), "0/1", "Signal:9"),
        (pod("Failed"), "0/1", "Failed"),
        # Evicted before its containers ran; once they ran, their exit shows (as upstream).
        (pod("Failed", reason="Evicted", message="The node was low on resource: memory."), "0/1", "Evicted"),
        (pod("Failed", [terminated("Error", code=143)], reason="Evicted"), "0/1", "Error"),
        (pod("Failed", reason="OutOfcpu"), "0/1", "OutOfcpu"),
        (pod("Failed", reason="NodeAffinity"), "0/1", "NodeAffinity"),
        (pod("Running", [running()], deleting=True), "1/1", "Terminating"),
        (pod("Pending", deleting=True), "0/1", "Terminating"),
        (pod("Succeeded", [terminated("Completed")], deleting=True), "0/1", "Completed"),  # terminal: no Terminating
        (pod("Running", [running()], reason="NodeLost", deleting=True), "1/1", "Unknown"),
        (pod("Pending", conditions=[cond("PodScheduled", "False", "SchedulingGated")]), "0/1", "SchedulingGated"),
        (pod("Pending", conditions=[cond("PodScheduled", "False", "Unschedulable")]), "0/1", "Pending"),
        # A container Completed while another still runs: Running if the pod is Ready.
        (
            pod("Running", [terminated("Completed", name="a"), running(name="b")], conditions=[cond("Ready")]),
            "1/2",
            "Running",
        ),
        (pod("Running", [terminated("Completed", name="a"), running(name="b")]), "1/2", "NotReady"),
        # Init containers.
        (pod("Pending", init=INIT, init_statuses=[waiting("PodInitializing", name="init")]), "0/1", "Init:0/1"),
        (pod("Pending", init=INIT, init_statuses=[running(ready=False, name="init")]), "0/1", "Init:0/1"),
        (
            pod(
                "Pending", init=INIT + [{"name": "i2"}], init_statuses=[terminated(name="init"), waiting("", name="i2")]
            ),
            "0/1",
            "Init:1/2",
        ),
        (
            pod("Pending", init=INIT, init_statuses=[waiting("CrashLoopBackOff", name="init")]),
            "0/1",
            "Init:CrashLoopBackOff",
        ),
        (pod("Failed", init=INIT, init_statuses=[terminated("Error", 1, name="init")]), "0/1", "Init:Error"),
        (pod("Failed", init=INIT, init_statuses=[terminated(code=3, name="init")]), "0/1", "Init:ExitCode:3"),
        (pod("Failed", init=INIT, init_statuses=[terminated(code=3, signal=15, name="init")]), "0/1", "Init:Signal:15"),
        (pod("Running", [running()], init=INIT, init_statuses=[terminated(name="init")]), "1/1", "Running"),
        # A started sidecar counts in READY and lets the pod go on.
        (pod("Running", [running()], init=SIDECAR, init_statuses=[running(name="side")]), "2/2", "Running"),
        (pod("Running", [running()], init=SIDECAR, init_statuses=[running(False, name="side")]), "1/2", "Running"),
        (
            pod("Pending", init=SIDECAR, init_statuses=[waiting("ContainerCreating", name="side")]),
            "0/2",
            "Init:ContainerCreating",
        ),
    ],
)
def test_pod_ready_and_status(p, ready, status):
    r = row("Pod", p)
    assert (r["Ready"], r["Status"]) == (ready, status)


@pytest.mark.parametrize(
    "p, restarts",
    [
        (pod("Running", [running()]), "0"),
        (pod("Running", [running(restarts=3, finished_ago=5 * MIN)]), "3 (5m ago)"),
        (pod("Running", [running(restarts=2)]), "2"),  # no lastState: no "ago"
        (
            pod(
                "Running",
                [running(restarts=1, finished_ago=90, name="a"), running(restarts=2, finished_ago=HOUR, name="b")],
            ),
            "3 (90s ago)",
        ),
        (pod("Running", [waiting("CrashLoopBackOff", restarts=4, finished_ago=200)]), "4 (3m20s ago)"),
        # Restarts of finished regular init containers do not count once initialized.
        (pod("Running", [running()], init=INIT, init_statuses=[dict(terminated(name="init"), restartCount=2)]), "0"),
        (pod("Pending", init=INIT, init_statuses=[waiting("CrashLoopBackOff", 5, 30, name="init")]), "5 (30s ago)"),
        (
            pod(
                "Running",
                [running(restarts=1)],
                init=SIDECAR,
                init_statuses=[running(restarts=2, finished_ago=10, name="side")],
            ),
            "3 (10s ago)",
        ),
    ],
)
def test_pod_restarts(p, restarts):
    assert row("Pod", p)["Restarts"] == restarts


def test_pod_wide_cells():
    p = pod("Running", [running()], podIP="10.0.0.5", podIPs=[{"ip": "10.0.0.5"}], nominatedNodeName="n2")
    p["spec"].update(nodeName="n1", readinessGates=[{"conditionType": "a"}, {"conditionType": "b"}])
    p["status"]["conditions"] = [cond("a"), cond("b", "False")]
    r = row("Pod", p)
    assert (r["Name"], r["Age"]) == ("p", "5m")
    assert [r["IP"], r["Node"], r["Nominated Node"], r["Readiness Gates"]] == ["10.0.0.5", "n1", "n2", "1/2"]
    bare = row("Pod", pod("Pending"))
    assert [bare["IP"], bare["Node"], bare["Nominated Node"], bare["Readiness Gates"]] == ["<none>"] * 4
    assert row("Pod", pod("Running", podIP="10.0.0.9"))["IP"] == "10.0.0.9"  # podIP alone


def test_finished_pods_rows_carry_the_completed_condition():
    rows = table("Pod", [pod("Succeeded"), pod("Failed"), pod("Running")], NOW)["rows"]
    assert [r.get("conditions", [{}])[0].get("reason") for r in rows] == ["Succeeded", "Failed", None]
    assert rows[0]["conditions"][0]["type"] == "Completed" and rows[0]["conditions"][0]["status"] == "True"


# ---- Node -----------------------------------------------------------------------------------


def node(ready="True", unschedulable=False, labels=None, **status):
    n = obj("Node", "n1", age=2 * DAY)
    n["metadata"]["labels"] = labels or {}
    n["spec"] = {"unschedulable": True} if unschedulable else {}
    conditions = [cond("MemoryPressure", "False")] + ([cond("Ready", ready)] if ready else [])
    n["status"] = {"conditions": conditions, **status}
    return n


@pytest.mark.parametrize(
    "n, status",
    [
        (node("True"), "Ready"),
        (node("False"), "NotReady"),
        (node("Unknown"), "NotReady"),  # the node lifecycle controller's Unknown reads NotReady
        (node(None), "Unknown"),  # no Ready condition at all
        (node("True", unschedulable=True), "Ready,SchedulingDisabled"),
        (node("Unknown", unschedulable=True), "NotReady,SchedulingDisabled"),
    ],
)
def test_node_status(n, status):
    assert row("Node", n)["Status"] == status


@pytest.mark.parametrize(
    "labels, roles",
    [
        ({}, "<none>"),
        ({"node-role.kubernetes.io/control-plane": ""}, "control-plane"),
        ({"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/infra": "x"}, "infra,worker"),
        ({"kubernetes.io/role": "gpu", "node-role.kubernetes.io/": ""}, "gpu"),
        ({"kubernetes.io/role": ""}, "<none>"),
    ],
)
def test_node_roles(labels, roles):
    assert row("Node", node(labels=labels))["Roles"] == roles


def test_node_cells():
    info = {
        "kubeletVersion": "v1.32.0",
        "osImage": "Ubuntu 24.04",
        "kernelVersion": "6.8.0",
        "containerRuntimeVersion": "containerd://1.7",
    }
    addresses = [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "10.1.0.1"}]
    r = row("Node", node(nodeInfo=info, addresses=addresses))
    assert list(r.values()) == [
        "n1",
        "Ready",
        "<none>",
        "2d",
        "v1.32.0",
        "10.1.0.1",
        "<none>",
        "Ubuntu 24.04",
        "6.8.0",
        "containerd://1.7",
    ]
    bare = row("Node", node())
    assert [bare["Version"], bare["OS-Image"], bare["Kernel-Version"], bare["Container-Runtime"]] == [
        "",
        *["<unknown>"] * 3,
    ]


# ---- Event ----------------------------------------------------------------------------------


def event(**fields):
    ev = obj("Event", "p.17a", type="Warning", reason="BackOff", message=" Back-off restarting \n", count=3)
    ev.update(
        involvedObject={"kind": "Pod", "name": "p", "fieldPath": "spec.containers{c}"},
        source={"component": "kubelet", "host": "n1"},
    )
    ev.update(firstTimestamp=ago(HOUR), lastTimestamp=ago(45))
    ev.update(fields)
    return ev


def test_event_cells():
    r = row("Event", event())
    assert list(r.values()) == [
        "45s",
        "Warning",
        "BackOff",
        "pod/p",
        "spec.containers{c}",
        "kubelet, n1",
        "Back-off restarting",
        "60m",
        3,
        "p.17a",
    ]


@pytest.mark.parametrize(
    "fields, last, first, count, obj_, source",
    [
        ({"lastTimestamp": None}, "60m", "60m", 3, "pod/p", "kubelet, n1"),
        (
            {"firstTimestamp": None, "lastTimestamp": None, "eventTime": ago(30) + ""},
            "30s",
            "30s",
            3,
            "pod/p",
            "kubelet, n1",
        ),
        ({"count": 0}, "45s", "60m", 1, "pod/p", "kubelet, n1"),
        ({"series": {"count": 7, "lastObservedTime": ago(5)}}, "5s", "60m", 7, "pod/p", "kubelet, n1"),
        ({"involvedObject": {"kind": "Node"}}, "45s", "60m", 3, "node", "kubelet, n1"),
        ({"involvedObject": {"kind": "ReplicaSet", "name": "web"}}, "45s", "60m", 3, "replicaset/web", "kubelet, n1"),
        ({"source": {}, "reportingComponent": "default-scheduler"}, "45s", "60m", 3, "pod/p", "default-scheduler"),
        ({"source": {}, "firstTimestamp": None, "lastTimestamp": None}, "<unknown>", "<unknown>", 3, "pod/p", ""),
    ],
)
def test_event_fallbacks(fields, last, first, count, obj_, source):
    r = row("Event", event(**fields))
    assert (r["Last Seen"], r["First Seen"], r["Count"], r["Object"], r["Source"]) == (last, first, count, obj_, source)


# ---- the other kinds ------------------------------------------------------------------------

TEMPLATE = {"spec": {"containers": [{"name": "web", "image": "nginx:1"}, {"name": "log", "image": "busybox"}]}}
SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
}


@pytest.mark.parametrize(
    "o, expected",
    [
        (obj("Namespace", "ns", status={"phase": "Active"}), ["ns", "Active", "5m"]),
        (obj("Namespace", "ns", status={"phase": "Terminating"}), ["ns", "Terminating", "5m"]),
        (obj("Namespace", "ns"), ["ns", "Active", "5m"]),
        (
            obj(
                "ReplicaSet",
                "rs",
                spec={"replicas": 3, "selector": SELECTOR, "template": TEMPLATE},
                status={"replicas": 3, "readyReplicas": 2},
            ),
            ["rs", 3, 3, 2, "5m", "web,log", "nginx:1,busybox", "app=web,tier in (a,b)"],
        ),
        (obj("ReplicaSet", "rs", spec={"replicas": 0, "selector": {}}), ["rs", 0, 0, 0, "5m", "", "", "<none>"]),
        (obj("ReplicaSet", "rs", spec={}), ["rs", 1, 0, 0, "5m", "", "", "<none>"]),
        (
            obj(
                "DaemonSet",
                "ds",
                spec={
                    "selector": {"matchLabels": {"app": "ds"}},
                    "template": {"spec": {**TEMPLATE["spec"], "nodeSelector": {"z": "1", "a": "2"}}},
                },
                status={
                    "desiredNumberScheduled": 4,
                    "currentNumberScheduled": 3,
                    "numberReady": 2,
                    "updatedNumberScheduled": 3,
                    "numberAvailable": 1,
                },
            ),
            ["ds", 4, 3, 2, 3, 1, "a=2,z=1", "5m", "web,log", "nginx:1,busybox", "app=ds"],
        ),
        (obj("DaemonSet", "ds"), ["ds", 0, 0, 0, 0, 0, "<none>", "5m", "", "", "<none>"]),
        (
            obj(
                "Deployment",
                "web",
                spec={"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
                status={"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
            ),
            ["web", "2/3", 3, 2, "5m", "web,log", "nginx:1,busybox", "app=web"],
        ),
        (obj("Deployment", "web"), ["web", "0/1", 0, 0, "5m", "", "", ""]),
        (
            obj("PriorityClass", "high", value=1000, globalDefault=True, preemptionPolicy="Never"),
            ["high", 1000, True, "5m", "Never"],
        ),
        (obj("PriorityClass", "low", value=-5), ["low", -5, False, "5m", "PreemptLowerPriority"]),
        (
            obj("PodDisruptionBudget", "pdb", spec={"minAvailable": 2}, status={"disruptionsAllowed": 1}),
            ["pdb", "2", "N/A", 1, "5m"],
        ),
        (obj("PodDisruptionBudget", "pdb", spec={"maxUnavailable": "25%"}), ["pdb", "N/A", "25%", 0, "5m"]),
        (
            obj("Lease", "kube-scheduler", spec={"holderIdentity": "sched-1_abc"}),
            ["kube-scheduler", "sched-1_abc", "5m"],
        ),
        (obj("Lease", "n1", spec={}), ["n1", "", "5m"]),
        (obj("ConfigMap", "cm", data={"a": "1", "b": "2"}, binaryData={"c": "AA=="}), ["cm", 3, "5m"]),
        (obj("ConfigMap", "cm"), ["cm", 0, "5m"]),
        (
            obj("Secret", "s", type="kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""}),
            ["s", "kubernetes.io/tls", 2, "5m"],
        ),
        (obj("Secret", "s"), ["s", "Opaque", 0, "5m"]),
        (obj("ClusterRole", "admin", age=3 * HOUR), ["admin", "3h"]),
    ],
)
def test_kind_cells(o, expected):
    assert table(o["kind"], [o], NOW)["rows"][0]["cells"] == expected


def svc(svc_type=None, ports=(), status=None, **spec):
    s = obj("Service", "svc", spec={**({"type": svc_type} if svc_type else {}), "ports": list(ports), **spec})
    s["status"] = status or {}
    return s


@pytest.mark.parametrize(
    "s, expected",
    [
        (
            svc(
                "ClusterIP",
                [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
                clusterIP="10.96.0.10",
                clusterIPs=["10.96.0.10"],
                selector={"app": "web"},
            ),
            ["svc", "ClusterIP", "10.96.0.10", "<none>", "80/TCP,53/UDP", "5m", "app=web"],
        ),
        (
            svc(None, [{"port": 443}], clusterIP="None"),
            ["svc", "ClusterIP", "None", "<none>", "443/TCP", "5m", "<none>"],
        ),
        (
            svc(
                "NodePort",
                [{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
                clusterIP="10.96.1.1",
                externalIPs=["1.2.3.4"],
            ),
            ["svc", "NodePort", "10.96.1.1", "1.2.3.4", "80:30080/TCP", "5m", "<none>"],
        ),
        (
            svc("LoadBalancer", [{"port": 80, "nodePort": 31000}], clusterIP="10.96.2.2"),
            ["svc", "LoadBalancer", "10.96.2.2", "<pending>", "80:31000/TCP", "5m", "<none>"],
        ),
        (
            svc(
                "LoadBalancer",
                clusterIP="10.96.2.2",
                externalIPs=["9.9.9.9"],
                status={"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example.com"}]}},
            ),
            ["svc", "LoadBalancer", "10.96.2.2", "5.6.7.8,lb.example.com,9.9.9.9", "<none>", "5m", "<none>"],
        ),
        (
            svc("ExternalName", externalName="db.example.com"),
            ["svc", "ExternalName", "<none>", "db.example.com", "<none>", "5m", "<none>"],
        ),
    ],
)
def test_service_cells(s, expected):
    assert table("Service", [s], NOW)["rows"][0]["cells"] == expected


# ---- the Table envelope ---------------------------------------------------------------------


def test_table_envelope_and_metadata():
    t = table("Pod", [pod("Running", [running()])], NOW, resource_version="42")
    assert (t["kind"], t["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert t["metadata"] == {"resourceVersion": "42"}  # no continue when there is no next page
    paged = table("Pod", [], NOW, resource_version="42", continue_token="tok")
    assert paged["metadata"] == {"resourceVersion": "42", "continue": "tok"} and paged["rows"] == []
    assert table("Pod", [], NOW)["metadata"] == {"resourceVersion": ""}


def test_watch_events_after_the_first_carry_no_column_definitions():
    first = table("Node", [node()], NOW, resource_version="7")
    later = table("Node", [node()], NOW, resource_version="8", with_columns=False)
    assert first["columnDefinitions"] and later["columnDefinitions"] == []
    assert later["rows"][0]["cells"] == first["rows"][0]["cells"]


def test_rows_keep_the_input_order():
    names = ["b", "a", "c"]
    t = table("ConfigMap", [obj("ConfigMap", n) for n in names], NOW)
    assert [r["cells"][0] for r in t["rows"]] == names


@pytest.mark.parametrize("mode", ["Metadata", ""])
def test_include_object_metadata(mode):
    p = pod("Running", [running()])
    (r,) = table("Pod", [p], NOW, include_object=mode)["rows"]
    assert r["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": p["metadata"]}
    assert r["object"]["metadata"] is not p["metadata"]  # a copy: the caller may change the row


def test_include_object_object_and_none():
    p = pod("Running", [running()])
    (full,) = table("Pod", [p], NOW, include_object="Object")["rows"]
    assert full["object"] == p
    (bare,) = table("Pod", [p], NOW, include_object="None")["rows"]
    assert "object" not in bare and bare["cells"]


@pytest.mark.parametrize(
    "kind, api_version", [("Pod", "v1"), ("ReplicaSet", "apps/v1"), ("PriorityClass", "scheduling.k8s.io/v1")]
)
def test_include_object_fills_in_kind_and_api_version(kind, api_version):
    o = obj(kind)
    del o["kind"], o["apiVersion"]
    (r,) = table(kind, [o], NOW, include_object="Object")["rows"]
    assert (r["object"]["kind"], r["object"]["apiVersion"]) == (kind, api_version)
    assert "kind" not in o  # the stored object is left alone


def test_unknown_include_object_is_refused():
    with pytest.raises(ValueError, match="includeObject"):
        table("Pod", [], NOW, include_object="Everything")


# ---- rows of objects as the apiserver stores them ------------------------------------------


def test_a_gated_pod_as_stored_shows_scheduling_gated_until_its_gates_go():
    from cluster.apiserver.apiserver import APIServer

    api = APIServer()
    spec = {"containers": [{"name": "c", "image": "x"}], "schedulingGates": [{"name": "example.com/quota"}]}
    stored = api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated"}, "spec": spec}, NOW - 60)
    assert row("Pod", stored)["Status"] == "SchedulingGated"
    plain = api.create(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"}, "spec": spec | {"schedulingGates": []}}, NOW
    )
    assert row("Pod", plain)["Status"] == "Pending"


def test_a_counted_event_as_stored_shows_its_count_and_both_times():
    from cluster.api.eventcorrelation import EventCorrelator
    from cluster.api.events import make_event
    from cluster.api.requests import RecordEvent
    from cluster.apiserver.apiserver import APIServer

    api, recorder = APIServer(), EventCorrelator()
    pod_ = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}}
    for t in (NOW - HOUR, NOW - 600, NOW - 45):
        ev = make_event(
            pod_, "FailedScheduling", "0/3 nodes are available.", t, type="Warning", component="default-scheduler"
        )
        api.write([RecordEvent(e) for e in recorder.correlate([ev], t)], t)
    (stored,) = [api.get("Event", ns, name) for ns, name in api.store.keys("Event")]
    r = row("Event", stored)
    assert (r["Last Seen"], r["First Seen"], r["Count"], r["Reason"]) == ("45s", "60m", 3, "FailedScheduling")


def test_a_replication_controller_row_shows_its_map_selector():
    rc = {
        "kind": "ReplicationController",
        "metadata": {"name": "legacy", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "replicas": 3,
            "selector": {"app": "legacy", "tier": "db"},
            "template": {"spec": {"containers": [{"name": "c", "image": "img"}]}},
        },
        "status": {"replicas": 2, "readyReplicas": 1},
    }
    cells = row("ReplicationController", rc)
    assert [cells[c] for c in ("Name", "Desired", "Current", "Ready")] == ["legacy", 3, 2, 1]
    assert [cells[c] for c in ("Containers", "Images", "Selector")] == ["c", "img", "app=legacy,tier=db"]
    assert row("ReplicationController", {**rc, "spec": {"replicas": 0}})["Selector"] == "<none>"
