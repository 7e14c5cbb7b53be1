"""Hook implementations for this plugin (kept light: no heavy imports here)."""
