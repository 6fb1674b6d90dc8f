"""A result's fold scores, aggregates and dataset reference are typed records (kgpubench.results.records), parsed
once when the result is read or built, serialised back to the same bytes; a malformed one is one line naming the
file and the key."""

import json
import pickle

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.errors import SchemaValidationError
from kgpubench.results.records import ABSENT, Aggregate, DatasetRef, FoldScores
from kgpubench.results.result import Result, Skipped, read_record, read_result_json, result_json

COMMITTED = sorted(lb.results_dir().glob("*/*/*.json")) if lb.results_dir().exists() else []

GOOD = {"task": "autotune-config", "scheme": "by-gpu", "model": "m", "kind": "model", "status": "ok",
        "dataset": {"config": "autotune", "version": "0.3.0", "rows": 10, "rows_sha256": "ab", "selection": {}},
        "folds": {"GPU A": {"n_train": 8, "n_test": 2, "scores": {"male": 0.5, "mdape": None},
                            "problems": {"p": {"chosen": 1.0, "best": 1.0}}},
                  "GPU B": {"n_train": 8, "n_test": 2, "scores": {"male": 1.5, "mdape": None}}},
        "aggregate": {"male": {"mean": 1.0, "std": 0.5, "median": 1.0, "folds": 2, "ci95": [0.5, 1.5]},
                      "mdape": None}}


@pytest.mark.skipif(not COMMITTED, reason="no committed results in this checkout")
def test_every_committed_result_is_typed_and_round_trips_byte_for_byte():
    results = 0
    for path in COMMITTED:
        text = path.read_text()
        raw = json.loads(text)
        record = read_record(read_result_json(path), where=str(path))
        assert record.to_json() == text, path
        if raw.get("dataset") is not None:
            assert isinstance(record.dataset, DatasetRef), path
            assert record.dataset.rows_sha256 == raw["dataset"].get("rows_sha256", ABSENT), path
        if isinstance(record, Skipped):
            continue
        results += 1
        for name, fold in record.folds.items():
            assert isinstance(fold, FoldScores) and fold.name == name, path
            assert fold.scores == raw["folds"][name]["scores"] and fold.n_test == raw["folds"][name]["n_test"], path
        for metric, agg in record.aggregate.items():
            want = raw["aggregate"][metric]
            assert (agg is None) == (want is None), (path, metric)
            if agg is not None:
                assert isinstance(agg, Aggregate) and agg.mean == want["mean"] and agg.median == want["median"]
                assert agg.ci95 == (None if want["ci95"] is None else tuple(want["ci95"])), (path, metric)
    assert results > 300


def test_a_fresh_record_is_parsed_once_and_writes_what_it_was_given():
    result = Result(**GOOD)
    a, b = result.folds["GPU A"], result.folds["GPU B"]
    assert (a.name, a.n_train, a.n_test, a.score("male"), a.score("mdape")) == ("GPU A", 8, 2, 0.5, None)
    assert a.problems == {"p": {"chosen": 1.0, "best": 1.0}} and b.problems is ABSENT
    assert result.aggregate["male"] == Aggregate(mean=1.0, std=0.5, median=1.0, folds=2, ci95=(0.5, 1.5))
    assert result.aggregate["mdape"] is None
    assert result.dataset.version == "0.3.0" and result.dataset.manifest_sha256 is ABSENT
    assert result.rows_sha256 == "ab"
    assert result.to_json() == result_json({"status": "ok", **GOOD})
    again = read_record(json.loads(result.to_json()))
    assert again == result and again.folds["GPU B"] is not b  # equal records, parsed anew
    # records cross processes (leaderboard run --jobs, Ray): the absent marker stays the one marker
    thawed = pickle.loads(pickle.dumps(result))
    assert thawed == result and thawed.folds["GPU B"].problems is ABSENT and thawed.message is ABSENT
    # keys no field declares are kept, at every level
    odd = json.loads(json.dumps(GOOD))
    odd["folds"]["GPU A"]["n_revealed"] = 3
    odd["aggregate"]["male"]["p90"] = 1.4
    odd["dataset"]["store"] = "x"
    record = read_record(odd)
    assert record.folds["GPU A"].extra == {"n_revealed": 3} and record.aggregate["male"].extra == {"p90": 1.4}
    assert record.dataset.extra == {"store": "x"}
    assert json.loads(record.to_json()) == json.loads(result_json(odd))


@pytest.mark.parametrize("where,value,key", [
    (("folds", "GPU A", "scores", "male"), "0.5", "folds.GPU A.scores.male"),
    (("folds", "GPU A", "scores"), [0.5], "folds.GPU A.scores"),
    (("folds", "GPU B"), 3, "folds.GPU B"),
    (("folds", "GPU A", "n_test"), -1, "folds.GPU A.n_test"),
    (("folds", "GPU A", "n_train"), 1.5, "folds.GPU A.n_train"),
    (("folds", "GPU A", "problems"), [], "folds.GPU A.problems"),
    (("aggregate", "male", "mean"), None, "aggregate.male.mean"),
    (("aggregate", "male", "median"), "1", "aggregate.male.median"),
    (("aggregate", "male", "ci95"), [1.0], "aggregate.male.ci95"),
    (("aggregate", "male", "folds"), True, "aggregate.male.folds"),
    (("aggregate", "male"), [1.0], "aggregate.male"),
    (("dataset", "rows"), "10", "dataset.rows"),
    (("dataset", "rows_sha256"), 7, "dataset.rows_sha256"),
    (("dataset",), "autotune", "dataset"),
    (("folds",), [], "folds"),
])
def test_a_malformed_value_is_one_line_naming_the_file_and_the_key(tmp_path, where, value, key):
    data = json.loads(json.dumps(GOOD))
    target = data
    for k in where[:-1]:
        target = target[k]
    target[where[-1]] = value
    path = tmp_path / "autotune-config" / "by-gpu" / "m.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    with pytest.raises(SchemaValidationError) as err:
        lb.read_results(tmp_path)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{path}: {key} is ")
    assert "kgpubench leaderboard run" in text


def test_a_skipped_scheme_has_a_typed_dataset_too():
    skipped = read_record({"status": "skipped", "task": "t", "scheme": "s", "reason": "no rows", "dataset": {}})
    assert isinstance(skipped, Skipped) and skipped.dataset == DatasetRef() and not skipped.dataset.to_dict()
    assert json.loads(skipped.to_json())["dataset"] == {}
    with pytest.raises(SchemaValidationError, match=r"^f\.json: dataset\.rows is 'many'"):
        read_record({"status": "skipped", "task": "t", "scheme": "s", "reason": "r", "dataset": {"rows": "many"}},
                    where="f.json")
