"""Scale out on Ray: collect on every GPU of a node or a cluster, evaluate the board in parallel.

Modules (Ray is imported only inside them, and only when ``--ray`` is given):

- :mod:`kgpubench.ray.session`: connecting to (or starting) Ray, with a clear error when the ``ray`` extra is
  missing.
- :mod:`kgpubench.ray.collect`: ``kgpubench collect --ray``: one actor per GPU measures its partition of the
  configurations into its own shard; the driver merges each shard into the suite's shard folder as it arrives.
- :mod:`kgpubench.ray.board`: ``kgpubench leaderboard run|verify --ray``: every (model, task, scheme, fold)
  as a Ray task with declared CPU and memory, joined into the serial run's result.
- :mod:`kgpubench.ray.cli`: the ``--ray`` branches of the commands.

This module itself is pure Python: the partition rule is here so that it can be used and tested without Ray.
"""

from __future__ import annotations

import hashlib


def partition_of(row_id: str, parts: int) -> int:
    """The partition (``0 .. parts - 1``) of the configuration ``row_id`` among ``parts`` GPUs of one model.

    A pure function of the row id: the same on every run, machine and Python version, so a rerun with the
    same GPUs gives every actor the partition it had, and a rerun with other GPUs still covers every
    configuration exactly once (rows already in the shard are skipped whatever their partition).

    Parameters
    ----------
    row_id : str
        The row id of the configuration on this GPU model (:func:`kgpubench.schema.row_id_of`).
    parts : int
        How many partitions (GPUs of this model).

    Returns
    -------
    int
        The first 8 bytes of ``sha256(row_id)``, big-endian, modulo ``parts``.
    """
    if parts < 1:
        raise ValueError(f"partition_of(parts={parts!r}): expected at least one partition")
    digest = hashlib.sha256(row_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % parts


__all__ = ["partition_of"]
