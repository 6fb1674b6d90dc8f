#!/usr/bin/env bash
# A measuring session on a lent GPU machine (no network, no pip install): GPU tests, then `kgpubench collect`
# for each suite in priority order, every shard written under $OUT as rows finish (rerun to resume).
#
#   scripts/gpu_session.sh [--dry-run] [--minutes N] [--suites "regular power stencil npb"] [--quick]
#                          [--no-tests] [--tests-only]
#
# Run from anywhere; it works from the repository root with PYTHONPATH (no install). Environment:
#   OUT     what comes back (default ./gpu-session-out): one archive per suite, shards_<suite>.tar, refreshed
#           after each suite, and logs.tar, refreshed after each step; the device tool returns at most
#           8 files, so nothing else is written there
#   WORK    where shards and logs are written as rows finish (default $OUT/../gpu-session-work; on the
#           device machine use a folder outside $OUT), so a rerun resumes
#   PYTHON  interpreter (default python3)
# --dry-run prints what would run and the case counts of each suite; it needs no GPU.
# Each suite gets --max-minutes N (default 8): with the device's 10-minute limit per command, run one suite
# per call (--suites regular --no-tests), the GPU tests in their own call (--tests-only).
set -u -o pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
PY="${PYTHON:-python3}"
OUT="${OUT:-$ROOT/gpu-session-out}"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

DRY=0; MINUTES=8; SUITES="regular power stencil npb"; QUICK=""; TESTS=1; COLLECT=1
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY=1 ;;
        --minutes) MINUTES="$2"; shift ;;
        --suites) SUITES="$2"; shift ;;
        --quick) QUICK="--quick" ;;
        --no-tests) TESTS=0 ;;
        --tests-only) COLLECT=0 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "gpu_session.sh: unknown option $1 (see --help)" >&2; exit 1 ;;
    esac
    shift
done

WORK="${WORK:-$(dirname "$OUT")/gpu-session-work}"
LOGS="$WORK/logs"
SHARDS="$WORK/shards"
mkdir -p "$OUT" "$LOGS" "$SHARDS"

pack() {  # pack [SUITE]: refresh logs.tar (and shards_SUITE.tar) under $OUT, atomically
    [ "$DRY" = 1 ] && { echo "+ pack ${1:-logs}"; return 0; }
    tar -cf "$OUT/.logs.tar.tmp" -C "$WORK" logs && mv "$OUT/.logs.tar.tmp" "$OUT/logs.tar"
    if [ -n "${1:-}" ] && [ -d "$SHARDS/$1" ]; then
        tar -cf "$OUT/.shards_$1.tar.tmp" -C "$SHARDS" "$1" && mv "$OUT/.shards_$1.tar.tmp" "$OUT/shards_$1.tar"
    fi
}

step() {  # step LOGNAME CMD...: print, then run (unless --dry-run) with output to the terminal and the log
    local log="$LOGS/$1.log"; shift
    echo "+ $*"
    [ "$DRY" = 1 ] && return 0
    "$@" 2>&1 | tee "$log"
    return "${PIPESTATUS[0]}"
}

echo "gpu_session: out=$OUT suites=[$SUITES] minutes/suite=$MINUTES ${QUICK:+quick} $([ "$DRY" = 1 ] && echo dry-run)"
if [ "$DRY" = 0 ]; then
    { date -u; command -v nvidia-smi >/dev/null && nvidia-smi -L; "$PY" -c \
      "import sys, numpy, cupy; print(sys.version.split()[0], 'numpy', numpy.__version__, 'cupy', cupy.__version__)"; \
      git -C "$ROOT" rev-parse HEAD 2>/dev/null; } > "$LOGS/env.txt" 2>&1
fi

status=0
if [ "$TESTS" = 1 ]; then
    mapfile -t GPU_TESTS < <(grep -rlE --include='test_*.py' 'pytest\.mark\.gpu' tests | sort)
    if [ "${#GPU_TESTS[@]}" -gt 0 ]; then
        step gpu_tests "$PY" -m pytest -m gpu -q -p no:cacheprovider "${GPU_TESTS[@]}" || status=1
    fi
    step ceilings "$PY" benchmarks/gpu_ceilings.py --out "$LOGS/ceilings.json" || status=1
    step collect_overhead "$PY" benchmarks/collect_overhead.py || status=1
    pack
fi

if [ "$COLLECT" = 1 ]; then
    for suite in $SUITES; do
        if [ ! -f "collectors/$suite/__init__.py" ]; then
            echo "gpu_session: no suite collectors/$suite yet, skipped"
            continue
        fi
        if [ "$DRY" = 1 ]; then
            "$PY" -m kgpubench.cli collect --suite "$suite" $QUICK --out "$SHARDS" --dry-run \
                || echo "gpu_session: (no plan for $suite without a GPU)"
        fi
        step "collect_$suite" "$PY" -m kgpubench.cli collect --suite "$suite" $QUICK --out "$SHARDS" \
            --max-minutes "$MINUTES" || status=1
        if [ "$DRY" = 1 ] || [ -d "$SHARDS/$suite" ]; then
            step "validate_$suite" "$PY" -m kgpubench.cli validate "$SHARDS/$suite" || status=1
        fi
        pack "$suite"
    done
fi
echo "gpu_session: done (status $status); shards in $SHARDS, logs in $LOGS, archives in $OUT"
exit "$status"
