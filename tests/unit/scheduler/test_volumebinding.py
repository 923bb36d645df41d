"""VolumeBinding through the scheduler component: claims, volumes and classes come in by
watch, pods with claims are placed (or refused with upstream's reasons), and PreBind's
volume writes leave ahead of the bind."""

from __future__ import annotations

from cluster.api.requests import Bind, Patch, RecordEvent
from cluster.runtime.component import Batch, WatchEvent
from cluster.scheduler.component import SchedulerComponent

WFFC = "WaitForFirstConsumer"


def node(name, zone="a"):
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def pod(name, *claims):
    vols = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "volumes": vols},
        "status": {"phase": "Pending"},
    }


def claim(name, cls="wffc", volume=None, rv="7", **ann):
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": cls}
    if volume:
        spec["volumeName"] = volume
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": rv}
    if ann:
        meta["annotations"] = {k.replace("_", "/"): v for k, v in ann.items()}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def volume(name, node_name=None, cls="wffc", size="1Gi", phase="Available"):
    spec: dict = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls}
    if node_name:
        term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    meta = {"name": name, "uid": f"uid-{name}", "resourceVersion": "3"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def sclass(name="wffc", mode=WFFC, provisioner="ebs.csi.aws.com", zones=None):
    out = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}}
    out.update(provisioner=provisioner, volumeBindingMode=mode)
    if zones:
        out["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": zones}]}
        ]
    return out


def run(*objs):
    c = SchedulerComponent(seed=1)
    return c, c.reconcile(Batch(1.0, [WatchEvent(o["kind"], "ADDED", o) for o in objs]))


def failed_message(result):
    (ev,) = [w.event for w in result.writes if isinstance(w, RecordEvent) and w.event["reason"] == "FailedScheduling"]
    return ev["message"]


def test_a_pod_without_claims_is_untouched():
    _, result = run(node("n1"), pod("p"))
    assert [type(w).__name__ for w in result.writes][:1] == ["Bind"]


def test_a_provisioning_claim_gets_the_selected_node_before_the_bind():
    _, result = run(sclass(zones=["b"]), node("a1", "a"), node("b1", "b"), claim("data"), pod("p", "data"))
    first, second = result.writes[:2]
    assert isinstance(first, Patch) and first.kind == "PersistentVolumeClaim" and first.name == "data"
    assert first.patch.patch == {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "b1"}}}
    assert first.patch.resource_version == "7"
    assert second == Bind("default", "p", "uid-p", "b1")


def test_a_static_volume_is_bound_by_the_scheduler_on_its_node():
    objs = [sclass(provisioner="kubernetes.io/no-provisioner"), node("n1"), node("n2"), volume("local-n2", "n2")]
    _, result = run(*objs, claim("data"), pod("p", "data"))
    first, second = result.writes[:2]
    assert isinstance(first, Patch) and first.kind == "PersistentVolume" and first.name == "local-n2"
    ref = first.patch.patch["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"], ref["uid"]) == ("default", "data", "uid-data")
    assert first.patch.patch["metadata"] == {"annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}}
    assert second == Bind("default", "p", "uid-p", "n2")


def test_an_assumed_volume_is_not_offered_to_the_next_pod():
    objs = [sclass(provisioner="kubernetes.io/no-provisioner"), node("n1"), volume("only", "n1")]
    _, result = run(*objs, claim("c1"), claim("c2"), pod("p1", "c1"), pod("p2", "c2"))
    binds = [w for w in result.writes if isinstance(w, Bind)]
    assert [b.name for b in binds] == ["p1"]
    assert (
        failed_message(result)
        == "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_a_bound_claims_volume_keeps_the_pod_to_its_node():
    bound = claim("data", volume="pv1")
    _, result = run(sclass(), node("n1"), node("n2"), volume("pv1", "n2", phase="Bound"), bound, pod("p", "data"))
    assert [w for w in result.writes if isinstance(w, Bind)] == [Bind("default", "p", "uid-p", "n2")]
    _, result = run(sclass(), node("n1"), volume("pv1", "n2", phase="Bound"), bound, pod("p", "data"))
    assert failed_message(result).startswith("0/1 nodes are available: 1 node(s) had volume node affinity conflict.")
    _, result = run(sclass(), node("n1"), bound, pod("p", "data"))
    assert failed_message(result).startswith(
        "0/1 nodes are available: 1 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)."
    )


def test_prefilter_refusals_carry_upstreams_messages():
    _, result = run(sclass(), node("n1"), pod("p", "missing"))
    assert failed_message(result).startswith('0/1 nodes are available: persistentvolumeclaim "missing" not found.')
    _, result = run(sclass(name="imm", mode="Immediate"), node("n1"), claim("data", cls="imm"), pod("p", "data"))
    assert failed_message(result).startswith(
        "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims."
    )


def test_a_claim_already_selected_for_another_node_fits_only_there():
    sel = claim("data", **{"volume.kubernetes.io_selected-node": "n2"})
    _, result = run(sclass(), node("n1"), node("n2"), sel, pod("p", "data"))
    assert [w for w in result.writes if isinstance(w, Bind)] == [Bind("default", "p", "uid-p", "n2")]
    assert not [w for w in result.writes if isinstance(w, Patch) and w.kind == "PersistentVolumeClaim"]


def test_a_claim_arriving_later_moves_the_parked_pod_back():
    c, result = run(sclass(), node("n1"), pod("p", "data"))
    assert not [w for w in result.writes if isinstance(w, Bind)]
    later = c.reconcile(Batch(2.0, [WatchEvent("PersistentVolumeClaim", "ADDED", claim("data"))]))
    assert [w for w in later.writes if isinstance(w, Bind)] == [Bind("default", "p", "uid-p", "n1")]
