"""``codec.replace_value``: a string field's value replaced in the encoded bytes."""

import pytest

from cluster.api.codec import decode, encode, replace_value


def test_the_bytes_are_those_of_the_object_with_the_new_value():
    obj = {"metadata": {"name": "a", "resourceVersion": "9"}, "spec": {"renewTime": "t1", "holder": "a"}}
    changed = replace_value(encode(obj), "resourceVersion", "9", "10")
    obj["metadata"]["resourceVersion"] = "10"
    assert changed == encode(obj) and decode(changed) == obj


@pytest.mark.parametrize(
    "obj, why",
    [
        ({"a": {"rv": "9"}, "b": {"rv": "9"}}, "the field with that value twice"),
        ({"a": {"rv": "8"}}, "not that value"),
        ({"a": {"other": "9"}}, "no such field"),
    ],
)
def test_none_when_the_field_and_value_are_not_there_exactly_once(obj, why):
    assert replace_value(encode(obj), "rv", "9", "10") is None, why


def test_the_same_value_under_another_field_is_left_alone():
    obj = {"name": "9", "rv": "9"}
    assert decode(replace_value(encode(obj), "rv", "9", "10")) == {"name": "9", "rv": "10"}
