"""Eviction thresholds from a kubelet configuration (upstream's ParseThresholdConfig).

Owns the parsing and validation of the upstream KubeletConfiguration eviction keys
(``evictionHard``, ``evictionSoft``, ``evictionSoftGracePeriod``, ``evictionMinimumReclaim``,
``evictionMaxPodGracePeriod``, ``evictionPressureTransitionPeriod``, ``enforceNodeAllocatable``)
into an immutable ``EvictionConfig``, and the upstream ``Quantity.String()`` spelling the
eviction message uses. ``EvictionManager`` (``eviction.py``) consumes the config; the
kubelet builds it once per node from ``NodeConfig.kubelet``.

Rules (upstream's, except where marked kubemu):
- a value ending in ``%`` is a percentage of the signal's capacity; exactly ``"0%"`` and
  ``"100%"`` are ignored (no threshold); others must lie in [0%, 100%]. Upstream keeps the
  fraction as a float32 and a threshold amount is ``int(capacity * fraction)``; kubemu
  rounds the fraction to float32 the same way, so amounts match upstream to the byte.
- any other value is a quantity and must be > 0; inode and pid counts are plain integers.
- every soft threshold needs a grace period; a threshold whose grace period is 0 is hard.
- a minimum reclaim percentage must be > 0, a minimum reclaim quantity >= 0.
- no ``evictionHard`` key: upstream's Linux defaults. A given ``evictionHard`` replaces the
  defaults wholesale, EXCEPT (kubemu) that ``memory.available`` keeps its 100Mi default when
  the map does not name it, exactly as ``NodeConfig.eviction_hard`` does, so that the
  threshold evicting pods is the one subtracted from allocatable. ``"0%"`` disables it.
- ``enforceNodeAllocatable`` (default ``["pods"]``; options ``pods``, ``system-reserved``,
  ``kube-reserved``, or ``none`` alone) containing ``pods`` copies every hard
  ``memory.available`` threshold to ``allocatableMemory.available``.
- durations use kubemu's scenario syntax (``30s``, ``5m``, ``1m30s``, or bare seconds),
  a superset of Go's for these values.

Every error is an ``EvictionConfigError`` whose one-line message names the field path and
the offending value.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass, replace

from ..api.durations import parse_duration
from ..api.quantity import QuantityError, parse

MEMORY_AVAILABLE = "memory.available"
ALLOCATABLE_MEMORY_AVAILABLE = "allocatableMemory.available"
NODEFS_AVAILABLE = "nodefs.available"
NODEFS_INODES_FREE = "nodefs.inodesFree"
IMAGEFS_AVAILABLE = "imagefs.available"
IMAGEFS_INODES_FREE = "imagefs.inodesFree"
PID_AVAILABLE = "pid.available"

# Also kubemu's deterministic eviction order of thresholds (upstream sorts memory first
# and leaves the rest in an unspecified order).
SIGNALS = (
    MEMORY_AVAILABLE,
    ALLOCATABLE_MEMORY_AVAILABLE,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE,
    PID_AVAILABLE,
)

DEFAULT_EVICTION_HARD = {
    MEMORY_AVAILABLE: "100Mi",
    NODEFS_AVAILABLE: "10%",
    NODEFS_INODES_FREE: "5%",
    IMAGEFS_AVAILABLE: "15%",
    IMAGEFS_INODES_FREE: "5%",  # upstream since v1.30
}
DEFAULT_PRESSURE_TRANSITION_PERIOD = 300.0
DEFAULT_ENFORCE_NODE_ALLOCATABLE = ("pods",)
# Upstream's options; kubemu models no system or kube reserved cgroup, so only "pods" acts.
ENFORCE_NODE_ALLOCATABLE_OPTIONS = ("pods", "system-reserved", "kube-reserved", "none")

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"


class EvictionConfigError(ValueError):
    """A kubelet eviction setting upstream would refuse at startup."""


# ---- upstream Quantity.String() -------------------------------------------------------------


def _decimal_string(amount: int, style: str) -> str:
    if amount == 0:
        return "0"
    mantissa, exponent = abs(amount), 0
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    # Canonical decimal forms use exponents that are multiples of three.
    shift = exponent % 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    sign = "-" if amount < 0 else ""
    if style == DECIMAL_EXPONENT:
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{mantissa}{_DECIMAL_SUFFIXES.get(exponent, f'e{exponent}')}"


def quantity_string(amount: int, style: str = BINARY_SI) -> str:
    """How upstream prints an integer quantity of the given format: 100Mi, 1500, 1k, 2e3."""
    if style != BINARY_SI or -1024 < amount < 1024:  # below 1Ki upstream prints decimal
        return _decimal_string(amount, style)
    mantissa, exponent = abs(amount), 0
    while mantissa % 1024 == 0 and exponent < len(_BINARY_SUFFIXES) - 1:
        mantissa //= 1024
        exponent += 1
    return f"{'-' if amount < 0 else ''}{mantissa}{_BINARY_SUFFIXES[exponent]}"


def declared_format(raw: str | int | float) -> str:
    """The format upstream's parser records for a declared quantity (from its suffix)."""
    if not isinstance(raw, str):
        return DECIMAL_SI
    suffix = re.sub(r"^[+-]?[0-9.]*", "", raw.strip())
    if suffix in _BINARY_SUFFIXES[1:]:
        return BINARY_SI
    return DECIMAL_EXPONENT if len(suffix) > 1 and suffix[0] in "eE" else DECIMAL_SI


def declared_string(raw: str | int | None) -> str:
    """Upstream's ``String()`` of a quantity as written in a spec; None prints as 0."""
    if raw is None:
        return "0"
    value = parse(raw)
    if value.denominator != 1:
        return str(raw)  # fractional byte counts do not occur in practice; keep the text
    return quantity_string(int(value), declared_format(raw))


# ---- values ---------------------------------------------------------------------------------


def _float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


@dataclass(frozen=True, slots=True)
class ThresholdValue:
    """An absolute amount, or a fraction of the signal's capacity (upstream ThresholdValue)."""

    quantity: int | None = None
    fraction: float = 0.0  # float32-rounded, as upstream stores it
    text: str = ""  # upstream's String() of the quantity ("" for a percentage)

    def amount(self, capacity: int) -> int:
        """Upstream GetThresholdQuantity."""
        if self.quantity is not None:
            return self.quantity
        return int(float(capacity) * self.fraction)

    def display(self, capacity: int) -> str:
        """The threshold amount as the eviction message prints it."""
        return self.text if self.quantity is not None else quantity_string(self.amount(capacity))

    def __str__(self) -> str:
        return self.text if self.quantity is not None else f"{self.fraction * 100:g}%"


@dataclass(frozen=True, slots=True)
class Threshold:
    signal: str
    value: ThresholdValue
    grace_period: float = 0.0  # seconds; 0 means hard
    min_reclaim: ThresholdValue | None = None

    @property
    def hard(self) -> bool:
        return self.grace_period == 0

    def describe(self) -> str:
        """For reports: ``memory.available<100Mi`` plus the grace period of a soft threshold."""
        grace = "" if self.hard else f" for {self.grace_period:g}s"
        return f"{self.signal}<{self.value}{grace}"


@dataclass(frozen=True, slots=True)
class EvictionConfig:
    thresholds: tuple[Threshold, ...]
    max_pod_grace_period: int = 0
    pressure_transition_period: float = DEFAULT_PRESSURE_TRANSITION_PERIOD


# ---- parsing --------------------------------------------------------------------------------


def _show(value) -> str:
    return json.dumps(value, default=str)


def _fail(path: str, message: str) -> EvictionConfigError:
    return EvictionConfigError(f"kubelet.{path}: {message}")


def _percentage(path: str, raw: str) -> float:
    number = raw.rstrip("%")
    if not _NUMBER.fullmatch(number):
        raise _fail(path, f"{_show(raw)} is not a quantity or percentage")
    pct = float(number)
    if not 0 <= pct <= 100:
        raise _fail(path, f"{_show(raw)} must be between 0% and 100%")
    return _float32(_float32(pct) / 100)


def _quantity(path: str, raw) -> ThresholdValue:
    try:
        value = parse(raw)
    except QuantityError:
        raise _fail(path, f"{_show(raw)} is not a quantity or percentage") from None
    return ThresholdValue(quantity=math.ceil(value), text=declared_string(raw))


def _signal_map(kubelet: dict, key: str) -> dict:
    section = kubelet.get(key)
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise _fail(key, f"{_show(section)} is not a mapping of eviction signal to value")
    for signal in section:
        if signal not in SIGNALS:
            raise _fail(key, f"unsupported eviction signal {_show(signal)}")
    return section


def parse_threshold_value(path: str, raw) -> ThresholdValue | None:
    """A threshold statement's value; None when upstream ignores it ("0%" and "100%")."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise _fail(path, f"{_show(raw)} is not a quantity or percentage")
    if isinstance(raw, str) and raw.endswith("%"):
        if raw in ("0%", "100%"):
            return None
        return ThresholdValue(fraction=_percentage(path, raw))
    value = _quantity(path, raw)
    assert value.quantity is not None  # _quantity always sets it
    if value.quantity <= 0:
        raise _fail(path, f"{_show(raw)} must be positive")
    return value


def parse_min_reclaim(path: str, raw) -> ThresholdValue:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise _fail(path, f"{_show(raw)} is not a quantity or percentage")
    if isinstance(raw, str) and raw.endswith("%"):
        fraction = _percentage(path, raw)
        if fraction <= 0:
            raise _fail(path, f"{_show(raw)} must be a positive percentage")
        return ThresholdValue(fraction=fraction)
    value = _quantity(path, raw)
    assert value.quantity is not None  # _quantity always sets it
    if value.quantity < 0:
        raise _fail(path, f"{_show(raw)} must not be negative")
    return value


def _duration(path: str, raw) -> float:
    try:
        return parse_duration(raw)
    except ValueError:
        raise _fail(path, f"{_show(raw)} is not a duration (use e.g. 30s, 5m, 1m30s)") from None


def _statements(kubelet: dict, key: str, defaults: dict | None = None) -> list[tuple[str, ThresholdValue]]:
    given = _signal_map(kubelet, key)
    merged = {**(defaults or {}), **given}
    out = []
    for signal in SIGNALS:  # a fixed order keeps every later step deterministic
        if signal in merged:
            value = parse_threshold_value(f"{key}.{signal}", merged[signal])
            if value is not None:
                out.append((signal, value))
    return out


def _hard_defaults(kubelet: dict) -> dict:
    if kubelet.get("evictionHard") is None:
        return DEFAULT_EVICTION_HARD
    return {MEMORY_AVAILABLE: DEFAULT_EVICTION_HARD[MEMORY_AVAILABLE]}  # kubemu: see docstring


def _enforces_pods(kubelet: dict) -> bool:
    keys = kubelet.get("enforceNodeAllocatable", DEFAULT_ENFORCE_NODE_ALLOCATABLE)
    if not isinstance(keys, (list, tuple)):
        raise _fail("enforceNodeAllocatable", f"{_show(keys)} is not a list")
    for i, key in enumerate(keys):
        if key not in ENFORCE_NODE_ALLOCATABLE_OPTIONS:
            raise _fail(
                f"enforceNodeAllocatable[{i}]",
                f"{_show(key)} is not an option (valid: {', '.join(ENFORCE_NODE_ALLOCATABLE_OPTIONS)})",
            )
    if "none" in keys and len(keys) > 1:
        raise _fail(
            "enforceNodeAllocatable", f'{_show(list(keys))} may not contain other enforcements when "none" is specified'
        )
    return "pods" in keys


def _max_pod_grace(kubelet: dict) -> int:
    raw = kubelet.get("evictionMaxPodGracePeriod", 0)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise _fail("evictionMaxPodGracePeriod", f"{_show(raw)} is not a whole number of seconds >= 0")
    return raw


def parse_eviction_config(kubelet: dict | None) -> EvictionConfig:
    """The node's eviction settings from its kubelet configuration mapping."""
    kubelet = kubelet or {}
    hard = [Threshold(s, v) for s, v in _statements(kubelet, "evictionHard", _hard_defaults(kubelet))]
    graces = {
        s: _duration(f"evictionSoftGracePeriod.{s}", raw)
        for s, raw in _signal_map(kubelet, "evictionSoftGracePeriod").items()
    }
    soft_raw = _signal_map(kubelet, "evictionSoft")
    soft = []
    for signal, value in _statements(kubelet, "evictionSoft"):
        if signal not in graces:
            raise _fail(
                f"evictionSoft.{signal}",
                f"{_show(soft_raw[signal])}: grace period must be specified for the soft eviction threshold {signal}",
            )
        soft.append(Threshold(signal, value, grace_period=graces[signal]))
    reclaims = {
        s: parse_min_reclaim(f"evictionMinimumReclaim.{s}", raw)
        for s, raw in _signal_map(kubelet, "evictionMinimumReclaim").items()
    }
    thresholds = [replace(t, min_reclaim=reclaims.get(t.signal)) for t in hard + soft]
    if _enforces_pods(kubelet):
        thresholds += [
            replace(t, signal=ALLOCATABLE_MEMORY_AVAILABLE)
            for t in thresholds
            if t.signal == MEMORY_AVAILABLE and t.hard
        ]
    transition = _duration("evictionPressureTransitionPeriod", kubelet.get("evictionPressureTransitionPeriod", "5m"))
    return EvictionConfig(tuple(thresholds), _max_pod_grace(kubelet), transition)
