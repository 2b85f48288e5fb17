"""A researcher's own ranker or user, written anywhere, used wherever a built-in one is.

A name with a colon is an import reference: ``package.module:Name`` (a module on the path) or
``path/to/file.py:Name`` (a file, relative to the working directory). Installed packages can also
register short names through the entry point groups ``olr_core.rankers`` and ``olr_core.users``, so
``pip install olr-mymethod`` makes ``-a mymethod`` work. A run of an external class is keyed by its
reference, its parameters and a hash of its module's source and of the modules of the researcher's own
code it imports at module level (:func:`source_hash`, :func:`own_modules`), so a changed method or helper
is never served a stale result; the hash is part of the run's stored spec. A plug-in runs behind
:mod:`olr_core.plugin_guard`: read-only data, every returned value checked, its errors reported in one line.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import posix
import sys
import sysconfig
import threading
from importlib.metadata import entry_points
from pathlib import Path

RANKER_GROUP, USER_GROUP = "olr_core.rankers", "olr_core.users"


class PluginError(ValueError):
    """An external class that cannot be loaded or does not follow its protocol (one line, naming it)."""


class ProcessExitCalled(SystemExit):
    """``os._exit`` called by a plug-in while it runs: raised instead of ending the process without a word (an
    ``os._exit`` skips every handler, so olr could not say which plug-in ended it, nor with what code)."""


_inside_plugin = threading.local()            # depth and process id of the plug-in calls this thread is in
_process_exit = os._exit


def _exit_unless_in_a_plugin(code):
    """``os._exit(code)``, except in a plug-in's call (in the process that made it): :class:`ProcessExitCalled`,
    which the guard reports in one line naming the plug-in. A child the plug-in forked exits as asked."""
    if getattr(_inside_plugin, "depth", 0) and _inside_plugin.pid == os.getpid():
        raise ProcessExitCalled(f"os._exit({code}) would end olr without a word; raise an exception instead")
    _process_exit(code)


os._exit = posix._exit = _exit_unless_in_a_plugin   # (before any plug-in is imported: `from os import _exit` too)


@contextlib.contextmanager
def plugin_call():
    """While open, this thread runs a plug-in's code (its import, constructor or a method): an ``os._exit``
    in it raises :class:`ProcessExitCalled` (a :class:`SystemExit`, which the guard reports) instead."""
    depth = getattr(_inside_plugin, "depth", 0)
    _inside_plugin.depth, _inside_plugin.pid = depth + 1, os.getpid()
    try:
        yield
    finally:
        _inside_plugin.depth = depth


def is_reference(name: str) -> bool:
    return isinstance(name, str) and ":" in name


def _module_from_file(path: Path):
    name = "olr_plugin_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with plugin_call():
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as err:       # (a sys.exit or an argparse at module level: one line too)
        del sys.modules[name]
        raise PluginError(f"{path}: importing it failed ({type(err).__name__}: {err}){_beside_hint(err, path)}") \
            from None
    return module


def _beside_hint(err: BaseException, path: Path) -> str:
    """For a module the plug-in file imports that lies beside it: how to make it importable."""
    missing = getattr(err, "name", None) if isinstance(err, ModuleNotFoundError) else None
    folder = path.resolve().parent
    if not missing or not ((folder / f"{missing.partition('.')[0]}.py").is_file()
                           or (folder / missing.partition(".")[0]).is_dir()):
        return ""
    return (f"; {missing} lies beside it in {folder}, which is not on the module path: run with "
            f"PYTHONPATH={folder} (a plug-in file's own folder is not searched)")


def load_reference(reference: str, what: str = "ranker"):
    """The object ``module:Name`` or ``file.py:Name`` names (modules are imported once per process)."""
    module_name, _, attribute = reference.rpartition(":")
    if not module_name or not attribute:
        raise PluginError(f"{what} {reference!r}: write package.module:Name or path/to/file.py:Name")
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name)
        if not path.is_file():
            raise PluginError(f"{what} {reference!r}: no file {path} (paths are relative to {Path.cwd()})")
        module = _cached_file_module(str(path.resolve()))
    else:
        try:
            with plugin_call():
                module = importlib.import_module(module_name)
        except ImportError as err:
            raise PluginError(f"{what} {reference!r}: cannot import {module_name} ({err}); put its folder on "
                              "PYTHONPATH or name the file (path/to/file.py:Name)") from None
        except ProcessExitCalled as err:
            raise PluginError(f"{what} {reference!r}: importing {module_name} failed ({err})") from None
    if not hasattr(module, attribute):
        raise PluginError(f"{what} {reference!r}: {module_name} has no {attribute}")
    return getattr(module, attribute)


@functools.cache
def _cached_file_module(path: str):
    return _module_from_file(Path(path))


def registered(group: str) -> dict[str, str]:
    """Names that installed packages register in an entry point group: {name: "module:Name"}."""
    return {ep.name: ep.value for ep in entry_points(group=group)}


def resolve(name: str, group: str) -> str | None:
    """The import reference behind ``name``: itself if it is one, a registered name's value, else None."""
    if is_reference(name):
        return name
    return registered(group).get(name)


def source_hash(obj) -> str:
    """A hash of the source of the module that defines ``obj`` (a class or a function) and of every module of
    the researcher's own code it imports at module level, directly or through those (:func:`own_modules`);
    for a class defined in a notebook cell or an interactive session (no file), a hash of its methods'
    compiled code. A module with no helper of its own hashes as its file alone."""
    module = inspect.getmodule(obj)
    try:
        source = Path(inspect.getsourcefile(module)).read_bytes()
    except (TypeError, OSError):
        return hashlib.sha256(_compiled_code(obj)).hexdigest()[:12]
    h = hashlib.sha256(source)
    for helper in own_modules(module)[1:]:
        h.update(b"\0" + helper.__name__.encode() + b"\0" + Path(helper.__file__).read_bytes())
    return h.hexdigest()[:12]


@functools.cache
def _not_own_roots() -> tuple[str, ...]:
    """Folders of code that is not the researcher's: the Python library, installed packages, olr_core."""
    paths = sysconfig.get_paths()
    library = {str(Path(paths[k]).resolve()) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(sorted(library)) + (str(Path(__file__).resolve().parent),)


def is_own_code(path: str | None) -> bool:
    """``path`` is a file of the researcher's own code (not the Python library, an installed package, olr_core)."""
    if not path or path.startswith("<"):
        return False
    resolved = str(Path(path).resolve())
    return not (resolved.startswith(_not_own_roots()) or "site-packages" in resolved or "dist-packages" in resolved)


def own_modules(module) -> list:
    """``module`` and the modules of the researcher's own code it imports at module level (``import helper``,
    ``from helper import f``, ``from . import sub``), followed transitively, in a fixed order. Imports made
    inside a function only when it runs are not seen."""
    found, todo = [module], [module]
    while todo:
        for value in list(vars(todo.pop()).values()):
            other = value if inspect.ismodule(value) else sys.modules.get(getattr(value, "__module__", None) or "")
            if other is not None and other not in found and is_own_code(getattr(other, "__file__", None)):
                found.append(other)
                todo.append(other)
    return [module] + sorted(found[1:], key=lambda m: m.__name__)


def _compiled_code(obj) -> bytes:
    classes = [] if inspect.isfunction(obj) else [k for k in inspect.getmro(obj) if k is not object]
    functions = [obj] if inspect.isfunction(obj) else \
        [f for klass in classes for f in vars(klass).values() if inspect.isfunction(f)]
    return repr([(f.__qualname__, f.__code__.co_code, f.__code__.co_consts) for f in functions]).encode()


RANKER_METHODS = ("start", "rank", "learn", "score")


def check_ranker_class(cls, name: str) -> None:
    """``cls`` follows :class:`olr_core.rankers.base.Ranker`, else a one-line error naming what is missing."""
    if not inspect.isclass(cls):
        raise PluginError(f"ranker {name!r} is not a class (got {type(cls).__name__})")
    missing = [m for m in RANKER_METHODS if not callable(getattr(cls, m, None))]
    if missing:
        raise PluginError(f"ranker {name!r} ({cls.__name__}) has no method {', '.join(missing)}: a ranker follows "
                          "olr_core.rankers.base.Ranker (start, rank, learn, score; subclass BaseRanker or "
                          "LinearRanker for the defaults)")
