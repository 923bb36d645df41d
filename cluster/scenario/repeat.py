"""``repeat`` in a scenario's object lists, expanded only as the objects are sent.

Owns the expansion of ``{repeat: N, template: MANIFEST}`` into N copies named
``<name>-0`` .. ``<name>-(N-1)``. The loader (``schema.py``) checks each template once and
leaves the item as it is; the driver (``driver.Timeline``) sends the copies in batches of
``CREATE_BATCH``, so a scenario of a million pods never holds a million manifests (2.6 KB
each) nor sends them in one call. Anything that needs the copies themselves iterates
``expanded``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..api import codec

CREATE_BATCH = 1_000  # objects per create call


def is_repeat(item: Any) -> bool:
    return isinstance(item, dict) and "repeat" in item


def expanded(items: Iterable[dict]) -> Iterator[dict]:
    """Every object of the list, each repeat's copies made one at a time."""
    for item in items:
        if not is_repeat(item):
            yield item
            continue
        data = codec.encode(item["template"])
        base = (item["template"].get("metadata") or {}).get("name", "")
        for k in range(item["repeat"]):
            copy = codec.decode(data)
            copy.setdefault("metadata", {})["name"] = f"{base}-{k}"
            yield copy


def count(items: Iterable[dict]) -> int:
    """How many objects the list makes."""
    return sum(item["repeat"] if is_repeat(item) else 1 for item in items)


def batches(items: Iterable[dict], size: int = CREATE_BATCH) -> Iterator[list[dict]]:
    """The objects in lists of at most ``size``, in order."""
    batch: list[dict] = []
    for obj in expanded(items):
        batch.append(obj)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
