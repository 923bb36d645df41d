"""Server-side apply's strict look at its YAML body: keys given twice in one mapping.

Owns what upstream's apply handler does after applying, under ``fieldValidation`` Strict or
Warn: it decodes the body again strictly, and a key set twice in a mapping is a 400 (Strict:
``error strict decoding YAML: ... line 9: key "foo" already set in map``, the line being the
second one's) or a warning (Warn). Called by ``verbs.py`` for every apply patch, after the
patched object passed its own field validation.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from ..api.errors import BadRequest
from .fieldvalidation import STRICT, WARN


class _Loader(yaml.SafeLoader):
    """A safe loader that notes each key set twice in a mapping, with its line."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.twice: list[str] = []


def _mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            if key in seen:
                shown = json.dumps(key) if isinstance(key, str) else str(key)
                loader.twice.append(f"line {key_node.start_mark.line + 1}: key {shown} already set in map")
            seen.add(key)
        except TypeError:  # an unhashable key: the decode itself refuses it
            pass
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def duplicate_keys(body: bytes) -> list[str]:
    """``line N: key "k" already set in map`` for each key set twice in ``body``."""
    loader = _Loader(body)
    try:
        loader.get_single_data()
    except yaml.YAMLError:
        return []  # not YAML at all: the apply itself has answered that
    finally:
        loader.dispose()
    return loader.twice


def strict_check(body: bytes, mode: str) -> list[str]:
    """The warnings for an apply body under ``mode``; raises the 400 under Strict."""
    if mode not in (STRICT, WARN):
        return []
    twice = duplicate_keys(body)
    if not twice:
        return []
    error = "error converting YAML to JSON: yaml: unmarshal errors:\n  " + "\n  ".join(twice)
    if mode == STRICT:
        raise BadRequest(f"error strict decoding YAML: {error}")
    return [error.replace("\n", " ")]  # as Go's header writer turns a line break into a space
