"""Tests of the GitHub reads: client, auth, rate limiting, provenance and pull requests."""
