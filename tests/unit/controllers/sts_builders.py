"""Builders for the StatefulSet controller tests, and a kubelet stand-in for the ``Real`` loop.

``sts("web", 3).image("nginx:2").parallel().partition(1)`` is a StatefulSet dict;
``member(set, 1, "ready")`` is its pod ``web-1`` in a named state (at the revision of the
set's template unless ``rev=`` says otherwise); ``revision(set, n)`` is the
ControllerRevision the controller would store for the set's template. ``Loop`` is the
``Real`` harness plus what a kubelet and a user would do: bind and report pods Running
and Ready, fail them, finish a graceful deletion, edit the set.
"""

from __future__ import annotations

import copy

from workload_builders import Pod, Real, Workload, pod

from cluster.clock import rfc3339
from cluster.controllers.statefulset import POD_INDEX_LABEL, POD_NAME_LABEL, REVISION_LABEL, StatefulSetController
from cluster.controllers.statefulsetrevisions import new_revision


class StatefulSet(Workload):
    def image(self, image: str):
        self.template["spec"]["containers"] = [{"name": "c", "image": image}]
        return self

    def parallel(self):
        self.spec["podManagementPolicy"] = "Parallel"
        return self

    def on_delete(self):
        self.spec["updateStrategy"] = {"type": "OnDelete"}
        return self

    def partition(self, n: int):
        self.spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": n}}
        return self

    def service(self, name: str):
        self.spec["serviceName"] = name
        return self

    def start(self, n: int):
        self.spec["ordinals"] = {"start": n}
        return self

    def history(self, n: int):
        self.spec["revisionHistoryLimit"] = n
        return self

    def current(self, revision: str):
        """As if an earlier sync had reported ``revision`` as the current one."""
        return self.status(currentRevision=revision)


def sts(name: str = "web", replicas: int = 3, ns: str = "default", uid: str | None = None) -> StatefulSet:
    obj = StatefulSet(
        apiVersion="apps/v1",
        kind="StatefulSet",
        metadata={"name": name, "namespace": ns, "uid": uid or f"uid-sts-{name}", "generation": 1},
        spec={"replicas": replicas},
    )
    obj.template  # noqa: B018 - create the template
    return obj.labels(app=name)


def revision(owner: dict, number: int = 1, uid: str | None = None) -> dict:
    """The ControllerRevision of ``owner``'s template, as stored (uid, resourceVersion)."""
    rev = new_revision(owner, number, 0)
    rev["metadata"].update(uid=uid or f"uid-{rev['metadata']['name']}", resourceVersion="1")
    rev["metadata"]["creationTimestamp"] = rfc3339(number)
    return rev


def rev_name(owner: dict) -> str:
    return new_revision(owner, 1, 0)["metadata"]["name"]


STATES = ("pending", "running", "ready", "failed", "succeeded", "terminating", "unlabelled")


def member(owner: dict, ordinal: int, state: str = "ready", rev: str | None = None, ready_at: float = 0.0) -> Pod:
    """Pod ``<set>-<ordinal>`` of ``owner`` in ``state`` (one of ``STATES``)."""
    name = f"{owner['metadata']['name']}-{ordinal}"
    p = pod(name).owned_by(owner).on("n1")
    p.meta["labels"] = {
        **p.meta["labels"],
        POD_NAME_LABEL: name,
        POD_INDEX_LABEL: str(ordinal),
        REVISION_LABEL: rev or rev_name(owner),
    }
    if state == "running":
        p.phase("Running").ready(at=ready_at, ready=False)
    elif state in ("ready", "terminating", "unlabelled"):
        p.ready(at=ready_at)
    elif state in ("failed", "succeeded"):
        p.phase(state.capitalize())
    if state == "terminating":
        p.terminating(30)
    if state == "unlabelled":
        del p.meta["labels"][POD_INDEX_LABEL]
    return p


def controller(owner: dict, *pods: dict, revisions: tuple[dict, ...] | None = None, now: float = 0.0):
    """A controller that has seen ``owner``, its revisions (by default the one of its
    template) and ``pods``."""
    c = StatefulSetController()
    for rev in (revision(owner),) if revisions is None else revisions:
        c.on_event("ControllerRevision", "ADDED", rev, now)
    c.on_event("StatefulSet", "ADDED", owner, now)
    for p in pods:
        c.on_event("Pod", "ADDED", p, now)
    return c


def land(c, w, now: float = 0.0) -> list[dict]:
    """Feed back the pods ``w`` created (uid, resourceVersion, Pending) as ADDED events."""
    made = []
    for p in w.pod_creates:
        p = Pod(p).copy()
        p.meta.update(uid=f"uid-{p.meta['name']}-{now}", resourceVersion="1", creationTimestamp=rfc3339(now))
        p.setdefault("status", {"phase": "Pending"})
        c.on_event("Pod", "ADDED", p, now)
        made.append(p)
    return made


class Loop(Real):
    """``Real`` with a StatefulSet controller, and the kubelet's and a user's hands."""

    def __init__(self, now: float = 0.0):
        super().__init__(StatefulSetController(), now)

    def names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods()]

    def pod(self, name: str) -> dict:
        return self.get("Pod", name)

    def live(self) -> list[str]:
        """Pods not being deleted."""
        return [p["metadata"]["name"] for p in self.pods() if not p["metadata"].get("deletionTimestamp")]

    def terminating(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods() if p["metadata"].get("deletionTimestamp")]

    def status(self, name: str = "web") -> dict:
        return self.get("StatefulSet", name).get("status") or {}

    def events(self, reason: str | None = None) -> list[str]:
        events = sorted(self.api.store.objects("Event"), key=lambda e: int(e["metadata"]["resourceVersion"]))
        return [e["message"] for e in events if reason is None or e["reason"] == reason]

    def revisions(self) -> list[dict]:
        return sorted(self.api.store.objects("ControllerRevision"), key=lambda r: r["revision"])

    def ready(self, *names: str) -> None:
        """As a kubelet: bind (so deletes are graceful) and report Running and Ready."""
        for name in names:
            p = self.pod(name)
            if not p["spec"].get("nodeName"):
                self.api.bind("default", name, p["metadata"]["uid"], "n1", self.now)
                p = self.pod(name)
            conds = [c for c in p["status"].get("conditions", []) if c["type"] != "Ready"]
            conds.append({"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(self.now)})
            self.api.update_status(
                "Pod", "default", name, p["metadata"]["uid"], {**p["status"], "phase": "Running", "conditions": conds}
            )

    def fail(self, name: str) -> None:
        p = self.pod(name)
        self.api.update_status("Pod", "default", name, p["metadata"]["uid"], {**p["status"], "phase": "Failed"})

    def finish(self, *names: str) -> None:
        """As a kubelet: the containers stopped, confirm the deletion (grace 0)."""
        for name in names:
            self.api.delete("Pod", "default", name, None, 0, self.now)

    def delete(self, name: str) -> None:
        """As a user: ``kubectl delete pod``."""
        self.api.delete("Pod", "default", name, None, None, self.now)

    def edit(self, name: str = "web", **spec) -> None:
        """As a user: change the set's spec (``template_image=`` sets the container image)."""
        obj = copy.deepcopy(self.get("StatefulSet", name))  # not the stored object itself
        image = spec.pop("template_image", None)
        if image is not None:
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = image
        obj["spec"].update(spec)
        self.api.update(obj, self.now)

    def settle(self, rounds: int = 50) -> None:
        self.pump(rounds)
