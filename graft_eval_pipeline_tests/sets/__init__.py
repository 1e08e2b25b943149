"""Tests of the case-set stage: case format, sealing, store, journal, rollback and bad input."""
