"""Tests of the scoring stage: report schema, rows, metrics and kappa."""
