"""Builders for the volume tests: claims, volumes and classes as users write them."""

from __future__ import annotations


def pvc(name, storage="1Gi", modes=("ReadWriteOnce",), cls=None, ns="default", selector=None, volume=None, **meta):
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": storage}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if selector is not None:
        spec["selector"] = selector
    if volume is not None:
        spec["volumeName"] = volume
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns, **meta},
        "spec": spec,
    }


def pv(
    name, storage="1Gi", modes=("ReadWriteOnce",), cls="", policy=None, labels=None, claim=None, node=None, phase=None
):
    spec = {"capacity": {"storage": storage}, "accessModes": list(modes), "hostPath": {"path": f"/data/{name}"}}
    if cls:
        spec["storageClassName"] = cls
    if policy:
        spec["persistentVolumeReclaimPolicy"] = policy
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1], **({"uid": claim[2]} if len(claim) > 2 else {})}
    if node is not None:
        term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    meta: dict = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    out = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec}
    if phase is not None:
        out["status"] = {"phase": phase}
    return out


def storage_class(
    name, provisioner="ebs.csi.aws.com", mode=None, default=False, seconds=None, policy=None, topology=None
):
    ann = {}
    if default:
        ann["storageclass.kubernetes.io/is-default-class"] = "true"
    if seconds is not None:
        ann["kubemu.io/provision-seconds"] = str(seconds)
    out = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
    }
    if ann:
        out["metadata"]["annotations"] = ann
    if mode:
        out["volumeBindingMode"] = mode
    if policy:
        out["reclaimPolicy"] = policy
    if topology is not None:
        out["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": list(v)}]} for k, v in topology.items()
        ]
    return out
