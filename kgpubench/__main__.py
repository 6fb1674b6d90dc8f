"""``python -m kgpubench``: the command line."""

from kgpubench.cli import main

main()
