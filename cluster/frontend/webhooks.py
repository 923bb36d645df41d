"""Admission webhooks: which registered webhooks a write must pass, the AdmissionReview each
is sent, and what its answer means, as upstream's webhook admission plugins decide them.

Owns the pure part: matching a webhook's ``rules`` (operations, groups, versions, resources
with their ``*`` and ``x/*`` forms, scope), ``namespaceSelector`` and ``objectSelector``
against a write; building the ``admission.k8s.io/v1`` request; reading the answer (allowed,
a JSONPatch for a mutating webhook, warnings); and the errors upstream gives for a denial
(``admission webhook "<name>" denied the request: ...``), for a webhook that cannot be
called (500 ``Internal error occurred: failed calling webhook ...`` unless its
``failurePolicy`` is ``Ignore``) and for a dry run a webhook with side effects cannot take
(400). The webhook configurations themselves are never sent to a webhook (upstream exempts
them, so a broken webhook cannot lock itself in). ``webhookcall.py`` does the calling and
keeps the registered configurations; ``verbs.py`` calls it around each write.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import orjson

from ..api import jsonpatch
from ..api.errors import BadRequest, Cause, InternalError, StatusError
from ..api.kinds import Resource
from ..api.selectors import LabelSelector, SelectorError

MUTATING = "MutatingWebhookConfiguration"
VALIDATING = "ValidatingWebhookConfiguration"
EXEMPT = frozenset(
    {
        MUTATING,
        VALIDATING,
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
)
DEFAULT_TIMEOUT = 10  # seconds, upstream's default timeoutSeconds
REVIEW_VERSIONS = ("v1", "v1beta1")
USER = {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}
_OPTIONS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


@dataclass(frozen=True)
class Attributes:
    """One write as admission sees it: the operation, the resource and the objects."""

    operation: str  # CREATE, UPDATE, DELETE
    resource: Resource
    namespace: str
    name: str
    obj: dict[str, Any] | None  # None for a DELETE
    old: dict[str, Any] | None  # None for a CREATE
    dry_run: bool
    namespace_labels: dict[str, str] | None = None  # the namespace's labels, when it has one


@dataclass(frozen=True)
class Hook:
    """One webhook of a configuration, in the order upstream calls them."""

    name: str
    spec: dict[str, Any]
    mutating: bool

    @property
    def ignore_failure(self) -> bool:
        return self.spec.get("failurePolicy", "Fail") == "Ignore"

    @property
    def timeout(self) -> float:
        t = self.spec.get("timeoutSeconds")
        return float(t) if isinstance(t, int) and 1 <= t <= 30 else float(DEFAULT_TIMEOUT)

    @property
    def url(self) -> str:
        return str((self.spec.get("clientConfig") or {}).get("url") or "")


def hooks_of(configs: list[dict[str, Any]], mutating: bool) -> list[Hook]:
    """The webhooks of the configurations, ordered as upstream orders them (by
    configuration name, then as listed)."""
    out: list[Hook] = []
    for config in sorted(configs, key=lambda c: (c.get("metadata") or {}).get("name") or ""):
        for spec in config.get("webhooks") or ():
            if isinstance(spec, dict) and spec.get("name"):
                out.append(Hook(str(spec["name"]), spec, mutating))
    return out


def _one_of(allowed: Any, value: str) -> bool:
    values = allowed if isinstance(allowed, list) else []
    return "*" in values or value in values


def _resource_matches(patterns: Any, resource: str, subresource: str) -> bool:
    for p in patterns if isinstance(patterns, list) else ():
        res, _, sub = str(p).partition("/")
        if p == "*/*" or (res in ("*", resource) and (sub == subresource or (sub == "*" and subresource))):
            return True
    return False


def _rule_matches(rule: dict[str, Any], a: Attributes) -> bool:
    r = a.resource
    scope = rule.get("scope") or "*"
    if scope != "*" and scope != ("Namespaced" if r.namespaced else "Cluster"):
        return False
    return (
        _one_of(rule.get("operations"), a.operation)
        and _one_of(rule.get("apiGroups"), r.group)
        and _one_of(rule.get("apiVersions"), r.version)
        and _resource_matches(rule.get("resources"), r.plural, "")
    )


def _selector_matches(selector: Any, labels: dict[str, str]) -> bool:
    if not isinstance(selector, dict) or not selector:
        return True  # absent or {}: everything
    try:
        return LabelSelector.from_dict(selector).matches(labels)
    except (SelectorError, TypeError, ValueError):
        return False


def _labels(obj: dict[str, Any] | None) -> dict[str, str] | None:
    if obj is None:
        return None
    return dict((obj.get("metadata") or {}).get("labels") or {})


def matches(hook: Hook, a: Attributes) -> bool:
    """Whether ``hook`` is called for the write ``a`` (rules, then the selectors)."""
    if a.resource.kind in EXEMPT:
        return False
    if not any(_rule_matches(r, a) for r in hook.spec.get("rules") or () if isinstance(r, dict)):
        return False
    ns_selector = hook.spec.get("namespaceSelector")
    if a.resource.kind == "Namespace":
        if not _selector_matches(ns_selector, _labels(a.obj) or _labels(a.old) or {}):
            return False
    elif a.resource.namespaced and not _selector_matches(ns_selector, a.namespace_labels or {}):
        return False
    obj_selector = hook.spec.get("objectSelector")
    candidates = [x for x in (_labels(a.obj), _labels(a.old)) if x is not None]
    return any(_selector_matches(obj_selector, labels) for labels in candidates or [{}])


def dry_run_refusal(hook: Hook) -> BadRequest | None:
    """The 400 for a dry run sent to a webhook that may have side effects."""
    if hook.spec.get("sideEffects") in ("None", "NoneOnDryRun"):
        return None
    return BadRequest(f'admission webhook "{hook.name}" does not support dry run')


def review(hook: Hook, a: Attributes, uid: str) -> tuple[str, dict[str, Any]]:
    """(the AdmissionReview version used, the review sent to ``hook``)."""
    accepted = hook.spec.get("admissionReviewVersions") or ()
    version = next((v for v in accepted if v in REVIEW_VERSIONS), "")
    r = a.resource
    gvk = {"group": r.group, "version": r.version, "kind": r.kind}
    gvr = {"group": r.group, "version": r.version, "resource": r.plural}
    request = {
        "uid": uid,
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": a.name,
        "namespace": a.namespace,
        "operation": a.operation,
        "userInfo": USER,
        "object": a.obj,
        "oldObject": a.old,
        "dryRun": a.dry_run,
        "options": {"kind": _OPTIONS[a.operation], "apiVersion": "meta.k8s.io/v1"},
    }
    if not a.namespace:
        del request["namespace"]
    return version, {"kind": "AdmissionReview", "apiVersion": f"admission.k8s.io/{version}", "request": request}


class CallFailed(Exception):
    """The webhook could not be called or answered nonsense (upstream's ErrCallingWebhook)."""


def call_failure(hook: Hook, reason: str) -> InternalError:
    """The 500 a failing-closed webhook gives, worded as upstream's."""
    detail = f'failed calling webhook "{hook.name}": {reason}'
    return InternalError(f"Internal error occurred: {detail}", (Cause("", detail),), retryable=False)


class Denied(StatusError):
    """A webhook's refusal: its own Status (code at least 400), the message prefixed."""

    def __init__(self, hook_name: str, result: dict[str, Any]) -> None:
        denied_by = f'admission webhook "{hook_name}" denied the request'
        message = result.get("message") or ""
        reason = result.get("reason") or ""
        text = (
            f"{denied_by}: {message}"
            if message
            else (f"{denied_by}: {reason}" if reason else f"{denied_by} without explanation")
        )
        super().__init__(text, retryable=False)
        code = result.get("code")
        self.answer_code = code if isinstance(code, int) and code >= 400 else 400
        self.answer_reason = reason
        self.details = result.get("details") if isinstance(result.get("details"), dict) else None

    @property
    def code(self) -> int:  # type: ignore[override]
        return self.answer_code

    def status(self) -> dict[str, Any]:
        out = super().status()  # its code is the webhook's (``code``); its reason, the webhook's or none
        del out["reason"]
        if self.answer_reason:
            out["reason"] = self.answer_reason
        if self.details:
            out["details"] = self.details
        return out

    def _extra(self) -> dict[str, Any]:
        return {"answer_code": self.answer_code, "answer_reason": self.answer_reason, "details": self.details}


@dataclass(frozen=True)
class Verdict:
    """What a webhook's answer says: allowed or not, the patched object, its warnings."""

    obj: dict[str, Any] | None
    warnings: tuple[str, ...]


def read_answer(hook: Hook, a: Attributes, uid: str, version: str, body: bytes) -> Verdict:
    """Check a webhook's answer and apply it; raises ``CallFailed`` for a malformed answer
    and ``Denied`` for a refusal."""
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise CallFailed(f"received invalid webhook response: {e}") from None
    response = answer.get("response") if isinstance(answer, dict) else None
    if not isinstance(response, dict):
        raise CallFailed("received invalid webhook response: response is nil")
    if version == "v1" and (answer.get("apiVersion"), answer.get("kind")) != ("admission.k8s.io/v1", "AdmissionReview"):
        raise CallFailed(
            "received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview"
        )
    if version == "v1" and response.get("uid") != uid:
        raise CallFailed(
            f'received invalid webhook response: expected response.uid="{uid}", got "{response.get("uid")}"'
        )
    warnings = tuple(str(w) for w in response.get("warnings") or () if isinstance(w, str))
    if not response.get("allowed"):
        result = response.get("status")
        raise Denied(hook.name, result if isinstance(result, dict) else {})
    patch = response.get("patch")
    if not patch:
        return Verdict(a.obj, warnings)
    if not hook.mutating:
        raise CallFailed("received invalid webhook response: validating webhook may not return a patch")
    if response.get("patchType") != "JSONPatch":
        raise CallFailed(f"received invalid webhook response: unsupported patch type {response.get('patchType')!r}")
    try:
        ops = orjson.loads(base64.b64decode(patch))
        patched = jsonpatch.json_patch(a.obj or {}, ops)
    except (ValueError, TypeError, StatusError) as e:
        raise CallFailed(f"received invalid webhook response: the patch does not apply: {e}") from None
    if not isinstance(patched, dict):
        raise CallFailed("received invalid webhook response: the patched object is not an object")
    return Verdict(patched, warnings)
