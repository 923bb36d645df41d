"""The PV binder's matching rules (``cluster/api/volumes.py``) against upstream's vectors
(``pkg/controller/volume/persistentvolume/index_test.go`` TestMatchVolume and
TestFindingPreboundVolumes, ``pv_controller.go`` checkVolumeSatisfyClaim)."""

from __future__ import annotations

import pytest

from cluster.api import volumes as vol

RWO, ROX, RWX = "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"


def pv(
    name,
    size,
    modes=(RWO, ROX),
    cls="",
    labels=None,
    claim=None,
    phase="Available",
    mode=None,
    deleting=False,
    node=None,
):
    spec: dict = {"capacity": {"storage": size}, "accessModes": list(modes)}
    if cls:
        spec["storageClassName"] = cls
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim[0], "uid": claim[1]}
    if mode:
        spec["volumeMode"] = mode
    if node:
        term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    meta: dict = {"name": name, "labels": dict(labels or {})}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def pvc(size, modes=(RWO,), cls=None, selector=None, mode=None, name="claim01", uid="uid01"):
    spec: dict = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if selector is not None:
        spec["selector"] = selector
    if mode:
        spec["volumeMode"] = mode
    return {"metadata": {"name": name, "namespace": "default", "uid": uid}, "spec": spec}


# upstream's createTestVolumes, trimmed: GCE disks (RWO, ROX) of 1, 5, 10, 20 Gi (1 Gi bound),
# NFS volumes (RWO, ROX, RWX) of 1, 5, 10 Gi, one labelled, classes gold and silver.
VOLUMES = [
    pv("gce-pd-1", "1G", claim=("someone", "uid-x"), phase="Bound"),
    pv("gce-pd-5", "5G"),
    pv("gce-pd-10", "10G"),
    pv("gce-pd-20", "20G", labels={"should-exist": "true"}),
    pv("nfs-1", "1G", (RWO, ROX, RWX)),
    pv("nfs-5", "5G", (RWO, ROX, RWX)),
    pv("nfs-10", "10G", (RWO, ROX, RWX)),
    pv("gce-pd-silver1", "10G", cls="silver", labels={"should-exist": "true"}),
    pv("gce-pd-silver2", "30G", cls="silver"),
    pv("gce-pd-gold", "50G", cls="gold"),
    pv("local-pd-very-large", "200E", (RWO,), cls="large"),
]


@pytest.mark.parametrize(
    "claim, want",
    [
        (pvc("8G", (RWO, ROX)), "gce-pd-10"),  # successful-match-gce-10
        (pvc("3G", (RWO, ROX, RWX)), "nfs-5"),  # successful-match-nfs-5
        (pvc("1G", (RWO, ROX)), "gce-pd-5"),  # successful-skip-1g-bound-volume
        (pvc("999G", (RWO,)), None),  # successful-no-match
        (pvc("1G", (RWO,), selector={"matchLabels": {"should-not-exist": "true"}}), None),  # no-match-due-to-label
        (pvc("20000G", (RWO,), selector={"matchLabels": {"should-exist": "true"}}), None),  # size constraint + label
        (pvc("2G", (RWO,), selector={"matchLabels": {"should-exist": "true"}}), "gce-pd-20"),  # constraint + label
        (pvc("1G", (RWO,), cls="silver"), "gce-pd-silver1"),  # successful-match-with-class
        (pvc("1G", (RWO,), cls="silver", selector={"matchLabels": {"should-exist": "true"}}), "gce-pd-silver1"),
        (pvc("20000G", (RWO,), cls="large"), "local-pd-very-large"),  # successful-match-very-large
        (pvc("200E", (RWO,), cls="large"), "local-pd-very-large"),  # successful-match-exact-extremely-large
        (pvc("201E", (RWO,), cls="large"), None),  # successful-no-match-way-too-large
        (pvc("1G", (RWO,), cls="bronze"), None),  # no volume of the class
        (pvc("1G", (RWO,), mode="Block"), None),  # volume mode differs
    ],
)
def test_match_volume(claim, want):
    got = vol.best_match(claim, VOLUMES)
    assert (got["metadata"]["name"] if got else None) == want


def test_the_smallest_access_mode_set_is_tried_first_even_for_a_larger_volume():
    volumes = [pv("rwo-only", "10G", (RWO,)), pv("every-mode", "1G", (RWO, ROX, RWX))]
    assert vol.best_match(pvc("1G", (RWO,)), volumes)["metadata"]["name"] == "rwo-only"
    # a claim wanting RWX can only use the larger set
    assert vol.best_match(pvc("1G", (RWX,)), volumes)["metadata"]["name"] == "every-mode"


def test_a_volume_pre_bound_to_the_claim_wins_whatever_its_size_or_phase():
    volumes = [pv("small", "1G"), pv("pre-bound", "50G", claim=("claim01", ""), phase="Pending")]
    assert vol.best_match(pvc("1G"), volumes)["metadata"]["name"] == "pre-bound"


def test_volumes_bound_elsewhere_deleting_or_not_available_are_skipped():
    volumes = [
        pv("other", "1G", claim=("claim02", "uid02"), phase="Bound"),
        pv("going", "1G", deleting=True),
        pv("released", "1G", phase="Released"),
    ]
    assert vol.best_match(pvc("1G"), volumes) is None


def test_delayed_binding_leaves_unbound_volumes_to_the_scheduler_but_not_pre_bound_ones():
    free, pre = pv("free", "1G"), pv("pre", "1G", claim=("claim01", "uid01"))
    assert vol.best_match(pvc("1G"), [free], delayed=True) is None
    assert vol.best_match(pvc("1G"), [free, pre], delayed=True) is pre


def test_the_scheduler_path_checks_node_affinity_and_exclusions():
    volumes = [pv("on-a", "1G", node="a"), pv("on-b", "2G", node="b")]
    at_a = ({"kubernetes.io/hostname": "a"}, "a")
    at_b = ({"kubernetes.io/hostname": "b"}, "b")
    assert vol.best_match(pvc("1G"), volumes, node=at_a)["metadata"]["name"] == "on-a"
    assert vol.best_match(pvc("1G"), volumes, node=at_b)["metadata"]["name"] == "on-b"
    assert vol.best_match(pvc("1G"), volumes, node=at_a, excluded={"on-a"}) is None
    pre = pv("pre", "1G", claim=("claim01", "uid01"), node="b")
    assert vol.best_match(pvc("1G"), [pre, *volumes], node=at_a) is None  # pre-bound elsewhere: none


@pytest.mark.parametrize(
    "volume, claim, reason",
    [
        (pv("v", "1G", deleting=True), pvc("1G"), 'the volume is marked for deletion "v"'),
        (pv("v", "1G"), pvc("2G"), "requested PV is too small"),
        (pv("v", "1G", cls="gold"), pvc("1G"), "storageClassName does not match"),
        (pv("v", "1G", mode="Block"), pvc("1G"), "incompatible volumeMode"),
        (pv("v", "1G", (RWO,)), pvc("1G", (RWX,)), "incompatible accessMode"),
        (pv("v", "1Gi"), pvc("1G"), None),
    ],
)
def test_mismatch_reasons_in_upstreams_order(volume, claim, reason):
    assert vol.mismatch(volume, claim) == reason


def test_claim_class_reads_the_beta_annotation_first_and_tells_nil_from_empty():
    c = pvc("1G", cls="field")
    assert vol.claim_class(c) == "field" and not vol.claim_has_no_class(c)
    c["metadata"]["annotations"] = {vol.BETA_CLASS: "beta"}
    assert vol.claim_class(c) == "beta"
    assert vol.claim_has_no_class(pvc("1G")) and not vol.claim_has_no_class(pvc("1G", cls=""))


def test_the_default_class_is_the_newest_ties_by_name():
    def sc(name, created, default=True):
        ann = {vol.DEFAULT_CLASS: "true"} if default else {}
        return {"metadata": {"name": name, "creationTimestamp": created, "annotations": ann}}

    classes = [
        sc("b", "2024-01-02T00:00:00Z"),
        sc("a", "2024-01-02T00:00:00Z"),
        sc("old", "2024-01-01T00:00:00Z"),
        sc("newest-not-default", "2024-02-01T00:00:00Z", default=False),
    ]
    assert vol.default_class(classes)["metadata"]["name"] == "a"
    assert vol.default_class([classes[3]]) is None


def test_access_modes_spelled_in_upstreams_order():
    assert vol.modes_string({RWX, RWO, ROX}) == "ReadWriteOnce,ReadOnlyMany,ReadWriteMany"
