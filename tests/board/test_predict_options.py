"""``kgpubench predict``'s options on the shipped data, refused before any training: a boolean column's values
(``--set l2_flushed=maybe``) and ``--model`` given a file (model code outside the sandbox is only ours)."""

from __future__ import annotations

import json
import math

import pytest
from cli_helpers import cli

import kgpubench
from kgpubench.board import predict as P
from kgpubench.errors import OptionError
from kgpubench.resources import bundled_path
from kgpubench.schema import get_table
from kgpubench.tasks import get_task

TASK = "program-time"


@pytest.fixture(scope="module")
def inputs():
    """Every input column program-time reads (but params columns), from one shipped row."""
    task = get_task(TASK)
    decl = get_table(task.config)
    row = kgpubench.load_dataset(task.config, format="pandas").iloc[0]
    values = {}
    for c in P.input_columns(task):
        if decl.column(c).type in ("params", "params_text"):
            continue
        v = row[c]
        values[c] = None if v is None or (isinstance(v, float) and math.isnan(v)) else v
    return {c: (v.item() if hasattr(v, "item") else v) for c, v in values.items()}




def test_the_shipped_column_is_boolean():
    assert get_table(get_task(TASK).config).column("l2_flushed").type == "bool"
    assert "l2_flushed" in P.input_columns(get_task(TASK))


@pytest.mark.parametrize("value", ["maybe", "2", "-1", "0.5", "yes"])
def test_a_value_a_boolean_column_cannot_hold_is_one_line_saying_it_is_boolean(value, inputs, tmp_path,
                                                                                 monkeypatch, capsys):
    path = tmp_path / "in.json"
    path.write_text(json.dumps(inputs))
    trained = []
    monkeypatch.setattr(P, "cached_model", lambda *a, **k: trained.append(a))
    code, out, err = cli(monkeypatch, capsys, "predict", TASK, "--gpu", "NVIDIA L4", "--input", path,
                         "--set", f"l2_flushed={value}")
    assert code == 1 and out == "" and not trained
    assert err.startswith("error: column 'l2_flushed' is boolean:") and f"{value!r} is not one of its values" in err
    assert "give true or false (or 1 or 0; null where it does not apply)" in err and "Traceback" not in err


@pytest.mark.parametrize("value, number", [("true", 1.0), ("False", 0.0), ("1", 1.0), ("0", 0.0), (True, 1.0)])
def test_the_values_a_boolean_column_takes_pass(value, number, inputs):
    task = get_task(TASK)
    P.check_names(task, {**inputs, "l2_flushed": value})  # no error
    assert P._value(task, "l2_flushed", value, False, None) == number


def test_a_null_boolean_passes_as_not_applying(inputs):
    task = get_task(TASK)
    P.check_names(task, {**inputs, "l2_flushed": "null"})
    assert math.isnan(P._value(task, "l2_flushed", "null", False, None))


@pytest.mark.parametrize("given", ["mine.py", "models/mine", "baseline-copy"])
def test_model_given_a_file_says_why_only_baselines_run(given, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    source = (bundled_path("baselines") / "median.py").read_text()  # a real model file, as a user would copy one
    for name in ("mine.py", "models/mine", "baseline-copy"):
        (tmp_path / name).write_text(source)
    trained = []
    monkeypatch.setattr(P, "cached_model", lambda *a, **k: trained.append(a))
    code, out, err = cli(monkeypatch, capsys, "predict", TASK, "--gpu", "NVIDIA L4", "--model", given)
    assert code == 1 and out == "" and not trained
    assert err.startswith(f"error: --model {given}: predict takes a baseline's name, not a model file.")
    assert "outside the sandbox" in err and f"kgpubench evaluate {given} --task {TASK}" in err
    baselines = sorted(p.stem for p in bundled_path("baselines").glob("*.py") if not p.name.startswith("_"))
    assert "median" in baselines and all(b in err for b in baselines)


def test_model_given_an_unknown_name_is_still_an_unknown_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(monkeypatch, capsys, "predict", TASK, "--gpu", "NVIDIA L4", "--model", "nope")
    assert code == 1 and "unknown model 'nope'" in err and "not a model file" not in err
    with pytest.raises(OptionError, match="not a model file"):
        P.choose_model(get_task(TASK), "nope.py")
