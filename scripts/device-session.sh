#!/usr/bin/env bash
# The end-of-session check on the device machine, in two calls that each fit the
# 10-minute limit. Build first, here: ../shared/tools/gpu-pack . ./conformance
# then there (carry .gpu):
#   bash scripts/device-session.sh tests   # conformance + memcheck on CUDA, root tests
#                                          # but the five slowest scan tests
#   bash scripts/device-session.sh bench   # gpubench (peers from peers/*.json) and the
#                                          # runtime benchmarks against the raw driver
# Logs and results go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
case "${1:-tests}" in
tests)
  (cd conformance && timeout 150 ../.gpu/conformance.test -test.run 'TestCUDA$' -test.v > "$OUT/conformance.log" 2>&1
   echo "conformance exit $?")
  grep -E -- '--- FAIL|waiters:|panic' "$OUT/conformance.log" | head -10
  (cd conformance && timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 \
    ../.gpu/conformance.test -test.run 'TestCUDA$' -test.short > "$OUT/memcheck.log" 2>&1; echo "memcheck exit $?")
  grep -E 'ERROR SUMMARY|Invalid' "$OUT/memcheck.log" | head -3
  timeout 260 .gpu/root.test -test.v \
    -test.skip 'TestCumProdMaxMinSizes|TestCumSumSizes|TestScanRepeatCUDA|TestCumSumPast2G|TestScanAxes' > "$OUT/root.log" 2>&1
  echo "root exit $?, $(grep -c -- '--- PASS' "$OUT/root.log") passed"
  grep -E -- '--- FAIL|^panic|^FAIL' "$OUT/root.log" | head -20 || true
  ;;
bench)
  timeout 330 .gpu/bin/gpubench -q -peers auto -json "$OUT/gpubench.json" -gobench "$OUT/gpubench.txt" \
    > "$OUT/gpubench.table" 2> "$OUT/gpubench.err"
  echo "gpubench exit $?"; cat "$OUT/gpubench.table"; tail -3 "$OUT/gpubench.err"
  GPU_SCAN_VARIANT=v1 GPU_SCAN_STAGE=1 timeout 40 .gpu/bin/gpubench -q -peers none -run 'accumulate/.*/1d/16k$' 2>&1 | head -4
  timeout 150 .gpu/root.test -test.run '^$' -test.bench 'WaitLongKernel|TrackedLaunch$|^BenchmarkCopy$' \
    -test.benchtime 0.3s -test.count 3 > "$OUT/gotest.txt" 2>&1
  echo "go bench exit $?"; grep -E '^(Benchmark|FAIL|panic)' "$OUT/gotest.txt"
  ;;
esac
