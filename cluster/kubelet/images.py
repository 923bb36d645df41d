"""Image pulls as data: which images a node cannot pull, and what the runtime answers then.

Owns the rule of the emulated registries. No image is ever fetched: an image pulls unless
the pod's ``kubemu.io/image-pull`` annotation (``.<container>`` for one container) says
``fail``, or it matches one of the node's unpullable patterns (the KubeletConfiguration
key ``unpullableImages``, a list of shell-style globs over the normalised reference such as
``docker.io/library/foo:non-existent``; ``*`` also matches ``/``), or it lives in one of
the private registries the conformance suite uses and the pod names no imagePullSecrets.
``pass`` in the annotation pulls whatever the patterns say. An image that cannot be
pulled is not present on any node either, so ``imagePullPolicy: Never`` finds it missing.

The default patterns cover the upstream end-to-end suite's unpullable images: its invalid
registry (``invalid.registry.k8s.io/...``), names with ``invalid-image`` in them, the
"non-existent" tags its Deployment and DaemonSet tests roll out to, registries on the
node itself (``localhost``, ``127.0.0.1``: nothing listens there in an emulator) and the
never-resolving ``.invalid`` domain. ``pull_error`` words the failure as containerd does,
which the kubelet quotes (``creation.py``). Called by ``Kubelet`` when it first sees a pod.
"""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache
from typing import Any

from ..api.annotations import IMAGE_PULL

KEY = "unpullableImages"
DEFAULT_UNPULLABLE = (
    "invalid.registry.k8s.io/*",
    "*.invalid/*",
    "*.invalid:*/*",
    "localhost/*",
    "localhost:*/*",
    "127.0.0.1/*",
    "127.0.0.1:*/*",
    "*invalid-image*",
    "*:non-existent",
    "*:nonexistent",
    "*:non-existing",
    "*:does-not-exist",
    "*:404",  # the Deployment conformance tests' image that never pulls (webserver:404)
)
# Registries that answer only with credentials (the e2e suite's authenticated images).
PRIVATE = ("gcr.io/authenticated-image-pulling/*", "gcr.io/k8s-authenticated-test/*")


def unpullable_patterns(kubelet: dict[str, Any]) -> tuple[str, ...]:
    """The node's patterns: its ``unpullableImages`` (replacing the defaults) or the
    defaults. Raises ValueError naming the key for anything but a list of strings."""
    raw = kubelet.get(KEY)
    if raw is None:
        return DEFAULT_UNPULLABLE
    if not isinstance(raw, list) or not all(isinstance(p, str) and p for p in raw):
        raise ValueError(f"{KEY}: {raw!r} must be a list of image patterns (non-empty strings)")
    return tuple(raw)


def normalise(image: str) -> str:
    """The reference as containerd names it: a registry host, ``library/`` for Docker Hub's
    official images, and ``:latest`` when neither tag nor digest is given."""
    first, _, rest = image.partition("/")
    if not rest or ("." not in first and ":" not in first and first != "localhost"):
        host, path = "docker.io", image
        if "/" not in path:
            path = "library/" + path
    else:
        host, path = first, rest
    last = path.rsplit("/", 1)[-1]
    if "@" not in last and ":" not in last:
        path += ":latest"
    return f"{host}/{path}"


def pull_error(image: str, annotations: dict[str, Any], container: str, secrets: bool, patterns: tuple) -> str | None:
    """None when the image pulls; else the runtime's error for the failed pull."""
    said = annotations.get(f"{IMAGE_PULL}.{container}", annotations.get(IMAGE_PULL)) if annotations else None
    if said == "pass" or not image:
        return None
    if said == "fail":
        return _not_found(normalise(image))
    return _by_pattern(image, secrets, patterns)


@lru_cache(maxsize=4096)
def _by_pattern(image: str, secrets: bool, patterns: tuple) -> str | None:
    """The patterns' verdict, kept per image: the pods of one template share their images."""
    ref = normalise(image)
    if not secrets and _matcher(PRIVATE).match(ref):
        return _denied(ref)
    match = _matcher(patterns).match
    if not (match(ref) or match(image)):
        return None
    host = ref.split("/", 1)[0]
    hostname = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if hostname in ("localhost", "127.0.0.1"):
        port = host.rsplit(":", 1)[1] if ":" in host else "443"
        return _request(ref, f"dial tcp 127.0.0.1:{port}: connect: connection refused")
    if hostname.endswith(".invalid") or hostname.startswith("invalid."):
        return _request(ref, f"dial tcp: lookup {hostname}: no such host")
    return _not_found(ref)


@lru_cache(maxsize=64)
def _matcher(patterns: tuple) -> re.Pattern:
    """The patterns as one compiled expression: each image is matched once, not per pattern."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or "(?!)")


def _pull(code: str, ref: str, why: str) -> str:
    return f'rpc error: code = {code} desc = failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": {why}'


def _not_found(ref: str) -> str:
    return _pull("NotFound", ref, f"{ref}: not found")


def _denied(ref: str) -> str:
    why = "pull access denied, repository does not exist or may require authorization: authorization failed"
    return _pull("Unknown", ref, why)


def _request(ref: str, why: str) -> str:
    host, _, path = ref.partition("/")
    repo, tag = (path.rsplit("@", 1) if "@" in path else path.rsplit(":", 1)) if path else ("", "")
    url = f"https://{host}/v2/{repo}/manifests/{tag}"
    return _pull("Unknown", ref, f'failed to do request: Head "{url}": {why}')
