#!/usr/bin/env bash
# One device command that re-runs the tests a change touched and then times the rows it
# should speed up, within one call's limit: phase 1, the conformance suite alone and the
# packages' tests (device-par.sh, PKGS and SHARDS); phase 2, device-perf.sh with what
# time is left. Carry .gpu.tar.xz (gpu-pack -z). Environment: LIMIT (seconds for the
# whole, default 580), CONF_T, plus device-par.sh's and device-perf.sh's variables.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
start=$(date +%s); LIMIT=${LIMIT:-580}
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
[ -d .gpu ] || xz -dc .gpu.tar.xz | tar -x
rel=$(awk '$1=="conformance" {print $2}' .gpu/packages.txt)
(cd "$rel" && timeout "${CONF_T:-120}" "$root/.gpu/conformance.test" -test.count=1 -test.run "${CONF_RE:-TestCUDA}" -test.v -test.timeout "$(( ${CONF_T:-120} - 10 ))s") > "$OUT/conformance.log" 2>&1
echo "conformance: exit $? $(grep -c -- '--- PASS' "$OUT/conformance.log") passed $(grep -c -- '--- FAIL' "$OUT/conformance.log") failed ($(( $(date +%s) - start ))s)"
grep -E -- '--- FAIL|^panic|waiters:|readers:|leaked' "$OUT/conformance.log" | head -20
OUT="$OUT/par" T=${T:-190} bash scripts/device-par.sh > "$OUT/par.txt" 2>&1
cat "$OUT/par.txt"; echo "tests done at $(( $(date +%s) - start ))s"
p2=$(( $(left) - 15 ))
if [ "$p2" -gt 60 ]; then
  OUT="$OUT/perf" P=${PERF_P:-.gpu} timeout "$p2" bash scripts/device-perf.sh > "$OUT/perf.txt" 2>&1
  echo "perf: exit $?"; grep -vE '^(device|% copy|peers:|vs |TFLOP|$)' "$OUT/perf.txt" | cut -c1-150
fi
cd "$OUT" && tar -cJf all.tar.xz --exclude all.tar.xz * && find . -type f ! -name all.tar.xz -delete
