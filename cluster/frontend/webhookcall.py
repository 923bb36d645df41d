"""Calling the admission webhooks around a write made through the HTTP API.

Owns the registered webhooks as the front end knows them (re-read from the backend once
per emulated second, and at once after a webhook configuration is written through this
front end), the call of one webhook (through ``webhookclient.py``, with its
``timeoutSeconds``) and the order of a write: mutating
webhooks one after another, each seeing the previous one's patch; then, if a validating
webhook matches, a dry run of the write to get the object as it would be stored, the
validating webhooks on it, and only then the write. A webhook given as a ``service``
cannot be reached (kubemu's pods serve no HTTP): that is a failed call, which its
``failurePolicy`` decides. Writes the components make (controllers, kubelets) do not pass
through here. The matching and the answers' meaning are ``webhooks.py``'s; ``verbs.py``
calls ``admitted``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import orjson

from ..api.errors import NotFound
from . import webhookclient
from .backend import Backend
from .webhooks import (
    MUTATING,
    VALIDATING,
    Attributes,
    CallFailed,
    Hook,
    call_failure,
    dry_run_refusal,
    hooks_of,
    matches,
    read_answer,
    review,
)

REFRESH_SECONDS = 1.0  # emulated: how stale the front end's copy of the configurations may be

Write = Callable[[dict[str, Any] | None, bool], Awaitable[Any]]
ReadOld = Callable[[], Awaitable[dict[str, Any]]]


class Webhooks:
    """The registered webhooks, as last read from the backend."""

    def __init__(self) -> None:
        self._hooks: dict[str, list[Hook]] = {MUTATING: [], VALIDATING: []}
        self._read_at: float | None = None

    def invalidate(self) -> None:
        self._read_at = None

    async def _current(self, backend: Backend) -> dict[str, list[Hook]]:
        now = backend.now()
        if self._read_at is None or now - self._read_at >= REFRESH_SECONDS or now < self._read_at:
            for kind in (MUTATING, VALIDATING):
                _, configs = await backend.list(kind, None)
                self._hooks[kind] = hooks_of(configs, kind == MUTATING)
            self._read_at = now
        return self._hooks

    async def matching(
        self, backend: Backend, a: Attributes, read_old: ReadOld | None = None
    ) -> tuple[list[Hook], list[Hook], Attributes]:
        """(the mutating hooks, the validating hooks) that ``a`` must pass, and ``a`` with
        its namespace's labels and its old object (``read_old``) once a hook needs them."""
        hooks = await self._current(backend)
        if not hooks[MUTATING] and not hooks[VALIDATING]:
            return [], [], a
        if a.old is None and a.operation != "CREATE" and read_old is not None:
            try:
                a = replace(a, old=await read_old())
            except NotFound:
                pass
        if a.resource.namespaced and a.namespace and a.namespace_labels is None:
            try:
                ns = await backend.get("Namespace", "", a.namespace)
                a = replace(a, namespace_labels=dict((ns.get("metadata") or {}).get("labels") or {}))
            except NotFound:
                a = replace(a, namespace_labels={})
        return (
            [x for x in hooks[MUTATING] if matches(x, a)],
            [x for x in hooks[VALIDATING] if matches(x, a)],
            a,
        )


async def admitted(
    webhooks: Webhooks, backend: Backend, a: Attributes, write: Write, read_old: ReadOld | None = None
) -> tuple[Any, list[str]]:
    """Run ``write(obj, dry_run)`` behind the webhooks ``a`` matches; returns what the
    write returned and the webhooks' warnings. ``read_old`` reads the object an update or
    a delete replaces, when a webhook is to see it."""
    mutators, validators, a = await webhooks.matching(backend, a, read_old)
    warnings: list[str] = []
    for hook in mutators:
        a, said = await _admit_one(hook, a)
        warnings += said
    if mutators:  # a patch may change what the validating webhooks match
        _, validators, a = await webhooks.matching(backend, a)
    if validators:
        seen = a
        if a.obj is not None:
            preview = await write(a.obj, True)  # validated and defaulted, stored nothing
            seen = replace(a, obj=preview, name=(preview.get("metadata") or {}).get("name") or a.name)
            if not a.name:  # a generated name: the write stores the one the webhooks saw
                a.obj.setdefault("metadata", {})["name"] = seen.name
                a = replace(a, name=seen.name)
        results = await asyncio.gather(*(_admit_one(hook, seen) for hook in validators), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
            warnings += result[1]
    return await write(a.obj, a.dry_run), warnings


async def _admit_one(hook: Hook, a: Attributes) -> tuple[Attributes, list[str]]:
    if a.dry_run:
        refusal = dry_run_refusal(hook)
        if refusal is not None:
            raise refusal
    uid = str(uuid.uuid4())
    version, body = review(hook, a, uid)
    try:
        if not version:
            raise CallFailed(
                "webhook does not accept v1 or v1beta1 AdmissionReview (admissionReviewVersions: "
                f"{hook.spec.get('admissionReviewVersions')})"
            )
        answer = await _post(hook, orjson.dumps(body))
        verdict = read_answer(hook, a, uid, version, answer)
    except CallFailed as e:
        if hook.ignore_failure:
            return a, []
        raise call_failure(hook, str(e)) from None
    return (replace(a, obj=verdict.obj) if hook.mutating else a), list(verdict.warnings)


async def _post(hook: Hook, body: bytes) -> bytes:
    try:
        return await webhookclient.post(hook.spec.get("clientConfig") or {}, body, hook.timeout)
    except webhookclient.Unreachable as e:
        raise CallFailed(f"failed to call webhook: {e}") from None
