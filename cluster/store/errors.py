"""API errors with the HTTP code and reason upstream would return.

Every failure the apiserver reports is one of these; ``retryable`` tells a caller whether
trying again can help (a Conflict after a re-read can; an Invalid object never will).
"""

from __future__ import annotations


class APIError(Exception):
    code = 500
    reason = "InternalError"
    retryable = True

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def as_tuple(self) -> tuple[int, str, str]:
        return (self.code, self.reason, self.message)

    def __str__(self) -> str:
        return self.message


class NotFound(APIError):
    code, reason, retryable = 404, "NotFound", False


class AlreadyExists(APIError):
    code, reason, retryable = 409, "AlreadyExists", False


class Conflict(APIError):
    code, reason, retryable = 409, "Conflict", True


class Invalid(APIError):
    code, reason, retryable = 422, "Invalid", False


class Forbidden(APIError):
    code, reason, retryable = 403, "Forbidden", False


class TooManyRequests(APIError):
    code, reason, retryable = 429, "TooManyRequests", True


class Expired(APIError):
    """The watch window no longer holds the requested resourceVersion: relist, then watch."""

    code, reason, retryable = 410, "Expired", True


def from_tuple(t: tuple[int, str, str]) -> APIError:
    for cls in (NotFound, AlreadyExists, Conflict, Invalid, Forbidden, TooManyRequests, Expired):
        if cls.reason == t[1]:
            return cls(t[2])
    err = APIError(t[2])
    err.code, err.reason = t[0], t[1]
    return err
