"""The ``kubernetes`` Service in ``default`` and its Endpoints and EndpointSlice.

Owns what upstream's apiserver bootstrap controller keeps: the Service (ClusterIP the
first address of the service range, port 443 ``https`` to the apiserver's secure port, no
selector), the Endpoints ``kubernetes`` (labelled ``endpointslice.kubernetes.io/skip-mirror``)
and the EndpointSlice ``kubernetes`` (only the ``kubernetes.io/service-name`` label: no
controller manages it), all listing the address the API is served at. They are created at
start and re-created when deleted or when the served address or the range changes.
Once a CA is published (``publish_ca``), the ConfigMap
``kube-system/extension-apiserver-authentication`` carries its PEM as ``client-ca-file``,
as upstream's apiserver writes it (the root CA publisher copies it into every namespace's
``kube-root-ca.crt``); it too is written again when deleted or changed.

The apiserver (``apiserver.py``) calls ``ensure`` at start and before each write batch; it
costs a few revision reads when nothing changed. ``kubemu serve`` calls ``advertise`` and
``publish_ca`` once it knows the address it serves at and its CA.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError

NAME, NAMESPACE = "kubernetes", "default"
SERVICE_PORT = 443
DEFAULT_ADDRESS, DEFAULT_PORT = "127.0.0.1", 6443
SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
AUTH_NAMESPACE, AUTH_NAME = "kube-system", "extension-apiserver-authentication"
CLIENT_CA_KEY = "client-ca-file"
_KINDS = ("Service", "Endpoints", "EndpointSlice")


class MasterServices:
    def __init__(self, address: str = DEFAULT_ADDRESS, port: int = DEFAULT_PORT) -> None:
        self.address, self.port = address, port
        self.ca_pem: str | None = None  # the served CA, once published
        self._seen: tuple[object, ...] | None = None  # the range and the kinds' revisions at the last check

    def advertise(self, address: str, port: int) -> None:
        """The API is served at ``address:port`` (checked at the next ``ensure``)."""
        self.address, self.port, self._seen = address, port, None

    def publish_ca(self, pem: str) -> None:
        """Publish the CA clients trust (checked at the next ``ensure``)."""
        self.ca_pem, self._seen = pem, None

    def _state(self, api: Any) -> tuple[object, ...]:
        kinds = _KINDS + (("ConfigMap",) if self.ca_pem is not None else ())
        return (api.services.cidr, *(api.store.kind_revision(k) for k in kinds))

    def ensure(self, api: Any, now: float) -> None:
        if self._state(api) == self._seen:
            return
        store = api.store
        try:
            self._ensure(api, store, now)
        except StatusError:
            pass  # e.g. a user's Service holds the first address: the write batch goes on regardless
        try:
            self._ensure_ca(api, store, now)
        except StatusError:
            pass  # kube-system is being deleted: the next change looks again
        self._seen = self._state(api)

    def _ensure_ca(self, api: Any, store: Any, now: float) -> None:
        if self.ca_pem is None:
            return
        data = {CLIENT_CA_KEY: self.ca_pem}
        have = store.peek("ConfigMap", AUTH_NAMESPACE, AUTH_NAME)
        if have is None:
            meta = {"name": AUTH_NAME, "namespace": AUTH_NAMESPACE}
            api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}, now)
        elif (have.get("data") or {}).get(CLIENT_CA_KEY) != self.ca_pem:
            current = store.get("ConfigMap", AUTH_NAMESPACE, AUTH_NAME)
            current["data"] = {**(current.get("data") or {}), **data}
            api.update(current, now)

    def _ensure(self, api: Any, store: Any, now: float) -> None:
        first = api.services.first_ip()
        svc = store.peek("Service", NAMESPACE, NAME)
        if svc is not None and (svc.get("spec") or {}).get("clusterIP") != first:
            store.remove("Service", NAMESPACE, NAME)  # the range changed: it takes the new first address
            svc = None
        if svc is None:
            api.create(self.service(first), now)
        elif (svc.get("spec") or {}).get("ports") != self.service(first)["spec"]["ports"]:
            current = store.get("Service", NAMESPACE, NAME)  # served on another port: upstream reconciles
            current["spec"]["ports"] = self.service(first)["spec"]["ports"]
            api.update(current, now)
        # The endpoints list the address kubemu is served at, usually loopback, which
        # upstream's Endpoints rules refuse (a real apiserver never advertises loopback):
        # written as the apiserver's own objects, so clients looking the Service up find it.
        for kind, want in (("Endpoints", self.endpoints()), ("EndpointSlice", self.slice())):
            have = store.peek(kind, NAMESPACE, NAME)
            if have is None:
                api.create(want, now, trusted=True)
            elif _payload(have) != _payload(want):
                current = store.get(kind, NAMESPACE, NAME)
                current.update({k: v for k, v in want.items() if k not in ("metadata", "kind", "apiVersion")})
                current["metadata"]["labels"] = want["metadata"]["labels"]
                api.update(current, now, trusted=True)

    def service(self, cluster_ip: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": NAME,
                "namespace": NAMESPACE,
                "labels": {"component": "apiserver", "provider": "kubernetes"},
            },
            "spec": {
                "type": "ClusterIP",
                "clusterIP": cluster_ip,
                "sessionAffinity": "None",
                "ports": [{"name": "https", "port": SERVICE_PORT, "protocol": "TCP", "targetPort": self.port}],
            },
        }

    def endpoints(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SKIP_MIRROR: "true"}},
            "subsets": [
                {
                    "addresses": [{"ip": self.address}],
                    "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}],
                }
            ],
        }

    def slice(self) -> dict[str, Any]:
        return {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SERVICE_NAME_LABEL: NAME}},
            "addressType": "IPv6" if ":" in self.address else "IPv4",
            "endpoints": [{"addresses": [self.address], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}],
        }


def carry_serving(old: Any, new: Any) -> None:
    """What ``kubemu serve`` told the apiserver ``old`` (the service range, the served
    address, the CA), told again to ``new``, the apiserver restarted from its objects."""
    new.services.configure(old.services.cidr)
    new.masters.advertise(old.masters.address, old.masters.port)
    if old.masters.ca_pem is not None:
        new.masters.publish_ca(old.masters.ca_pem)


def _payload(obj: dict[str, Any]) -> tuple[Any, ...]:
    labels = (obj.get("metadata") or {}).get("labels")
    return (labels, obj.get("subsets"), obj.get("endpoints"), obj.get("ports"), obj.get("addressType"))
