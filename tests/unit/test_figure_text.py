"""Figures in the CLI's and the maintainer's tables: a kappa that comes out as -1e-17 (two raters who agree on
every item of one class) read '-0.000' in the maintainer's dock; it is 0."""

from reviewer.console import figure


def test_a_rounding_negative_zero_reads_zero():
    assert figure(-1e-17) == "0.000"
    assert figure(-0.0) == "0.000"
    assert figure(-0.0004) == "0.000"  # rounds to zero: no sign
    assert figure(-0.0006) == "-0.001"  # rounds away from zero: keeps it


def test_none_is_a_dash_and_counts_stay_whole():
    assert figure(None) == "-"
    assert figure(11) == "11"
    assert figure(0.9091) == "0.909"
