"""One registry type for everything kgpubench looks up by name: tasks, metrics, scorers, measurement oracles,
import formats, suites, baselines.

A :class:`Registry` maps names to objects of one type. Its built-in entries come first, in declaration order;
then those that installed packages plug in through its entry-point group (``kgpubench.tasks``, ``kgpubench.metrics``,
...), sorted by name.
Entry points are read on the first look-up (never at import), and each plugged-in object goes through the same
checks as a built-in one. Another package adds, for example, a task and a metric::

    [project.entry-points."kgpubench.tasks"]
    my-task = "mypkg.bench:TASK"          # a kgpubench.tasks.Task (or a function returning one)

    [project.entry-points."kgpubench.metrics"]
    my_metric = "mypkg.bench:METRIC"      # a kgpubench.tasks.metrics.Metric

The entry point's name is the registered name; an object that carries a name of its own (a task, a metric, an
import format; a baseline file's stem) must carry that one. Nothing is ever replaced: a second entry of a name,
built in or plugged in, is one :class:`~kgpubench.errors.DuplicateNameError` naming both origins. A plugin that
fails to import, gives an object of the wrong type or fails its registry's checks is one
:class:`~kgpubench.errors.PluginError` naming its distribution and entry point; the command line prints it as
one line (exit 1). The first such error is raised again by every later look-up of that registry, so that no
command runs on a half-loaded registry.

>>> from kgpubench.registry import Registry
>>> colours = Registry("colour", None, str, builtins=lambda: [("red", "#f00"), ("green", "#0f0")])
>>> list(colours), colours["red"]
(['red', 'green'], '#f00')
"""

from __future__ import annotations

import importlib.metadata
import inspect
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Generic, TypeVar

from kgpubench.errors import DuplicateNameError, KgpubenchError, PluginError, escape_text, unknown_name

T = TypeVar("T")
#: The origin of every entry kgpubench declares itself.
BUILT_IN = "kgpubench (built in)"
_NEW, _LOADING, _LOADED = "new", "loading", "loaded"


def entry_point_origin(entry: importlib.metadata.EntryPoint) -> str:
    """Where a plugged-in entry comes from: its entry point, group and distribution, for messages."""
    dist = getattr(entry, "dist", None)
    where = f"distribution {dist.name} {dist.version}" if dist is not None else "an unnamed distribution"
    return escape_text(f"entry point '{entry.name} = {entry.value}' (group {entry.group}) of {where}", max_len=300)


class Registry(Mapping[str, T], Generic[T]):
    """Name -> object of one type: built-in entries, then plugged-in ones (see the module doc).

    Parameters
    ----------
    kind : str
        What an entry is, for messages (``task``, ``metric``, ``import format``).
    group : str or None
        The entry-point group plugins register in (``kgpubench.tasks``); None: built-in entries only.
    types : type or tuple of types
        What an entry must be an instance of.
    builtins : callable, optional
        Returns the built-in ``(name, object)`` pairs in declaration order; called on first use, so that
        declaring a registry costs nothing (a folder scan, a module of declarations).
    check : callable, optional
        ``(name, object) -> None``, raising a :class:`~kgpubench.errors.KgpubenchError` for an entry that does
        not follow its contract; it runs on every entry, built in or plugged in.
    name_of : callable, optional
        The name an object carries itself (``task.name``); an entry must be registered under that name.
    """

    def __init__(self, kind: str, group: str | None, types: type | tuple[type, ...] = object, *,
                 builtins: Callable[[], Iterable[tuple[str, T]]] | None = None,
                 check: Callable[[str, T], None] | None = None,
                 name_of: Callable[[T], str] | None = None) -> None:
        self.kind = kind
        self.group = group
        self.types = types
        self._builtins = builtins
        self._check = check
        self._name_of = name_of
        self._entries: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._state = _NEW
        self._error: KgpubenchError | None = None
        self._lock = threading.RLock()

    # ----- adding ----------------------------------------------------------------------------------------------
    def register(self, name: str, obj: T, *, origin: str = BUILT_IN) -> T:
        """Add ``obj`` as ``name`` and return it. Refused: a name already registered
        (:class:`~kgpubench.errors.DuplicateNameError`, naming both origins), an object of another type
        (``TypeError``), a name other than the one the object carries (``ValueError``), and whatever the
        registry's ``check`` refuses."""
        with self._lock:
            self._load_builtins()
            self._add(name, obj, origin)
        return obj

    @contextmanager
    def added(self, name: str, obj: T) -> Iterator[T]:
        """``obj`` registered as ``name`` for the duration of a ``with`` block (a walk-through, a test), then
        taken out again."""
        self.register(name, obj, origin="a with-block (Registry.added)")
        try:
            yield obj
        finally:
            with self._lock:
                self._entries.pop(name, None)
                self._origins.pop(name, None)

    def reload(self) -> None:
        """Forget the plugged-in entries (and a plugin's error): the next look-up reads the entry points again,
        for a package installed while this process runs."""
        with self._lock:
            for name in [n for n, o in self._origins.items() if o != BUILT_IN]:
                del self._entries[name]
                del self._origins[name]
            self._state, self._error = _NEW, None

    def _add(self, name: str, obj: T, origin: str) -> None:
        if not isinstance(obj, self.types):
            raise TypeError(f"a {self.kind} must be a {_type_names(self.types)}, got a {type(obj).__name__} "
                            f"for {name!r}")
        if self._name_of is not None and self._name_of(obj) != name:
            raise ValueError(f"{self.kind} {name!r} calls itself {self._name_of(obj)!r}: register it under its "
                             "own name")
        if name in self._entries:
            raise DuplicateNameError(f"{self.kind} {name!r} from {origin} is already registered by "
                                     f"{self._origins[name]}; give one of them another name (or uninstall the "
                                     "package that plugs it in).")
        if self._check is not None:
            self._check(name, obj)
        self._entries[name] = obj
        self._origins[name] = origin

    # ----- loading ---------------------------------------------------------------------------------------------
    def _load(self) -> None:
        if self._state == _LOADED and self._error is None:
            return
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._state != _NEW:  # loaded, or being loaded by this thread (a plugin looking something up)
                return
            self._state = _LOADING
            try:
                self._load_builtins()
                self._load_plugins()
            except KgpubenchError as exc:
                self._error = exc
                raise
            finally:
                self._state = _LOADED

    def _load_builtins(self) -> None:
        make, self._builtins = self._builtins, None
        if make is not None:
            for name, obj in make():
                self._add(name, obj, BUILT_IN)

    def _load_plugins(self) -> None:
        if self.group is None:
            return
        found: dict[str, importlib.metadata.EntryPoint] = {}
        for entry in sorted(importlib.metadata.entry_points(group=self.group), key=lambda e: (e.name, e.value)):
            if entry.name in found:
                raise DuplicateNameError(f"{self.kind} {entry.name!r} is plugged in twice: by "
                                         f"{entry_point_origin(found[entry.name])} and by "
                                         f"{entry_point_origin(entry)}; uninstall one of the two packages.")
            found[entry.name] = entry
        for name, entry in found.items():
            origin = entry_point_origin(entry)
            obj = self._load_entry(entry, origin)
            try:
                self._add(name, obj, origin)
            except DuplicateNameError:
                raise
            except Exception as exc:  # whatever the checks say of a plugged-in object: one line, never a traceback
                raise PluginError(f"the {self.kind} plugin {name!r} ({origin}) is refused: {_one_line(exc)}. "
                                  "Fix or uninstall that package.") from None

    def _load_entry(self, entry: importlib.metadata.EntryPoint, origin: str) -> T:
        """The object an entry point names (or that the function it names returns)."""
        try:
            obj = entry.load()
            return obj() if inspect.isfunction(obj) else obj
        except Exception as exc:  # anything the plugin's import raises: one line, never a traceback
            raise PluginError(f"the {self.kind} plugin {entry.name!r} ({origin}) failed to load: "
                              f"{type(exc).__name__}: {_one_line(exc)}. Fix or uninstall that package.") from None

    # ----- looking up ------------------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> T:
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            raise unknown_name(self.kind, name, self._entries) from None

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._load()
        return len(self._entries)

    def origin(self, name: str) -> str:
        """Where ``name`` comes from: :data:`BUILT_IN`, or its entry point and distribution."""
        self.__getitem__(name)
        return self._origins[name]

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, group={self.group!r}, state={self._state!r})"


def _type_names(types: type | tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))


def _one_line(exc: BaseException) -> str:
    return escape_text(" ".join(str(exc).split()), max_len=300)


__all__ = ["BUILT_IN", "Registry", "entry_point_origin"]
