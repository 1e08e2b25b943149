"""Tests of the secret rules: scanning, the gitleaks rules and the detection corpus."""
