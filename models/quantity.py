"""Kubernetes resource quantities, parsed exactly (k8s.io/apimachinery/pkg/api/resource).

Never floats: a quantity is a Fraction, then rounded up the way the API machinery does
(MilliValue() for cpu, Value() for everything else).
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

from .errors import describe_value, quote

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_RE = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$")


_MAX_EXPONENT = 30


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


# Parsed quantities by their text: manifests repeat the same few requests thousands of times (production
# 5,000: 25,000 quantities per 1,000 nodes), and building each Fraction again was 14 % of parsing the input.
_PARSED: dict[str, Fraction] = {}
_PARSED_MAX = 100_000


def parse_quantity(value: object) -> Fraction:
    """Parse `500m`, `1.5`, `1Gi`, `1G`, `1e3`, `100Ki`, or a YAML int/float, exactly."""
    if type(value) is str:
        hit = _PARSED.get(value)
        if hit is None:
            hit = _parse(value)
            if len(_PARSED) < _PARSED_MAX:
                _PARSED[value] = hit
        return hit
    return _parse(value)


def _parse(value: object) -> Fraction:
    if isinstance(value, bool):
        raise QuantityError(f"expected a quantity (e.g. 500m, 1.5, 2Gi), got {describe_value(value)}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        # YAML turned `1.5` into a float: go back through its shortest repr, which is what the user wrote.
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        raise QuantityError(f"expected a quantity (e.g. 500m, 1.5, 2Gi), got {describe_value(value)}")
    m = _RE.match(text)
    if not m:
        raise QuantityError(f"{quote(text)} is not a quantity (expected e.g. 500m, 1.5, 2Gi, 1e3)")
    sign, number, exponent, suffix = m.groups()
    q = Fraction(number)
    if exponent:
        power = int(exponent[1:])
        # Upstream's int64-backed quantities cannot hold more; refusing also keeps `1e999999999` from hanging.
        if abs(power) > _MAX_EXPONENT:
            raise QuantityError(f"{quote(text)} is out of range")
        q *= Fraction(10) ** power
    elif suffix:
        q *= _BINARY.get(suffix) or _DECIMAL[suffix]
    return -q if sign == "-" else q


def to_milli(q: Fraction) -> int:
    """MilliValue(): rounds up to whole millis, as the API machinery does for cpu."""
    return math.ceil(q * 1000)


def to_int(q: Fraction) -> int:
    """Value(): rounds up to a whole unit (bytes, devices, pods)."""
    return math.ceil(q)


def resource_value(name: str, value: object) -> int:
    """A resource quantity in podplan's integer unit: cpu in millicores, everything else in whole units."""
    q = parse_quantity(value)
    return to_milli(q) if name == "cpu" else to_int(q)


def format_resource(name: str, value: int) -> str:
    """Human form of an integer resource amount (the inverse of resource_value, for output)."""
    if name == "cpu":
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    if name == "memory" or name == "ephemeral-storage" or name.startswith("hugepages-"):
        for suffix, factor in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value and value % factor == 0:
                return f"{value // factor}{suffix}"
    return str(value)
