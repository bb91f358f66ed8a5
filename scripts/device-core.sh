#!/usr/bin/env bash
# Runs the runtime core's GPU checks on the device machine: the conformance suite (and
# its fault test in a child process), compute-sanitizer memcheck and racecheck on the
# suite, then the runtime benchmarks against the raw driver. Build first, here:
#   ../shared/tools/gpu-pack . ./conformance ./backend/...
# then on the device: bash scripts/device-core.sh   (carry .gpu). Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
echo "== conformance"
(cd conformance && timeout 300 ../.gpu/conformance.test -test.run 'TestCUDA' -test.skip 'TestCUDASort' -test.v 2>&1) > "$OUT/conformance.log"
grep -E -- '^(--- |ok|FAIL|PASS)|    --- FAIL|waiters|fault error|out of memory|\.go:[0-9]+:' "$OUT/conformance.log" | grep -v -- '--- PASS' | head -60
grep -c -- '--- PASS' "$OUT/conformance.log" | sed 's/^/subtests passed: /'
if [ "${SANITIZE:-1}" = 1 ]; then
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer $tool"
    (cd conformance && timeout 240 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 3 ../.gpu/conformance.test -test.run 'TestCUDA$' -test.short 2>&1) > "$OUT/$tool.log"
    echo "exit $?"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Invalid|Race|FAIL' "$OUT/$tool.log" | head -12
  done
fi
echo "== benchmarks"
timeout 400 .gpu/root.test -test.run '^$' -test.bench "${BENCH:-.}" -test.benchtime "${BENCHTIME:-0.5s}" -test.benchmem 2>&1 | tee "$OUT/bench.log" | grep -E '^(Benchmark|FAIL|panic|ok)'
