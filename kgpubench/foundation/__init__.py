"""The foundation: what every layer reads and writes through, importing only ``kgpubench.errors``.

:mod:`~kgpubench.foundation.files` (atomic, no-clobber writes of bytes and parquet; the checks of an output
path), :mod:`~kgpubench.foundation.capped` (reading an upstream or untrusted file with a ceiling on its
decompressed size; strict JSON) and :mod:`~kgpubench.foundation.locking` (the store writers' ``fcntl.flock``).
This ``__init__`` imports nothing.
"""
