"""Emulated resource usage: what a container would consume, declared by annotations.

Owns the usage-profile syntax of the ``kubemu.io/memory-usage`` and ``kubemu.io/cpu-usage``
pod annotations, the profiles' values over time and the time a profile first exceeds a
limit. The kubelet reads profiles to decide OOM kills (a container whose memory passes its
limit) and to sample usage for eviction and the report; validation calls ``parse_usage``
so a bad value is refused at create time.

Syntax (memory in bytes, cpu in millicores; times from the container's start):

    300Mi                           constant
    ramp(100Mi, 1Gi, 60s)           from, to, over: linear from the start, then stays at ``to``
    spike(100Mi, 2Gi, 30s, 10s)     base, peak, at, for: ``peak`` from 30 s to 40 s, else ``base``

Amounts are Kubernetes quantities (``500m``, ``1.5``, ``64Mi``) and must be >= 0; times are
durations (``60s``, ``1m30s``, ``2m``, ``250ms`` or a bare number of seconds). A ramp down
(``to`` below ``from``) and a dip (``peak`` below ``base``) are allowed. Before the start a
profile has its starting value.

Which container uses what (docs/architecture.md §12): the pod-wide annotation applies to *each*
long-running container (sidecars and regular containers; init containers are not modelled
as running) and ``kubemu.io/memory-usage.<container>`` overrides it for one. A pod's usage
is the sum over its containers (``pod_usage``), so a single-container pod uses exactly the
annotated amount.

Values are exact (fractions) and rounded down to whole bytes or millicores only when read.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .annotations import CPU_USAGE, MEMORY_USAGE, AnnotationError
from .durations import parse_duration
from .quantity import QuantityError, parse

MEMORY, CPU = "memory", "cpu"
INF = math.inf

_CALL = re.compile(r"\s*([A-Za-z_]+)\s*\((.*)\)\s*", re.S)
_SHAPES = {"ramp": ("from", "to", "over"), "spike": ("base", "peak", "at", "for")}
_NOT_USAGE = "is not a quantity or a usage profile (ramp(...), spike(...))"


@dataclass(frozen=True)
class Piece:
    """Linear from ``v0`` at ``start`` towards ``v1`` at ``end`` (exclusive); flat when
    the two are equal. The last piece of a profile ends at infinity and is flat."""

    start: float
    end: float
    v0: Fraction
    v1: Fraction

    def exact(self, t: float) -> Fraction:
        if self.v0 == self.v1:
            return self.v0
        span = Fraction(self.end) - Fraction(self.start)
        return self.v0 + (self.v1 - self.v0) * (Fraction(t) - Fraction(self.start)) / span


@dataclass(frozen=True)
class Profile:
    resource: str  # MEMORY (bytes) or CPU (millicores)
    text: str  # as written, for messages
    pieces: tuple[Piece, ...]  # contiguous from 0; the first starts at 0

    def _piece(self, t: float) -> Piece:
        pieces = self.pieces
        if len(pieces) == 1 or t <= 0:
            return pieces[0]
        return pieces[bisect_right([p.start for p in pieces], t) - 1]

    def exact(self, seconds: float) -> Fraction:
        return self._piece(seconds).exact(max(seconds, 0.0))

    def at(self, seconds: float) -> int:
        """The usage ``seconds`` after the container started (bytes or millicores)."""
        return math.floor(self.exact(seconds))

    def next_change(self, seconds: float) -> float | None:
        """The next time after ``seconds`` where the value jumps or its slope changes
        (a ramp's end, a spike's start and end); None when it never changes again.
        Inside a ramp the value changes continuously: sample it, or use ``crossing_time``."""
        for p in self.pieces[1:]:
            if p.start > seconds:
                return p.start
        return None

    @property
    def constant(self) -> bool:
        return len(self.pieces) == 1


@dataclass(frozen=True)
class ContainerUsage:
    memory: Profile | None = None
    cpu: Profile | None = None


# ---- parsing ------------------------------------------------------------------------------


def _resource_of(key: str) -> str:
    for base, resource in ((MEMORY_USAGE, MEMORY), (CPU_USAGE, CPU)):
        if key == base or key.startswith(base + "."):
            return resource
    raise AnnotationError(key, key, f"is not a usage annotation ({MEMORY_USAGE} or {CPU_USAGE})")


def _amount(resource: str, raw: str) -> Fraction:
    value = parse(raw)  # QuantityError names the value
    if value < 0:
        raise ValueError("must be greater than or equal to 0")
    return value * 1000 if resource == CPU else value


def _seconds(raw: str) -> float:
    value = parse_duration(raw)
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a finite duration")
    return value


def _flat(v: Fraction) -> tuple[Piece, ...]:
    return (Piece(0.0, INF, v, v),)


def _shape(resource: str, name: str, args: list[str]) -> tuple[Piece, ...]:
    if name == "ramp":
        lo, hi, over = _amount(resource, args[0]), _amount(resource, args[1]), _seconds(args[2])
        if over == 0:
            return _flat(hi)
        return (Piece(0.0, over, lo, hi), Piece(over, INF, hi, hi))
    base, peak, at, length = (
        _amount(resource, args[0]),
        _amount(resource, args[1]),
        _seconds(args[2]),
        _seconds(args[3]),
    )
    if length == 0 or base == peak:
        return _flat(base)
    pieces = [Piece(at, at + length, peak, peak), Piece(at + length, INF, base, base)]
    if at > 0:
        pieces.insert(0, Piece(0.0, at, base, base))
    return tuple(pieces)


@lru_cache(maxsize=1024)
def _parse(resource: str, text: str) -> Profile:
    """The profile for ``text``; raises ValueError whose message follows the value."""
    m = _CALL.fullmatch(text)
    if m is None:
        try:
            return Profile(resource, text.strip(), _flat(_amount(resource, text.strip())))
        except QuantityError:
            raise ValueError(_NOT_USAGE) from None
    name, inner = m.group(1), m.group(2)
    params = _SHAPES.get(name)
    if params is None:
        raise ValueError(f"uses an unknown profile {name!r} (use ramp(from, to, over) or spike(base, peak, at, for))")
    args = [a.strip() for a in inner.split(",")]
    if len(args) != len(params):
        raise ValueError(f"has {len(args)} arguments; {name}({', '.join(params)}) takes {len(params)}")
    for param, arg in zip(params, args):
        try:
            _amount(resource, arg) if param not in ("over", "at", "for") else _seconds(arg)
        except QuantityError:
            raise ValueError(f"{name} argument {param}: {arg!r} is not a quantity") from None
        except ValueError as e:
            detail = str(e) if str(e).startswith(repr(arg)) else f"{arg!r} {e}"
            raise ValueError(f"{name} argument {param}: {detail}") from None
    return Profile(resource, text.strip(), _shape(resource, name, args))


def parse_usage(key: str, raw: object) -> Profile:
    """The profile an annotation declares; raises AnnotationError naming key and value."""
    resource = _resource_of(key)
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise AnnotationError(key, raw, _NOT_USAGE)
    try:
        return _parse(resource, str(raw))
    except ValueError as e:
        raise AnnotationError(key, raw, str(e)) from None


# ---- reading pods -------------------------------------------------------------------------


def _long_running(pod: dict[str, Any]) -> list[str]:
    """Containers that run for the pod's lifetime: sidecars, then regular containers."""
    spec = pod.get("spec") or {}
    sidecars = [c.get("name", "") for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    return sidecars + [c.get("name", "") for c in spec.get("containers") or ()]


def container_usage(pod: dict[str, Any]) -> dict[str, ContainerUsage]:
    """Per long-running container, its memory and cpu profiles (None where undeclared);
    raises AnnotationError for a bad annotation."""
    ann = (pod.get("metadata") or {}).get("annotations") or {}
    out = {}
    for name in _long_running(pod):
        profiles = []
        for base in (MEMORY_USAGE, CPU_USAGE):
            key = f"{base}.{name}"
            if key not in ann:
                key = base
            profiles.append(parse_usage(key, ann[key]) if key in ann else None)
        out[name] = ContainerUsage(*profiles)
    return out


def pod_usage(pod: dict[str, Any]) -> tuple[Profile | None, Profile | None]:
    """The pod's (memory, cpu) usage: the sum over its containers, None when none declares it."""
    per = container_usage(pod).values()
    return (total([u.memory for u in per if u.memory is not None]), total([u.cpu for u in per if u.cpu is not None]))


def total(profiles: list[Profile]) -> Profile | None:
    """The sum of profiles of one resource; None for an empty list."""
    if not profiles:
        return None
    if len(profiles) == 1:
        return profiles[0]
    bounds = sorted({p.start for prof in profiles for p in prof.pieces})
    pieces = []
    for i, a in enumerate(bounds):
        b = bounds[i + 1] if i + 1 < len(bounds) else INF
        holding = [prof._piece(a) for prof in profiles]
        v0 = sum((p.exact(a) for p in holding), Fraction(0))
        v1 = v0 if b == INF else sum((p.exact(b) for p in holding), Fraction(0))
        pieces.append(Piece(a, b, v0, v1))
    return Profile(profiles[0].resource, " + ".join(p.text for p in profiles), tuple(pieces))


# ---- limits -------------------------------------------------------------------------------


def crossing_time(profile: Profile, limit: int, since: float = 0.0) -> float | None:
    """The earliest time >= ``since`` (seconds after the container started) at which
    ``profile.at(t) > limit``, or None if that never happens."""
    if profile.at(since) > limit:
        return since
    target = Fraction(limit) + 1  # at() rounds down, so "above limit" means ">= limit + 1"
    for p in profile.pieces:
        if p.end <= since:
            continue
        a = max(p.start, since)
        if p.exact(a) >= target:
            return a
        if p.v1 > p.v0 and p.v1 >= target and p.end != INF:
            t = Fraction(p.start) + (target - p.v0) * (Fraction(p.end) - Fraction(p.start)) / (p.v1 - p.v0)
            if t < Fraction(p.end):
                return _float_at_or_after(max(t, Fraction(a)))
    return None


def _float_at_or_after(t: Fraction) -> float:
    """The smallest float not below ``t``, so that ``at()`` of the answer is already over."""
    f = float(t)
    return f if Fraction(f) >= t else math.nextafter(f, INF)
