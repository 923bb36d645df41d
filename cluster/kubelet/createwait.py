"""Containers that cannot be created yet: failed image pulls and bad configurations.

``CreationMixin`` is a part of ``Kubelet`` and acts only on pods whose ``PodRecord.create``
is set (``creation.creation_of``). Before the first start of a pod's containers
(``pods.START``) and of each init container (``probes.INIT``) the kubelet asks
``_creatable``; a container that cannot be created holds the step, stays Waiting with
upstream's reason and message, and the pod stays Pending (an init container's hold
keeps the pod's containers in PodInitializing). kubemu's containers of one pod share one
run, so one held container holds its siblings too (they wait in ContainerCreating;
upstream starts them). Per container, in upstream's order:

| cause | reason, message | events |
|---|---|---|
| imagePullPolicy Never, image not present | ``ErrImageNeverPull``, "Container image \\"i\\" is not present with pull policy of Never" | Warning ``ErrImageNeverPull``, Warning ``Failed`` "Error: ErrImageNeverPull" |
| the pull fails | ``ErrImagePull``, the runtime's error | Normal ``Pulling``, Warning ``Failed`` "Failed to pull image \\"i\\": <error>", Warning ``Failed`` "Error: ErrImagePull" |
| the image is in back-off | ``ImagePullBackOff``, "Back-off pulling image \\"i\\"" | Normal ``BackOff`` with that message, Warning ``Failed`` "Error: ImagePullBackOff" |
| the configuration fails (``creation.config_error``) | ``CreateContainerConfigError``, its message | Warning ``Failed`` "Error: <message>" |

The image back-off is upstream's: 10 s after the first failed pull, doubling per failure
to 300 s, afresh after 600 s without one, per (pod, image). After a failed pull the next
sync (``SYNC_AFTER`` later, upstream's PLEG relist) finds the image in back-off, so the
reason alternates ErrImagePull, ImagePullBackOff, ErrImagePull... as on a real node.
These retries are background timers: a pull that can never succeed does not keep a
scenario from settling. A configuration error is tried again whenever a ConfigMap or
Secret changes (``config_changed``) and when an update of the pod changes a label or
annotation its env reads (``held_pod_updated``: a subPathExpr of
``metadata.annotations['x']`` is satisfied by adding the annotation, as upstream's next
sync of the pod reads it); ErrImageNeverPull and a bad literal subPath never change.
Events of one cause are told once per change of message, so the retries do not spam.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .creation import Creation, Lookup, Needs, config_error, field_values
from .pods import BACKOFF_INITIAL, BACKOFF_MAX, PENDING, PodRecord

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf

PULL = "pull"  # timer kind: try the held step again
SYNC_AFTER = 1.0  # seconds from a failed pull to the sync that reports its back-off
PULL_RESET_AFTER = 2 * BACKOFF_MAX

ERR_IMAGE_PULL, IMAGE_PULL_BACKOFF = "ErrImagePull", "ImagePullBackOff"
ERR_IMAGE_NEVER_PULL, CONFIG_ERROR = "ErrImageNeverPull", "CreateContainerConfigError"


def _no_objects(kind: str, namespace: str, name: str) -> dict[str, str] | None:
    return None


def _announce(cr: Creation, name: str, message: str) -> bool:
    """True when ``message`` is news for the container (its events are told then)."""
    if cr.announced.get(name) == message:
        return False
    cr.announced[name] = message
    return True


def _fields(rec: PodRecord, cr: Creation, host_ip: str) -> dict[str, str]:
    """The fieldRef values: as first read, with the addresses as they are now."""
    ips = {"status.podIP": rec.pod_ip, "status.podIPs": rec.pod_ip, "status.hostIP": host_ip, "status.hostIPs": host_ip}
    return {**cr.fields, **ips}


class CreationMixin:
    """The container-creation part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    def _creatable(self: KubeletSelf, rec: PodRecord, names: list[str], step: str, t: float) -> bool:
        """Whether the containers ``names`` can be created at ``t``; if not the pod holds
        ``step``, its status shows why and the retry is scheduled."""
        cr = rec.create
        if cr is None:
            return True
        waiting: dict[str, tuple[str, str]] = {}
        retry: float | None = None
        for name in names:
            n = cr.needs.get(name)
            if n is None:
                continue
            held = self._pull(rec, cr, n, t)
            if held is None:
                message = config_error(n, rec.namespace, self._lookup(), _fields(rec, cr, self.host_ip))
                held = None if message is None else (CONFIG_ERROR, message, None)
                if message is not None and _announce(cr, name, message):
                    self._event(rec, "Failed", f"Error: {message}", t, "Warning")
            if held is None:
                cr.announced.pop(name, None)
                continue
            reason, message, at = held
            waiting[name] = (reason, message)
            if at is not None:
                retry = at if retry is None else min(retry, at)
        cr.waiting = waiting
        self._timers.cancel(rec.timer)
        rec.timer = None
        if not waiting:
            cr.step = None
            self._held.discard(rec.uid)
            return True
        cr.step = step
        self._held.add(rec.uid)
        if retry is not None:
            rec.gen += 1
            rec.due = retry
            rec.timer = self._timers.schedule(retry, (self.name, PULL, rec.uid, rec.gen), True)
        self._write(rec)
        return False

    def _pull(self: KubeletSelf, rec: PodRecord, cr: Creation, n: Needs, t: float) -> tuple | None:
        """(reason, message, retry time) while the image is not there; None once it is."""
        image = n.image
        if n.pull is None:
            return None
        if n.never:
            message = f'Container image "{image}" is not present with pull policy of Never'
            if _announce(cr, n.name, message):
                self._event(rec, ERR_IMAGE_NEVER_PULL, message, t, "Warning")
                self._event(rec, "Failed", f"Error: {ERR_IMAGE_NEVER_PULL}", t, "Warning")
            return (ERR_IMAGE_NEVER_PULL, message, None)
        delay, last = cr.pulls.get(image, (0.0, None))
        if last is not None and t < last + delay:
            message = f'Back-off pulling image "{image}"'
            if _announce(cr, n.name, message):
                self._event(rec, "BackOff", message, t)
                self._event(rec, "Failed", f"Error: {IMAGE_PULL_BACKOFF}", t, "Warning")
            return (IMAGE_PULL_BACKOFF, message, last + delay)
        delay = BACKOFF_INITIAL if last is None or t - last > PULL_RESET_AFTER else min(delay * 2, BACKOFF_MAX)
        cr.pulls[image] = (delay, t)
        cr.announced[n.name] = n.pull
        self._event(rec, "Pulling", f'Pulling image "{image}"', t)
        self._event(rec, "Failed", f'Failed to pull image "{image}": {n.pull}', t, "Warning")
        self._event(rec, "Failed", f"Error: {ERR_IMAGE_PULL}", t, "Warning")
        return (ERR_IMAGE_PULL, n.pull, t + SYNC_AFTER)

    def _lookup(self: KubeletSelf) -> Lookup:
        return self.objects or _no_objects

    def _retry_creation(self: KubeletSelf, rec: PodRecord, t: float) -> None:
        """The held step, tried again (a pull timer, or a ConfigMap or Secret changed)."""
        cr = rec.create
        if cr is None or cr.step is None or rec.state != PENDING:
            return
        self._after(rec, 0, cr.step, t)

    def held_pod_updated(self: KubeletSelf, rec: PodRecord, pod: dict, now: float) -> None:
        """A MODIFIED of a pod held here: read its fields again; a change tries again."""
        cr = rec.create
        if cr is None or cr.step is None:
            return
        fields = field_values(pod, cr.needs)
        if fields != cr.fields:
            cr.fields = fields
            if any(r == CONFIG_ERROR for r, _ in cr.waiting.values()):
                self._retry_creation(rec, now)

    def config_changed(self: KubeletSelf, now: float) -> None:
        """A ConfigMap or Secret changed: every pod held by a configuration error tries again."""
        for uid in sorted(self._held):
            rec = self._pods.get(uid)
            cr = None if rec is None else rec.create
            if rec is not None and cr is not None and any(r == CONFIG_ERROR for r, _ in cr.waiting.values()):
                self._retry_creation(rec, now)
