"""A conformance suite for implementations of seed 000 (tool call streaming).

``check(implementation)`` runs the tool call chart's derived stateful test and its
transition-covering paths against an implementation beside this package's tracker, and returns
a ``Report`` (its ``divergence`` holds the shrunk counterexample, if any). An implementation is
an ``ObjectImplementation`` (a Python factory of objects with ``apply/get/list``) or a
``SubprocessImplementation`` (a program speaking the JSON-lines protocol in ``_protocol``).
``toolcalls conformance --cmd ... | --object module:factory`` is the command line.
Needs Hypothesis (the ``testing`` extra).
"""

from .._errors import ImplementationFailed, ProtocolError
from ._protocol import Implementation, ObjectImplementation, SubprocessImplementation

__all__ = [
    "Implementation",
    "ImplementationFailed",
    "ObjectImplementation",
    "ProtocolError",
    "Report",
    "SubprocessImplementation",
    "check",
]


def __getattr__(name: str) -> object:
    if name in ("check", "Report"):  # imported on use: they need Hypothesis
        from . import _suite

        return getattr(_suite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
