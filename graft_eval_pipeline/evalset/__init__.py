"""The evaluation stages in plain Python (no Dagster), one package per stage."""
