#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck over a set of the root package's tests
# (default: the newer kernels), writing $OUT/san-<tool>.log and one summary line each.
#   bash scripts/device-sanitize.sh [REGEX]       (T: seconds per tool, default 150)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
re=${1:-'TestSortSegments|TestTopK$|TestUnique|TestSearchSorted|TestSoftmaxLayerNorm|TestVarStdLogSumExp|TestTake|TestAddAt|TestBincount|TestConcatenateSizes|TestHalfReductions|TestNaNPolicy'}
for tool in memcheck racecheck; do
  timeout "${T:-150}" compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 3 \
    .gpu/root.test -test.run "$re" -test.short > "$OUT/san-$tool.log" 2>&1
  echo "== $tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool.log" | tail -1)"
  grep -E 'Invalid|Race reported|--- FAIL' "$OUT/san-$tool.log" | head -5
done
