"""Regenerate ``cluster/frontend/protobuf_table.py``: upstream's protobuf field numbers of every served kind.

Run from the repository root at dev time, given upstream's API sources of the release kubemu
advertises (v1.33), laid out as in ``kubernetes/staging/src/k8s.io`` (a directory holding ``api``,
``apimachinery``, ``apiextensions-apiserver`` and ``kube-aggregator``; each of those repositories at
tag ``v0.33.x`` does as well):

    python -m cluster.api.protogen /path/to/staging/src/k8s.io > cluster/frontend/protobuf_table.py

For every kind of ``kinds.RESOURCES`` (and the views, reviews and subresource kinds kubemu serves)
it walks the messages reachable from the kind and its list, and writes for each field what two
upstream sources say together: the ``generated.proto`` of the package (field number, repeated or
map, the message or scalar type) and the Go struct the message was generated from (``types.go``:
the JSON name and ``omitempty`` of the ``json`` tag, and whether the Go field is a pointer, which
decides what upstream's gogo encoder writes when the field is unset). The table holds only those
facts; no upstream file is kept. The table's syntax is described in ``cluster/frontend/protobuf_schema.py``.
"""

from __future__ import annotations

import json
import re
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from . import kinds

# Messages whose JSON is not their fields: the runtime reads and writes them by hand (their field
# numbers are checked below, so a changed upstream layout fails here, not on a request).
SPECIAL = {
    "k8s.io.apimachinery.pkg.api.resource.Quantity": ("Quantity", {1: "string"}),
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": ("Time", {1: "int64", 2: "int32"}),
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": ("MicroTime", {1: "int64", 2: "int32"}),
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": ("Duration", {1: "int64"}),
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": ("Raw", {1: "bytes"}),
    "k8s.io.apimachinery.pkg.runtime.RawExtension": ("Raw", {1: "bytes"}),
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON": ("Raw", {1: "bytes"}),
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": ("IntOrString", {1: "int64", 2: "int32", 3: "string"}),
}
# Messages with a JSON form of their own whose fields the runtime still reads through the table.
SHAPED = {
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray": "SchemaOrArray",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool": "SchemaOrBool",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray": "SchemaOrStringArray",
}
SCALARS = ("string", "int32", "int64", "bool", "bytes", "double")
# Kinds a subresource takes and answers (pods/binding, pods/eviction, */scale, serviceaccounts/token).
SUBRESOURCE_KINDS = {
    "binding": ("v1", "Binding"),
    "eviction": ("policy/v1", "Eviction"),
    "scale": ("autoscaling/v1", "Scale"),
    "token": ("authentication.k8s.io/v1", "TokenRequest"),
}
# meta.k8s.io/v1 kinds: registered in every group version, so an envelope names them with any.
META_KINDS = (
    "Status",
    "DeleteOptions",
    "WatchEvent",
    "APIResourceList",
    "APIGroupList",
    "APIGroup",
    "APIVersions",
    "PartialObjectMetadata",
    "PartialObjectMetadataList",
    "List",
)


@dataclass
class ProtoField:
    number: int
    name: str
    type: str  # a scalar, or a message's full name
    repeated: bool = False
    map: bool = False  # map<string, type>


@dataclass
class GoField:
    json: str  # "..." for an embedded struct whose fields the JSON inlines
    omitempty: bool
    pointer: bool  # a Go pointer or []byte: written only when set


@dataclass
class Package:
    proto: str  # k8s.io.api.apps.v1
    short: str  # apps.v1, the name schema.py gives the package too
    group: str
    version: str
    messages: dict[str, list[ProtoField]] = field(default_factory=dict)
    structs: dict[str, dict[int, GoField]] = field(default_factory=dict)
    slices: set[str] = field(default_factory=set)  # Go named slice types (Verbs, ExtraValue)


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PROTO_FIELD = re.compile(
    r"^\s*(optional|repeated|required)?\s*(map<\s*string\s*,\s*([\w.]+)\s*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;", re.M
)
_GO_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
_GO_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([\w.*\[\]{}]+)\s+`([^`]*)`", re.M)
_GO_SLICE = re.compile(r"^type (\w+) \[\]", re.M)
_GROUP = re.compile(r'GroupName\s*=\s*"([^"]*)"|\+groupName=(\S*)')


def _parse_proto(text: str) -> tuple[str, dict[str, list[ProtoField]]]:
    text = _COMMENT.sub("", text)
    package = re.search(r"^package ([\w.]+);", text, re.M)
    assert package, "a generated.proto without a package"
    messages: dict[str, list[ProtoField]] = {}
    for m in re.finditer(r"^message (\w+) \{(.*?)^\}", text, re.S | re.M):
        fields = []
        for f in _PROTO_FIELD.finditer(m.group(2)):
            label, typ, map_value, name, number = f.groups()
            typ = map_value or typ
            fields.append(ProtoField(int(number), name, typ, label == "repeated", bool(map_value)))
        messages[m.group(1)] = fields
    return package.group(1), messages


def _parse_go(text: str, pkg: Package) -> None:
    text = re.sub(r"^\s*//[^\n]*\n", "\n", text, flags=re.M)
    for m in _GO_STRUCT.finditer(text):
        fields: dict[int, GoField] = {}
        for f in _GO_FIELD.finditer(m.group(2)):
            name, typ, tag = f.groups()
            proto = re.search(r'protobuf:"\w+,(\d+),', tag)
            if proto is None:
                continue
            json_tag = re.search(r'json:"([^"]*)"', tag)
            json_name, _, opts = (json_tag.group(1) if json_tag else "").partition(",")
            if name is None and not json_name:
                json_name = "..."  # an embedded struct: its fields are the parent's in JSON
            pointer = typ.startswith("*") or typ == "[]byte"
            fields[int(proto.group(1))] = GoField(json_name, "omitempty" in opts.split(","), pointer)
        pkg.structs[m.group(1)] = fields
    pkg.slices.update(_GO_SLICE.findall(text))


def load(root: Path) -> dict[str, Package]:
    """Every API package under ``root`` that has a ``generated.proto``, by its proto package name."""
    packages: dict[str, Package] = {}
    for proto_file in sorted(root.glob("**/generated.proto")):
        directory = proto_file.parent
        if "testdata" in directory.parts or "examples" in directory.parts:
            continue
        proto_name, messages = _parse_proto(proto_file.read_text())
        group = ""
        for source in ("register.go", "doc.go"):
            path = directory / source
            found = _GROUP.search(path.read_text()) if path.exists() else None
            if found:
                group = found.group(1) if found.group(1) is not None else found.group(2)
                break
        parts = proto_name.split(".")
        pkg = Package(proto_name, ".".join(parts[-2:]), group, parts[-1], messages)
        for go_file in sorted(directory.glob("*.go")):
            if not go_file.name.endswith(("_test.go", ".pb.go")) and not go_file.name.startswith("zz_"):
                _parse_go(go_file.read_text(), pkg)
        packages[proto_name] = pkg
    return packages


class Generator:
    """The table of the kinds kubemu serves, built from the packages ``load`` read: ``run`` finds
    each kind's message, ``walk`` writes every message reachable from them."""

    def __init__(self, packages: dict[str, Package]) -> None:
        self.packages = packages
        self.by_gv = {(p.group, p.version): p for p in packages.values() if p.group or "k8s.io.api.core" in p.proto}
        self.messages: dict[str, str] = {}  # short name -> field spec
        self.kinds: dict[tuple[str, str], str] = {}
        self.any_version: dict[str, str] = {}

    def full(self, type_name: str, pkg: Package) -> str:
        return type_name.lstrip(".") if type_name.startswith(".") else f"{pkg.proto}.{type_name}"

    def split(self, full: str) -> tuple[Package, str]:
        proto, _, name = full.rpartition(".")
        return self.packages[proto], name

    def short(self, full: str) -> str:
        pkg, name = self.split(full)
        return f"{pkg.short}.{name}"

    def root(self, api_version: str, kind: str, *, optional: bool = False) -> str | None:
        group, _, version = api_version.rpartition("/")
        pkg = self.by_gv.get((group, version))
        if pkg is None or kind not in pkg.messages:
            if optional:
                return None
            raise SystemExit(f"protogen: no message for {api_version} {kind} in the sources given")
        return f"{pkg.proto}.{kind}"

    def run(self) -> None:
        self.check_specials()
        served = [*kinds.RESOURCES, *getattr(kinds, "VIEWS", ()), *getattr(kinds, "REVIEWS", ())]
        roots: list[str] = []
        wanted = [(r.api_version, r.kind) for r in served]
        wanted += sorted({SUBRESOURCE_KINDS[s] for r in served for s in r.subresources if s in SUBRESOURCE_KINDS})
        for api_version, kind in wanted:
            for name in (kind, kind + "List"):
                full = self.root(api_version, name, optional=name != kind)
                if full is not None:
                    self.kinds[(api_version, name)] = self.short(full)
                    roots.append(full)
        for kind in META_KINDS:
            full = self.root("meta.k8s.io/v1", kind)
            assert full is not None
            self.any_version[kind] = self.short(full)
            roots.append(full)
        self.walk(roots)

    def check_specials(self) -> None:
        for full, (_, layout) in SPECIAL.items():
            pkg, name = self.split(full)
            got = {f.number: f.type for f in pkg.messages[name]}
            if got != layout:
                raise SystemExit(f"protogen: {full} is {got} upstream; the runtime reads {layout}")

    def walk(self, roots: list[str]) -> None:
        todo, seen = deque(roots), set(roots)
        while todo:
            full = todo.popleft()
            pkg, name = self.split(full)
            specs = []
            for f in sorted(pkg.messages[name], key=lambda f: f.number):
                typ = f.type if f.type in SCALARS else self.full(f.type, pkg)
                if typ not in SCALARS and typ not in SPECIAL and typ not in seen:
                    seen.add(typ)
                    todo.append(typ)
                specs.append(self.field_spec(pkg, name, f, typ))
            self.messages[self.short(full)] = ", ".join(s for s in specs if s)

    def field_spec(self, pkg: Package, message: str, f: ProtoField, typ: str) -> str:
        go = pkg.structs.get(message, {}).get(f.number)
        if go is None and message not in pkg.structs and message not in pkg.slices:
            raise SystemExit(f"protogen: no Go struct for {pkg.proto}.{message}")
        json_name = go.json if go and go.json else f.name  # SchemaOr* fields have no JSON tag
        if json_name == "-":
            json_name = f.name  # FieldsV1.Raw and the like: read by the special readers, by field number
        if typ in SCALARS:
            type_spec = typ
        elif typ in SPECIAL:
            type_spec = SPECIAL[typ][0]
        else:
            type_spec = self.short(typ)
        if f.repeated and not f.map:
            type_spec = f"[{type_spec}]"
        elif f.map:
            type_spec = f"{{{type_spec}}}"
        flag = ""
        if go is not None and (f.repeated or f.map):
            flag = "" if go.omitempty else "!"  # JSON carries null for an unset one
        elif go is not None:
            struct = typ not in SCALARS and typ not in SPECIAL  # never omitted by omitempty
            flag = "*" if go.pointer else ("" if go.omitempty or struct else "!")
        return f"{f.number} {json_name}" + ("" if type_spec == "string" else f":{type_spec}") + flag

    def wrappers(self) -> list[str]:
        """Messages generated from Go named slices (``Verbs``): their JSON is the ``items`` array."""
        out = []
        for short in self.messages:
            for pkg in self.packages.values():
                if pkg.short == short.rpartition(".")[0] and short.rpartition(".")[2] in pkg.slices:
                    out.append(short)
        return sorted(out)


def q(text: str) -> str:
    """A Python string literal as the formatter writes it (double quotes)."""
    return json.dumps(text)


def render(gen: Generator, source: str) -> str:
    lines = [
        '"""Generated by ``python -m cluster.api.protogen``: do not edit. Read by ``cluster/frontend/protobuf_schema.py``.',
        "",
        f"Source: {source}. ``KINDS``: apiVersion and kind of an envelope -> message; ``ANY_VERSION_KINDS``:",
        "meta.k8s.io kinds any group version may name; ``LIST_WRAPPERS``: messages whose JSON is their",
        "``items`` array; ``SHAPED``: messages with a JSON form of their own; ``MESSAGES``: message -> fields.",
        '"""',
        "",
        f"RELEASE = {q(RELEASE)}",
        "",
        "KINDS: dict[str, str] = {",
    ]
    lines += [f"    {q(f'{av} {k}')}: {q(m)}," for (av, k), m in sorted(gen.kinds.items())]
    lines += ["}", "", "ANY_VERSION_KINDS: dict[str, str] = {"]
    lines += [f"    {q(k)}: {q(m)}," for k, m in sorted(gen.any_version.items())]
    lines += ["}", "", "LIST_WRAPPERS: frozenset[str] = frozenset(", "    {"]
    lines += [f"        {q(m)}," for m in gen.wrappers()]
    lines += ["    }", ")", "", "SHAPED: dict[str, str] = {"]
    shaped = sorted((gen.short(full), shape) for full, shape in SHAPED.items() if gen.short(full) in gen.messages)
    lines += [f"    {q(name)}: {q(shape)}," for name, shape in shaped]
    lines += ["}", "", "MESSAGES: dict[str, str] = {"]
    lines += [f"    {q(name)}: {q(spec)}," for name, spec in sorted(gen.messages.items())]
    lines += ["}", ""]
    return "\n".join(lines)


RELEASE = "v1.33"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[0])
    gen = Generator(load(root))
    gen.run()
    sys.stdout.write(render(gen, f"the generated.proto files and Go types of k8s.io/* {RELEASE}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
