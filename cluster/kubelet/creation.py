"""What a container needs before the runtime can create it, read once from the pod's spec.

Owns ``Needs`` (per container: its image's pull error from ``images.py``, its pull
policy, its environment's sources and its volume mounts' subPath expressions), the
``Creation`` kept in ``PodRecord.create`` for a pod with anything to check (None for every
other pod, so a plain pod costs one look at each container), and ``config_error``: the
error upstream's kubelet meets while it builds a container's configuration, in its order
and words (the environment first, then the mounts):

| cause | message (reason CreateContainerConfigError) |
|---|---|
| env/envFrom names a ConfigMap (Secret) that does not exist, not optional | ``configmap "x" not found`` (``secret "x" not found``) |
| env names a key the ConfigMap (Secret) lacks, not optional | ``couldn't find key k in ConfigMap ns/x`` (``Secret``) |
| a subPathExpr variable is unset or empty | ``missing value for A, B`` |
| the expanded subPath is absolute | ``error SubPath `/x` must not be an absolute path`` |
| it has a ``..`` element | ``unable to provision SubPath `a/../b`: must not contain '..'`` |

Variables come from the container's ``env`` (``$(VAR)`` references expanded as upstream
expands them) after its ``envFrom``; ``fieldRef`` reads the pod's metadata and spec
(name, namespace, uid, labels and annotations, nodeName, serviceAccountName) as the
latest version of the pod the kubelet saw says (an update of a held pod's labels or
annotations is read again: ``createwait.py``), and ``status.podIP``/``status.hostIP`` at the time of the attempt. ConfigMaps and
Secrets are looked up in what the node host's watches hold. ``createwait.py`` calls it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from .images import pull_error

# (kind, namespace, name) -> the object's data as strings, or None when it does not exist.
Lookup = Callable[[str, str, str], "dict[str, str] | None"]
_REF = re.compile(r"\$\$|\$\(([^)]*)\)")
_FIELDS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName")


class Needs(NamedTuple):
    name: str
    image: str
    pull: str | None  # the runtime's error when the image cannot be pulled
    never: bool  # imagePullPolicy Never
    env_from: tuple  # ((kind, name, optional, prefix), ...)
    env: tuple  # ((variable, source), ...); source as ``_source`` reads it
    subpaths: tuple  # ((is an expression, text), ...)


class Creation:
    """A pod's containers' needs, and what holds them while they cannot be created."""

    __slots__ = ("needs", "fields", "waiting", "pulls", "step", "announced")

    def __init__(self, needs: dict[str, Needs], fields: dict[str, str]):
        self.needs = needs
        self.fields = fields  # fieldRef path -> value, for the paths the pod's env reads
        self.waiting: dict[str, tuple[str, str]] = {}  # container -> (reason, message)
        self.pulls: dict[str, tuple[float, float]] = {}  # image -> (back-off, last failed pull)
        self.step: str | None = None  # the lifecycle step held (``pods.START`` or ``probes.INIT``)
        self.announced: dict[str, str] = {}  # container -> the last message its events told


def creation_of(pod: dict[str, Any], patterns: tuple) -> Creation | None:
    """The pod's needs, or None when no container has anything that can fail."""
    spec = pod.get("spec") or {}
    meta = pod.get("metadata") or {}
    ann = meta.get("annotations") or {}
    secrets = bool(spec.get("imagePullSecrets"))
    needs = {}
    for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        if not isinstance(c, dict):
            continue
        n = _needs(c, ann, secrets, patterns)
        if n.pull is not None or n.env_from or n.subpaths or any(s[0] in ("cm", "secret") for _, s in n.env):
            needs[n.name] = n
    if not needs:
        return None
    return Creation(needs, field_values(pod, needs))


def _needs(c: dict[str, Any], ann: dict[str, Any], secrets: bool, patterns: tuple) -> Needs:
    name, image = str(c.get("name", "")), str(c.get("image") or "")
    env_from = []
    for ef in c.get("envFrom") or ():
        for field, kind in (("configMapRef", "cm"), ("secretRef", "secret")):
            ref = (ef or {}).get(field)
            if isinstance(ref, dict):
                env_from.append(
                    (kind, str(ref.get("name", "")), bool(ref.get("optional")), str(ef.get("prefix") or ""))
                )
    env = tuple((str(e.get("name", "")), _source(e, name)) for e in c.get("env") or () if isinstance(e, dict))
    subpaths = []
    for m in c.get("volumeMounts") or ():
        if isinstance(m, dict) and m.get("subPathExpr"):
            subpaths.append((True, str(m["subPathExpr"])))
        elif isinstance(m, dict) and m.get("subPath"):
            subpaths.append((False, str(m["subPath"])))
    return Needs(
        name,
        image,
        pull_error(image, ann, name, secrets, patterns),
        c.get("imagePullPolicy") == "Never",
        tuple(env_from),
        env,
        tuple(subpaths),
    )


def _source(e: dict[str, Any], container: str) -> tuple:
    vf = e.get("valueFrom")
    if not isinstance(vf, dict):
        return ("value", str(e.get("value") or ""))
    for field, kind in (("configMapKeyRef", "cm"), ("secretKeyRef", "secret")):
        ref = vf.get(field)
        if isinstance(ref, dict):
            return (kind, str(ref.get("name", "")), str(ref.get("key", "")), bool(ref.get("optional")))
    ref = vf.get("fieldRef")
    if isinstance(ref, dict):
        return ("field", str(ref.get("fieldPath", "")))
    ref = vf.get("resourceFieldRef")
    if isinstance(ref, dict):  # read from ``fields`` under ``resource_key`` when the kubelet runs the command
        return ("field", resource_key(container, ref))
    return ("other",)


def resource_key(container: str, ref: dict[str, Any]) -> str:
    """Where a resourceFieldRef's value is kept among the fieldRef values (``commandrun.py``)."""
    return f"resource:{ref.get('containerName') or container}:{ref.get('resource', '')}:{ref.get('divisor') or '1'}"


def field_values(pod: dict[str, Any], needs: dict[str, Needs]) -> dict[str, str]:
    """The values of the metadata and spec fields the containers' env reads (fieldRef)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    paths = {s[1] for n in needs.values() for _, s in n.env if s[0] == "field"}
    out = {}
    for path in paths:
        if path in _FIELDS:
            part, _, key = path.partition(".")
            out[path] = str((meta if part == "metadata" else spec).get(key) or "")
        m = re.fullmatch(r"metadata\.(labels|annotations)\['(.*)'\]", path)
        if m:
            out[path] = str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    return out


def config_error(n: Needs, namespace: str, lookup: Lookup, fields: dict[str, str]) -> str | None:
    """Why the container's configuration cannot be built now, or None."""
    env = environment(n, namespace, lookup, fields)
    if isinstance(env, str):
        return env
    return _subpath_error(n.subpaths, env)


def environment(n: Needs, namespace: str, lookup: Lookup, fields: dict[str, str]) -> dict[str, str] | str:
    """The container's environment as its runtime gets it (``envFrom``, then ``env`` with
    ``$(VAR)`` expanded), or the error that keeps it from being built."""
    env: dict[str, str] = {}
    for kind, name, optional, prefix in n.env_from:
        data = lookup(kind, namespace, name)
        if data is None:
            if optional:
                continue
            return _not_found(kind, name)
        env.update({prefix + k: v for k, v in data.items()})
    for var, source in n.env:
        value = _value(source, namespace, lookup, fields, env)
        if isinstance(value, _Error):
            return value.text
        if value is not None:
            env[var] = value
    return env


def needs_of(c: dict[str, Any]) -> Needs:
    """The container's needs, without its image's (for reading its environment)."""
    return _needs(c, {}, False, ())


class _Error(NamedTuple):
    text: str


def _value(source: tuple, ns: str, lookup: Lookup, fields: dict[str, str], env: dict[str, str]) -> str | _Error | None:
    kind = source[0]
    if kind == "value":
        return _REF.sub(lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), source[1])
    if kind == "field":
        return fields.get(source[1], "")
    if kind not in ("cm", "secret"):
        return None
    _, name, key, optional = source
    data = lookup(kind, ns, name)
    if data is None:
        return None if optional else _Error(_not_found(kind, name))
    if key not in data:
        return None if optional else _Error(f"couldn't find key {key} in {_KIND[kind]} {ns}/{name}")
    return data[key]


_KIND = {"cm": "ConfigMap", "secret": "Secret"}


def _not_found(kind: str, name: str) -> str:
    return f'{"configmap" if kind == "cm" else "secret"} "{name}" not found'


def _subpath_error(subpaths: tuple, env: dict[str, str]) -> str | None:
    for is_expr, text in subpaths:
        path = text
        if is_expr:
            missing = sorted(
                {m.group(1) for m in _REF.finditer(text) if m.group(0) != "$$" and not env.get(m.group(1))}
            )
            if missing:
                return f"missing value for {', '.join(missing)}"
            path = _REF.sub(lambda m: "$" if m.group(0) == "$$" else env[m.group(1)], text)
        if path.startswith("/"):
            return f"error SubPath `{path}` must not be an absolute path"
        if ".." in path.replace("\\", "/").split("/"):
            return f"unable to provision SubPath `{path}`: must not contain '..'"
    return None
