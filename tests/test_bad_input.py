"""Bad input never gives a traceback: a corpus of bad shards and bad import files through the real entry point.

Every case must end in exit 1 and one red line on stderr naming the file (and the row and column where there is
one), with the store and the output folder unchanged.
"""

from __future__ import annotations

import gzip
import json
import math
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import cli

from kgpubench.cli import main
from kgpubench.errors import ImportFormatError
from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.testing import valid_row


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def rows(**overrides) -> pa.Table:
    return get_table("npb").from_rows([valid_row("npb", **{"tpb": 32, **overrides}), valid_row("npb", tpb=64)])


def _write(table: pa.Table, path: Path) -> Path:
    pq.write_table(table, path)
    return path


def _replace(column: str, array: pa.Array) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        t = rows()
        return _write(t.set_column(t.column_names.index(column), column, array), folder / "retyped.parquet")
    return build


def _meta(value: bytes) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        return _write(rows().replace_schema_metadata({b"kgpubench": value}), folder / "meta.parquet")
    return build


def _damaged(cut: Callable[[bytes], bytes]) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        path = write_shard(rows(), folder / "damaged.parquet")
        path.write_bytes(cut(path.read_bytes()))
        return path
    return build


def _looping(folder: Path) -> Path:
    link = folder / "loop.parquet"
    link.symlink_to(link)
    return link


def _dotdot(folder: Path) -> Path:
    (folder / "sub").mkdir()
    write_shard(rows(status="exploded"), folder / "bad.parquet")
    return folder / "sub" / ".." / "bad.parquet"


def _mixed_folder(folder: Path) -> Path:
    (folder / "mixed").mkdir()
    write_shard(rows(), folder / "mixed" / "a.parquet")
    write_shard(get_table("stencil").from_rows([valid_row("stencil")]), folder / "mixed" / "b.parquet")
    return folder / "mixed"


def _empty_folder(folder: Path) -> Path:
    (folder / "nothing").mkdir()
    return folder / "nothing"


def _npb(name: str, **overrides) -> Callable[[Path], Path]:
    return lambda folder: write_shard(rows(**overrides), folder / name)


# id -> (build the shard in a folder, what the one error line of `merge` must contain)
SHARDS: dict[str, tuple[Callable[[Path], Path], list[str]]] = {
    "nan time": (_npb("nan.parquet", time_ms_median=math.nan), ["row 0", "'time_ms_median'", "finite"]),
    "inf time": (_npb("inf.parquet", time_ms_mean=math.inf), ["row 0", "'time_ms_mean'", "finite"]),
    "negative time": (_npb("neg.parquet", time_ms_min=-1.0), ["row 0", "'time_ms_min'", "must be > 0"]),
    "1e308 ms": (_npb("huge.parquet", time_ms_median=1e308), ["row 0", "'time_ms_median'", "<= 86400000"]),
    "numeric string": (_replace("time_ms_std", pa.array(["0.05", "0.05"])),
                       ["column 'time_ms_std'", "has type string, expected double"]),
    "float in int column": (_replace("runs", pa.array([2.5, 3.0])), ["column 'runs'", "does not convert"]),
    "missing column": (lambda f: _write(rows().drop_columns(["status"]).replace_schema_metadata(
        rows().schema.metadata), f / "missing.parquet"), ["column 'status'", "required column is missing"]),
    "extra column": (lambda f: _write(rows().append_column("bogus", pa.array([1, 2])), f / "extra.parquet"),
                     ["column 'bogus'", "not declared"]),
    "unknown status": (_npb("status.parquet", status="exploded"), ["row 0", "'status'", "'exploded'"]),
    "duplicate row": (lambda f: _write(pa.concat_tables([rows(), rows()]), f / "dupe.parquet"),
                      ["row 2", "'row_id'", "duplicate key"]),
    "tampered row id": (_replace("row_id", pa.array(["0" * 16, rows()["row_id"][1].as_py()])),
                        ["row 0", "'row_id'", "must equal the hash of the key columns"]),
    "empty kernel name": (_npb("empty.parquet", kernel=""), ["row 0", "'kernel'", "must match"]),
    "kernel None": (_npb("none.parquet", kernel="None"), ["row 0", "'kernel'", "missing value"]),
    "fake source": (_npb("fake.parquet", source="fake"), ["row 0", "'source'"]),
    "zero rows": (lambda f: write_shard(rows().slice(0, 0), f / "zero.parquet"), ["holds no rows"]),
    "truncated parquet": (_damaged(lambda b: b[: len(b) // 2]), ["not a readable parquet file"]),
    "corrupt parquet": (_damaged(lambda b: b[:4] + bytes(reversed(b[4:-8])) + b[-8:]),
                        ["not a readable parquet file"]),
    "not parquet at all": (lambda f: (f / "text.parquet").write_text("hello") and f / "text.parquet",
                           ["not a readable parquet file"]),
    "garbage metadata": (_meta(b"{not json"), ["unreadable kgpubench metadata"]),
    "metadata a list": (_meta(b"[1, 2]"), ["unreadable kgpubench metadata"]),
    "metadata unknown config": (_meta(b'{"config": "gpus"}'), ["names config 'gpus'"]),
    "metadata config not a name": (_meta(b'{"config": [1]}'), ["names config [1]"]),
    "symlink loop": (_looping, ["broken or looping symbolic link"]),
    "empty folder": (_empty_folder, ["holds no *.parquet"]),
    "mixed configs": (_mixed_folder, ["several configs"]),
    "path with dotdot": (_dotdot, ["sub/../bad.parquet", "'status'"]),
    "name with spaces": (_npb("my bad shard.parquet", status="exploded"), ["my bad shard.parquet", "'status'"]),
    "missing file": (lambda f: f / "nowhere.parquet", ["no such file"]),
}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("template")
    Store(folder / "store").merge([write_shard(get_table("npb").from_rows([valid_row("npb", tpb=8)]),
                                               folder / "seed.parquet")], today="2026-01-01")
    return folder


@pytest.fixture
def store(template, tmp_path) -> Path:
    """A store at version 0.1.0 with one npb row (seed.parquet beside it)."""
    shutil.copytree(template / "store", tmp_path / "store")
    shutil.copy(template / "seed.parquet", tmp_path / "seed.parquet")
    return tmp_path / "store"


@pytest.mark.parametrize("case", list(SHARDS))
def test_bad_shard_is_one_line_and_changes_nothing(case, tmp_path, store, monkeypatch, capsys):
    build, expected = SHARDS[case]
    folder = tmp_path / "in"
    folder.mkdir()
    shard = build(folder)
    before = snapshot(store)

    code, out, err = cli(monkeypatch, capsys, "validate", shard)
    assert code == 1 and "Traceback" not in out + err, (out, err)
    lines = out.splitlines() or err.splitlines()
    assert lines and all(str(shard) in line for line in lines), (out, err)

    code, out, err = cli(monkeypatch, capsys, "merge", shard, "--into", store)
    assert code == 1 and "Traceback" not in out + err
    (line,) = err.splitlines()
    assert line.startswith("error: ") and str(shard) in line, line
    for text in expected:
        assert text in line, (text, line)
    assert snapshot(store) == before

    code, out, err = cli(monkeypatch, capsys, "merge", write_shard(rows(tpb=16), tmp_path / "good.parquet"), shard,
                         "--into", store)  # a good shard beside it: all or nothing
    assert code == 1 and snapshot(store) == before


def test_a_good_shard_with_spaces_and_dotdot_in_its_path_merges(tmp_path, store, monkeypatch, capsys):
    (tmp_path / "my folder" / "sub").mkdir(parents=True)
    write_shard(rows(), tmp_path / "my folder" / "good shard.parquet")
    path = tmp_path / "my folder" / "sub" / ".." / "good shard.parquet"
    code, out, err = cli(monkeypatch, capsys, "merge", path, "--into", store)
    assert code == 0, err
    assert out.strip() == "merged 2 npb; 0 exact duplicate(s) skipped; dataset version 0.1.0 -> 0.2.0"


def test_violations_are_listed_one_per_line_under_the_error(tmp_path, store, monkeypatch, capsys):
    shard = write_shard(rows(status="exploded", kernel=""), tmp_path / "two.parquet")
    code, out, err = cli(monkeypatch, capsys, "merge", shard, "--into", store)
    assert code == 1 and len(err.splitlines()) == 1
    assert "refused: 2 schema violation(s); nothing was merged" in err
    listed = out.splitlines()
    assert len(listed) == 2 and {("'kernel'" in x, "'status'" in x) for x in listed} == {(True, False), (False, True)}


def test_bad_store_is_one_line(tmp_path, store, monkeypatch, capsys):
    (store / "manifest.json").write_text('{"dataset_version": "0.1.0", "configs": {"npb": {"files": [{}]}}}')
    for args in (["validate", store], ["merge", tmp_path / "seed.parquet", "--into", store], ["info", "--data", store],
                 ["validate", "--repair", store]):
        code, out, err = cli(monkeypatch, capsys, *args)
        assert code == 1 and "Traceback" not in out + err
        (line,) = err.splitlines()
        assert "manifest.json: malformed manifest (configs.npb.files[0].path None is not npb/<file>.parquet" in line


def test_repair_is_refused_for_a_shard(tmp_path, monkeypatch, capsys):
    shard = write_shard(rows(), tmp_path / "s.parquet")
    code, _out, err = cli(monkeypatch, capsys, "validate", "--repair", shard)
    assert code == 1 and "--repair applies to store folders" in err and str(shard) in err


@pytest.mark.slow
def test_validate_reports_orphans_and_repair_clears_them(store, monkeypatch, capsys):
    orphan = store / "npb" / "part-00000000000000aa.parquet"
    orphan.write_bytes(b"left by a kill")
    code, out, err = cli(monkeypatch, capsys, "validate", store)
    assert code == 1 and out.startswith(f"{orphan}: orphaned part") and err == f"{store}: 1 violation(s)\n"
    code, out, err = cli(monkeypatch, capsys, "validate", "--repair", store)
    assert code == 0 and err.splitlines() == [f"repaired: removed {orphan}", f"{store}: ok"]


@pytest.mark.parametrize("value", ["-1", "nan"])
def test_bad_lock_timeout_is_one_line(value, tmp_path, store, monkeypatch, capsys):
    code, _out, err = cli(monkeypatch, capsys, "merge", tmp_path / "seed.parquet", "--into", store,
                          "--lock-timeout", value)
    assert code == 1 and len(err.splitlines()) == 1 and "lock timeout" in err


@pytest.mark.parametrize("value", ["0", "", "false", "no"])
def test_debug_off_values_mean_no_traceback(value, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["kgpubench", "validate", str(tmp_path / "x.parquet")])
    monkeypatch.setenv("KGPUBENCH_DEBUG", value)
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 1 and capsys.readouterr().err.startswith("error: ")


def test_debug_on_raises_for_the_traceback(tmp_path, monkeypatch):
    from kgpubench.errors import DataFileNotFoundError

    monkeypatch.setattr(sys, "argv", ["kgpubench", "validate", str(tmp_path / "x.parquet")])
    monkeypatch.setenv("KGPUBENCH_DEBUG", "1")
    with pytest.raises(DataFileNotFoundError):
        main()


def test_an_unexpected_exception_is_one_line_asking_for_a_report(tmp_path, monkeypatch, capsys):
    import kgpubench.store.checks

    def broken(*_a, **_k):
        raise RuntimeError("bug\nwith two lines")

    monkeypatch.setattr(kgpubench.store.checks, "validate_paths", broken)
    code, _out, err = cli(monkeypatch, capsys, "validate", tmp_path)
    assert code == 2
    assert err == ("error: internal error (RuntimeError: bug with two lines); this is a kgpubench bug: please "
                   "report it with the command you ran (KGPUBENCH_DEBUG=1 shows the traceback).\n")


def test_an_os_error_outside_kgpubench_is_one_line(tmp_path, monkeypatch, capsys):
    import kgpubench.store.checks

    def denied(*_a, **_k):
        raise PermissionError(13, "Permission denied", str(tmp_path / "secret"))

    monkeypatch.setattr(kgpubench.store.checks, "validate_paths", denied)
    code, _out, err = cli(monkeypatch, capsys, "validate", tmp_path)
    assert (code, err) == (1, f"error: {tmp_path / 'secret'}: Permission denied; check the path and its "
                              "permissions.\n")


# ----- import -------------------------------------------------------------------------------------------------
GPU = "NVIDIA GeForce RTX 2080 Ti"


def _cache(**changes) -> dict:
    doc = {"device_name": GPU, "kernel_name": "k", "problem_size": [64, 2], "tune_params_keys": ["bx"],
           "tune_params": {"bx": [1, 2]}, "cache": {
               "1": {"bx": 1, "time": 1.5, "times": [1.4, 1.5, 1.6], "timestamp": "2024-01-01T00:00:00+00:00"},
               "2": {"bx": 2, "time": "CompilationFailedConfig", "timestamp": "2024-01-01T00:00:00+00:00"}}}
    doc.update(changes)
    return doc


def _record(**changes) -> dict:
    return _cache(cache={"1": {"bx": 1, "time": 1.5, "times": [1.4, 1.5, 1.6],
                               "timestamp": "2024-01-01T00:00:00+00:00", **changes}})


# id -> (file content, what the one error line must contain besides the file name)
IMPORTS: dict[str, tuple[bytes, str]] = {
    "not json": (b"{cache:", "not valid JSON"),
    "nested too deep": (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    "top level list": (b"[1, 2]", "top level is a list"),
    "truncated gzip": (gzip.compress(json.dumps(_cache()).encode())[:30], "the gzip stream is truncated"),
    "neither format": (b'{"a": 1}', "neither a Kernel Tuner cache"),
    "cache not an object": (json.dumps(_cache(cache=[1])).encode(), "`cache` is a list"),
    "keys not a list": (json.dumps(_cache(tune_params_keys=5)).encode(), "cannot import (TypeError"),
    "numeric string time": (json.dumps(_record(time="1.5")).encode(), "'1.5'"),
    "numeric string repeats": (json.dumps(_record(times=["1.4", "1.5"])).encode(), "`times` is"),
    "huge int time": (json.dumps(_record(time=10**400, times=[10**400])).encode(), "expected a number"),
    "1e308 ms": (json.dumps(_record(time=1e308, times=[1e308, 1e308])).encode(),
                 "column 'time_ms_reported': value 1e+308: must be <= 86400000"),
    "empty kernel name": (json.dumps(_cache(kernel_name="")).encode(), "column 'kernel': value '': must match"),
    "problem size null": (json.dumps(_cache(problem_size=None)).encode(),
                          "column 'problem_size': value 'None': is the text of a missing value"),
    "bad timestamp": (json.dumps(_record(timestamp="yesterday")).encode(), "'yesterday' is not ISO 8601"),
}


@pytest.mark.parametrize("case", list(IMPORTS))
def test_bad_import_file_is_one_line_and_writes_nothing(case, tmp_path, monkeypatch, capsys):
    content, expected = IMPORTS[case]
    source = tmp_path / "in" / "bad file.json"
    source.parent.mkdir()
    source.write_bytes(content)
    out_path = tmp_path / "out" / "shard.parquet"
    code, out, err = cli(monkeypatch, capsys, "import", "kernel-tuner", source, "--out", out_path)
    assert code == 1 and "Traceback" not in out + err
    (line,) = err.splitlines()
    assert str(source) in line and expected in line, line
    assert not out_path.exists() and not out_path.parent.exists()


def test_a_huge_integer_parameter_is_refused_not_kept_as_text(tmp_path):
    """Issue 30: a 401-digit parameter was stored as a string (it would pass for a text parameter)."""
    from kgpubench.importers import import_table

    source = tmp_path / "big.json"
    source.write_text(json.dumps(_cache(tune_params_keys=["bx", "seed"], cache={
        "1,big": {"bx": 1, "seed": 10**400, "time": 1.5, "times": [1.5], "timestamp": "2024-01-01T00:00:00"}})))
    with pytest.raises(ImportFormatError) as err:
        import_table([source])
    assert str(err.value) == (f"{source}: configuration '1,big': parameter 'seed' is an integer of 401 digits, which "
                              "a float64 cannot hold exactly; a tuning parameter is a finite number within +-2**53 "
                              "(or text).")


def test_import_never_overwrites_without_force(tmp_path, monkeypatch, capsys):
    source = tmp_path / "cache.json"
    source.write_text(json.dumps(_cache()))
    out_path = tmp_path / "shard.parquet"
    out_path.write_bytes(b"my precious shard")
    code, _out, err = cli(monkeypatch, capsys, "import", "kernel-tuner", source, "--out", out_path)
    assert code == 1 and err == (f"error: {out_path}: already exists; pass --force to overwrite it, or choose "
                                 "another path.\n")
    assert out_path.read_bytes() == b"my precious shard"
    code, out, err = cli(monkeypatch, capsys, "import", "kernel-tuner", source, "--out", out_path, "--force")
    assert code == 0, err
    assert out.startswith(f"wrote 2 autotune rows (compile_error 1, ok 1) from 1 file(s) to {out_path}")
    assert pq.read_table(out_path).num_rows == 2
    code, _out, err = cli(monkeypatch, capsys, "import", "kernel-tuner", source, "--out", tmp_path)
    assert code == 1 and f"{tmp_path}: is a folder" in err


# ----- file system: unreadable and read-only paths, for real -------------------------------------------------
PERMISSIONS = r"""
import contextlib, io, json, sys
from kgpubench.cli import main
from kgpubench.errors import ImportFormatError
results = []
for args in json.loads(sys.argv[1]):
    sys.argv = ["kgpubench", *args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


def _unprivileged() -> list[str]:
    """A command prefix that runs without root's power to ignore file permissions (or skip the test)."""
    import os
    import shutil as sh
    import subprocess

    if os.geteuid() != 0:
        return []
    # In a new user namespace root keeps its uid for files it owns but loses CAP_DAC_OVERRIDE: the permission
    # bits apply to it as to anybody, while the interpreter (under root's home) stays reachable.
    prefix = ["unshare", "--user"]
    if not sh.which("unshare") or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("running as root and cannot drop the permission override (unshare --user)")
    return prefix


@pytest.mark.slow
@pytest.mark.integration  # the writers probe the sandbox's isolation (unshare)
def test_unreadable_and_read_only_paths_are_one_line(tmp_path):
    """Permissions really enforced (root runs the commands in a user namespace where they apply)."""
    import os
    import subprocess

    prefix = _unprivileged()
    root = tmp_path
    store = root / "store"
    Store(store).merge([write_shard(rows(tpb=8), root / "seed.parquet")], today="2026-01-01")
    shard = write_shard(rows(), root / "new.parquet")
    secret = write_shard(rows(), root / "secret.parquet")
    cache = root / "cache.json"
    cache.write_text(json.dumps(_cache()))
    (root / "ro").mkdir()
    locked = [*store.rglob("*"), store, root / "ro", secret]
    for p in locked:
        os.chmod(p, 0o555 if p.is_dir() else 0o444)
    os.chmod(secret, 0o000)
    before = snapshot(store)
    cases = [["validate", str(secret)],
             ["merge", str(shard), "--into", str(store)],
             ["import", "kernel-tuner", str(cache), "--out", str(root / "ro" / "x.parquet")],
             ["export", "t4", "--config", "npb", "--data", str(store), "--out", str(root / "ro" / "t4")],
             ["validate", "--repair", str(store)],
             ["validate", str(store)]]
    env = dict(os.environ)
    env.pop("KGPUBENCH_DEBUG", None)
    try:
        proc = subprocess.run([*prefix, sys.executable, "-c", PERMISSIONS, json.dumps(cases)], capture_output=True,
                              text=True, env=env, cwd=root, timeout=120)
    finally:
        for p in locked:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    for args, (code, out, err) in zip(cases[:-1], results):
        assert code == 1 and "Traceback" not in out + err, (args, out, err)
        assert len(err.splitlines()) == 1, (args, err)
    messages = [err for _, _, err in results]
    assert f"{secret}: cannot read the file (" in messages[0] and "Permission denied" in messages[0]
    assert f"{store}: the store is not writable (Permission denied)" in messages[1]
    assert f"{root / 'ro' / 'x.parquet'}: cannot write here (Permission denied)" in messages[2]
    assert f"{root / 'ro' / 't4'}" in messages[3] and "Permission denied" in messages[3]
    assert f"{store}: the store is not writable" in messages[4]
    assert results[5] == [0, "", f"{store}: ok\n"]  # a read-only store still validates
    assert snapshot(store) == before


def test_a_conflicting_merge_is_one_line_with_every_conflict_listed(tmp_path, store, monkeypatch, capsys):
    seed = get_table("npb").from_rows([valid_row("npb", tpb=8, time_ms_median=3.0, time_ms_mean=3.0)])
    shard = write_shard(seed, tmp_path / "remeasured.parquet")
    before = snapshot(store)
    code, out, err = cli(monkeypatch, capsys, "merge", shard, "--into", store)
    assert code == 1 and snapshot(store) == before
    (line,) = err.splitlines()
    assert line.startswith("error: refused: 1 row(s) have the row_id and run_id of a row in the store but different "
                           "values (2 value(s) differ); nothing was merged.")
    assert out.splitlines() == [
        f"{shard}: row 0, column 'time_ms_mean' (row_id {seed['row_id'][0]}, run_id test-run-0001): 3.0 here, "
        "1.05 in the store",
        f"{shard}: row 0, column 'time_ms_median' (row_id {seed['row_id'][0]}, run_id test-run-0001): 3.0 here, "
        "1.0 in the store"]
