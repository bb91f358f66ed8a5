#!/usr/bin/env bash
# The end-of-session check on the device machine, in two calls that each fit the
# 10-minute limit. Build first, here: ../shared/tools/gpu-pack . ./conformance
# then there (carry .gpu):
#   bash scripts/device-session.sh tests   # conformance + memcheck + racecheck on CUDA, root tests
#                                          # but the five slowest scan tests
#   bash scripts/device-session.sh bench   # gpubench (peers from peers/*.json) and the
#                                          # runtime benchmarks against the raw driver
#   bash scripts/device-session.sh multi   # on nvidia-h200-x2 (pack with ./nccl too): the
#                                          # two-device conformance tests and NCCL's tests
#   bash scripts/device-session.sh overhead  # launch, sync, construct and copy rows
#                                          # against the raw driver, TrackedLaunch, Copy
#   bash scripts/device-session.sh reduce  # fused reductions: sanitizers, benchmark, rows
#   bash scripts/device-session.sh ncu     # Nsight Compute's stall reasons for the
#                                          # float32 normal kernel (random/doc.go)
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
  (cd conformance && timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 \
    ../.gpu/conformance.test -test.run 'TestCUDA$' -test.short > "$OUT/racecheck.log" 2>&1; echo "racecheck exit $?")
  grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Race reported' "$OUT/racecheck.log" | head -3
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
multi)
  (cd conformance && timeout 90 ../.gpu/conformance.test -test.run 'TestMulti' -test.v > "$OUT/multi.log" 2>&1
   echo "multi exit $?, $(grep -c -- '--- PASS' "$OUT/multi.log") passed, $(grep -c -- '--- SKIP' "$OUT/multi.log") skipped")
  grep -E -- '--- FAIL|^panic' "$OUT/multi.log" | head
  (cd nccl && NCCL_NVLS_ENABLE=0 timeout 200 ../.gpu/nccl.test -test.run 'NCCL|Multi' -test.v > "$OUT/nccl.log" 2>&1
   echo "nccl exit $?, $(grep -c -- '--- PASS' "$OUT/nccl.log") passed, $(grep -c -- '--- SKIP' "$OUT/nccl.log") skipped")
  grep -E -- '--- FAIL|^panic' "$OUT/nccl.log" | head
  ;;
overhead)
  timeout 200 .gpu/bin/gpubench -q -peers auto -run 'sync/|kernel/launch|array/construct$|copyto/' \
    > "$OUT/overhead.table" 2>&1
  echo "gpubench exit $?"; cat "$OUT/overhead.table"
  timeout 90 .gpu/root.test -test.run '^$' -test.bench 'TrackedLaunch$|HostOverhead/construct|^BenchmarkCopy$' \
    -test.benchtime 0.3s -test.count 3 > "$OUT/tracked.txt" 2>&1
  grep -E '^(Benchmark|FAIL|panic)' "$OUT/tracked.txt"
  ;;
reduce)
  # The fused split reductions: bitwise against two kernels on the GPU under the
  # sanitizers, the fused/two-kernel benchmark, gpubench's reduction rows.
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 .gpu/root.test -test.run 'TestReduceFused$/cuda' \
      > "$OUT/reduce-$tool.log" 2>&1; echo "$tool exit $?"
    grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|--- FAIL' "$OUT/reduce-$tool.log" | head -3
  done
  timeout 120 .gpu/root.test -test.run '^$' -test.bench 'ReduceFused' -test.benchtime 0.3s -test.count 3 \
    > "$OUT/reducefused.txt" 2>&1; echo "bench exit $?"; grep -E '^(Benchmark|FAIL|panic)|mismatch' "$OUT/reducefused.txt"
  timeout 150 .gpu/bin/gpubench -q -peers auto -run 'reductions/' > "$OUT/reduce.table" 2>&1
  echo "gpubench exit $?"; cat "$OUT/reduce.table"
  ;;
ncu)
  timeout 150 /usr/local/cuda/bin/ncu -k regex:random_normal --launch-skip 1 --launch-count 1 \
    --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --page raw \
    .gpu/root.test -test.run '^$' -test.bench 'ArrayBandwidth/randn' -test.benchtime 3x > "$OUT/ncu.txt" 2>&1
  echo "ncu exit $?"
  grep -E "issue_stalled.*per_issue_active|issue_active.avg.pct|pipe_fma.*pct" "$OUT/ncu.txt" | sort -k3 -g -r | head -20
  ;;
esac
