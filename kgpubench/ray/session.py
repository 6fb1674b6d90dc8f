"""Connecting to Ray for ``--ray [ADDRESS]``: start a local instance or join an existing cluster.

``ADDRESS`` is what :func:`ray.init` takes:

- none (``--ray`` alone): ``$RAY_ADDRESS`` when it is set, else a new Ray instance on this machine that uses
  its CPUs and GPUs (no dashboard, no usage statistics sent);
- ``local``: always a new instance on this machine;
- ``auto`` or ``HOST:PORT``: the cluster this node belongs to (``ray start --head`` / ``ray start
  --address=HEAD:6379`` on each node first);
- ``ray://HOST:10001``: a Ray Client connection (board only: collection writes its shards on a node of the
  cluster, so it must run on one).

Usage statistics are switched off (``RAY_USAGE_STATS_ENABLED=0``) unless the environment says otherwise.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from kgpubench.errors import ClusterError, MissingDependencyError

LOCAL = "local"
INSTALL_HINT = 'pip install "kgpubench[ray]"'


def import_ray() -> Any:
    """The ``ray`` module (usage statistics off unless asked for), or a one-line error naming the extra."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise MissingDependencyError(f"--ray needs Ray, which is not installed; install the ray extra: "
                                     f"{INSTALL_HINT}.") from None
    return ray


def resolve_address(address: str | None) -> str | None:
    """The address to join, or ``None`` to start a local instance (``--ray`` alone, ``--ray local``)."""
    text = (address or "").strip()
    if text == LOCAL:
        return None
    return text or os.environ.get("RAY_ADDRESS") or None


@contextlib.contextmanager
def ray_session(address: str | None = None, *, allow_client: bool = True) -> Iterator[Any]:
    """Yield the ``ray`` module connected to ``address`` (see the module docstring); disconnect afterwards.

    When Ray is already initialised in this process (a test, a notebook), that session is used and left
    open.

    Raises
    ------
    kgpubench.errors.MissingDependencyError
        The ``ray`` extra is not installed.
    kgpubench.errors.ClusterError
        The cluster cannot be reached, or a ``ray://`` client address where ``allow_client`` is false.
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    target = resolve_address(address)
    if target and target.startswith("ray://") and not allow_client:
        raise ClusterError(f"--ray {target}: a Ray Client address; collection writes its shards on the driver's "
                           "node, so run `kgpubench collect --ray auto` on a node of the cluster (e.g. the head).")
    kwargs: dict[str, Any] = {"logging_level": logging.WARNING}
    if target is None:
        kwargs.update(address=LOCAL, include_dashboard=False)
    else:
        kwargs["address"] = target
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        where = target or "a new local instance"
        raise ClusterError(f"--ray {address or ''}: cannot start or join Ray at {where} ({why}); for a cluster run "
                           "`ray start --head` on one node and pass its address (or `auto` on a node of it).") from None
    try:
        yield ray
    finally:
        ray.shutdown()


__all__ = ["INSTALL_HINT", "LOCAL", "import_ray", "ray_session", "resolve_address"]
