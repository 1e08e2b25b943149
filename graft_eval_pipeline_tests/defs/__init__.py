"""Tests of the Dagster definitions: assets, sensors, the executor, the IO manager, run isolation, the UI."""
