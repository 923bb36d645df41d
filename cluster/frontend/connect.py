"""The connect subresources of a pod: ``exec``, ``attach``, ``portforward`` and ``proxy``.

Owns what the apiserver answers to them. Every request is checked as upstream checks it
before dialling a kubelet (the pod exists: else 404; a container name is given when the
pod has several, and names one of them: else upstream's 400s; the pod is bound: else 400;
its node exists: else 404). Then:

- ``exec`` over WebSocket (``execstream.py``: kubectl 1.30+, the Python client's
  ``stream``) asks the node's kubelet to run the command in its emulated container
  (``ContainerExec``, through ``Backend.kubelet``, as the apiserver dials the kubelet) and
  streams what it printed and its exit code; the commands it knows are
  ``cluster/api/emulatedshell.py``'s. Over SPDY (kubectl 1.29 and older) it is refused;
- ``proxy`` GET and HEAD reach the container serving the port (the URL's, else the first
  declared one) through the kubelet (``ContainerGet``) and answer what a known image
  serves there (``cluster/api/containerfiles.py``: httpd and nginx their files, agnhost
  ``serve-hostname`` the pod's hostname);
- everything else (``attach``, ``portforward``, a proxy to an image kubemu does not know,
  a kubelet that does not answer) is refused the way a real apiserver refuses when it
  cannot reach the kubelet: a 500 ``Status`` without a reason, whose message says the
  containers are emulated. kubectl decodes that Status from a refused upgrade and prints
  one line, ``Error from server: kubemu emulates containers: ...``.

The container choice is shared with the log endpoint (``podlog.py``). Called by
``subresources.py``'s table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.errors import BadRequest, StatusError
from ..api.kubeletcalls import ContainerExec, ContainerGet
from ..api.objects import name_of, namespace_of, uid_of
from . import execstream
from .backend import KubeletUnreachable
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
    """Run the command in the emulated container and answer over WebSocket (execstream.py)."""
    if req.method not in STREAM_METHODS:
        raise not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")
    pod = await _pod(h, t)
    container = pick_container(pod, req.query.get("container", ""))
    node = await node_of(h, pod)
    box = execstream.UPGRADE.get()
    if box is None or not box.protocol:
        raise NoKubelet(
            f"{EMULATED}: exec is served over WebSocket ({execstream.V5} or {execstream.V4}: kubectl 1.30 or newer), "
            f"not SPDY ({_where(pod)}, container {container})"
        )
    argv = tuple(box.query.get("command") or ())
    if not argv:
        raise BadRequest("you must specify at least 1 command")
    streams = {k: req.query.get(k, "") in ("true", "1") for k in ("stdin", "stdout", "stderr", "tty")}
    if not (streams["stdin"] or streams["stdout"] or streams["stderr"]):
        raise BadRequest("you must specify at least 1 of stdin, stdout, stderr")
    call = ContainerExec(node, namespace_of(pod), name_of(pod), uid_of(pod), container, argv, env_of(pod, container))
    result = await _ask(h, call, pod)
    session = execstream.ExecSession(argv, result, streams["stdout"], streams["stderr"], streams["tty"], result.sleep)
    return execstream.accept(box, session)


async def _ask(h: Handler, call: ContainerExec, pod: dict[str, Any]) -> Any:
    try:
        return await h.backend.kubelet(call)
    except KubeletUnreachable as e:
        raise NoKubelet(f"{EMULATED}: the kubelet of {call.node} does not answer for {_where(pod)}: {e}") from None


def hostname_of(pod: dict[str, Any]) -> str:
    """The pod's hostname: ``spec.hostname``, else its name (at most 63 characters)."""
    return str((pod.get("spec") or {}).get("hostname") or name_of(pod))[:63]


def env_of(pod: dict[str, Any], container: str) -> tuple[tuple[str, str], ...]:
    """The environment a command in ``container`` sees: the runtime's PATH, HOSTNAME and
    HOME around the container's literal ``env`` values (``valueFrom`` ones are left out)."""
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME": hostname_of(pod)}
    spec = pod.get("spec") or {}
    for field in ("initContainers", "containers"):
        for c in spec.get(field) or ():
            if isinstance(c, dict) and c.get("name") == container:
                for e in c.get("env") or ():
                    if isinstance(e, dict) and isinstance(e.get("value"), str):
                        env[str(e.get("name"))] = e["value"]
    env.setdefault("HOME", "/root")
    return tuple(env.items())


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
    """What the pod serves at the path, for the images ``cluster/api/containerfiles.py``
    knows (GET and HEAD); otherwise refused: nothing listens."""
    if req.method not in PROXY_METHODS:
        raise not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")
    pod = await _pod(h, t, _proxied_name(t.name))
    node = await node_of(h, pod)
    if req.method in ("GET", "HEAD"):
        target = _serving(pod, _proxied_port(t.name))
        if target is not None:
            container, port, args = target
            path = req.path.partition(f"/pods/{t.name}/proxy")[2] or "/"
            call = ContainerGet(
                node, namespace_of(pod), name_of(pod), uid_of(pod), container, port, path, args, hostname_of(pod)
            )
            try:
                answer = await h.backend.kubelet(call)
            except KubeletUnreachable:
                answer = None  # refused below, as when nothing listens
            if answer is not None:
                body = b"" if req.method == "HEAD" else answer.body.encode()
                return Response(answer.code, body, answer.content_type)
    raise NoKubelet(f"{EMULATED}: nothing listens in {_where(pod)} to proxy to")


def _proxied_port(ident: str) -> str:
    parts = ident.split(":")
    return parts[-1] if len(parts) >= 2 else ""


def _serving(pod: dict[str, Any], port: str) -> tuple[str, str, tuple[str, ...]] | None:
    """The container, port and arguments a proxy request reaches: the given port (else, as
    upstream, the first declared port of the first container declaring one, or 80), in the
    container that declares it (else the first one)."""
    containers = [c for c in (pod.get("spec") or {}).get("containers") or () if isinstance(c, dict)]
    if not containers:
        return None
    declared = [
        (c, str(p.get("containerPort"))) for c in containers for p in c.get("ports") or () if isinstance(p, dict)
    ]
    if not port:
        port = declared[0][1] if declared else "80"  # no port in the URL: HTTP's own
    owner = next((c for c, p in declared if p == port), containers[0])
    args = tuple(str(a) for a in (owner.get("args") or ()))
    return str(owner.get("name", "")), port, args
