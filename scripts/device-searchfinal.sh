#!/usr/bin/env bash
# This session's closing device call for SearchSorted, under the device's 10 minutes:
# scripts/device-searchglobal.sh (ROUND4: hints 2 against 3 and 4; the distributions'
# benchmark, the peers, the rows and the search tests), then the conformance suite and
# backend/cuda's packages' tests, in parallel. Build here:
#   rm -rf .gps && ../shared/tools/gpu-pack -o .gps . ./internal/kernel ./cmd/gpubench \
#     ./conformance ./backend/cuda/...
#   tar -cf - .gps | xz -6 -T0 > .gps.tar.xz          (carry .gps.tar.xz)
# then on the device: tar -xJf .gps.tar.xz && bash scripts/device-searchfinal.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
G=${G:-.gps}
ROUND4=1 N=${N:-2} bash scripts/device-searchglobal.sh 2>&1 | grep -v registers
for p in ${PKGS:-conformance backend_cuda backend_cuda_cu backend_cuda_cublas}; do
  (
    rel=$(awk -v n="$p" '$1 == n {print $2}' "$G/packages.txt")
    s=$(date +%s)
    (cd "$rel" && timeout 200 "$root/$G/$p.test" -test.count=1 -test.timeout 190s -test.v) > "$OUT/$p.log" 2>&1
    echo "== $p: exit $? in $(( $(date +%s) - s ))s, $(grep -c -- '--- PASS' "$OUT/$p.log") passed, $(grep -c -- '--- FAIL' "$OUT/$p.log") failed, $(grep -c -- '--- SKIP' "$OUT/$p.log") skipped"
    grep -E -- '--- FAIL|^panic:' "$OUT/$p.log" | head -8
  ) &
done
wait
