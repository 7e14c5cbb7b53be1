"""The names of the seven tools grapharc-tools registers."""

SEVEN = ("read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "run_command")
