"""Tests of the graft-eval command line: each command's options, output and exit codes."""
