#!/usr/bin/env bash
# A sort change on the GPU machine: gpubench's long sorts, this build against another
# (scripts/device-ab.sh), then the root package's sorting tests on the GPU in three
# processes side by side (the CPU backend's cases skipped: CI runs them). Build here:
#   ../shared/tools/gpu-pack -o .gpb . && go build -ldflags='-s -w' -o .gpb/bin/gpubench ./cmd/gpubench
# and the other build's gpubench as .gpb/old/gpubench; carry .gpb as tar.xz; then on the
# device: bash scripts/device-sortcheck.sh. Results in $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
B=${B:-.gpb}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ -x "$B/old/gpubench" ]; then
  OLD=$B/old/gpubench NEW=$B/bin/gpubench ROWS=${ROWS:-scripts/sort-long-rows.txt} N=${N:-4} OUT=$OUT/ab \
    bash scripts/device-ab.sh 2>&1 | grep -v '^run '
  tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
fi
t() { # name, then root.test's flags
  local name=$1; shift
  timeout 400 "$B/root.test" -test.count=1 -test.v "$@" > "$OUT/t-$name.log" 2>&1
  echo "== $name: exit $? ($(grep -c -- '--- PASS' "$OUT/t-$name.log") passed, $(grep -c -- '--- FAIL' "$OUT/t-$name.log") failed)"
  grep -- '--- FAIL' "$OUT/t-$name.log" | head -10
}
t past -test.run '^TestSortPast2to31GPU$' &
t large -test.run '^TestSortLargeGPU$' &
t rest -test.run '^Test(Argsort|TopK|Unique|Search|Partition|Median|Quantile|NanQuantile|SortSizes|SortPatterns|SortRows|SortAxes|SortByKey|SortSegments|SortFused|SortSim|SortErrors)' -test.skip '/cpu' &
wait
