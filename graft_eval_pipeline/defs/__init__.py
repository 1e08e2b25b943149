"""The Dagster shell: assets, checks, jobs, resources, sensors and schedules over the plain-Python stages."""
