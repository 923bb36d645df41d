"""Create and update rules for the keys of Secrets' and ConfigMaps' data maps.

Owns upstream's "config key" rule: every key of a Secret's ``data`` and ``stringData`` and of
a ConfigMap's ``data`` and ``binaryData`` is 1-253 characters of ``[-._a-zA-Z0-9]`` and is
not ``.``, ``..`` or ``..``-prefixed (the key becomes a file name in a volume). A ConfigMap
key may not be in both of its maps. ``validation`` attaches these checks to the two kinds'
``KindSpec.validate``; the apiserver calls them through ``validation.validate``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import Cause
from .validationfields import NO_VALUE, ValidationError

KEY_MAX_LENGTH = 253
_KEY = re.compile(r"[-._a-zA-Z0-9]+")
KEY_RULE = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


def key_problems(key: str) -> list[str]:
    """Every way ``key`` breaks the config-key rule, in upstream's order (empty: valid)."""
    problems = []
    if len(key) > KEY_MAX_LENGTH:
        problems.append(f"must be no more than {KEY_MAX_LENGTH} characters")
    if not _KEY.fullmatch(key):
        problems.append(KEY_RULE)
    if key == ".":
        problems.append("must not be '.'")
    elif key == "..":
        problems.append("must not be '..'")
    elif key.startswith(".."):
        problems.append("must not start with '..'")
    return problems


def _key_causes(obj: dict[str, Any], field: str, shown_as: str = "") -> list[Cause]:
    data = obj.get(field)
    if not isinstance(data, dict):
        return []  # absent; a wrong type is the schema's to refuse
    return [
        Cause("FieldValueInvalid", f"Invalid value: {json.dumps(key)}: {problem}", f"{shown_as or field}[{key}]")
        for key in data
        for problem in key_problems(str(key))
    ]


def _raise_all(causes: list[Cause]) -> None:
    # All bad keys together, as upstream's aggregate reports them.
    errors = [f"{c.field}: {c.message}" for c in causes]
    if len(errors) == 1:
        raise ValidationError("", NO_VALUE, errors[0], tuple(causes))
    if errors:
        raise ValidationError("", NO_VALUE, "[" + ", ".join(errors) + "]", tuple(causes))


def check_secret(obj: dict[str, Any], path: str = "") -> None:
    # stringData is merged into data before upstream validates, so its keys are named there.
    _raise_all(_key_causes(obj, "data") + _key_causes(obj, "stringData", shown_as="data"))


def check_config_map(obj: dict[str, Any], path: str = "") -> None:
    causes = _key_causes(obj, "data")
    binary = obj.get("binaryData")
    text = obj.get("data")
    if isinstance(binary, dict) and isinstance(text, dict):
        causes += [
            Cause(
                "FieldValueInvalid",
                f"Invalid value: {json.dumps(key)}: duplicate of key present in binaryData",
                f"data[{key}]",
            )
            for key in text
            if key in binary
        ]
    _raise_all(causes + _key_causes(obj, "binaryData"))
