"""The PV controller against a real apiserver: binding, provisioning, reclaiming, losing.

Each test creates claims, volumes and classes as a user would and pumps the controller
(``controller_builders.Loop``) to the emulated times that matter; the assertions read the
stored objects and the Events, as a user's ``kubectl get`` and ``describe`` would."""

from __future__ import annotations

from controller_builders import Loop
from volume_builders import pv, pvc, storage_class

from cluster.controllers.persistentvolume import PersistentVolumeStep

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


def loop(*objs, seconds=1.0):
    lp = Loop([PersistentVolumeStep(seconds)])
    for o in objs:
        lp.api.create(o, 0)
    lp.at(0)
    return lp


def claim(lp, name, ns="default"):
    return lp.api.get("PersistentVolumeClaim", ns, name)


def volume(lp, name):
    return lp.api.get("PersistentVolume", "", name)


def events(lp, reason=None):
    out = [e for e in lp.api.store.objects("Event") if reason is None or e["reason"] == reason]
    return [(e["reason"], e["involvedObject"]["name"], e["message"]) for e in out]


def test_an_unbound_claim_binds_the_smallest_fitting_volume_both_ways():
    lp = loop(pv("big", "10Gi"), pv("small", "2Gi"), pv("tiny", "500Mi"), pvc("data", "1Gi"))
    c, v = claim(lp, "data"), volume(lp, "small")
    assert c["spec"]["volumeName"] == "small"
    assert c["metadata"]["annotations"] == {BIND_COMPLETED: "yes", BY_CONTROLLER: "yes"}
    assert c["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    assert v["status"]["phase"] == "Bound"
    assert v["metadata"]["annotations"] == {BY_CONTROLLER: "yes"}
    ref = v["spec"]["claimRef"]
    assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"]) == (
        "PersistentVolumeClaim",
        "default",
        "data",
        c["metadata"]["uid"],
    )
    assert volume(lp, "big")["status"]["phase"] == "Available"
    assert volume(lp, "tiny")["status"]["phase"] == "Available"


def test_a_volume_added_later_binds_the_waiting_claim():
    lp = loop(pvc("data", "1Gi", cls=""))
    assert claim(lp, "data")["status"]["phase"] == "Pending"
    message = "no persistent volumes available for this claim and no storage class is set"
    assert events(lp) == [("FailedBinding", "data", message)]
    lp.api.create(pv("late", "1Gi"), 1)
    lp.at(1)
    assert claim(lp, "data")["spec"]["volumeName"] == "late"
    assert claim(lp, "data")["status"]["phase"] == "Bound"


def test_a_claim_naming_a_free_volume_binds_it_without_bound_by_controller_on_the_claim():
    lp = loop(pv("mine", "5Gi"), pvc("data", "1Gi", volume="mine"))
    c, v = claim(lp, "data"), volume(lp, "mine")
    assert c["metadata"]["annotations"] == {BIND_COMPLETED: "yes"}
    assert v["metadata"]["annotations"] == {BY_CONTROLLER: "yes"}
    assert (c["status"]["phase"], v["status"]["phase"]) == ("Bound", "Bound")


def test_a_volume_pre_bound_by_the_user_wins_over_a_smaller_one():
    lp = loop(pv("small", "1Gi"), pv("reserved", "8Gi", claim=("default", "data")), pvc("data", "1Gi"))
    v = volume(lp, "reserved")
    assert claim(lp, "data")["spec"]["volumeName"] == "reserved"
    assert "annotations" not in v["metadata"]  # the user bound it, not the controller
    assert v["spec"]["claimRef"]["uid"] == claim(lp, "data")["metadata"]["uid"]
    assert volume(lp, "small")["status"]["phase"] == "Available"


def test_a_named_volume_that_does_not_fit_gives_upstreams_mismatch_event():
    lp = loop(pv("tiny", "1Gi"), pvc("data", "5Gi", volume="tiny"))
    assert claim(lp, "data")["status"]["phase"] == "Pending"
    assert events(lp, "VolumeMismatch") == [
        ("VolumeMismatch", "data", 'Cannot bind to requested volume "tiny": requested PV is too small')
    ]
    assert "claimRef" not in volume(lp, "tiny")["spec"]


def test_a_named_volume_bound_elsewhere_is_refused():
    lp = loop(pv("one", "1Gi"), pvc("first", "1Gi"))
    lp.api.create(pvc("second", "1Gi", volume="one"), 1)
    lp.at(1)
    assert claim(lp, "second")["status"]["phase"] == "Pending"
    assert events(lp, "FailedBinding") == [
        ("FailedBinding", "second", 'volume "one" already bound to a different claim.')
    ]


def test_provisioning_after_the_class_delay_then_binding():
    lp = loop(storage_class("fast", seconds=3, policy="Retain"), pvc("data", "4Gi", cls="fast"), seconds=1.0)
    c = claim(lp, "data")
    assert c["status"]["phase"] == "Pending"
    assert c["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] == "ebs.csi.aws.com"
    assert c["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-provisioner"] == "ebs.csi.aws.com"
    lp.run(2.9)
    assert list(lp.api.store.objects("PersistentVolume")) == []
    lp.run(3.0)
    name = f"pvc-{c['metadata']['uid']}"
    v = volume(lp, name)
    assert v["spec"]["capacity"] == {"storage": "4Gi"}
    assert v["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert v["spec"]["storageClassName"] == "fast"
    assert v["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "ebs.csi.aws.com"
    assert "nodeAffinity" not in v["spec"]  # Immediate: no node chosen
    assert claim(lp, "data")["spec"]["volumeName"] == name
    assert claim(lp, "data")["status"]["phase"] == "Bound"
    assert [r for r, _, _ in events(lp)] == ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"]


def test_wait_for_first_consumer_waits_then_provisions_on_the_selected_node():
    lp = loop(storage_class("local", mode="WaitForFirstConsumer"), pvc("data", "1Gi", cls="local"))
    assert events(lp) == [("WaitForFirstConsumer", "data", "waiting for first consumer to be created before binding")]
    c = claim(lp, "data")
    c["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": "node-2"}
    lp.api.update(c, 1)  # what the scheduler's PreBind writes
    lp.at(1)
    assert list(lp.api.store.objects("PersistentVolume")) == []  # the provisioner takes 1 s
    lp.run(2.0)
    v = volume(lp, f"pvc-{c['metadata']['uid']}")
    terms = v["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-2"]}]}]
    assert claim(lp, "data")["status"]["phase"] == "Bound"


def test_wait_for_first_consumer_leaves_a_static_volume_to_the_scheduler():
    lp = loop(
        storage_class("local", mode="WaitForFirstConsumer"), pv("disk", "1Gi", cls="local"), pvc("data", cls="local")
    )
    assert claim(lp, "data")["status"]["phase"] == "Pending"
    assert "claimRef" not in volume(lp, "disk")["spec"]


def test_no_provisioner_and_a_missing_class_fail_with_upstreams_messages():
    lp = loop(
        storage_class("manual", provisioner="kubernetes.io/no-provisioner"),
        pvc("a", cls="manual"),
        pvc("b", cls="gone"),
    )
    assert sorted(events(lp, "ProvisioningFailed")) == [
        ("ProvisioningFailed", "a", "no volume plugin matched name: kubernetes.io/no-provisioner"),
        ("ProvisioningFailed", "b", 'storageclass.storage.k8s.io "gone" not found'),
    ]
    assert list(lp.api.store.objects("PersistentVolume")) == []


def test_reclaim_delete_removes_the_volume_retain_leaves_it_released():
    lp = loop(pv("keep", "1Gi", policy="Retain"), pv("drop", "2Gi", policy="Delete"), pvc("a", "1Gi"), pvc("b", "2Gi"))
    assert claim(lp, "a")["spec"]["volumeName"] == "keep" and claim(lp, "b")["spec"]["volumeName"] == "drop"
    lp.api.delete("PersistentVolumeClaim", "default", "a", None, None, 1)
    lp.api.delete("PersistentVolumeClaim", "default", "b", None, None, 1)
    lp.at(1)
    assert volume(lp, "keep")["status"]["phase"] == "Released"
    assert list(lp.api.store.objects("PersistentVolume")) == [volume(lp, "keep")]
    lp.api.create(pvc("c", "1Gi"), 2)  # a Released volume serves no new claim
    lp.at(2)
    assert claim(lp, "c")["status"]["phase"] == "Pending"


def test_a_bound_claim_whose_volume_goes_is_lost():
    lp = loop(pv("one", "1Gi"), pvc("data", "1Gi"))
    lp.api.delete("PersistentVolume", "", "one", None, None, 1)
    lp.at(1)
    assert claim(lp, "data")["status"]["phase"] == "Lost"
    message = "Bound claim has lost its PersistentVolume. Data on the volume is lost!"
    assert events(lp, "ClaimLost") == [("ClaimLost", "data", message)]


def test_a_default_class_given_later_reaches_a_claim_with_none():
    lp = loop(pvc("data", "1Gi"))
    assert "storageClassName" not in claim(lp, "data")["spec"]
    lp.api.create(storage_class("std", default=True), 1)
    lp.at(1)
    assert claim(lp, "data")["spec"]["storageClassName"] == "std"  # RetroactiveDefaultStorageClass
    lp.run(2.0)
    assert claim(lp, "data")["status"]["phase"] == "Bound"
