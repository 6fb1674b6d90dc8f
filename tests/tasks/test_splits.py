"""Split stability: pure hash rule, byte-identical files, old rows never move, no group crosses folds."""


import numpy as np
import pyarrow as pa
import pytest
import task_fixtures as fx

from kgpubench.errors import UnknownNameError
from kgpubench.tasks import get_task, problem_keys
from kgpubench.tasks.loading import load_dataset
from kgpubench.tasks.splits import (
    FoldSplitter,
    SplitError,
    assign_folds,
    hash_bucket,
    read_split_file,
    render_split_file,
    write_split_files,
)


def test_hash_bucket_is_the_documented_rule():
    import hashlib

    digest = hashlib.sha256(b"random10\x1fabc").digest()
    assert hash_bucket("abc", "random10", 10) == int.from_bytes(digest[:8], "big") % 10


def test_regeneration_is_byte_identical_and_matches_the_rule(tmp_path):
    table = fx.kernels_table()
    task = get_task("kernel-time")
    a = write_split_files(table, task, tmp_path / "a")
    b = write_split_files(table.take(np.arange(table.num_rows)[::-1]), task, tmp_path / "b")  # other order
    assert [p.name for p in a] == ["random10.csv", "holdout80.csv", "by-kernel.csv", "by-gpu.csv"]
    for pa_, pb in zip(a, b):
        assert pa_.read_bytes() == pb.read_bytes()
    committed = read_split_file(a[0])
    rows = table.filter(pa.compute.equal(table["suite"], "regular"))
    for rid in rows["row_id"].to_pylist()[:10]:
        assert committed[rid] == str(hash_bucket(rid, "random10", 10))


def test_rows_added_later_never_move_old_rows():
    task = get_task("autotune-config")
    old = fx.autotune_table(gpus=("GPU A", "GPU B"))
    both = fx.autotune_table(gpus=("GPU A", "GPU B", "GPU C"))
    for scheme in ("random10", "holdout80", "by-gpu", "by-kernel"):
        before = dict(zip(old["row_id"].to_pylist(), assign_folds(task, old, scheme)))
        after = dict(zip(both["row_id"].to_pylist(), assign_folds(task, both, scheme)))
        assert all(after[r] == f for r, f in before.items())


def test_no_problem_crosses_folds_in_recommendation_tasks():
    for task_name, table in (("autotune-config", fx.autotune_table()), ("stencil-tile", fx.stencil_table())):
        task = get_task(task_name)
        keys = problem_keys(task, table)
        for scheme in task.schemes:
            folds = assign_folds(task, table, scheme)
            owner = {}
            for k, f in zip(keys, folds):
                assert owner.setdefault(k, f) == f, (task_name, scheme, k)


def test_by_gpu_folds_are_named_by_gpu_and_holdout_is_a_fifth():
    task = get_task("kernel-time")
    table = fx.kernels_table()
    assert sorted(set(assign_folds(task, table, "by-gpu"))) == ["GPU A", "GPU B"]
    ids = [f"{i:016x}" for i in range(5000)]
    t = pa.table({"row_id": ids})
    frac = np.mean(assign_folds(task, t, "holdout80") == "holdout")
    assert 0.18 < frac < 0.22


def test_fold_splitter_is_like_predefined_split():
    s = FoldSplitter(["0", "1", "train", "0"])
    assert s.get_n_splits() == 2
    (tr0, te0), (tr1, te1) = list(s.split())
    assert te0.tolist() == [0, 3] and tr0.tolist() == [1, 2]
    assert te1.tolist() == [1] and tr1.tolist() == [0, 2, 3]


def test_load_dataset_applies_the_split(tmp_path):
    store = fx.make_store(tmp_path / "store", fx.autotune_table())
    full = load_dataset("autotune", format="arrow", data_dir=store.path)
    test = load_dataset("autotune", scheme="by-gpu", fold="GPU B", split="test", format="arrow", data_dir=store.path)
    train = load_dataset("autotune", scheme="by-gpu", fold="GPU B", split="train", format="pandas",
                         data_dir=store.path)
    assert set(test["gpu_name"].to_pylist()) == {"GPU B"} and test.num_rows == 24
    assert set(train["gpu_name"]) == {"GPU A", "GPU C"} and len(train) + test.num_rows == full.num_rows
    with pytest.raises(UnknownNameError, match="GPU Z"):
        load_dataset("autotune", scheme="by-gpu", fold="GPU Z", split="test", data_dir=store.path)
    with pytest.raises(SplitError, match="scheme="):
        load_dataset("autotune", fold="0", split="test", data_dir=store.path)
    with pytest.raises(UnknownNameError, match="random10"):
        load_dataset("autotune", scheme="random11", fold="0", split="test", data_dir=store.path)


@pytest.mark.slow
def test_committed_split_files_match_the_rule():
    """Every committed file equals what the rule gives on the packaged data."""
    from kgpubench.resources import default_data_dir
    from kgpubench.store.store import Store
    from kgpubench.tasks import list_tasks
    from kgpubench.tasks.splits import split_path, splits_root

    store = Store(default_data_dir())
    last: tuple[str, pa.Table] | None = None  # tasks that share a config come one after another: read it once
    checked = 0
    for task in list_tasks():
        files = [split_path(task.name, s) for s in task.schemes if split_path(task.name, s).exists()]
        if not files:
            continue
        if last is None or last[0] != task.config:
            last = (task.config, store.read(task.config))
        table = last[1]
        if table.num_rows == 0:  # committed with a new config before its data is packaged: checked once it is
            continue
        for path in files:
            assert render_split_file(task, table, path.stem) == path.read_bytes(), path
            checked += 1
    if not checked:
        pytest.skip(f"no committed split files under {splits_root()} yet")


def test_a_split_holds_only_the_tasks_rows_so_failed_rows_never_reach_a_target(tmp_path):
    from kgpubench.testing import valid_row

    table = fx.autotune_table()
    failed = valid_row("autotune", gpu_name="GPU B", **fx.GPUS["GPU B"], kernel="gemm", problem_size="1024x1024",
                       params=[{"name": "block_size_x", "value": 999.0}], status="compile_error",
                       time_ms_median=None, time_ms_min=None, time_ms_mean=None, time_ms_std=None, repeats=None)
    from kgpubench.schema import get_table

    both = pa.concat_tables([table, get_table("autotune").from_rows([failed])])
    store = fx.make_store(tmp_path / "store", both)
    test = load_dataset("autotune", scheme="by-gpu", fold="GPU B", split="test", format="pandas",
                        data_dir=store.path, task="autotune-config")
    assert len(test) == 24 and test["time_ms_median"].notna().all() and (test["status"] == "ok").all()
    assert len(load_dataset("autotune", format="arrow", data_dir=store.path)) == 73  # still loadable in full


def test_split_digest_is_the_committed_file_for_the_same_rows(tmp_path):
    from kgpubench.tasks import task_rows
    from kgpubench.tasks.splits import split_digest, split_sha256, split_sha256_of

    table = fx.autotune_table()
    task = get_task("autotune-config")
    write_split_files(table, task, tmp_path)
    rows = task_rows(task, table)
    folds = assign_folds(task, rows, "by-gpu")
    assert split_sha256_of(rows["row_id"].to_pylist(), folds) == split_sha256("autotune-config", "by-gpu", tmp_path)
    text = split_digest(["b", "a", "a"], ["1", "0", "0"]).decode()
    assert text == "row_id,fold\na,0\nb,1\n"


def test_write_split_files_refuses_to_replace_a_foreign_file(tmp_path):
    path = tmp_path / "autotune-config" / "random10.csv"
    path.parent.mkdir(parents=True)
    path.write_text("my notes\n")
    with pytest.raises(SplitError, match="not a split file"):
        write_split_files(fx.autotune_table(), get_task("autotune-config"), tmp_path)
    assert path.read_text() == "my notes\n"


def test_the_neusight_scheme_maps_gpus_to_train_and_test_and_uses_no_other_gpu():
    import numpy as np

    from kgpubench.schema import get_table
    from kgpubench.tasks.splits import EXCLUDED, FoldSplitter, evaluated_folds, get_scheme
    from kgpubench.testing import valid_row

    task = get_task("operator-latency")
    gpus = ["Tesla P4", "Tesla T4", "NVIDIA H100 80GB HBM3", "NVIDIA L4", "AMD Instinct MI100",
            "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB"]
    table = get_table("operators").from_rows([valid_row("operators", gpu_name=g) for g in gpus])
    folds = assign_folds(task, table, "neusight")
    assert list(folds) == ["train", "train", "test", "test", EXCLUDED, "test", "train"]
    assert get_scheme("neusight").kind == "mapping" and evaluated_folds("neusight", folds) == ["test"]
    ((train, test),) = list(FoldSplitter(folds).split())
    assert list(train) == [0, 1, 6] and list(test) == [2, 3, 5]  # the AMD row is in neither
    assert not np.isin(4, np.concatenate([train, test]))


@pytest.mark.parametrize("row_ids, folds", [
    (["b", "a", "ab", "a", "B", "é", "z"], ["1", "0", "0", "0", "x", "2", "10"]),  # duplicates, prefixes, case, é
    (["r1", "r2", "r2"], ["GPU, with comma", 'say "hi"', "line\nbreak"]),  # values csv must quote
    ([3, 1, 2], [0, 0, 1]),  # not strings: written as str() gives them
    ([], []),
])
def test_the_fast_split_digest_writes_the_definition_s_bytes(row_ids, folds):
    from kgpubench.tasks.splits import split_digest, split_digest_reference

    fast = split_digest(row_ids, folds)
    assert fast == split_digest_reference(row_ids, folds)
    assert fast.startswith(b"row_id,fold\n") and fast.count(b"\n") >= len(set(zip(row_ids, folds))) + 1


def test_the_fast_split_digest_on_many_random_rows():
    from kgpubench.tasks.splits import split_digest, split_digest_reference

    rng = np.random.default_rng(7)
    ids = [f"{v:x}" for v in rng.integers(0, 5_000, 20_000)]  # hex strings of different lengths, many repeats
    folds = [str(v) for v in rng.integers(0, 12, 20_000)]
    assert split_digest(ids, folds) == split_digest_reference(ids, folds)
    lines = split_digest(ids, folds).decode().splitlines()[1:]
    assert lines == sorted(set(lines)) and len(lines) == len(set(zip(ids, folds)))


def test_next_generation_trains_on_ampere_to_hopper_and_tests_every_blackwell():
    import pyarrow as pa

    from kgpubench.tasks.splits import EXCLUDED, TRAIN_ONLY, FoldSplitter, assign_folds

    task = get_task("gemm-latency")
    arch = ["ampere", "ada", "hopper", "blackwell", "blackwell2", "xe2-hpg", "cdna3"]
    table = pa.table({"row_id": [f"{i:016x}" for i in range(len(arch))], "gpu_architecture": arch})
    folds = assign_folds(task, table, "next-generation")
    assert list(folds) == [TRAIN_ONLY] * 3 + ["test"] * 2 + [EXCLUDED] * 2
    (train, test), = FoldSplitter(folds).split()
    assert list(train) == [0, 1, 2] and list(test) == [3, 4]
