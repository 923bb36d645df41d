"""Go's renderings and parse errors that upstream's field-validation messages embed.

Owns the texts a Go apiserver builds with the standard library: ``strconv.Quote``, ``fmt``'s
``%+v`` of a decoded map, ``encoding/json``'s compact output (sorted keys, HTML escaped), the
offset ``encoding/base64`` reports for bad data, ``time.Parse``'s errors for RFC 3339 and the
errors of ``resource.ParseQuantity``. Called by ``typeddecode.py`` and ``fieldvalidation.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def quote(s: str) -> str:
    """``strconv.Quote``: double quotes, backslash escapes, printable runes kept."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _float(f: float) -> str:
    """A float64 as both ``%v`` and encoding/json print one (shortest form)."""
    if f.is_integer() and abs(f) < 1e21:
        return str(int(f))
    text = repr(f)
    return re.sub(r"e([+-])0(\d)$", r"e\1\2", text) if "e" in text else text


def value(v: Any) -> str:
    """``fmt.Sprintf("%+v", v)`` of a value decoded into ``interface{}`` (maps print sorted)."""
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{value(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(value(x) for x in v) + "]"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _float(v)
    return str(v)


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return int(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)  # a YAML timestamp: JSON has only its text


def marshal(v: Any) -> str:
    """``json.Marshal`` of a decoded map: compact, keys sorted, ``<``, ``>``, ``&`` escaped."""
    text = json.dumps(_plain(v), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for raw, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, esc)
    return text


# ---- encoding/base64 ---------------------------------------------------------------------
# Standard base64 without blanks: what any encoder writes, and always decodes.
BASE64_PLAIN = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")
_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NL = (0x0A, 0x0D)


def base64_error(s: str) -> int | None:
    """Where ``base64.StdEncoding.Decode`` stops on ``s`` (``illegal base64 data at input byte
    <n>``), or None when it decodes. Newlines are skipped; trailing bits are not checked."""
    if BASE64_PLAIN.match(s):
        return None
    src = s.encode()
    n, si = len(src), 0
    while si < n:
        j = 0
        while j < 4:
            if si == n:
                return None if j == 0 else si - j
            c = src[si]
            si += 1
            if c in _ALPHABET:
                j += 1
            elif c in _NL:
                continue
            elif c != 0x3D or j < 2:  # not "=", or padding too early
                return si - 1
            else:
                return _after_padding(src, si, j)
    return None


def _after_padding(src: bytes, si: int, j: int) -> int | None:
    n = len(src)
    if j == 2:  # "==" expected: the first "=" is read
        while si < n and src[si] in _NL:
            si += 1
        if si == n:
            return n
        if src[si] != 0x3D:
            return si - 1
        si += 1
    while si < n and src[si] in _NL:
        si += 1
    return si if si < n else None  # anything after the padding is garbage


# ---- time.Parse --------------------------------------------------------------------------
RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
# The layouts' chunks: (prefix text, element) as time.Parse walks them.
_CHUNKS = {
    RFC3339: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"), ("", "Z07:00")),
    RFC3339_MICRO: (
        ("", "2006"),
        ("-", "01"),
        ("-", "02"),
        ("T", "15"),
        (":", "04"),
        (":", "05"),
        ("", ".000000"),
        ("", "Z07:00"),
    ),
}
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class _Bad(Exception):
    pass


_DIGITS = re.compile(r"[0-9]*")


def _ndigits(s: str, start: int = 0) -> int:
    m = _DIGITS.match(s, start)
    return len(m[0]) if m else 0


def _digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _num(s: str, fixed: bool) -> tuple[int, str]:
    """time's getnum: one or two digits (exactly two when ``fixed``)."""
    if not _digit(s, 0):
        raise _Bad
    if not _digit(s, 1):
        if fixed:
            raise _Bad
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def time_error(s: str, layout: str = RFC3339) -> str | None:
    """``time.Parse(layout, s)``'s error text, or None when it parses."""
    head = f"parsing time {quote(s)}"
    rest, fields = s, dict[str, int]()
    for prefix, elem in _CHUNKS[layout]:
        if not rest.startswith(prefix):
            return f"{head} as {quote(layout)}: cannot parse {quote(rest)} as {quote(prefix)}"
        rest = rest[len(prefix) :]
        hold = rest
        try:
            rest, out_of_range = _element(elem, rest, fields, layout)
        except _Bad:
            return f"{head} as {quote(layout)}: cannot parse {quote(hold)} as {quote(elem)}"
        if out_of_range:
            return f"{head}: {out_of_range} out of range"
    if rest:
        return f"{head}: extra text: {quote(rest)}"
    year, month, day = fields["2006"], fields["01"], fields["02"]
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day < 1 or day > (_DAYS[month - 1] if month != 2 or leap else 28):
        return f"{head}: day out of range"
    return None


def _element(elem: str, s: str, fields: dict[str, int], layout: str) -> tuple[str, str]:
    if elem == "2006":
        if _ndigits(s[:4]) != 4:
            raise _Bad
        fields[elem] = int(s[:4])
        return s[4:], ""
    if elem in ("01", "02", "15", "04", "05"):
        n, s = _num(s, elem != "15")
        fields[elem] = n
        limit = {"01": ("month", 1, 12), "15": ("hour", 0, 23), "04": ("minute", 0, 59), "05": ("second", 0, 59)}
        name, lo, hi = limit.get(elem, ("", 0, 99))
        if name and not lo <= n <= hi:
            return s, name
        if elem == "05" and layout == RFC3339 and s[:1] in (".", ",") and _digit(s, 1):
            return s[1 + _ndigits(s, 1) :], ""  # a fraction the layout does not name is read anyway
        return s, ""
    if elem == ".000000":
        if len(s) < 7 or s[0] not in ".," or _ndigits(s[1:7]) != 6:
            raise _Bad
        return s[7:], ""
    return _zone(s)


def _zone(s: str) -> tuple[str, str]:
    """``Z07:00``: ``Z`` or a signed hh:mm offset (Go allows up to 24 hours and 60 minutes)."""
    if s[:1] == "Z":
        return s[1:], ""
    if len(s) < 6 or s[3] != ":" or s[0] not in "+-":
        raise _Bad
    hours, minutes = _num(s[1:3], True)[0], _num(s[4:6], True)[0]
    if minutes > 60:
        return s[6:], "time zone offset minute"
    return s[6:], "time zone offset hour" if hours > 24 else ""


# ---- resource.ParseQuantity --------------------------------------------------------------
QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
QUANTITY_SUFFIX = "unable to parse quantity's suffix"
_QUANTITY = re.compile(r"^[+-]?[0-9]*(?:\.[0-9]*)?([eEinumkKMGTP]*[-+]?[0-9]*)$")
_SUFFIXES = frozenset(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"))
_EXPONENT = re.compile(r"^[eE][+-]?[0-9]+$")


def quantity_error(text: str) -> str | None:
    """``resource.ParseQuantity``'s error for ``text`` (already stripped of quotes and blanks),
    or None when it parses."""
    m = _QUANTITY.match(text) if text else None
    if m is None:
        return QUANTITY_FORMAT
    suffix = m.group(1)
    if suffix in _SUFFIXES or _EXPONENT.match(suffix):
        return None
    return QUANTITY_SUFFIX
