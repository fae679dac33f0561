"""P2: one exception tree per package, in its ``_errors`` module, drawn in that module's
docstring. These tests read the drawing and compare it with the classes, so neither can change
without the other."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

#: Exception classes defined outside ``_errors`` on purpose, besides ``_private`` ones: control
#: flow that never reaches a caller, with the reason it stays where it is.
PRIVATE_CONTROL_FLOW = {
    # validation failure handed from a prepared tool to the executor, which turns it into data
    "toolcalls._tools.ArgumentsInvalid",
    # a replayed line (or --tools registry) that cannot be used, turned into exit status 2 by
    # the command line
    "toolcalls.__main__.ReplayError",
    # the same for a provider recording replayed with --format
    "toolcalls.adapters._replay.ReplayInputError",
    # the scan's verdict on an async callable a model instance holds, on a chart run
    # synchronously: hold and _vet_dynamic catch it and refuse with UnsupportedChart
    "statecharts._resolve.HeldAsync",
}

BRANCH = re.compile(
    r"^(?P<indent>(?:│   |    )*)(?:├── |└── )(?P<name>_?[A-Z]\w+)(?: \((?P<also>\w+)\))?"
)
ROOT = re.compile(r"^(?P<name>[A-Z]\w+)")


def drawn_tree(module: ModuleType) -> dict[str, str | None]:
    """``{class name: parent name}`` as the module docstring draws it (``None`` for the root):
    the first indented block that starts with a class name, one ``├──``/``└──`` per class."""
    assert module.__doc__ is not None
    parents: dict[str, str | None] = {}
    stack: list[str] = []
    for line in module.__doc__.splitlines():
        if not line.startswith("    "):
            if stack:
                break  # the end of the drawing
            continue
        body = line[4:]
        if not stack:
            root = ROOT.match(body)
            if root is not None:
                parents[root["name"]] = None
                stack.append(root["name"])
            continue
        branch = BRANCH.match(body)
        if branch is None:
            continue  # a description running on to the next line
        depth = len(branch["indent"]) // 4 + 1
        del stack[depth:]
        parents[branch["name"]] = stack[-1]
        stack.append(branch["name"])
    return parents


def actual_tree(module: ModuleType, root: type[BaseException]) -> dict[str, str | None]:
    """``{class name: parent name}`` for every class of ``module`` under ``root``."""
    found: dict[str, str | None] = {root.__name__: None}
    for name, value in vars(module).items():
        if inspect.isclass(value) and issubclass(value, root) and value is not root:
            assert value.__module__ == module.__name__, f"{name} is defined elsewhere"
            parent = next(base for base in value.__bases__ if issubclass(base, root))
            found[name] = parent.__name__
    return found


@pytest.mark.parametrize(
    ("package", "root_name"),
    [("statecharts", "StatechartsError"), ("toolcalls", "ToolCallsError")],
)
def test_each_package_draws_its_exception_tree_as_it_is(package: str, root_name: str) -> None:
    errors = importlib.import_module(f"{package}._errors")
    root = getattr(errors, root_name)
    assert drawn_tree(errors) == actual_tree(errors, root)


@pytest.mark.parametrize("package", ["statecharts", "toolcalls"])
def test_the_drawing_names_the_builtin_each_error_also_is(package: str) -> None:
    errors = importlib.import_module(f"{package}._errors")
    assert errors.__doc__ is not None
    drawn = [BRANCH.match(line[4:]) for line in errors.__doc__.splitlines()]
    also = {match["name"]: match["also"] for match in drawn if match and match["also"]}
    assert also
    for name, base in also.items():
        assert base in {klass.__name__ for klass in getattr(errors, name).__mro__}


def _optional_extra_missing(error: ImportError) -> bool:
    """Whether ``error`` says a third-party module is missing (a module of an optional extra,
    such as ``toolcalls.ray`` without Ray), as opposed to a broken module of ours."""
    missing = error if isinstance(error, ModuleNotFoundError) else error.__cause__
    if not isinstance(missing, ModuleNotFoundError):
        return False
    return (missing.name or "").split(".")[0] not in ("statecharts", "toolcalls")


def _error_classes_defined_in(package: str) -> dict[str, type[BaseException]]:
    root = importlib.import_module(package)
    classes: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(root.__path__, f"{package}.", onerror=lambda name: None):
        if info.name.endswith(".pytest_plugin") or (
            info.name.endswith(".__main__") and info.name != f"{package}.__main__"
        ):
            continue  # the plugin is pytest's; a subpackage's __main__ runs when imported
        try:
            module = importlib.import_module(info.name)
        except ImportError as error:
            if _optional_extra_missing(error):
                continue
            raise
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                classes[f"{value.__module__}.{value.__qualname__}"] = value
    return classes


@pytest.mark.parametrize("package", ["statecharts", "toolcalls"])
def test_every_error_a_package_raises_is_defined_in_its_errors_module(package: str) -> None:
    defined = _error_classes_defined_in(package)
    elsewhere = sorted(
        name
        for name in defined
        if not name.startswith(f"{package}._errors.")
        and not name.rsplit(".", 1)[1].startswith("_")
        and name not in PRIVATE_CONTROL_FLOW
    )
    assert not elsewhere, (
        f"move {', '.join(elsewhere)} into {package}/_errors.py under its root and draw it in "
        "the tree there (or, if it never reaches a caller, name it _private or list it in "
        "PRIVATE_CONTROL_FLOW with the reason)"
    )


def _public_modules(package: str) -> list[ModuleType]:
    """The package and its public modules and subpackages (no ``_private`` name)."""
    root = importlib.import_module(package)
    modules = [root]
    for info in pkgutil.iter_modules(root.__path__, f"{package}."):
        if (
            not info.name.rsplit(".", 1)[1].startswith("_")
            and info.name != f"{package}.pytest_plugin"
        ):
            try:
                modules.append(importlib.import_module(info.name))
            except ImportError as error:
                if not _optional_extra_missing(error):
                    raise
    return modules


@pytest.mark.parametrize(
    ("package", "root_name"),
    [("statecharts", "StatechartsError"), ("toolcalls", "ToolCallsError")],
)
def test_every_public_error_is_exported_where_it_is_used(package: str, root_name: str) -> None:
    """Each public error of the tree is in the ``__all__`` of the package or of the public
    module that raises it, as that very class."""
    errors = importlib.import_module(f"{package}._errors")
    public = {name for name in actual_tree(errors, getattr(errors, root_name)) if name[0] != "_"}
    exported = {
        name: getattr(module, name)
        for module in _public_modules(package)
        for name in getattr(module, "__all__", ())
        if name in public
    }
    assert set(exported) == public
    for name, value in exported.items():
        assert value is getattr(errors, name)


def test_errors_keep_the_builtin_types_callers_already_catch() -> None:
    from statemachine.exceptions import InvalidDefinition

    import statecharts
    import toolcalls

    assert issubclass(statecharts.UnsupportedChart, InvalidDefinition)
    assert issubclass(statecharts.GraphvizNotFound, RuntimeError)
    for error in (statecharts.CoverageError, statecharts.TraceError, statecharts.ManifestError):
        assert issubclass(error, ValueError)
    for error in (toolcalls.InvalidEvent, toolcalls.SnapshotError, toolcalls.InvalidToolCall):
        assert issubclass(error, ValueError)
    assert issubclass(toolcalls.InvalidTool, TypeError)
    assert issubclass(toolcalls.SessionClosed, RuntimeError)
    assert issubclass(toolcalls.ExecutorClosed, RuntimeError)


def test_field_errors_share_one_base_with_field_and_reason() -> None:
    from toolcalls import InvalidEvent, InvalidToolCall, SnapshotError
    from toolcalls._errors import _FieldError

    for error_type, subject in (
        (InvalidEvent, "event"),
        (InvalidToolCall, "tool call chunk"),
        (SnapshotError, "snapshot"),
    ):
        assert error_type.__bases__ == (_FieldError,)
        error = error_type("args", "must be a mapping")
        assert (error.field, error.reason) == ("args", "must be a mapping")
        assert str(error) == f"invalid {subject}: args: must be a mapping"


def test_a_damaged_session_checkpoint_is_a_checkpoint_error_and_still_a_snapshot_error() -> None:
    """R6, T22: a session checkpoint holds a tracker snapshot; its own damage says
    "checkpoint", and code that caught ``SnapshotError`` for both still catches it."""
    from toolcalls import CheckpointError, SnapshotError, ToolCallSession

    assert CheckpointError.__bases__ == (SnapshotError,)
    with pytest.raises(CheckpointError, match=r"^invalid session checkpoint: format: ") as caught:
        ToolCallSession.resume({"format": "nope"}, {})
    assert isinstance(caught.value, SnapshotError)
    assert caught.value.field == "format"
