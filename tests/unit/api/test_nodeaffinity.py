"""Compiling node selector terms: a malformed requirement is refused with one line naming
its path, whatever JSON value stands where an operator should."""

import pytest

from cluster.api.nodeaffinity import compile_term


@pytest.mark.parametrize(
    "term, error",
    [
        (
            {"matchExpressions": [{"key": "zone", "operator": ["In"], "values": ["a"]}]},
            "t.matchExpressions[0].operator: Unsupported value: ['In']",
        ),
        (
            {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]},
            "t.matchExpressions[0].operator: Unsupported value: 'Near'",
        ),
        (
            {"matchFields": [{"key": "metadata.name", "operator": {"op": "In"}, "values": ["n1"]}]},
            "t.matchFields[0].operator: Unsupported value: {'op': 'In'}",
        ),
    ],
)
def test_a_bad_operator_is_one_error_on_its_path(term, error):
    compiled, errors = compile_term(term, "t")
    assert compiled is None and errors == [error]


def test_a_good_term_compiles():
    compiled, errors = compile_term({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}, "t")
    assert compiled is not None and errors == []
