"""One exception hierarchy, in kgpubench/errors.py: nothing else defines an error class, every class is also a
builtin, and the command line turns each into one line and the class's exit code."""

from __future__ import annotations

import ast
import builtins
import inspect
from pathlib import Path

import pytest

import kgpubench.cli as cli
from kgpubench import errors

PACKAGE = Path(errors.__file__).resolve().parent
# Exceptions that are deliberately not KgpubenchErrors (see the errors module docstring).
NOT_ERRORS = {("sandbox/process.py", "Stop"), ("sandbox/linux.py", "IsolationError"),
              ("measure/backends/fake.py", "FakeCudaError"),
              # raised inside json.loads' object_pairs_hook and turned into one ImportFormatError by loads_json
              ("foundation/capped.py", "DuplicateKeyError")}


def _error_classes_outside_errors_py() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
            if node.name.endswith("Error") or any(b.endswith(("Error", "Exception", "Failure")) or b == "Exception"
                                                  for b in bases):
                found.append((rel, node.name))
    return found


def test_no_error_class_is_defined_outside_errors_py():
    assert set(_error_classes_outside_errors_py()) == NOT_ERRORS


def _hierarchy() -> list[type]:
    return [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.KgpubenchError)]


def test_every_error_is_also_a_builtin_and_documented():
    classes = _hierarchy()
    assert len(classes) >= 45  # the root, the old classes and the ones gathered from 21 modules
    builtin = {c for c in vars(builtins).values() if isinstance(c, type) and issubclass(c, BaseException)}
    for cls in classes:
        assert cls.__module__ == "kgpubench.errors" and cls.__doc__, cls
        if cls in (errors.KgpubenchError, errors.SuiteError):  # the root, and the base suites subclass
            continue
        assert any(b in builtin and b is not Exception for b in cls.__mro__[1:]), f"{cls.__name__} is no builtin"


def test_the_old_homes_still_export_the_moved_classes():
    from kgpubench.measure.backends.base import CompileFailed, LaunchFailed
    from kgpubench.models.evaluation import NoDataError, SubmissionError
    from kgpubench.sandbox.session import SandboxError
    from kgpubench.tasks.npb import MeasurementError

    assert SubmissionError is errors.SubmissionError and NoDataError is errors.NoDataError
    assert CompileFailed.status == "compile_error" and LaunchFailed("x", 700, sticky=True).sticky
    assert issubclass(SandboxError, SubmissionError) and MeasurementError is errors.MeasurementError


@pytest.mark.parametrize("cls", _hierarchy(), ids=lambda c: c.__name__)
def test_the_cli_prints_one_line_and_the_class_exit_code(cls, monkeypatch, capsys):
    def command():
        raise cls("what was found\nwhat was expected; the fix")

    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    monkeypatch.setattr(cli, "app", command)
    with pytest.raises(SystemExit) as stop:
        cli.main()
    err = capsys.readouterr().err
    assert stop.value.code == cls.exit_code == (2 if cls is errors.NoGpuError else 1)
    assert err.splitlines() == ["error: what was found what was expected; the fix"]
