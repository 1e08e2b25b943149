"""Tests of the run stage: the engine over a set, fake or live, with trials, cache and batch."""
