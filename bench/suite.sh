#!/usr/bin/env bash
# `make bench-suite` (and the end of `make bench`): the wall time of both test tiers in a fresh
# clone of this checkout's HEAD, as CI meets it (no pytest cache: the order comes from
# tests/durations.json), each under a timeout so the bench always ends. Prints one line a tier:
# its seconds, its exit status (124: timed out) and pytest's summary.
set -uo pipefail
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/c"
cd "$work/c" || exit 1
if ! timeout 900 make deps >"$work/deps.log" 2>&1; then
  echo "bench-suite: make deps failed (log: tail of it below)"; tail -20 "$work/deps.log"; exit 1
fi
status=0
for tier in "test-fast 600" "test 1800"; do
  set -- $tier
  start=$(date +%s)
  timeout "$2" make "$1" >"$work/$1.log" 2>&1
  rc=$?
  summary=$(grep -E '^=+ .*(passed|failed|error).* in ' "$work/$1.log" | tail -1 | tr -d '=')
  echo "make $1: $(( $(date +%s) - start )) s wall (limit $2 s), exit $rc:${summary}"
  [ "$rc" = 0 ] || status=1
done
exit $status
