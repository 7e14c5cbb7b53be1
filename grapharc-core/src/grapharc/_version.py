"""The version every GraphARC distribution shares (a test pins it to the metadata)."""

__version__ = "0.1.0"
