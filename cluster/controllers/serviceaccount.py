"""The ServiceAccounts controller and the root CA publisher: what every namespace holds.

Owns upstream's two per-namespace guarantees: a ServiceAccount named ``default`` in every
Active namespace (a bare object, created again when deleted; no token Secret, as since
1.24), and the ConfigMap ``kube-root-ca.crt`` whose ``ca.crt`` is the cluster CA's PEM
(rewritten when someone changes it). The PEM is the one the apiserver publishes in
``kube-system/extension-apiserver-authentication`` (``client-ca-file``; ``kubemu serve``
puts its CA there), else a fixed emulated certificate. Both are Reconcilers keyed by the
namespace (``("", name)``), registered by ``manager.default_controllers``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

from ..api.requests import Create, Request, Update
from .reconciler import Indexer, Key, Obj, ObjectCache, Outcome, Watches

DEFAULT_SA = "default"
ROOT_CA = "kube-root-ca.crt"
AUTH_CONFIGMAP = ("kube-system", "extension-apiserver-authentication")
# What ``ca.crt`` holds when no CA is served: a well-formed PEM block naming itself emulated.
EMULATED_CA_PEM = (
    "-----BEGIN CERTIFICATE-----\n"
    "a3ViZW11IGVtdWxhdGVkIGNsdXN0ZXIgQ0EgKG5vIEFQSSBpcyBzZXJ2ZWQ7IHNlZSBrdWJlbXUgc2VydmUp\n"
    "-----END CERTIFICATE-----\n"
)


def _active(ns: Obj | None) -> bool:
    return (
        ns is not None
        and (ns.get("status") or {}).get("phase", "Active") == "Active"
        and not (ns.get("metadata") or {}).get("deletionTimestamp")
    )


def _namespace_key(t: str, o: Obj) -> Iterable[Key]:
    return (("", (o.get("metadata") or {}).get("name", "")),)


def _named(name: str) -> Callable[[str, Obj], Iterable[Key]]:
    def keys(t: str, o: Obj) -> Iterable[Key]:
        m = o.get("metadata") or {}
        return (("", m.get("namespace", "")),) if m.get("name") == name else ()

    return keys


class ServiceAccountReconciler:
    name: ClassVar[str] = "serviceaccount"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("Namespace", keys=_namespace_key),
        Watches("ServiceAccount", keys=_named(DEFAULT_SA)),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache

    def reconcile(self, key: Key, now: float) -> Outcome:
        ns = key[1]
        if not _active(self.cache.get("Namespace", "", ns)) or self.cache.get("ServiceAccount", ns, DEFAULT_SA):
            return Outcome()
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT_SA, "namespace": ns}}
        return Outcome(writes=[Create(sa)])


def _root_ca_keys(t: str, o: Obj) -> Iterable[Key]:
    m = o.get("metadata") or {}
    if (m.get("namespace"), m.get("name")) == AUTH_CONFIGMAP:
        return (("*", ""),)  # the CA changed: every namespace (reconcile fans out)
    return _named(ROOT_CA)(t, o)


class RootCAReconciler:
    name: ClassVar[str] = "root-ca-cert-publisher"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("Namespace", keys=_namespace_key),
        Watches("ConfigMap", keys=_root_ca_keys),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache, default_pem: str = EMULATED_CA_PEM) -> None:
        self.cache = cache
        self.default_pem = default_pem

    def pem(self) -> str:
        auth = self.cache.get("ConfigMap", *AUTH_CONFIGMAP)
        return str(((auth or {}).get("data") or {}).get("client-ca-file") or self.default_pem)

    def reconcile(self, key: Key, now: float) -> Outcome:
        if key[0] == "*":
            return Outcome(writes=[w for ns in self.cache.list("Namespace") for w in self._one(ns, now)])
        return Outcome(writes=self._one(self.cache.get("Namespace", "", key[1]), now))

    def _one(self, ns: Obj | None, now: float) -> list[Request]:
        if ns is None or not _active(ns):
            return []
        name = ns["metadata"]["name"]
        pem, have = self.pem(), self.cache.get("ConfigMap", name, ROOT_CA)
        if have is None:
            cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": ROOT_CA, "namespace": name}}
            return [Create({**cm, "data": {"ca.crt": pem}})]
        if (have.get("data") or {}) != {"ca.crt": pem}:
            return [Update({**have, "data": {"ca.crt": pem}})]
        return []
