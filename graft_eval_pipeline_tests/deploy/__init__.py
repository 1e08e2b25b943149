"""Tests of the deployment files and the Postgres-backed Dagster instance."""
