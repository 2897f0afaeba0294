"""Value validity per field type and the reference-range rule."""

import pytest

from reviewer.bank.model import INSUFFICIENT, Field, is_valid_value, multi_sensor_of, range_problem

CAT = Field("direction", "category", options=("increase", "decrease", "no significant change"))


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        (CAT, "increase", True),
        (CAT, "Increase", False),  # bank data is strict
        (CAT, 3, False),  # a number where a category is expected
        (Field("n", "number", unit="km2"), 0.28, True),
        (Field("n", "number", unit="km2"), "0.28", False),  # a string is not a number
        (Field("n", "number", unit="km2"), True, False),
        (Field("y", "year"), 2012, True),
        (Field("y", "year"), "2012", False),
        (Field("ys", "years"), [2003, 2012], True),
        (Field("ys", "years"), [2003, 2003], False),
        (Field("m", "month"), 12, True),
        (Field("m", "month"), 13, False),
        (Field("q", "quadrant"), "north-west", True),
        (Field("q", "quadrant"), "north", False),
        (Field("t", "text"), "anything", True),
    ],
)
def test_value_validity(field, value, ok):
    assert is_valid_value(field, value) is ok


@pytest.mark.parametrize(
    "field",
    [
        CAT,
        Field("n", "number", unit="x"),
        Field("y", "year"),
        Field("ys", "years"),
        Field("m", "month"),
        Field("q", "quadrant"),
        Field("t", "text"),
    ],
)
def test_every_field_accepts_insufficient_evidence(field):
    assert is_valid_value(field, INSUFFICIENT)


def test_answers_are_compared_leniently():
    assert is_valid_value(CAT, "  Increase ", lenient_case=True)
    assert is_valid_value(CAT, "Insufficient Evidence", lenient_case=True)


def test_range_rule():
    assert range_problem(0.28, 0.25, 0.31) is None
    assert range_problem(100, 95, 105) is None  # exactly +-5% passes
    assert "narrower" in range_problem(100, 96, 105)  # 4% below
    assert "does not contain" in range_problem(100, 101, 120)
    assert range_problem(0, -0.01, 0.01) is None  # zero reference with an absolute floor
    assert "floor" in range_problem(0, 0, 0)
    assert range_problem(-10, -10.5, -9.5) is None  # negative reference: +-0.5


def test_multi_sensor_needs_two_landsat_sensors():
    assert multi_sensor_of(["TM", "OLI"])
    assert not multi_sensor_of(["OLI", "MODIS"])
