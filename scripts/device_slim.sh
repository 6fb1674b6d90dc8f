#!/usr/bin/env bash
# Put the checkout on a throw-away branch small enough for the device tool, and come back.
#
#   scripts/device_slim.sh enter     # before the device calls: prints the KGPUBENCH_COMMIT to pass
#   scripts/device_slim.sh leave     # after them: back on the branch you were on, the throw-away branch gone
#
# The device tool copies the working tree (tracked files and untracked ones git does not ignore) plus the
# paths named in `carry`, 64 MiB in all; the packaged imported tables and their split files make the
# checkout about 140 MB, and a GPU session reads none of them (docs/GPU_SESSION.md). `enter` refuses a tree
# with uncommitted changes, commits the removal of SLIM_PATHS on the branch device-slim, and checks that what
# travels (the tree and the CARRY folders) stays under LIMIT_MIB; otherwise it goes back and says what is big.
# It writes the commit it left to .session/kgpubench_commit, which scripts/gpu_session.sh records on the rows
# when KGPUBENCH_COMMIT is not set (carry .session with the call).
# Environment: REPO (default: this script's repository), SLIM_PATHS, CARRY (default ".whl .session"),
# LIMIT_MIB (default 60).
set -euo pipefail

REPO="${REPO:-$(cd "$(dirname "$0")/.." && pwd)}"
SLIM_PATHS="${SLIM_PATHS:-kgpubench/data/autotune kgpubench/data/operators kgpubench/data/profiles \
splits/autotune-config splits/rodinia-time splits/rodinia-time-counters splits/operator-latency}"
CARRY="${CARRY:-.whl .session}"
LIMIT_MIB="${LIMIT_MIB:-60}"
BRANCH=device-slim
STATE="$REPO/.git/device-slim-from"  # the branch and commit `enter` left (inside .git: never copied)
cd "$REPO"

travelling_bytes() {  # tracked + untracked-not-ignored files, and the carried folders
    { git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null | tail -n 1 | cut -f1
      for c in $CARRY; do if [ -e "$c" ]; then du -sb "$c" | cut -f1; fi; done; } | awk '{ s += $1 } END { print s + 0 }'
}

back() {  # the branch `enter` left, or its commit when HEAD was detached
    git switch -q "$1" 2>/dev/null || git switch -q --detach "$1"
}

case "${1:-}" in
    enter)
        if [ -f "$STATE" ]; then
            echo "device_slim: already entered from $(cut -d' ' -f1 "$STATE"); run 'leave' first" >&2; exit 1
        fi
        if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
            echo "device_slim: commit or stash your changes first (git status shows modified files)" >&2; exit 1
        fi
        from="$(git symbolic-ref --quiet --short HEAD || git rev-parse HEAD)"
        sha="$(git rev-parse HEAD)"
        git switch -q -c "$BRANCH"
        # shellcheck disable=SC2086  # SLIM_PATHS is a list of paths
        git rm -q -r --ignore-unmatch -- $SLIM_PATHS
        git commit -q --allow-empty -m "device copy only (from $sha)"
        echo "$from $sha" > "$STATE"
        bytes="$(travelling_bytes)"
        if [ "$bytes" -gt $((LIMIT_MIB * 1024 * 1024)) ]; then
            echo "device_slim: $((bytes / 1048576)) MiB would travel, over $LIMIT_MIB MiB; the biggest files:" >&2
            git ls-files -z | xargs -0 -r du -b | sort -rn | head -n 5 >&2
            back "$from" && git branch -q -D "$BRANCH" && rm -f "$STATE"
            exit 1
        fi
        mkdir -p "$REPO/.session" && echo "$sha" > "$REPO/.session/kgpubench_commit"  # gpu_session.sh reads it
        echo "device_slim: on $BRANCH, $((bytes / 1048576)) MiB travel (tree and $CARRY)"
        echo "KGPUBENCH_COMMIT=$sha"
        ;;
    leave)
        if [ ! -f "$STATE" ]; then
            echo "device_slim: not entered (no $STATE)" >&2; exit 1
        fi
        read -r from _sha < "$STATE"
        back "$from"
        git branch -q -D "$BRANCH"
        rm -f "$STATE"
        echo "device_slim: back on $from"
        ;;
    *)
        sed -n '2,15p' "$0"; exit 2 ;;
esac
