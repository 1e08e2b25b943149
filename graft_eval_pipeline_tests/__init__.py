"""Tests of graft_eval_pipeline, mirroring its packages, with shared fixtures and fakes."""
