"""``python -m kgpubench``: the same as the ``kgpubench`` command (works from a checkout without installing)."""

from kgpubench.cli import main

if __name__ == "__main__":
    main()
