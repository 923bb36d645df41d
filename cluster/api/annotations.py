"""The ``kubemu.io/`` pod annotations that declare how emulated containers behave.

Owns their names, defaults and parsing; the kubelet reads them through ``emulation`` and
validation calls the same parser so a bad value is refused at create time with its field
path. See the README's annotation table for the user-facing description.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

PREFIX = "kubemu.io/"
START_SECONDS = PREFIX + "start-seconds"
RUN_SECONDS = PREFIX + "run-seconds"
EXIT_CODE = PREFIX + "exit-code"
STOP_SECONDS = PREFIX + "stop-seconds"
MEMORY_USAGE = PREFIX + "memory-usage"
CPU_USAGE = PREFIX + "cpu-usage"
LOG = PREFIX + "log"  # text the emulated containers print (``containerlogs.py``)

# Probe outcomes and lifecycle-hook times (grammar: ``probeoutcome.py``; read by the kubelet).
READINESS, LIVENESS, STARTUP = PREFIX + "readiness", PREFIX + "liveness", PREFIX + "startup"
POST_START_SECONDS, PRE_STOP_SECONDS = PREFIX + "post-start-seconds", PREFIX + "pre-stop-seconds"
PROBE_KEYS = (READINESS, LIVENESS, STARTUP, POST_START_SECONDS, PRE_STOP_SECONDS)

# Whether the containers' images pull (``fail`` / ``pass``; read by ``cluster/kubelet/images.py``).
IMAGE_PULL = PREFIX + "image-pull"
IMAGE_PULL_VALUES = ("fail", "pass")

KNOWN = (START_SECONDS, RUN_SECONDS, EXIT_CODE, STOP_SECONDS, MEMORY_USAGE, CPU_USAGE, LOG, *PROBE_KEYS, IMAGE_PULL)


class AnnotationError(ValueError):
    def __init__(self, key: str, value: Any, message: str) -> None:
        super().__init__(message)
        self.key, self.value, self.message = key, value, message


_D = TypeVar("_D", float, None)


@dataclass(frozen=True)
class Emulation:
    start_seconds: float = 0.0
    run_seconds: float | None = None  # None: the containers run until stopped
    exit_code: int = 0
    stop_seconds: float = 0.0


def _seconds(annotations: dict[str, Any], key: str, default: _D) -> float | _D:
    raw = annotations.get(key)
    if raw is None:
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise AnnotationError(key, raw, "is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise AnnotationError(key, raw, "must be a finite number of seconds >= 0")
    return value


def emulation(pod: dict[str, Any]) -> Emulation:
    """How this pod's containers behave; raises AnnotationError for a bad annotation."""
    ann = (pod.get("metadata") or {}).get("annotations") or {}
    if not any(k.startswith(PREFIX) for k in ann):
        return _DEFAULT
    raw_exit = ann.get(EXIT_CODE, "0")
    try:
        exit_code = int(str(raw_exit))
    except ValueError:
        raise AnnotationError(EXIT_CODE, raw_exit, "is not an integer exit code") from None
    if not 0 <= exit_code <= 255:
        raise AnnotationError(EXIT_CODE, raw_exit, "must be between 0 and 255")
    return Emulation(
        start_seconds=_seconds(ann, START_SECONDS, 0.0),
        run_seconds=_seconds(ann, RUN_SECONDS, None),
        exit_code=exit_code,
        stop_seconds=_seconds(ann, STOP_SECONDS, 0.0),
    )


_DEFAULT = Emulation()
