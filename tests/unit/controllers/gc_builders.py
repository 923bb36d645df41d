"""Small builders for the garbage collector and namespace controller tests: objects with
owner references and finalizers, a compact view of the writes, and ``ControlPlane``: an
apiserver and a controller manager pumped by ``controller_builders.Loop`` with a hand for
the kubelet's part (bind, run, confirm a graceful delete)."""

from __future__ import annotations

from controller_builders import Loop

from cluster.api.patches import FinalizeNamespace, RemoveFinalizer, RemoveOwnerReferences
from cluster.api.requests import Delete, UpdateStatus
from cluster.clock import rfc3339
from cluster.controllers.writes import Writes, requests

API_VERSIONS = {"ReplicaSet": "apps/v1", "Deployment": "apps/v1", "Job": "batch/v1"}


def ref(kind: str, name: str, uid: str | None = None, block: bool = True) -> dict:
    return {
        "apiVersion": API_VERSIONS.get(kind, "v1"),
        "kind": kind,
        "name": name,
        "uid": uid or f"u-{name}",
        "controller": True,
        "blockOwnerDeletion": block,
    }


def obj(kind: str, name: str, ns: str = "default", uid: str | None = None, owners=(), finalizers=(), deleting=False):
    """Any object as a watch delivers it: a uid, references, finalizers, a deletion mark."""
    meta: dict = {"name": name, "uid": uid or f"u-{name}"}
    if ns:
        meta["namespace"] = ns
    if owners:
        meta["ownerReferences"] = [dict(r) for r in owners]
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if deleting:
        meta["deletionTimestamp"] = rfc3339(1)
        meta["deletionGracePeriodSeconds"] = 0
    return {"apiVersion": API_VERSIONS.get(kind, "v1"), "kind": kind, "metadata": meta}


def key_only(kind: str, name: str, ns: str = "default") -> dict:
    """A relist's DELETED: the key and nothing else."""
    return {"kind": kind, "metadata": {"namespace": ns, "name": name}}


def feed(ctrl, *events, now: float = 0.0) -> None:
    for etype, o in events:
        ctrl.on_event(o["kind"], etype, o, now)


def writes(w: Writes) -> list[tuple]:
    """What a sync asks for, compactly: (what, kind/ns/name, detail), in the order the
    requests are sent (``writes.ORDER``)."""
    out: list[tuple] = []
    for req in requests(w):
        patch = getattr(req, "patch", None)
        if isinstance(req, UpdateStatus) and req.kind == "Namespace":
            out.append(("status", f"Namespace/{req.name}", req.status["phase"]))
        elif isinstance(patch, RemoveOwnerReferences):
            out.append(("refs", _path(req.kind, req.namespace, req.name), tuple(patch.uids)))
        elif isinstance(req, Delete) and req.propagation:
            out.append(("delete", _path(req.kind, req.namespace, req.name), req.propagation))
        elif isinstance(patch, RemoveFinalizer):
            out.append(("finalizer", _path(req.kind, req.namespace, req.name), patch.finalizer))
        elif isinstance(patch, FinalizeNamespace):
            out.append(("finalize", f"Namespace/{req.name}", "kubernetes"))
    return out


def _path(kind: str, ns: str, name: str) -> str:
    return f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"


def replica_set(name: str = "web", replicas: int = 3, ns: str = "default") -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "pause"}]}},
        },
    }


class ControlPlane(Loop):
    """A ``Loop`` that also plays the kubelets: pods are bound and run, and a graceful
    delete is confirmed with the kubelet's grace-0 delete when the test says so."""

    def pods(self, ns: str = "default") -> list[dict]:
        return sorted((p for p in self.api.store.objects("Pod") if p["metadata"]["namespace"] == ns), key=_name)

    def get(self, kind: str, name: str, ns: str = "default") -> dict | None:
        return self.api.store.get(kind, ns, name)

    def run_pods(self, ns: str = "default", node: str = "n1") -> None:
        """Bind every unbound pod and mark it Running, as the scheduler and kubelet would."""
        for p in self.pods(ns):
            m = p["metadata"]
            if not p["spec"].get("nodeName"):
                self.api.bind(ns, m["name"], m["uid"], node, self.now)
                status = {"phase": "Running", "startTime": rfc3339(self.now)}
                self.api.write([UpdateStatus("Pod", ns, m["name"], m["uid"], status)], self.now)

    def confirm(self, names=None, ns: str = "default") -> None:
        """The kubelet's grace-0 delete of terminating pods (``names``: only these)."""
        for p in self.pods(ns):
            m = p["metadata"]
            if m.get("deletionTimestamp") and (names is None or m["name"] in names):
                self.api.delete("Pod", ns, m["name"], m["uid"], 0, self.now)


def _name(o: dict) -> str:
    return o["metadata"]["name"]
