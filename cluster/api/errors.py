"""API errors: one small hierarchy mirroring the Kubernetes ``Status`` reasons.

Owns every failure the apiserver reports. Each error carries what a ``Status`` object
carries (HTTP code, reason, message, the field causes) and says whether retrying can help,
so no caller anywhere decides anything by reading a message. The apiserver raises them,
components receive them for their refused writes (``cluster/runtime/component.py``), and
the HTTP front end serves ``status()`` as it is.

| class               | code | reason             | retry helps |
|---------------------|------|--------------------|-------------|
| BadRequest          | 400  | BadRequest         | no          |
| Unauthorized        | 401  | Unauthorized       | no          |
| Forbidden           | 403  | Forbidden          | no          |
| NotFound            | 404  | NotFound           | no          |
| MethodNotAllowed    | 405  | MethodNotAllowed   | no          |
| NotAcceptable       | 406  | NotAcceptable      | no          |
| AlreadyExists       | 409  | AlreadyExists      | no          |
| Conflict            | 409  | Conflict           | yes (re-read first) |
| AlreadyAssigned     | 409  | Conflict           | no (a Conflict: the pod is bound) |
| Gone                | 410  | Gone               | yes (relist) |
| Expired             | 410  | Expired            | yes (relist) |
| RequestEntityTooLarge | 413 | RequestEntityTooLarge | no       |
| UnsupportedMediaType | 415 | UnsupportedMediaType | no         |
| Invalid             | 422  | Invalid            | no          |
| TooManyRequests     | 429  | TooManyRequests    | yes (later) |
| InternalError       | 500  | InternalError      | yes, unless the instance says no |
| ServiceUnavailable  | 503  | ServiceUnavailable | yes         |
| NotAttempted        | -    | NotAttempted       | yes         |

``NotAttempted`` is never served: it answers a create the apiserver skipped because an
earlier batch of the same slow start failed (``requests.Create.slow_start``).
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple


class Cause(NamedTuple):
    """One ``Status.details.causes`` entry: what is wrong with which field."""

    type: str  # FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, ...
    message: str
    field: str = ""


class StatusError(Exception):
    """The base of every API error; subclasses fix the code and reason."""

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"
    retryable: bool = True

    def __init__(self, message: str, causes: tuple[Cause, ...] = (), retryable: bool | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.causes = tuple(causes)
        if retryable is not None:
            self.retryable = retryable

    def __reduce__(self) -> tuple[Any, ...]:
        # Errors cross process boundaries (Ray pickles them): keep every field.
        return (_rebuild, (type(self), self.message, self.causes, self.retryable, self._extra()))

    def _extra(self) -> dict[str, Any]:
        return {}

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, StatusError)
            and (other.message, other.causes, other.retryable) == (self.message, self.causes, self.retryable)
        )

    def __hash__(self) -> int:
        return hash((type(self), self.message))

    def status(self) -> dict[str, Any]:
        """The Kubernetes ``Status`` object an HTTP client receives for this error."""
        out: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.causes:
            out["details"] = {
                "causes": [{"reason": c.type, "message": c.message, "field": c.field} for c in self.causes]
            }
        return out


def _rebuild(
    cls: type[StatusError], message: str, causes: tuple[Cause, ...], retryable: bool, extra: dict[str, Any]
) -> StatusError:
    err = cls.__new__(cls)
    StatusError.__init__(err, message, causes, retryable)
    err.__dict__.update(extra)
    return err


class BadRequest(StatusError):
    code, reason, retryable = 400, "BadRequest", False


class Unauthorized(StatusError):
    code, reason, retryable = 401, "Unauthorized", False


class Forbidden(StatusError):
    code, reason, retryable = 403, "Forbidden", False


class NotFound(StatusError):
    """``details`` (name, group, resource), when set, names what was missing as upstream's
    Status does: clients such as client-go read ``details.kind`` to tell which resource."""

    code, reason, retryable = 404, "NotFound", False
    details: dict[str, str] | None = None

    @classmethod
    def of(cls, resource: str, group: str, name: str) -> NotFound:
        """``<resource>[.<group>] "<name>" not found``, with upstream's details (whose
        ``kind`` is the plural resource, not the Kind)."""
        qualified = f"{resource}.{group}" if group else resource
        err = cls(f'{qualified} "{name}" not found')
        err.details = {"name": name, "group": group, "kind": resource} if group else {"name": name, "kind": resource}
        return err

    def _extra(self) -> dict[str, Any]:
        return {"details": self.details} if self.details else {}

    def status(self) -> dict[str, Any]:
        out = super().status()
        if self.details:
            out["details"] = dict(self.details)
        return out


class MethodNotAllowed(StatusError):
    code, reason, retryable = 405, "MethodNotAllowed", False


class NotAcceptable(StatusError):
    """No clause of the request's Accept header names a media type the server writes."""

    code, reason, retryable = 406, "NotAcceptable", False


class AlreadyExists(StatusError):
    code, reason, retryable = 409, "AlreadyExists", False


class Conflict(StatusError):
    """A precondition failed (resourceVersion, uid) or the object moved on: re-read and retry."""

    code, reason, retryable = 409, "Conflict", True


class AlreadyAssigned(Conflict):
    """The binding subresource's Conflict for a pod that already has a node. ``node`` names
    it, so a scheduler whose own earlier bind landed (a reply lost in an apiserver restart)
    can tell that from a bind another scheduler won."""

    retryable = False

    def __init__(self, message: str, node: str = "", causes: tuple[Cause, ...] = ()) -> None:
        super().__init__(message, causes)
        self.node = node

    def _extra(self) -> dict[str, Any]:
        return {"node": self.node}


class Gone(StatusError):
    code, reason, retryable = 410, "Gone", True


class Expired(Gone):
    """The watch window no longer holds the requested resourceVersion: relist, then watch."""

    reason = "Expired"


class RequestEntityTooLarge(StatusError):
    code, reason, retryable = 413, "RequestEntityTooLarge", False


class UnsupportedMediaType(StatusError):
    code, reason, retryable = 415, "UnsupportedMediaType", False


class Invalid(StatusError):
    code, reason, retryable = 422, "Invalid", False


class TooManyRequests(StatusError):
    code, reason, retryable = 429, "TooManyRequests", True


class InternalError(StatusError):
    code, reason, retryable = 500, "InternalError", True


class ServiceUnavailable(StatusError):
    code, reason, retryable = 503, "ServiceUnavailable", True


class NotAttempted(StatusError):
    """A create of a slow start that was not sent because an earlier batch failed (upstream's
    slowStartBatch stops there); the client may ask again at its next sync."""

    code, reason, retryable = 0, "NotAttempted", True
