"""Tests of the report stage: report files, the HTML report, evidence, baseline and thresholds."""
