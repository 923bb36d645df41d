"""The query parameters of list, watch, get and delete requests, read as the apiserver reads them.

Owns ``ListOptions`` (selectors, ``limit``/``continue``, ``resourceVersion[Match]``, the watch
options, ``includeObject``), list pagination with opaque continue tokens, where a watch starts,
and DeleteOptions; the per-kind field selectors are ``query_fields.py``'s. The HTTP front end
in ``cluster/frontend/`` calls it: ``verbs.py`` (lists, deletes), ``watch.py``,
``subresources.py`` (evictions), ``metricsapi.py`` and ``handler.py`` (tables). Unknown
parameters are ignored.

As upstream (apiserver ``listOpts``, apimachinery ``fields``): a boolean is false only for
``0`` and ``false`` (any case); a bad option combination is a 422 ``Invalid`` on
``ListOptions.meta.k8s.io``; an unknown field label a 400 with the kind's own message.

kubemu keeps no old snapshots, so continued pages are served from the current state: they may
show objects created, changed or deleted since the first page, as upstream's lists do once a
continue token has expired.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import hmac
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..api.errors import BadRequest, Cause, Expired, Invalid
from ..api.selectors import LabelSelector, SelectorError
from .query_fields import FieldSelector, Term, parse_terms

DEFAULT_SEED = b"kubemu-continue"
_INCLUDE_OBJECT = ("Metadata", "Object", "None")
_PROPAGATION = ("Foreground", "Background", "Orphan")
_TOKEN_VERSION = "meta.k8s.io/v1"
_INT = re.compile(r"[+-]?[0-9]+")
_UINT = re.compile(r"[0-9]+")

# ---- list options ----------------------------------------------------------------------


@dataclass(frozen=True)
class ListOptions:
    """The parsed options; selectors are None when absent or empty (they match everything).

    ``continue_rv``/``continue_key`` are the decoded ``continue`` token: the list's
    resourceVersion (-1: "the latest", after expiry) and the (namespace, name) of the last
    item already served.
    """

    label_selector: LabelSelector | None = None
    field_selector: FieldSelector | None = None
    limit: int = 0
    continue_token: str = ""
    continue_rv: int | None = None
    continue_key: tuple[str, str] | None = None
    resource_version: str = ""
    resource_version_match: str = ""
    watch: bool = False
    allow_watch_bookmarks: bool = False
    timeout_seconds: int | None = None
    send_initial_events: bool | None = None
    include_object: str = "Metadata"


def _bool(value: str) -> bool:
    # Upstream's Convert_Slice_string_To_bool: only "0" and "false" (any case) are false.
    return not (value == "0" or value.lower() == "false")


def _int64(query: Mapping[str, str], name: str) -> int | None:
    raw = query.get(name)
    if raw is None:
        return None
    if not _INT.fullmatch(raw) or not -(2**63) <= int(raw) < 2**63:
        raise BadRequest(f"{name}: {json.dumps(raw)} is not an integer")
    return int(raw)


def _parse_rv(rv: str) -> int | None:
    """The resourceVersion as a number (None when unset), refused as upstream's storage does."""
    if rv == "":
        return None
    if _UINT.fullmatch(rv) and int(rv) < 2**64:
        return int(rv)
    why = "value out of range" if _UINT.fullmatch(rv) else "invalid syntax"
    raise BadRequest(
        f"invalid resource version: resourceVersion: Invalid value: {json.dumps(rv)}: "
        f"strconv.ParseUint: parsing {json.dumps(rv)}: {why}"
    )


def _invalid(kind: str, errs: Sequence[Cause]) -> Invalid:
    """apimachinery's NewInvalid: ``<Kind>.meta.k8s.io "" is invalid: <field: message, ...>``."""
    msgs = list(dict.fromkeys(f"{c.field}: {c.message}" for c in errs))
    detail = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    return Invalid(f'{kind}.meta.k8s.io "" is invalid: {detail}', tuple(errs))


def _forbidden(field: str, detail: str) -> Cause:
    return Cause("FieldValueForbidden", f"Forbidden: {detail}", field)


def _not_supported(field: str, value: str, allowed: Sequence[str]) -> Cause:
    supported = ", ".join(json.dumps(a) for a in allowed)
    return Cause(
        "FieldValueNotSupported", f"Unsupported value: {json.dumps(value)}: supported values: {supported}", field
    )


def _validate(opts: ListOptions) -> None:
    """Upstream's ValidateListOptions with the WatchList feature on (kubemu streams lists)."""
    errs: list[Cause] = []
    match, rvm = opts.resource_version_match, "resourceVersionMatch"
    if opts.watch:
        if opts.send_initial_events is not None and match != "NotOlderThan":
            errs.append(_forbidden(rvm, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
        if match:
            if opts.send_initial_events is None:
                errs.append(
                    _forbidden(rvm, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
                )
            if match != "NotOlderThan":
                errs.append(_not_supported(rvm, match, ["NotOlderThan"]))
            if opts.continue_token:
                errs.append(_forbidden(rvm, "resourceVersionMatch is forbidden when continue is provided"))
    else:
        if match:
            if not opts.resource_version:
                errs.append(_forbidden(rvm, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
            if opts.continue_token:
                errs.append(_forbidden(rvm, "resourceVersionMatch is forbidden when continue is provided"))
            if match not in ("Exact", "NotOlderThan"):
                errs.append(_not_supported(rvm, match, ["Exact", "NotOlderThan", ""]))
            if match == "Exact" and opts.resource_version == "0":
                errs.append(_forbidden(rvm, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        if opts.send_initial_events is not None:
            errs.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    if errs:
        raise _invalid("ListOptions", errs)


def _decode_query(query: Mapping[str, str]) -> tuple[ListOptions, list[Term]]:
    """Decode each parameter on its own (upstream's DecodeParameters): BadRequest on a bad value."""
    labels = None
    if query.get("labelSelector"):
        try:
            sel = LabelSelector.parse(query["labelSelector"])
        except SelectorError as e:
            raise BadRequest(str(e)) from None
        labels = None if sel.empty else sel
    terms = parse_terms(query.get("fieldSelector", ""))
    sie = query.get("sendInitialEvents")
    opts = ListOptions(
        label_selector=labels,
        limit=max(0, _int64(query, "limit") or 0),  # upstream pages only when limit > 0
        continue_token=query.get("continue", ""),
        resource_version=query.get("resourceVersion", ""),
        resource_version_match=query.get("resourceVersionMatch", ""),
        watch=_bool(query["watch"]) if "watch" in query else False,
        allow_watch_bookmarks=_bool(query["allowWatchBookmarks"]) if "allowWatchBookmarks" in query else False,
        timeout_seconds=_int64(query, "timeoutSeconds"),
        send_initial_events=None if sie is None else _bool(sie),
        include_object=query.get("includeObject") or "Metadata",
    )
    return opts, terms


def parse_list_options(query: Mapping[str, str], kind: str, seed: bytes | str = DEFAULT_SEED) -> ListOptions:
    """Parse the query of a list, watch or get of ``kind``, checked in upstream's order.

    BadRequest for a bad value, an unknown field label, a bad continue token or a continue
    token with a resourceVersion; Invalid (422) for a bad combination of options. ``seed``
    must be the one ``paginate`` signed the continue tokens with.
    """
    opts, terms = _decode_query(query)
    _validate(opts)
    fields = FieldSelector(terms, kind) if terms else None
    if opts.include_object not in _INCLUDE_OBJECT:
        # Upstream checks this only when it renders a Table; kubemu checks every request.
        raise BadRequest(
            "Unable to convert to Table as requested: includeObject: Invalid value: "
            f"{json.dumps(opts.include_object)}: must be 'Metadata', 'Object', 'None', or empty"
        )
    cont_rv: int | None = None
    cont_key: tuple[str, str] | None = None
    if opts.continue_token and not opts.watch:
        cont_rv, cont_key = _decode_continue(opts.continue_token, seed)
        if opts.resource_version not in ("", "0"):
            raise BadRequest("specifying resource version is not allowed when using continue")
    else:
        _parse_rv(opts.resource_version)
    return replace(opts, field_selector=fields, continue_rv=cont_rv, continue_key=cont_key)


def matches(obj: Mapping[str, Any], opts: ListOptions) -> bool:
    """Does ``obj`` pass the label selector (on metadata.labels) and the field selector?"""
    if opts.label_selector is not None:
        meta = obj.get("metadata")
        if not opts.label_selector.matches(meta.get("labels") if isinstance(meta, dict) else None):
            return False
    return opts.field_selector is None or opts.field_selector.matches(obj)


# ---- pagination ------------------------------------------------------------------------


def _mac(body: Mapping[str, Any], seed: bytes | str) -> str:
    key = seed.encode() if isinstance(seed, str) else seed
    payload = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    return hmac.new(key, payload, hashlib.sha256).hexdigest()[:32]


def _encode_continue(rv: int, last: tuple[str, str], seed: bytes | str) -> str:
    # Upstream's token is base64url JSON {"v", "rv", "start"}; ours adds an HMAC so a
    # hand-made or edited token is refused instead of silently listing from anywhere.
    body: dict[str, Any] = {"v": _TOKEN_VERSION, "rv": rv, "start": list(last)}
    body["mac"] = _mac(body, seed)
    raw = json.dumps(body, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _decode_continue(token: str, seed: bytes | str) -> tuple[int, tuple[str, str]]:
    def bad(why: str) -> BadRequest:
        return BadRequest(f"invalid continue token: continue key is not valid{why}")

    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_", validate=True)
        body = json.loads(raw)
    except ValueError as e:  # binascii.Error, UnicodeError and JSONDecodeError all are
        raise bad(f": {e}") from None
    if not isinstance(body, dict) or set(body) != {"v", "rv", "start", "mac"}:
        raise bad(": unexpected fields")
    mac = body.pop("mac")
    if not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(body, seed)):
        raise bad(": the token was not issued by this server")
    if body["v"] != _TOKEN_VERSION:
        raise bad(f": server does not recognize this encoded version {body['v']}")
    rv, start = body["rv"], body["start"]
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0:
        raise bad(": incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not (isinstance(start, list) and len(start) == 2 and all(isinstance(s, str) for s in start)) or not start[1]:
        raise bad(": encoded start key empty (version meta.k8s.io/v1)")
    return max(rv, -1), (start[0], start[1])


def _item_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return ("", "")
    return (meta.get("namespace") or "", meta.get("name") or "")


def list_resource_version(opts: ListOptions, current_rv: int) -> int:
    """The resourceVersion a page reports: the first page's for a continued list (as
    upstream, so every page of one list agrees), else ``current_rv``."""
    return opts.continue_rv if opts.continue_rv is not None and opts.continue_rv > 0 else current_rv


def paginate(
    items: list[Any], opts: ListOptions, list_rv: int, seed: bytes | str = DEFAULT_SEED
) -> tuple[list[Any], str, int | None]:
    """One page of ``items`` (the matching objects, sorted by (namespace, name)).

    Returns (page, continue token or "", remainingItemCount). The page starts after the
    continue token's key and holds at most ``opts.limit`` items (all when 0). Like
    upstream, remainingItemCount is given only with a token and only when the list has no
    selector. The token carries the list's resourceVersion: the continued token's when
    there is one, else ``list_rv``.
    """
    start = 0
    if opts.continue_key is not None:
        start = bisect.bisect_right(items, opts.continue_key, key=_item_key)
    if opts.limit <= 0 or start + opts.limit >= len(items):
        return items[start:], "", None
    end = start + opts.limit
    page = items[start:end]
    token = _encode_continue(list_resource_version(opts, list_rv), _item_key(page[-1]), seed)
    unselected = opts.label_selector is None and opts.field_selector is None
    return page, token, (len(items) - end if unselected else None)


class ContinueExpired(Expired):
    """410 for a continue token older than the server's history. Its Status carries, in
    ``metadata.continue``, a token that continues the same list from the current state."""

    def __init__(self, message: str, continue_token: str = "", causes: tuple[Cause, ...] = ()) -> None:
        super().__init__(message, causes)
        self.continue_token = continue_token

    def _extra(self) -> dict[str, Any]:
        return {"continue_token": self.continue_token}

    def status(self) -> dict[str, Any]:
        out = super().status()
        if self.continue_token:
            out["metadata"] = {"continue": self.continue_token}
        return out


_INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)


def check_continue(opts: ListOptions, oldest_rv: int, seed: bytes | str = DEFAULT_SEED) -> None:
    """Raise ContinueExpired when the continue token's list is older than ``oldest_rv``, the
    oldest resourceVersion the caller still serves (upstream: the etcd compaction point)."""
    if opts.continue_rv is None or opts.continue_key is None or opts.continue_rv < 0:
        return  # no token, or one that already continues from the latest state
    if opts.continue_rv < oldest_rv:
        # rv -1 is upstream's "continue from the latest state" (handleCompactedErrorForPaging).
        raise ContinueExpired(_INCONSISTENT_CONTINUE, _encode_continue(-1, opts.continue_key, seed))


# ---- watch -----------------------------------------------------------------------------


def watch_start(opts: ListOptions, current_rv: int) -> int | None:
    """Where a watch starts. None: send the current state as synthetic ADDED events first
    (resourceVersion unset or "0", or sendInitialEvents=true); else the resourceVersion to
    send events after (``current_rv`` for sendInitialEvents=false without a version).
    """
    rv = _parse_rv(opts.resource_version)
    if opts.send_initial_events is True:
        return None
    if opts.send_initial_events is False:
        return rv or current_rv
    return rv or None


# ---- delete options --------------------------------------------------------------------


def _delete_from_query(query: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    grace = _int64(query, "gracePeriodSeconds")
    if grace is not None:
        out["gracePeriodSeconds"] = grace
    if "propagationPolicy" in query:
        out["propagationPolicy"] = query["propagationPolicy"]
    if "orphanDependents" in query:
        out["orphanDependents"] = _bool(query["orphanDependents"])
    return out


_JSON_TYPE: dict[str, type] = {"an integer": int, "a string": str, "a boolean": bool, "an object": dict}
_BODY = {
    "gracePeriodSeconds": "an integer",
    "propagationPolicy": "a string",
    "orphanDependents": "a boolean",
    "preconditions": "an object",
}


def _check_body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or body.get("kind") not in (None, "", "DeleteOptions"):
        raise BadRequest("decoded object cannot be converted to DeleteOptions")
    checks = [(name, body.get(name), what) for name, what in _BODY.items()]
    if isinstance(body.get("preconditions"), dict):
        checks += [(f"preconditions.{k}", v, "a string") for k, v in body["preconditions"].items()]
    for name, value, what in checks:
        if value is not None and type(value) is not _JSON_TYPE[what]:  # exactly: a bool is no integer
            raise BadRequest(f"{name}: {json.dumps(value)} is not {what}")
    return body


def delete_options(query: Mapping[str, str], body: dict[str, Any] | None) -> tuple[int | None, str, dict[str, str]]:
    """(gracePeriodSeconds, propagationPolicy, preconditions) of a DELETE (or an eviction's
    deleteOptions).

    As upstream's delete handler: a request with a body takes its options from the body
    alone and ignores the query; only a body-less one (``body`` None) reads the query.
    A negative grace period means 1 second (upstream's BeforeDelete); None means the
    kind's default. The policy is "" when unset; orphanDependents=true reads as "Orphan",
    false as "Background". preconditions holds the ``uid``/``resourceVersion`` given.
    """
    opts = _delete_from_query(query) if body is None else _check_body(body)
    policy, orphan = opts.get("propagationPolicy"), opts.get("orphanDependents")
    errs: list[Cause] = []
    if orphan is not None and policy is not None:
        both = f"Invalid value: {json.dumps(policy)}: orphanDependents and deletionPropagation cannot be both set"
        errs.append(Cause("FieldValueInvalid", both, "propagationPolicy"))
    if policy is not None and policy not in _PROPAGATION:
        errs.append(_not_supported("propagationPolicy", policy, [*_PROPAGATION, "nil"]))
    if errs:
        raise _invalid("DeleteOptions", errs)
    if orphan is not None:
        policy = "Orphan" if orphan else "Background"
    grace = opts.get("gracePeriodSeconds")
    if grace is not None and grace < 0:
        grace = 1
    pre = {k: v for k, v in (opts.get("preconditions") or {}).items() if k in ("uid", "resourceVersion") and v}
    return grace, policy or "", pre


_OPTIONS_OF = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


def dry_run(method: str, query: Mapping[str, str], body_value: Any = None) -> bool:
    """Whether a write is a dry run: ``dryRun=All`` in the query or, for a DELETE or an
    eviction, ``"dryRun": ["All"]`` in its options. "" or nothing means a real write; any
    other value is upstream's 422 naming the verb's options kind."""
    values: list[Any] = [query["dryRun"]] if "dryRun" in query else []
    if body_value is not None:
        if not isinstance(body_value, list) or not all(isinstance(v, str) for v in body_value):
            raise BadRequest(f"dryRun: {json.dumps(body_value)} is not a list of strings")
        if values and [v for v in values if v] != body_value:
            raise BadRequest(f"Non-matching dry-run options in request and content: {values} and {body_value}")
        values = body_value
    values = [v for v in values if v]
    bad = [v for v in values if v != "All"]
    if bad:
        shown = "[]string{" + ", ".join(json.dumps(v) for v in values) + "}"
        cause = Cause("FieldValueNotSupported", f'Unsupported value: {shown}: supported values: "All"', "dryRun")
        raise _invalid(_OPTIONS_OF.get(method, "CreateOptions"), [cause])
    return bool(values)
