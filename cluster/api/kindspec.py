"""The kind registry: one ``KindSpec`` per kind, read by every part that treats kinds apart.

Owns what is known about a kind beyond its URL facts (``Resource``: group, version, plural,
scope, short names, categories, subresources, verbs): its create validation, update
validation and defaults (hooks the owning modules attach: ``validation.py``,
``updatevalidation.py``, ``cluster/apiserver/workloaddefaults.py`` read them back through
``get``), whether it has a protobuf message, its table columns as data (the front end's
``tables.printer_for`` prints them when it has no printer of its own), its OpenAPI schema,
and its place in the controller manager's informer order and in the scenario driver's mirror.

``kinds.py`` writes the built-in kinds' rows and derives ``kinds.RESOURCES`` from the
specs; ``register`` adds a stored kind at run time (served as a custom resource is:
listed, watched, explained from ``openapi``, printed from ``columns``, JSON only) and
``unregister`` removes it. Hooks are plain callables so that ``cluster/api`` never imports
the apiserver or the front end: a layer above attaches its own with ``attach``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

Obj = dict[str, Any]
Validate = Callable[[Obj, str], None]  # (object, path prefix): raises ValidationError
ValidateUpdate = Callable[[Obj, Obj], None]  # (stored, new): raises FieldError
Default = Callable[[Obj], None]  # fills in the object in place


@dataclass(frozen=True)
class Resource:
    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    modeled: bool = False
    verbs: tuple[str, ...] = VERBS  # what discovery lists; the review kinds are create-only

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()


@dataclass(frozen=True)
class PrintColumn:
    """A table column as data, as a CustomResourceDefinition's additionalPrinterColumns:
    ``json_path`` names the field (``.spec.size``); a ``date`` column prints as an age."""

    name: str
    json_path: str
    type: str = "string"  # string, integer, number, boolean, date
    description: str = ""
    priority: int = 0  # 1: shown only with -o wide


@dataclass(frozen=True)
class KindSpec:
    resource: Resource
    validate: Validate | None = None
    validate_update: ValidateUpdate | None = None
    defaults: Default | None = None
    protobuf: bool = False  # True: a protobuf message (built-in kinds); else JSON only, as custom resources
    columns: tuple[PrintColumn, ...] = ()  # empty: the front end's printer, else NAME and AGE
    openapi: Obj | None = None  # the OpenAPI v3 schema of a registered kind (as a CRD's)
    list_order: int | None = None  # the controller manager lists lower first (None: after all)
    mirror_order: int | None = None  # the scenario driver mirrors these, lower first

    @property
    def kind(self) -> str:
        return self.resource.kind

    @property
    def has_status(self) -> bool:
        return "status" in self.resource.subresources


SPECS: dict[str, KindSpec] = {}  # kind -> its spec: the built-in kinds, then registered ones
_BUILTIN: list[str] = []


def add_builtin(specs: Iterable[KindSpec]) -> None:
    """Called once by ``kinds.py`` with the built-in kinds' rows."""
    for s in specs:
        assert s.kind not in SPECS, f"kind {s.kind} appears twice"
        SPECS[s.kind] = s
        _BUILTIN.append(s.kind)


def builtin() -> list[KindSpec]:
    return [SPECS[k] for k in _BUILTIN]


def get(kind: str) -> KindSpec | None:
    return SPECS.get(kind)


def attach(kind: str, **hooks: Any) -> None:
    """Give a kind's spec the hooks a module above ``cluster/api`` owns (its defaults)."""
    SPECS[kind] = replace(SPECS[kind], **hooks)


def attach_all(field: str, hooks: dict[str, Any]) -> None:
    for kind, hook in hooks.items():
        attach(kind, **{field: hook})


def register(spec: KindSpec) -> None:
    """Serve a new stored kind; a kind or plural already served is refused (ValueError)."""
    from . import kinds  # kinds imports this module for its rows

    r = spec.resource
    if r.kind in SPECS or r.kind in kinds.BY_KIND or (r.group, r.plural) in kinds.BY_PLURAL:
        raise ValueError(f"kind {r.kind} ({r.plural}.{r.group}) is already served")
    SPECS[r.kind] = spec
    kinds.register(r)


def unregister(kind: str) -> None:
    from . import kinds

    if kind in SPECS and kind not in _BUILTIN:
        del SPECS[kind]
        kinds.unregister(kind)


def ordered(field: str) -> tuple[str, ...]:
    """The kinds whose ``list_order`` or ``mirror_order`` is set, in that order."""
    ranked = [(getattr(s, field), s.kind) for s in SPECS.values() if getattr(s, field) is not None]
    return tuple(kind for _, kind in sorted(ranked))


def cell(obj: Obj, json_path: str) -> Any:
    """The value at a simple JSONPath (``.spec.size``, ``.status.conditions[0].type``), or None."""
    value: Any = obj
    for part in json_path.strip().lstrip(".").split("."):
        name, _, index = part.partition("[")
        if name:
            value = value.get(name) if isinstance(value, dict) else None
        if index:
            i = index.rstrip("]")
            ok = isinstance(value, list) and i.lstrip("-").isdigit() and -len(value) <= int(i) < len(value)
            value = value[int(i)] if ok else None
    return value


def definition(kind: str) -> Obj | None:
    """A registered kind's definition in a CustomResourceDefinition's shape (what the
    OpenAPI documents read a custom kind's schema from); None for a built-in kind."""
    s = SPECS.get(kind)
    if s is None or kind in _BUILTIN or s.openapi is None:
        return None
    r = s.resource
    columns = [
        {"name": c.name, "type": c.type, "jsonPath": c.json_path, "description": c.description, "priority": c.priority}
        for c in s.columns
    ]
    version = {"name": r.version, "served": True, "storage": True, "schema": {"openAPIV3Schema": s.openapi}}
    if columns:
        version["additionalPrinterColumns"] = columns
    if s.has_status:
        version["subresources"] = {"status": {}}
    names = {"kind": r.kind, "plural": r.plural, "singular": r.singular, "listKind": r.kind + "List"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{r.plural}.{r.group}"},
        "spec": {
            "group": r.group,
            "names": names,
            "scope": "Namespaced" if r.namespaced else "Cluster",
            "versions": [version],
        },
    }
