"""Declared types and ranges of every option a run takes, checked before anything runs.

A :class:`Param` says what one option accepts (a kind, a range, or a set of choices).
Rankers declare their parameters in a class attribute ``PARAMS`` (merged along the class
hierarchy, so a subclass may narrow a range); grid files and run specs use the same
checks for their own keys. Every violation is a :class:`ParameterError` whose one-line
message names the option, the value given and what is valid.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass


class ParameterError(ValueError):
    """An option with a value of the wrong type or out of its range (one-line message)."""


@dataclass(frozen=True)
class Param:
    """One option: ``kind`` in {"float", "int", "bool", "str"}; numbers within [low, high]
    (an open end with ``low_open`` / ``high_open``), strings among ``choices``; ``None``
    allowed when ``optional``."""

    kind: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    optional: bool = False

    def describe(self) -> str:
        if self.kind == "bool":
            text = "true or false"
        elif self.kind == "str":
            text = "one of " + ", ".join(self.choices)
        else:
            noun = "an integer" if self.kind == "int" else "a finite number"
            if self.low is None and self.high is None:
                text = noun
            else:
                left = "(" if self.low_open or self.low is None else "["
                right = ")" if self.high_open or self.high is None else "]"
                lo = "-inf" if self.low is None else f"{self.low:g}"
                hi = "inf" if self.high is None else f"{self.high:g}"
                text = f"{noun} in {left}{lo}, {hi}{right}"
        return text + (" (or null)" if self.optional else "")

    def check(self, name: str, value, owner: str = ""):
        """The value, converted to its kind; a :class:`ParameterError` if it does not fit."""
        if value is None and self.optional:
            return None
        converted = self._convert(value)
        if converted is None or not self._in_range(converted):
            where = f"{owner}: " if owner else ""
            raise ParameterError(f"{where}option {name}={value!r} is invalid; expected {self.describe()}")
        return converted

    def _convert(self, value):
        if self.kind == "bool":
            return value if isinstance(value, bool) else None
        if self.kind == "str":
            return value if isinstance(value, str) and value in self.choices else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if not math.isfinite(value):
            return None
        if self.kind == "int":
            return int(value) if float(value).is_integer() else None
        return float(value)

    def _in_range(self, value) -> bool:
        if self.kind in ("bool", "str"):
            return True
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return not (self.high is not None and (value > self.high or (self.high_open and value == self.high)))


def positive(kind: str = "float") -> Param:
    return Param(kind, 0, None, low_open=True)


def at_least(low, kind: str = "int") -> Param:
    return Param(kind, low)


def between(low, high, low_open=False, high_open=False) -> Param:
    return Param("float", low, high, low_open, high_open)


def choice(*options) -> Param:
    return Param("str", choices=tuple(options))


FLAG = Param("bool")


def check_all(declared: dict[str, Param], given: dict, owner: str) -> dict:
    """Check every given option against its declaration; unknown names are an error listing the valid ones."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        valid = ", ".join(f"{k} ({p.describe()})" for k, p in declared.items()) or "none"
        raise ParameterError(f"{owner} has no option {', '.join(unknown)}; its options: {valid}")
    return {k: declared[k].check(k, v, owner) for k, v in given.items()}


@functools.lru_cache(maxsize=1)
def _yaml_loader():
    """A safe YAML loader that also reads ``1e-3`` and ``1E+5`` as numbers (YAML 1.2 floats)."""
    import re

    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
        list("-+0123456789"))
    return Loader


def parse_assignments(pairs, option: str) -> dict:
    """``key=value`` command-line options (``--set``, ``-p``) with YAML values (``-p datasets='[mq2008]'``)."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"{option} expects key=value, got {pair!r}")
        out[key.strip()] = yaml_load(value)
    return out


def yaml_load(text: str):
    """Parse YAML text (grid files, ``--set`` and ``-p`` values) with numbers in exponent form as floats."""
    import yaml

    return yaml.load(text, Loader=_yaml_loader())
