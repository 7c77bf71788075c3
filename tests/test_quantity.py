"""Kubernetes quantities are read exactly (k8s.io/apimachinery resource.Quantity) and rounded up like
MilliValue()/Value(): cpu in millicores, everything else in whole units. Never a float."""
from __future__ import annotations

from fractions import Fraction

import pytest
import yaml

from podplan.models.quantity import QuantityError, format_resource, parse_quantity, resource_value

# (written, cpu millicores, memory bytes)
TRICKY = [
    ("500m", 500, 1),
    ("1.5", 1500, 2),
    ("1Gi", 1024**3 * 1000, 1024**3),
    ("1G", 10**12, 10**9),
    ("1e3", 10**6, 1000),
    ("1E3", 10**6, 1000),
    ("100Ki", 102400 * 1000, 102400),
    ("0.1", 100, 1),
    ("1m", 1, 1),
    ("0.1m", 1, 1),  # MilliValue rounds up: a tenth of a millicore still costs one
    ("1n", 1, 1),
    ("250u", 1, 1),
    (".5", 500, 1),
    ("2E", 2 * 10**21, 2 * 10**18),  # E alone is the exa suffix, not an exponent
    ("2Ei", 2 * 2**60 * 1000, 2 * 2**60),
    ("1.5Gi", 3 * 2**29 * 1000, 3 * 2**29),
    ("129M", 129 * 10**9, 129 * 10**6),
    ("123Mi", 123 * 2**20 * 1000, 123 * 2**20),
    ("1e-3", 1, 1),
    ("+2", 2000, 2),
    ("0", 0, 0),
]


@pytest.mark.parametrize("written,cpu,memory", TRICKY, ids=[t[0] for t in TRICKY])
def test_a_quantity_string_reads_exactly(written: str, cpu: int, memory: int) -> None:
    assert resource_value("cpu", written) == cpu
    assert resource_value("memory", written) == memory
    assert isinstance(resource_value("cpu", written), int)
    assert isinstance(resource_value("memory", written), int)


def test_fractions_are_kept_exactly_before_rounding() -> None:
    assert parse_quantity("1.5") == Fraction(3, 2)
    assert parse_quantity("0.1") == Fraction(1, 10)  # not 0.1000000000000000055...
    assert parse_quantity("500m") == Fraction(1, 2)


YAML_SCALARS = [
    ("cpu: 2", "cpu", 2000),  # YAML int
    ("cpu: 0.5", "cpu", 500),  # YAML float
    ("cpu: 0.1", "cpu", 100),  # a float whose binary value is not 0.1: still exactly 100m
    ("cpu: 1.0e+3", "cpu", 1_000_000),  # YAML 1.1 float with exponent
    ("memory: 1073741824", "memory", 2**30),
    ("memory: 1.5", "memory", 2),
    ("cpu: '2'", "cpu", 2000),
    ("cpu: 1e3", "cpu", 1_000_000),  # PyYAML reads this as the string "1e3"
]


@pytest.mark.parametrize("text,name,expected", YAML_SCALARS, ids=[t[0] for t in YAML_SCALARS])
def test_yaml_numbers_read_as_the_user_wrote_them(text: str, name: str, expected: int) -> None:
    value = yaml.safe_load(text)[name]
    assert resource_value(name, value) == expected


INVALID = ["1.2.3", "abc", "1Qi", "", "Gi", "1e", "1 Gi", "1K", "0x10", "1_000", "inf", "nan", "--1", "1e31"]


@pytest.mark.parametrize("written", INVALID)
def test_a_malformed_quantity_is_refused(written: str) -> None:
    with pytest.raises(QuantityError, match="quantity|out of range"):
        parse_quantity(written)


@pytest.mark.parametrize("value", [True, None, [1], {"a": 1}, float("inf")], ids=repr)
def test_a_non_scalar_or_boolean_is_not_a_quantity(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)


def test_a_negative_quantity_parses_so_the_parser_can_name_the_field() -> None:
    # The sign is legal syntax; models.parse rejects negatives for requests/allocatable (tests/test_bad_input.py).
    assert parse_quantity("-1") == -1


def test_extended_resources_and_pods_are_whole_units() -> None:
    assert resource_value("nvidia.com/gpu", 2) == 2
    assert resource_value("pods", "110") == 110
    assert resource_value("ephemeral-storage", "10Gi") == 10 * 2**30


@pytest.mark.parametrize("name,value,text", [
    ("cpu", 1500, "1500m"), ("cpu", 2000, "2"), ("memory", 2**30, "1Gi"), ("memory", 3 * 2**20, "3Mi"),
    ("memory", 1000, "1000"), ("nvidia.com/gpu", 4, "4"), ("hugepages-2Mi", 2**21, "2Mi"),
])
def test_format_resource_prints_what_resource_value_reads_back(name: str, value: int, text: str) -> None:
    assert format_resource(name, value) == text
    assert resource_value(name, text) == value
