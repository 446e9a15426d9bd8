"""Plug-in methods: found on the registry's first use, never imported by ``import fabricopt``.

Two ways in:

1. **Entry points** of an installed distribution, group ``fabricopt.methods``::

       [project.entry-points."fabricopt.methods"]
       "circuits.mine" = "mypkg.heuristic:mine"   # a function: method "mine" of kind circuits
       mypkg = "mypkg.methods"                     # a module: its imports register methods

   An entry point that names a *function* is registered under its entry point name,
   ``<kind>.<method>``, as a heuristic (``exact=False``). One that names a *module*
   (or a function already decorated with ``@fabricopt.register_method(...)``) is just
   imported: its ``register_method`` calls say the kind, the name and ``exact``; the
   entry point's name is then only a label. Use the module form for exact or
   bound-only methods, or to register several methods at once.

2. **``FABRICOPT_PLUGINS``**, for code that is not installed: module names or ``.py``
   file paths separated by ``os.pathsep`` (``:`` on Unix), imported in order, e.g.
   ``FABRICOPT_PLUGINS=examples/mine.py fabricopt methods``. The variable is inherited by
   worker processes, so ``fabricopt bench`` sees the same methods.

A plug-in that fails to load — import error, unknown kind, bad entry point name, a
name that would shadow a built-in — does not stop anything: it is skipped with a
:class:`PluginWarning` naming the distribution (or the module) and the error.
Methods registered while a plug-in loads are credited to it (``Method.source``,
shown by ``fabricopt methods``).
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import importlib
import importlib.util
import logging
import os
import sys
import types
import warnings
from pathlib import Path

from fabricopt.methods import registry

__all__ = ["ENTRY_POINT_GROUP", "ENV_VAR", "PluginWarning", "load_plugins"]

ENTRY_POINT_GROUP = "fabricopt.methods"
ENV_VAR = "FABRICOPT_PLUGINS"

_log = logging.getLogger(__name__)



class PluginWarning(UserWarning):
    """A plug-in could not be loaded; its methods are not available."""


def load_plugins() -> None:
    """Load every entry point of :data:`ENTRY_POINT_GROUP`, then :data:`ENV_VAR`'s modules.

    Called once by the registry on first use; each failure becomes a
    :class:`PluginWarning` and the next plug-in is tried.
    """
    for ep in _entry_points():
        dist = _dist_label(ep)
        _guarded(dist, f"entry point {ep.name} = {ep.value}", lambda ep=ep: _load_entry_point(ep))
    for item in filter(None, os.environ.get(ENV_VAR, "").split(os.pathsep)):
        item = item.strip()
        _guarded(item, f"{ENV_VAR} entry {item!r}", lambda item=item: _import_item(item))


def _entry_points():
    from importlib import metadata  # 15 ms: only when the registry is first used

    try:
        found = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception as exc:  # a corrupt installed distribution must not break the registry
        _warn(f"could not list the {ENTRY_POINT_GROUP!r} entry points: "
              f"{type(exc).__name__}: {exc}")
        return []
    # Two copies of one distribution on sys.path list their entry points twice.
    seen, unique = set(), []
    for ep in found:
        key = (ep.name, ep.value)
        if key not in seen:
            seen.add(key)
            unique.append(ep)
    return unique


def _dist_label(ep) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "an unknown distribution"
    try:
        return f"{dist.name} {dist.version}"
    except Exception:
        return "an unknown distribution"


def _guarded(source: str, what: str, load) -> None:
    previous = registry._loading_source
    registry._loading_source = source
    try:
        _log.info("loading plug-in %s (%s)", source, what)
        load()
    except Exception as exc:
        _warn(f"plug-in {source} ({what}) failed, its methods are not available: "
              f"{type(exc).__name__}: {exc}")
    finally:
        registry._loading_source = previous


def _warn(message: str) -> None:
    # warn_explicit with a plain location: the default format would otherwise quote
    # a line of this file, which tells the user nothing about their plug-in.
    warnings.warn_explicit(message, PluginWarning, "fabricopt", 0)


def _load_entry_point(ep) -> None:
    target = ep.load()
    if isinstance(target, types.ModuleType):
        return  # importing it registered its methods
    if not callable(target):
        raise InvalidArgument(f"{ep.value} is a {type(target).__name__}, not a method function "
                        f"or a module")
    if getattr(target, "__fabricopt_methods__", None):
        return  # decorated with register_method: importing it registered it
    kind, sep, name = ep.name.partition(".")
    if not sep or not kind or not name:
        raise InvalidArgument(f"entry point name {ep.name!r} must be '<kind>.<method>' "
                         f"when it names a function")
    registry.register_method(kind, name, target)


def _import_item(item: str) -> None:
    if item.endswith(".py") or os.sep in item or (os.altsep and os.altsep in item):
        path = Path(item).expanduser().resolve()
        if not path.is_file():
            raise InvalidArgument(f"plugin = {item!r}: no such file: {path}")
        module_name = path.stem
        loaded = sys.modules.get(module_name)
        if loaded is not None and getattr(loaded, "__file__", None) \
                and Path(loaded.__file__).resolve() == path:
            return  # already imported (perhaps importing it is what loads the registry)
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # so pickling and re-imports find the same module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
    else:
        importlib.import_module(item)
