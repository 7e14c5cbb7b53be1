"""The ``grapharc`` command line: one Typer app that plugins add commands to."""
