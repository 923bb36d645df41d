"""StatefulSet volumeClaimTemplates: claims per ordinal before the pods, the pods' volumes
pointing at them, and persistentVolumeClaimRetentionPolicy."""

from __future__ import annotations

from controller_builders import Loop

from cluster.api.requests import Create, Patch
from cluster.controllers.statefulset import StatefulSetController
from cluster.controllers.statefulsetclaims import claims_for, release_claims


def sts(replicas=2, policy=None, volumes=()):
    spec = {
        "replicas": replicas,
        "serviceName": "db",
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"app": "db"}},
        "template": {
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "db", "image": "x"}], "volumes": list(volumes)},
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data", "labels": {"tier": "storage", "app": "other"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
        ],
    }
    if policy:
        spec["persistentVolumeClaimRetentionPolicy"] = policy
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": spec,
    }


def test_claims_are_created_before_their_pods_and_the_pods_use_them():
    lp = Loop([StatefulSetController()])
    lp.api.create(sts(volumes=[{"name": "data", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}]), 0)
    lp.at(0)
    created = [
        (r.obj["kind"], r.obj["metadata"]["name"]) for r, err in lp.results if isinstance(r, Create) and err is None
    ]
    claims_and_pods = [c for c in created if c[0] in ("PersistentVolumeClaim", "Pod")]
    assert claims_and_pods == [
        ("PersistentVolumeClaim", "data-db-0"),
        ("PersistentVolumeClaim", "data-db-1"),
        ("Pod", "db-0"),
        ("Pod", "db-1"),
    ]
    for i in (0, 1):
        c = lp.api.get("PersistentVolumeClaim", "default", f"data-db-{i}")
        assert c["metadata"]["labels"] == {"tier": "storage", "app": "db"}  # the selector's labels win
        assert "ownerReferences" not in c["metadata"]  # Retain by default
        p = lp.api.get("Pod", "default", f"db-{i}")
        assert p["spec"]["volumes"] == [
            {"name": "cache", "emptyDir": {}},
            {"name": "data", "persistentVolumeClaim": {"claimName": f"data-db-{i}"}},
        ]


def test_a_recreated_pod_finds_its_claim_in_place():
    lp = Loop([StatefulSetController()])
    lp.api.create(sts(replicas=1), 0)
    lp.at(0)
    uid = lp.api.get("PersistentVolumeClaim", "default", "data-db-0")["metadata"]["uid"]
    lp.api.delete("Pod", "default", "db-0", None, 0, 1)
    lp.at(1)
    assert (
        lp.api.get("Pod", "default", "db-0")["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == "data-db-0"
    )
    assert lp.api.get("PersistentVolumeClaim", "default", "data-db-0")["metadata"]["uid"] == uid


def test_when_deleted_delete_makes_the_set_own_its_claims():
    lp = Loop([StatefulSetController()])
    lp.api.create(sts(replicas=1, policy={"whenDeleted": "Delete", "whenScaled": "Retain"}), 0)
    lp.at(0)
    refs = lp.api.get("PersistentVolumeClaim", "default", "data-db-0")["metadata"]["ownerReferences"]
    set_uid = lp.api.get("StatefulSet", "default", "db")["metadata"]["uid"]
    assert refs == [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": set_uid}]


def test_when_scaled_delete_hands_a_condemned_ordinals_claims_to_its_pod():
    s = sts(policy={"whenDeleted": "Delete", "whenScaled": "Delete"})
    s["metadata"]["uid"] = "set-uid"
    p = {"metadata": {"name": "db-1", "uid": "pod-uid"}}
    out: list = []
    release_claims(s, p, 1, out)
    (req,) = out
    assert isinstance(req, Patch) and (req.kind, req.name) == ("PersistentVolumeClaim", "data-db-1")
    assert req.patch.patch == {
        "metadata": {
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "set-uid"},
                {"apiVersion": "v1", "kind": "Pod", "name": "db-1", "uid": "pod-uid"},
            ]
        }
    }
    out.clear()
    release_claims(sts(policy={"whenDeleted": "Retain", "whenScaled": "Retain"}), p, 1, out)
    assert out == []


def test_scaling_down_with_when_scaled_delete_sends_the_claim_patch_with_the_delete():
    lp = Loop([StatefulSetController()])
    lp.api.create(sts(replicas=2, policy={"whenDeleted": "Retain", "whenScaled": "Delete"}), 0)
    lp.at(0)
    s = lp.api.get("StatefulSet", "default", "db")
    s["spec"]["replicas"] = 1
    lp.api.update(s, 1)
    lp.at(1)
    refs = lp.api.get("PersistentVolumeClaim", "default", "data-db-1")["metadata"]["ownerReferences"]
    assert refs == [{"apiVersion": "v1", "kind": "Pod", "name": "db-1", "uid": refs[0]["uid"]}]
    assert "ownerReferences" not in lp.api.get("PersistentVolumeClaim", "default", "data-db-0")["metadata"]


def test_claim_names_follow_template_set_ordinal():
    assert [c["metadata"]["name"] for c in claims_for(sts(), 7)] == ["data-db-7"]
