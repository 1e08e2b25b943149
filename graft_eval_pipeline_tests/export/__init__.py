"""Tests of the export stage: pull requests turned into sealed cases, redaction and rescans."""
