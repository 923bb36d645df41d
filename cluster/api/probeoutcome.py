"""What an emulated container's probes answer, and how long its lifecycle hooks take.

Owns the grammar of the ``kubemu.io/readiness``, ``kubemu.io/liveness`` and
``kubemu.io/startup`` annotations (each optionally suffixed ``.<container>``, which wins
over the pod-wide one) and of ``kubemu.io/post-start-seconds`` and
``kubemu.io/pre-stop-seconds``. No container runs, so a probe's answer is declared as a
function of the time since the container started:

| value              | the probe answers |
|--------------------|-------------------|
| ``pass`` (default) | success, always |
| ``fail``           | failure, always |
| ``fail-after=30s`` | success until 30 s after the start, failure from then on |
| ``pass-after=20s`` | failure until 20 s after the start, success from then on |
| ``flap=30s/10s``   | success for 30 s, failure for 10 s, over and over from the start |
| ``timeout``        | nothing: the probe fails once its ``timeoutSeconds`` run out |

Without an annotation a probe passes, except an ``httpGet`` probe of a container whose
image is a static server kubemu knows (httpd, nginx: ``containerfiles.py``), on its port:
that one asks the container's files (a file under the docroot: 200, success; else 404,
failure), so a ``kubectl exec`` that moves the file away makes the container unready at its
next period. An annotation, when given, always wins (``ALWAYS_PASS`` is the one outcome
that stands for "none declared").

Durations are written as scenarios write them (``30s``, ``2m``, ``1m30s``, or seconds).
The kubelet (``cluster/kubelet/probes.py``) reads them through ``outcome_for`` and
``hook_seconds``; validation calls ``check`` so a bad value is refused at create.
"""

from __future__ import annotations

from typing import Any

from .annotations import POST_START_SECONDS, PRE_STOP_SECONDS, AnnotationError
from .durations import parse_duration

PASS, FAIL, FAIL_AFTER, PASS_AFTER, FLAP, TIMEOUT = "pass", "fail", "fail-after", "pass-after", "flap", "timeout"
_FORMS = "pass, fail, fail-after=<duration>, pass-after=<duration>, flap=<pass duration>/<fail duration>, timeout"


class Outcome:
    """A declared probe answer; ``answer(since)`` is True (success), False (failure) or
    None (no answer: a timeout) for a probe run ``since`` seconds after the start."""

    __slots__ = ("form", "a", "b")

    def __init__(self, form: str, a: float = 0.0, b: float = 0.0):
        self.form, self.a, self.b = form, a, b

    def answer(self, since: float) -> bool | None:
        form = self.form
        if form == PASS:
            return True
        if form == FAIL:
            return False
        if form == TIMEOUT:
            return None
        if form == FAIL_AFTER:
            return since < self.a
        if form == PASS_AFTER:
            return since >= self.a
        return (since % (self.a + self.b)) < self.a  # FLAP

    def steady(self, since: float) -> bool | None | str:
        """The answer every probe from ``since`` on gets, or ``"changes"`` when it still changes."""
        if self.form == FLAP or (self.form in (FAIL_AFTER, PASS_AFTER) and since < self.a):
            return "changes"
        return self.answer(since)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Outcome) and (self.form, self.a, self.b) == (other.form, other.a, other.b)

    def __hash__(self) -> int:
        return hash((self.form, self.a, self.b))

    def __repr__(self) -> str:
        return f"Outcome({self.form!r}, {self.a}, {self.b})"


ALWAYS_PASS = Outcome(PASS)  # what no annotation declares (compared by identity: see the docstring)


def parse_outcome(key: str, raw: Any) -> Outcome:
    """The outcome ``raw`` declares; raises AnnotationError naming ``key`` and the value."""
    if not isinstance(raw, str):
        raise AnnotationError(key, raw, f"is not a probe outcome (one of: {_FORMS})")
    text = raw.strip()
    if text in (PASS, FAIL, TIMEOUT):
        return Outcome(text)
    form, eq, arg = text.partition("=")
    if not eq or form not in (FAIL_AFTER, PASS_AFTER, FLAP):
        raise AnnotationError(key, raw, f"is not a probe outcome (one of: {_FORMS})")
    try:
        if form != FLAP:
            return Outcome(form, parse_duration(arg.strip()))
        up, slash, down = arg.partition("/")
        if not slash:
            raise ValueError("flap needs two durations")
        a, b = parse_duration(up.strip()), parse_duration(down.strip())
    except ValueError:
        raise AnnotationError(key, raw, f"is not a probe outcome (one of: {_FORMS})") from None
    if a <= 0 or b <= 0:
        raise AnnotationError(key, raw, "flap durations must both be greater than 0")
    return Outcome(FLAP, a, b)


def hook_seconds(key: str, raw: Any) -> float:
    """A hook's declared time in seconds; raises AnnotationError for a bad one."""
    try:
        value = parse_duration(raw)
    except ValueError:
        raise AnnotationError(key, raw, "is not a duration (use e.g. 5, 5s, 1m30s)") from None
    if value == float("inf"):
        raise AnnotationError(key, raw, "must be a finite duration")
    return value


def check(key: str, raw: Any) -> None:
    """Validate one probe or hook annotation value (``key`` is the pod-wide key)."""
    if key in (POST_START_SECONDS, PRE_STOP_SECONDS):
        hook_seconds(key, raw)
    else:
        parse_outcome(key, raw)


def outcome_for(annotations: dict[str, Any], key: str, container: str) -> Outcome:
    """The outcome of ``container``'s probe: its own annotation, else the pod's, else pass."""
    raw = annotations.get(f"{key}.{container}", annotations.get(key))
    return ALWAYS_PASS if raw is None else parse_outcome(key, raw)


def hook_for(annotations: dict[str, Any], key: str, container: str) -> float:
    raw = annotations.get(f"{key}.{container}", annotations.get(key))
    return 0.0 if raw is None else hook_seconds(key, raw)
