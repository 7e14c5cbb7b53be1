"""``python -m grapharc``: the same entry point as the ``grapharc`` script."""

from grapharc.cli.main import main

main()
