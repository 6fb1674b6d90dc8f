"""Hostile inputs, issue 30 items 2 and 7: ``submission.yaml`` bombs and bad values, a symlinked ``model.py``.

Before the fix, a 680-byte alias bomb in the optional ``license`` passed ``submission check`` and killed
``submission run`` with MemoryError, and a 100,000-deep value gave a RecursionError in ``check``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_helpers import cli

from kgpubench.board.pull_request import read_submission
from kgpubench.errors import SchemaValidationError
from kgpubench.testing import MEAN_MODEL_SOURCE

MODEL = MEAN_MODEL_SOURCE
META = """\
name: hostile
authors: [Ada Example]
description: The mean of the training targets, for every row.
runs:
  - {task: autotune-config, scheme: by-gpu}
"""


def alias_bomb() -> str:
    """Nine levels of nine aliases: 680 bytes that name 9**9 (387 million) strings."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]")
    return "\n".join(lines)


def folder(tmp_path: Path, meta: str, model: str | None = MODEL) -> Path:
    path = tmp_path / "submissions" / "hostile"
    path.mkdir(parents=True)
    (path / "submission.yaml").write_text(meta)
    if model is not None:
        (path / "model.py").write_text(textwrap.dedent(model))
    return path


def test_the_good_folder_reads(tmp_path):
    sub = read_submission(folder(tmp_path, META + "license: MIT OR Apache-2.0\n"))
    assert sub.record() == {"name": "hostile", "authors": ["Ada Example"], "url": None,
                            "description": "The mean of the training targets, for every row.",
                            "license": "MIT OR Apache-2.0"}


def _bomb_in_license() -> str:
    bomb = alias_bomb()
    return META + "license:\n" + textwrap.indent(bomb.replace("a: &a", "  a: &a"), "  ")


CASES = {
    "alias bomb in license": (_bomb_in_license(), "uses a YAML anchor or alias"),
    "one alias": (META.replace("authors: [Ada Example]", "authors: &x [Ada Example]\nurl: *x"),
                  "uses a YAML anchor or alias"),
    "100,000-deep value": (META + "license: " + "[" * 100_000 + "]" * 100_000 + "\n", "larger than 65,536 bytes"),
    "30,000-deep value": (META + "license: " + "[" * 30_000 + "]" * 30_000 + "\n",
                          "nests values more than 4 levels deep"),
    "deep mapping": (META + "license: " + "{a: " * 2000 + "1" + "}" * 2000 + "\n", "nests values more than 4"),
    "huge file": (META + "license: " + "x" * 70_000 + "\n", "larger than 65,536 bytes"),
    "many values": (META.replace("[Ada Example]", "[" + ", ".join(["a"] * 3000) + "]"), "more than 2000 values"),
    "license a list": (META + "license: [MIT, GPL]\n", "`license` must be an SPDX identifier or expression"),
    "license a mapping": (META + "license: {a: 1}\n", "got a dict"),
    "license with a newline": (META + 'license: "MIT\\nforged"\n', "got 'MIT\\nforged'"),
    "license too long": (META + "license: " + "A" * 101 + "\n", "`license` must be an SPDX"),
    "author not text": (META.replace("[Ada Example]", "[Ada Example, 42]"), "authors entry 2 must be one line"),
    "author with NUL": (META.replace("[Ada Example]", '["Ada\\0"]'), "authors entry 1 must be one line"),
    "too many authors": (META.replace("[Ada Example]", "[" + ", ".join(f"a{i}" for i in range(51)) + "]"),
                         "`authors` must be a list of 1 to 50"),
    "description a list": (META.replace("description: The mean of", "description: [The mean] #"),
                           "`description` must be one line"),
    "description too long": (META.replace("for every row.", "x" * 2001), "1 to 2000 characters"),
    "name an int": (META.replace("name: hostile", "name: 12"), "name a int must equal"),
    "task a mapping": (META.replace("task: autotune-config", "task: {x: 1}"), "runs entry 1: task must be"),
    "scheme a list": (META.replace("scheme: by-gpu", "scheme: [by-gpu]"), "runs entry 1: scheme must be"),
    "duplicate key": (META + "name: hostile\n", "the key 'name' appears twice"),
    "python tag": (META + "license: !!python/object:os.system x\n", "uses the YAML tag"),
    "binary tag": (META + "license: !!binary aGVsbG8=\n", "uses the YAML tag 'tag:yaml.org,2002:binary'"),
    "two documents": (META + "---\n" + META, "holds 2 YAML documents"),
    "complex key": (META + "? [a]\n: 1\n", "uses a list or mapping as a key"),
    "not utf-8": (META + "license: \udcff\n", "is not UTF-8 text"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_submission_yaml_is_refused_by_check_in_one_line(tmp_path, monkeypatch, capsys, case):
    meta, why = CASES[case]
    path = folder(tmp_path, "") if case == "not utf-8" else folder(tmp_path, meta)
    if case == "not utf-8":
        (path / "submission.yaml").write_bytes(meta.encode("utf-8", "surrogateescape"))
    with pytest.raises(SchemaValidationError) as err:
        read_submission(path)
    assert str(err.value).startswith(f"{path / 'submission.yaml'}: ") and why in str(err.value), str(err.value)
    code, out, err_text = cli(monkeypatch, capsys, "submission", "check", path)
    (line,) = err_text.splitlines()
    assert code == 1 and why in line and "Traceback" not in out + err_text


def test_the_alias_bomb_never_reaches_submission_run(tmp_path, monkeypatch, capsys):
    path = folder(tmp_path, _bomb_in_license())
    assert len(alias_bomb()) < 700
    code, _, err_text = cli(monkeypatch, capsys, "submission", "run", path, "--out", tmp_path / "ci")
    (line,) = err_text.splitlines()
    assert code == 1 and "uses a YAML anchor or alias" in line and not (tmp_path / "ci").exists()


def test_a_symlinked_model_file_is_refused_unread(tmp_path, monkeypatch, capsys):
    """Before: ``check`` parsed the link's target, and a syntax error showed its first token (a host file's
    content, e.g. the first field of /etc/passwd)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2-secret-token: more\n")
    path = folder(tmp_path, META, model=None)
    (path / "model.py").symlink_to(secret)
    with pytest.raises(SchemaValidationError) as err:
        read_submission(path)
    assert str(err.value).startswith(f"{path / 'model.py'}: is a symbolic link") and "hunter2" not in str(err.value)
    code, _, err_text = cli(monkeypatch, capsys, "submission", "check", path)
    assert code == 1 and "hunter2" not in err_text and "symbolic link" in err_text


def test_a_symlinked_meta_or_predictions_file_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(META)
    path = folder(tmp_path, META)
    (path / "submission.yaml").unlink()
    (path / "submission.yaml").symlink_to(elsewhere)
    with pytest.raises(SchemaValidationError, match="submission.yaml: is a symbolic link"):
        read_submission(path)
    (path / "submission.yaml").unlink()
    (path / "submission.yaml").write_text(META + "url: https://example.org/code\n")
    (path / "model.py").unlink()
    (path / "predictions").mkdir()
    (path / "predictions" / "autotune-config--by-gpu.csv").symlink_to(tmp_path / "secret.csv")
    with pytest.raises(SchemaValidationError, match="autotune-config--by-gpu.csv: is a symbolic link"):
        read_submission(path)
