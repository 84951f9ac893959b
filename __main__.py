"""Pulumi entry point (see components/program.py)."""

from components.program import run

run()
