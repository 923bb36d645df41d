"""ServiceAccount tokens: the TokenRequest subresource and the identity a token carries.

Owns ``POST /api/v1/namespaces/NS/serviceaccounts/NAME/token`` (``kubectl create token``):
the request validated as upstream (``expirationSeconds`` defaulted to 3600, at least 600
and at most 2^32; a name in the body must be the account's), answered 201 with the
``TokenRequest`` echoed, its ``status.token`` a JWT signed with the server's own secret
(HS256; upstream signs RS256 with its service-account key) holding upstream's claims, and
``status.expirationTimestamp``. ``identity`` reads such a token back: the user
``system:serviceaccount:NS:NAME`` while the token is unexpired and the account exists with
the uid it was issued for. Authorization stays allow-all; the identity is what
``kubectl auth whoami`` shows (``reviews.py`` reads ``IDENTITY``). Called by
``subresources.py`` (the route) and ``handler.py`` (authentication).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..api.errors import BadRequest, Cause, Invalid, NotFound
from ..clock import EPOCH, rfc3339
from .paths import Target
from .wire import Request, Response, not_allowed, ok

if TYPE_CHECKING:
    from .handler import Handler

ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
SA_GROUPS = ("system:serviceaccounts", "system:authenticated")
# The identity of the request being answered: (username, groups), or None for the admin token.
IDENTITY: ContextVar[tuple[str, tuple[str, ...]] | None] = ContextVar("kubemu_identity", default=None)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(claims: dict[str, Any], secret: str) -> str:
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    mac = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(mac)}"


def verified_claims(token: str, secret: str) -> dict[str, Any] | None:
    """The claims of a token this server signed, or None (not ours, tampered, malformed)."""
    parts = token.split(".")
    if len(parts) != 3 or not secret:
        return None
    mac = hmac.new(secret.encode(), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    try:
        if not hmac.compare_digest(_unb64(parts[2]), mac):
            return None
        claims = json.loads(_unb64(parts[1]))
    except (ValueError, TypeError):
        return None
    return claims if isinstance(claims, dict) else None


def claims_for(sa: dict[str, Any], spec: dict[str, Any], now: float) -> dict[str, Any]:
    m = sa["metadata"]
    iat = int(EPOCH.timestamp() + now)
    return {
        "iss": ISSUER,
        "sub": f"system:serviceaccount:{m['namespace']}:{m['name']}",
        "aud": list(spec["audiences"]),
        "iat": iat,
        "nbf": iat,
        "exp": iat + int(spec["expirationSeconds"]),
        "kubernetes.io": {"namespace": m["namespace"], "serviceaccount": {"name": m["name"], "uid": m.get("uid", "")}},
    }


def _invalid(field: str, value: Any, detail: str) -> Invalid:
    text = f"{field}: Invalid value: {value}: {detail}"
    return Invalid(
        f'TokenRequest.authentication.k8s.io "" is invalid: {text}', (Cause("FieldValueInvalid", detail, field),)
    )


def check_request(body: Any, sa_name: str) -> dict[str, Any]:
    """The TokenRequest's spec, defaulted, or the Invalid/BadRequest upstream answers."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a TokenRequest object")
    name = (body.get("metadata") or {}).get("name")
    if name and name != sa_name:
        raise _invalid("metadata.name", f'"{name}"', "must match the service account name if specified")
    spec = body.get("spec") or {}
    if not isinstance(spec, dict):
        raise BadRequest("spec: the TokenRequest's spec must be an object")
    seconds = spec.get("expirationSeconds")
    if seconds is None:
        seconds = DEFAULT_EXPIRATION
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        raise BadRequest(f"spec.expirationSeconds: {seconds!r} is not an integer")
    if seconds < MIN_EXPIRATION:
        raise _invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")
    if seconds > MAX_EXPIRATION:
        raise _invalid("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds")
    audiences = spec.get("audiences") or [ISSUER]
    return {**spec, "audiences": audiences, "expirationSeconds": seconds}


async def token_request(h: Handler, req: Request, t: Target) -> Response:
    if req.method != "POST":
        raise not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")
    body = h.body(req)
    spec = check_request(body, t.name)
    sa = await h.backend.get("ServiceAccount", t.namespace, t.name)  # NotFound: serviceaccounts "x" not found
    now = h.backend.now()
    claims = claims_for(sa, spec, now)
    answer = {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": t.name, "namespace": t.namespace, "creationTimestamp": rfc3339(now)},
        "spec": spec,
        "status": {"token": sign(claims, h.token), "expirationTimestamp": rfc3339(now + spec["expirationSeconds"])},
    }
    return ok(answer, 201)


async def identity(h: Handler, token: str) -> tuple[str, tuple[str, ...]] | None:
    """The ServiceAccount a bearer token names, if this server issued it, it is unexpired
    and the account still exists with its uid; else None."""
    claims = verified_claims(token, h.token)
    if claims is None:
        return None
    ref = claims.get("kubernetes.io") or {}
    ns, sa = ref.get("namespace"), (ref.get("serviceaccount") or {})
    if not isinstance(ns, str) or not isinstance(sa, dict):
        return None
    if int(claims.get("exp") or 0) <= EPOCH.timestamp() + h.backend.now():
        return None
    try:
        stored = await h.backend.get("ServiceAccount", ns, str(sa.get("name") or ""))
    except NotFound:
        return None
    if (stored.get("metadata") or {}).get("uid") != sa.get("uid"):
        return None
    return str(claims.get("sub")), (*SA_GROUPS, f"system:serviceaccounts:{ns}")
