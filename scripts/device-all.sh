#!/usr/bin/env bash
# The whole GPU check of the library on the device machine, in phases that each fit one
# device call. Build here first (the device machine has no Go):
#   ../shared/tools/gpu-pack            # every package's test binary + cmd/gpubench
# then there, from the repository root, carrying .gpu:
#   bash scripts/device-all.sh tests     # every package's tests on CUDA (.gpu/run.sh)
#   bash scripts/device-all.sh sanitize  # compute-sanitizer memcheck + racecheck
#   bash scripts/device-all.sh bench     # the Go benchmarks (runtime, arrays, reductions...)
#   bash scripts/device-all.sh gpubench  # peers/peers.py then gpubench, same command
#   bash scripts/device-all.sh nccl      # on nvidia-h200-x2: NCCL tests, benchmarks, torch
# Logs and results go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader

# pkgtest NAME DIR REGEX [ARGS...]: run one packed test binary from its package folder.
pkgtest() {
  local name=$1 dir=$2 re=$3; shift 3
  (cd "$dir" && timeout "${T:-300}" "$root/.gpu/$name.test" -test.run "$re" -test.v "$@") > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "== $name ($re): exit $rc, $(grep -c -- '--- PASS' "$OUT/$name.log") passed, $(grep -c -- '--- SKIP' "$OUT/$name.log") skipped"
  grep -E -- '--- FAIL|^panic:|FAIL$' "$OUT/$name.log" | head -20
  return 0
}

case "${1:-tests}" in
tests)
  # Every package's test binary (gpu-pack's run.sh), each from its package folder, with
  # its full log in $OUT/<pkg>.log; then the fault test's and the 2-GPU tests' lines.
  OUT="$OUT" timeout "${T:-560}" bash .gpu/run.sh "${RUN:-.}" > "$OUT/run.log" 2>&1
  echo "== every package: exit $?"; cat "$OUT/run.log"
  grep -E 'waiters:|readers:|returned .* after its cancel|behind a .* kernel returned|ready reads took|leaked|fault error' "$OUT/conformance.log" | sort | uniq -c | sort -rn | head -40
  grep -E 'driver: .*local memory|bytes of local memory' "$OUT/internal_kernel.log" | head -20
  ;;
sanitize)
  # compute-sanitizer on the changed paths: the conformance suite (host copies, staging
  # rings, settled tracking, waits) and the array operations.
  for tool in memcheck racecheck; do
    (cd conformance && timeout 200 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 3 \
      "$root/.gpu/conformance.test" -test.run 'TestCUDA$' -test.short 2>&1) > "$OUT/san-$tool-conformance.log"
    echo "== $tool conformance: exit $?"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race reported|--- FAIL' "$OUT/san-$tool-conformance.log" | head -5
    timeout 150 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 3 \
      .gpu/root.test -test.run 'TestScanCrossBackend|TestNonzeroShapes|TestPermuteMetal|TestReduceNaNInfTies|TestEvalBroadcastStrided|TestFindFirstPositions|TestCompactExactBuffer' -test.short > "$OUT/san-$tool-arrays.log" 2>&1
    echo "== $tool arrays: exit $?"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race reported|--- FAIL' "$OUT/san-$tool-arrays.log" | head -5
  done
  ;;
bench)
  timeout 560 .gpu/root.test -test.run '^$' -test.bench "${BENCH:-.}" -test.benchtime "${BENCHTIME:-0.3s}" -test.benchmem > "$OUT/bench.log" 2>&1
  echo "bench exit $?"; grep -E '^(Benchmark|FAIL|panic)' "$OUT/bench.log"
  ;;
gpubench)
  if [ "${PEERS:-1}" = 1 ]; then
    PYTHONUNBUFFERED=1 timeout 330 python3 peers/peers.py --max-time 280 --time-per-bench 0.3 -o "$OUT/peers.json" > "$OUT/peers.log" 2>&1
    echo "peers exit $?"; tail -3 "$OUT/peers.log"
  fi
  peers=$OUT/peers.json; [ -s "$peers" ] || peers=auto
  timeout 560 .gpu/bin/gpubench -q -peers "$peers" -json "$OUT/gpubench.json" -gobench "$OUT/gpubench.txt" \
    -plot "$OUT/gpubench.svg" ${GPUBENCH_ARGS:-} > "$OUT/gpubench.table" 2> "$OUT/gpubench.err"
  echo "gpubench exit $?"; cat "$OUT/gpubench.table"; tail -5 "$OUT/gpubench.err"
  ;;
nccl)
  nvidia-smi topo -m | head -5
  T=200 pkgtest nccl nccl 'NCCL|Multi'
  T=60 pkgtest conformance conformance 'TestMulti'
  timeout 170 .gpu/nccl.test -test.run '^$' -test.bench "${BENCH:-NCCL/[A-Za-z]+/(nonblocking|blocking|raw)/(8MiB|256MiB|1GiB|4GiB)|PeerCopy}" -test.benchtime 5x > "$OUT/nccl-bench.log" 2>&1
  echo "nccl bench exit $?"; grep -E '^(Benchmark|FAIL|panic)' "$OUT/nccl-bench.log"
  PYTHONUNBUFFERED=1 timeout 120 python3 nccl/bench/torch_nccl.py --sizes 8M,256M,1G,4G > "$OUT/torch_nccl.json" 2> "$OUT/torch_nccl.err"
  echo "torch exit $?"; cat "$OUT/torch_nccl.json" | head -40
  ;;
esac
