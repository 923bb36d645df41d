"""Resource quantities with upstream Kubernetes parsing rules.

Owns the one place where strings such as ``250m``, ``64Mi``, ``1e3`` or ``1k`` become
numbers. Everything else in kubemu works on plain integers: CPU in millicores, every other
resource in whole units (bytes, pods, devices), rounded up the way upstream's
``Quantity.MilliValue()`` and ``Quantity.Value()`` round. Called by validation, by
``resources`` (pod and node resource vectors) and by the report for formatting.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = [
    "QuantityError",
    "parse",
    "to_milli",
    "to_units",
    "resource_int",
    "format_resource",
]


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity. Retrying never helps."""


# Upstream accepts a signed decimal number followed by one suffix: a binary SI suffix,
# a decimal SI suffix, or a decimal exponent (e/E followed by a signed integer).
_RE = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_EXP = re.compile(r"^[eE]([+-]?[0-9]+)$")
_CACHE: dict[str, Fraction] = {}


def parse(value: str | int | float) -> Fraction:
    """Exact value of a quantity; raises QuantityError for anything upstream rejects."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a quantity")
        return Fraction(str(value))
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity")
    hit = _CACHE.get(value)
    if hit is not None:
        return hit
    m = _RE.fullmatch(value)
    if not m:
        raise QuantityError(f"{value!r} is not a quantity")
    number, suffix = m.groups()
    base = Fraction(number)
    if suffix in _BINARY:
        result = base * _BINARY[suffix]
    elif suffix in _DECIMAL:
        result = base * _DECIMAL[suffix]
    else:
        em = _EXP.fullmatch(suffix)
        if not em or abs(int(em.group(1))) > 300:
            raise QuantityError(f"{value!r} is not a quantity")
        result = base * Fraction(10) ** int(em.group(1))
    if len(_CACHE) < 65536:
        _CACHE[value] = result
    return result


def to_milli(value: str | int | float) -> int:
    """Thousandths of the value, rounded up (upstream ``MilliValue``)."""
    return math.ceil(parse(value) * 1000)


def to_units(value: str | int | float) -> int:
    """The value in whole units, rounded up (upstream ``Value``)."""
    return math.ceil(parse(value))


_INT_CACHE: dict[tuple[bool, str], int] = {}


def resource_int(name: str, value: str | int | float) -> int:
    """The integer kubemu keeps for a resource: millicores for cpu, units otherwise."""
    cpu = name == "cpu"
    if not isinstance(value, str):
        return to_milli(value) if cpu else to_units(value)
    # Every pod of a workload repeats the same few strings; Fraction arithmetic per
    # request showed up as a tenth of a scheduling cycle.
    key = (cpu, value)
    hit = _INT_CACHE.get(key)
    if hit is None:
        hit = to_milli(value) if cpu else to_units(value)
        if len(_INT_CACHE) < 65536:
            _INT_CACHE[key] = hit
    return hit


def format_resource(name: str, amount: int) -> str:
    """A canonical string for an integer from ``resource_int``: ``250m``, ``4``, ``64Mi``."""
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    binary = name in ("memory", "ephemeral-storage") or name.startswith("hugepages-")
    if binary and amount and amount % 1024 == 0:
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            if amount % _BINARY[suffix] == 0:
                return f"{amount // _BINARY[suffix]}{suffix}"
    return str(amount)
