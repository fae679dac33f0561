"""Callables of a module other than the model's, handed out by a model's property or held by
a model instance (test_divergences_r8.py): each asks python-statemachine's machine something
the compiled instance answers otherwise."""

from __future__ import annotations

import functools
from typing import Any

from statemachine import StateChart


def is_machine(machine: Any) -> bool:
    return isinstance(machine, StateChart)


def matches(expected: bool, machine: Any) -> bool:
    return isinstance(machine, StateChart) is expected


def has_bases(machine: Any) -> bool:
    return len(machine.__class__.__mro__) > 3


class Checker:
    """A callable object, and the methods of one."""

    def __call__(self, machine: Any) -> bool:
        return isinstance(machine, StateChart)

    def method(self, machine: Any) -> bool:
        return isinstance(machine, StateChart)


class Holder:
    """Another object keeping a lambda."""

    def __init__(self) -> None:
        self.check = lambda machine: isinstance(machine, StateChart)


def _passing(function: Any) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return wrapper


wrapped = _passing(is_machine)
