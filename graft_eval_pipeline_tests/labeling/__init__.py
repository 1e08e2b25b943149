"""Tests of the labelling stage: labels, sessions, adjudication offers and agreement (kappa)."""
