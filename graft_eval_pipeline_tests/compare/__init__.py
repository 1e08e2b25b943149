"""Tests of the comparison stage: paired comparison, statistics, rendering and calibration."""
