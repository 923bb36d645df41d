"""``kubectl get pv|pvc|sc`` rows (``tables_volumes.py``) as upstream's printers give them."""

from cluster.frontend.tables import table

NOW = 1000.0


def cells(kind, obj):
    return table(kind, [obj], NOW)["rows"][0]["cells"]


def test_a_bound_claim_and_its_volume():
    claim = {
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"volumeName": "pv1", "storageClassName": "fast", "volumeMode": "Filesystem"},
        "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"]},
    }
    assert cells("PersistentVolumeClaim", claim)[:6] == ["data", "Bound", "pv1", "2Gi", "RWO,RWX", "fast"]
    pv = {
        "metadata": {"name": "pv1"},
        "spec": {
            "capacity": {"storage": "2Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Delete",
            "claimRef": {"namespace": "default", "name": "data"},
            "storageClassName": "fast",
        },
        "status": {"phase": "Bound"},
    }
    assert cells("PersistentVolume", pv)[:8] == ["pv1", "2Gi", "RWO", "Delete", "Bound", "default/data", "fast", ""]


def test_a_pending_claim_shows_no_capacity_and_the_default_class_is_marked():
    claim = {"metadata": {"name": "w"}, "spec": {"storageClassName": "std"}, "status": {"phase": "Pending"}}
    assert cells("PersistentVolumeClaim", claim)[:6] == ["w", "Pending", "", "", "", "std"]
    sc = {
        "metadata": {"name": "std", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    assert cells("StorageClass", sc)[:5] == [
        "std (default)",
        "ebs.csi.aws.com",
        "Delete",
        "WaitForFirstConsumer",
        False,
    ]
