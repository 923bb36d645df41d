"""A timeline ``patch`` step: change an object part by part, as ``kubectl patch`` does.

Owns the step's schema (``patch: {apiVersion, kind, metadata: {name, namespace}, patch,
type}``) and its meaning: the patch is applied with the same rules as the HTTP API's
PATCH (``cluster/api/clientpatch.py``: strategic merge by default for built-in kinds, as
``kubectl patch``; ``merge``; ``json``) to the object as stored, and the result is written
as an update, validated like any update. Called by the scenario driver (``driver.py``).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from ..api.clientpatch import JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, apply_patch
from ..api.kinds import BY_KIND

CONTENT_TYPES = {"strategic": STRATEGIC_MERGE_PATCH, "merge": MERGE_PATCH, "json": JSON_PATCH}


class PatchTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    namespace: str | None = None


class PatchSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    apiVersion: str
    kind: str
    metadata: PatchTarget
    patch: dict[str, Any] | list[Any]
    type: Literal["strategic", "merge", "json"] = "strategic"

    @model_validator(mode="after")
    def _check(self) -> PatchSpec:
        r = BY_KIND.get(self.kind)
        if r is None:
            raise ValueError(f"kind: {self.kind!r} is not a kind kubemu serves")
        if self.apiVersion != r.api_version:
            raise ValueError(f"apiVersion: {self.apiVersion!r} is not served for {self.kind} (use {r.api_version!r})")
        if (self.type == "json") != isinstance(self.patch, list):
            need = "a list of operations" if self.type == "json" else "a map"
            raise ValueError(f"patch: a {self.type} patch must be {need}")
        return self

    def target(self) -> tuple[str, str, str]:
        """(kind, namespace, name); a namespaced kind defaults to ``default``."""
        namespaced = BY_KIND[self.kind].namespaced
        return self.kind, (self.metadata.namespace or "default") if namespaced else "", self.metadata.name

    def applied_to(self, current: dict[str, Any]) -> dict[str, Any]:
        """The object after the patch; raises the ``StatusError`` the API would answer."""
        body = json.dumps(self.patch).encode()
        new = apply_patch(current, CONTENT_TYPES[self.type], body, self.kind)
        new.setdefault("metadata", {})["resourceVersion"] = current["metadata"].get("resourceVersion")
        return new
