"""kubemu's own kinds' hand-written schema (cluster/api/schema_kubemu.py): read beside the
generated table, every struct reachable from a kind, every description naming a real field."""

from __future__ import annotations

from cluster.api import schema as sch
from cluster.api import schema_kubemu
from cluster.api.kinds import BY_KIND, OWN_GROUP, RESOURCES, json_only


def test_each_own_kind_is_in_the_schema_and_only_own_kinds_are_hand_written():
    assert [r.kind for r in RESOURCES if r.group == OWN_GROUP] == list(schema_kubemu.KINDS)
    for kind in schema_kubemu.KINDS:
        assert BY_KIND[kind].group == OWN_GROUP and json_only(kind)
        assert sch.kind_struct(kind) is not None and sch.kind_struct(kind).name == kind
    assert not json_only("Pod") and not json_only("Widget")


def test_every_struct_is_reached_and_every_described_field_exists():
    reached: set[str] = set()
    todo = [sch.kind_struct(kind) for kind in schema_kubemu.KINDS]
    while todo:
        s = todo.pop()
        key = f"{s.package}.{s.name}"
        if key in reached or key not in schema_kubemu.STRUCTS:
            continue
        reached.add(key)
        for t in s.fields.values():
            while t.elem is not None:
                t = t.elem
            if t.struct is not None:
                todo.append(t.struct)
    assert reached == set(schema_kubemu.STRUCTS)
    for key, field in schema_kubemu.DESCRIPTIONS:
        assert field in sch.struct(key).fields, (key, field)


def test_typed_fields():
    assert sch.field_type("SchedulingResult", "status.history.filters.reasons.count").go == "int32"
    assert sch.field_type("SchedulingResult", "status.history.ranking.byPlugin").go == "map[string]int64"
    assert sch.field_type("SchedulingResult", "status.lastAttemptTime").go == "v1.Time"
    assert sch.field_type("SchedulingResult", "status.history.bogus") is None
