"""The review kinds: asked, answered, never stored.

Owns the answers of authorization.k8s.io/v1 (SelfSubjectAccessReview, SelfSubjectRulesReview,
SubjectAccessReview, LocalSubjectAccessReview) and authentication.k8s.io/v1 SelfSubjectReview,
which ``kubectl auth can-i`` and ``kubectl auth whoami`` create, and TokenReview (who a
bearer token is: the admin's, a ServiceAccount's this server issued, or nobody's). kubemu has one identity, the
token of its kubeconfig (user ``kubemu-admin`` in ``system:masters``), and authorizes every
request that carries it; it evaluates no RBAC. So every access review answers ``allowed:
true``, saying why in ``status.reason``, and a rules review lists everything, as a
cluster-admin's does. The request is validated as upstream validates it (its schema, then the
spec's rules) and answered with 201 and the review, its ``status`` filled in. Called by
``views.answer`` for the paths of these kinds.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..api.errors import BadRequest, Cause, Invalid, NotFound
from ..api.kinds import Resource
from . import fieldvalidation, outputformat, satokens
from .bodies import body_object, checked
from .paths import NOT_FOUND
from .wire import Request, Response, not_allowed, ok

if TYPE_CHECKING:
    from .handler import Handler

USER = "kubemu-admin"  # the kubeconfig's user (tls.py); its token is the only credential
GROUPS = ("system:masters", "system:authenticated")
REASON = "kubemu: the kubeconfig's token (user kubemu-admin, group system:masters) may do everything"
EVERYTHING = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
# The rules of system:basic-user, which every authenticated user also has upstream.
SELF_REVIEWS = [
    {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
    {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews"]},
    {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectrulesreviews"]},
]


async def answer(h: Handler, req: Request, r: Resource, namespace: str, rest: list[str]) -> Response:
    """The answer to ``POST`` on a review kind's collection (``rest`` is what follows the
    namespace: the plural alone)."""
    if len(rest) != 1:
        raise NotFound(NOT_FOUND)  # a review has no objects to name
    if r.namespaced and not namespace:
        raise NotFound(NOT_FOUND)
    if req.method != "POST":
        raise not_allowed(req.method, r.plural)
    outputformat.table_version(req.headers.get("accept", ""), convertible=False)  # no Table of a review: 406
    body = body_object(h, req, r)
    if r.namespaced:
        _check_namespace(body, namespace)
        body["metadata"]["namespace"] = namespace
    review, warnings = checked(r, body, req, fieldvalidation.CREATE)
    causes = _causes(r, review, namespace)
    if causes:
        texts = [f"{c.field}: {c.message}" for c in causes]
        detail = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        raise Invalid(f'{r.kind}.{r.group} "" is invalid: {detail}', tuple(causes))
    meta = review.get("metadata") or {}
    review["metadata"] = {**meta, "creationTimestamp": None}
    review["status"] = await _token_status(h, review) if r.kind == "TokenReview" else _status(r.kind)
    answered = ok(review, 201)
    headers = tuple(("Warning", w) for w in fieldvalidation.warning_headers(warnings))
    return answered._replace(headers=answered.headers + headers)


def _status(kind: str) -> dict[str, Any]:
    if kind == "SelfSubjectReview":
        who = satokens.IDENTITY.get()  # a ServiceAccount token's (satokens.py), else the admin's
        user, groups = who if who is not None else (USER, GROUPS)
        return {"userInfo": {"username": user, "groups": list(groups)}}
    if kind == "SelfSubjectRulesReview":
        return {
            "resourceRules": EVERYTHING + SELF_REVIEWS,
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    return {"allowed": True, "reason": REASON}


async def _token_status(h: Handler, review: dict[str, Any]) -> dict[str, Any]:
    """Who a TokenReview's token is: the kubeconfig's admin, a ServiceAccount this server
    issued a token for (``satokens.py``), or nobody (``authenticated`` false, no user)."""
    spec = review.get("spec") or {}
    token = spec.get("token") or ""
    user: str
    groups: tuple[str, ...]
    if token == h.token:
        user, groups = USER, GROUPS
    else:
        who = await satokens.identity(h, token)
        if who is None:
            return {"user": {}}
        user, groups = who
    status: dict[str, Any] = {"authenticated": True, "user": {"username": user, "groups": list(groups), "extra": {}}}
    if spec.get("audiences"):
        status["audiences"] = list(spec["audiences"])
    return status


def _invalid(field: str, value: Any, detail: str) -> Cause:
    shown = json.dumps(value) if value is not None else '"null"'
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", field)


def _causes(r: Resource, review: dict[str, Any], namespace: str) -> list[Cause]:
    """Upstream's checks of an access review (``pkg/apis/authorization/validation``)."""
    if r.kind == "TokenReview":
        if not (review.get("spec") or {}).get("token"):
            raise BadRequest("token is required for TokenReview in authentication")
        return []
    if r.kind in ("SelfSubjectReview", "SelfSubjectRulesReview"):
        return []
    spec = review.get("spec") or {}
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    out = []
    if res is not None and non is not None:
        out.append(
            _invalid("spec.nonResourceAttributes", non, "cannot be specified in combination with resourceAttributes")
        )
    if res is None and non is None:
        out.append(
            _invalid(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if r.kind != "SelfSubjectAccessReview" and not spec.get("user") and not spec.get("groups"):
        out.append(_invalid("spec.user", spec.get("user") or "", "at least one of user or group must be specified"))
    meta = {k: v for k, v in (review.get("metadata") or {}).items() if v not in (None, {}, [], "")}
    if r.kind == "LocalSubjectAccessReview":
        meta.pop("namespace", None)
        if meta:
            out.append(_invalid("metadata", meta, "must be empty except for namespace"))
        if res is not None and (res.get("namespace") or "") != namespace:
            out.append(
                _invalid(
                    "spec.resourceAttributes.namespace", res.get("namespace") or "", "must match metadata.namespace"
                )
            )
        if non is not None:
            out.append(_invalid("spec.nonResourceAttributes", non, "disallowed on this kind of request"))
    elif meta:
        out.append(_invalid("metadata", meta, "must be empty"))
    return out


def _check_namespace(review: dict[str, Any], namespace: str) -> None:
    given = (review.get("metadata") or {}).get("namespace")
    if given and given != namespace:
        raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
