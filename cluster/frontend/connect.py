"""The connect subresources of a pod: ``exec``, ``attach``, ``portforward`` and ``proxy``.

Owns what the apiserver answers to them. kubemu runs
no process, so no kubelet could ever take the stream: every request is checked as upstream
checks it before dialling a kubelet (the pod exists: else 404; a container name is given
when the pod has several, and names one of them: else upstream's 400s; the pod is bound:
else 400; its node exists: else 404), then refused the way a real apiserver refuses when
it cannot reach the kubelet: a 500 ``Status`` without a reason, whose message says the
containers are emulated. kubectl decodes that Status from a refused upgrade (WebSocket
first in 1.30+, then SPDY) and prints one line,
``Error from server: kubemu emulates containers: ...``, at once; ``kubectl cp`` (an exec
of tar) and ``kubectl port-forward`` fail the same way. The container choice is shared
with the log endpoint (``podlog.py``). Called by ``subresources.py``'s table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.errors import BadRequest, StatusError
from ..api.objects import name_of, namespace_of
from .paths import Target
from .wire import Request, Response, not_allowed

if TYPE_CHECKING:
    from .handler import Handler

EMULATED = "kubemu emulates containers"
STREAM_METHODS = ("GET", "POST")  # exec, attach and portforward: upgrade requests
PROXY_METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")


class NoKubelet(StatusError):
    """What the apiserver answers when it cannot reach a node's kubelet: a 500 with no
    reason (kubectl prints ``Error from server: <message>``)."""

    code, reason, retryable = 500, "", False

    def status(self) -> dict[str, Any]:
        out = super().status()
        del out["reason"]  # upstream leaves the empty reason out
        return out


def container_names(pod: dict[str, Any]) -> list[str]:
    """Every container of the pod in upstream's visiting order: init, regular, ephemeral."""
    spec = pod.get("spec") or {}
    fields = ("initContainers", "containers", "ephemeralContainers")
    return [c.get("name", "") for f in fields for c in spec.get(f) or () if isinstance(c, dict)]


def pick_container(pod: dict[str, Any], container: str) -> str:
    """The container a request names, or the pod's only one (upstream's validateContainer)."""
    name = name_of(pod)
    if not container:
        regular = [c for c in (pod.get("spec") or {}).get("containers") or () if isinstance(c, dict)]
        if len(regular) == 1:
            return str(regular[0].get("name", ""))
        if not regular:
            raise BadRequest(f"a container name must be specified for pod {name}")
        choices = " ".join(container_names(pod))
        raise BadRequest(f"a container name must be specified for pod {name}, choose one of: [{choices}]")
    if container not in container_names(pod):
        raise BadRequest(f"container {container} is not valid for pod {name}")
    return container


async def node_of(h: Handler, pod: dict[str, Any]) -> str:
    """The pod's node, as the apiserver finds the kubelet to dial: 400 for an unbound pod,
    404 when the Node object is gone."""
    node = (pod.get("spec") or {}).get("nodeName") or ""
    if not node:
        raise BadRequest(f"pod {name_of(pod)} does not have a host assigned")
    await h.backend.get("Node", "", node)
    return str(node)


async def _pod(h: Handler, t: Target, name: str = "") -> dict[str, Any]:
    return await h.backend.get("Pod", t.namespace, name or t.name)


def _where(pod: dict[str, Any]) -> str:
    return f"pod {namespace_of(pod)}/{name_of(pod)}"


async def _stream(h: Handler, req: Request, t: Target, what: str) -> Response:
    if req.method not in STREAM_METHODS:
        raise not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")
    pod = await _pod(h, t)
    container = pick_container(pod, req.query.get("container", ""))
    await node_of(h, pod)
    raise NoKubelet(f"{EMULATED}: there is no process to {what} ({_where(pod)}, container {container})")


async def exec_(h: Handler, req: Request, t: Target) -> Response:
    return await _stream(h, req, t, "exec into")


async def attach(h: Handler, req: Request, t: Target) -> Response:
    return await _stream(h, req, t, "attach to")


async def portforward(h: Handler, req: Request, t: Target) -> Response:
    if req.method not in STREAM_METHODS:
        raise not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")
    pod = await _pod(h, t)
    await node_of(h, pod)
    ports = req.query.get("ports", "")
    shown = f", ports {ports}" if ports else ""
    raise NoKubelet(f"{EMULATED}: nothing listens on a port to forward to ({_where(pod)}{shown})")


def _proxied_name(ident: str) -> str:
    """The pod in ``[scheme:]name[:port]`` (how a proxy URL names its target)."""
    parts = ident.split(":")
    if len(parts) > 3 or not all(parts[1:]):
        raise BadRequest(f'invalid request "{ident}"')
    return parts[1] if len(parts) == 3 else parts[0]


async def proxy(h: Handler, req: Request, t: Target) -> Response:
    if req.method not in PROXY_METHODS:
        raise not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")
    pod = await _pod(h, t, _proxied_name(t.name))
    await node_of(h, pod)
    raise NoKubelet(f"{EMULATED}: nothing listens in {_where(pod)} to proxy to")
