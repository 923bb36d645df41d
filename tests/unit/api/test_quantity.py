"""Quantity parsing, rounding and formatting (cluster/api/quantity.py)."""

from fractions import Fraction

import pytest

from cluster.api.quantity import QuantityError, format_resource, parse, resource_int, to_milli, to_units


@pytest.mark.parametrize(
    "text, expected",
    [
        ("250m", Fraction(1, 4)),
        ("64Mi", 64 * 2**20),
        ("1Gi", 2**30),
        ("1Ki", 1024),
        ("2", 2),
        ("1e3", 1000),
        ("1k", 1000),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("1E", 10**18),
        ("1n", Fraction(1, 10**9)),
        ("0", 0),
        (2, 2),
        (0.5, Fraction(1, 2)),
    ],
)
def test_parse_accepts(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize("text", ["250x", "1K", "1 Mi", "", "1e", "Mi", " 1", "1..5", "1mi", None, True, float("inf")])
def test_parse_rejects(text):
    with pytest.raises(QuantityError):
        parse(text)


def test_quantity_error_is_a_value_error():
    assert issubclass(QuantityError, ValueError)


@pytest.mark.parametrize(
    "text, milli",
    [("250m", 250), ("1", 1000), ("1n", 1), ("1u", 1), ("0.1m", 1), ("1.0001m", 2), ("0", 0), ("2k", 2_000_000)],
)
def test_to_milli_rounds_up_like_milli_value(text, milli):
    assert to_milli(text) == milli


@pytest.mark.parametrize("text, units", [("1.5", 2), ("100m", 1), ("64Mi", 67108864), ("1k", 1000), ("0", 0)])
def test_to_units_rounds_up(text, units):
    assert to_units(text) == units


@pytest.mark.parametrize(
    "name, text, amount",
    [
        ("cpu", "250m", 250),
        ("cpu", "2", 2000),
        ("memory", "64Mi", 64 * 2**20),
        ("pods", "110", 110),
        ("nvidia.com/gpu", "2", 2),
    ],
)
def test_resource_int(name, text, amount):
    assert resource_int(name, text) == amount


@pytest.mark.parametrize(
    "name, amount, text",
    [
        ("cpu", 250, "250m"),
        ("cpu", 4000, "4"),
        ("cpu", 0, "0"),
        ("memory", 64 * 2**20, "64Mi"),
        ("memory", 2**30, "1Gi"),
        ("memory", 1536 * 2**20, "1536Mi"),
        ("memory", 1000, "1000"),
        ("memory", 0, "0"),
        ("ephemeral-storage", 100 * 2**30, "100Gi"),
        ("hugepages-2Mi", 2 * 2**20, "2Mi"),
        ("pods", 110, "110"),
        ("nvidia.com/gpu", 1024, "1024"),
    ],
)
def test_format_resource(name, amount, text):
    assert format_resource(name, amount) == text


@pytest.mark.parametrize("name, text", [("cpu", "250m"), ("cpu", "3"), ("memory", "64Mi"), ("memory", "1Gi")])
def test_format_round_trips(name, text):
    assert format_resource(name, resource_int(name, text)) == text


@pytest.mark.parametrize("text", ["1\n", "1e3\n", " 1", "1 "])
def test_surrounding_whitespace_is_not_a_quantity(text):
    with pytest.raises(QuantityError):
        parse(text)
