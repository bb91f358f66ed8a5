#!/usr/bin/env bash
# The synchronization checks of both builds on the device machine, the GPU to themselves:
# the whole conformance suite of the no-cgo build, the race-checked conformance suite
# repeated in both builds (it once deadlocked: ring.go's freeGate), the race checker's
# cost (conformance TestCUDARaceCost), and the idle-synchronize and launch rows of both
# builds with their raw baselines. Build first (the device machine has no Go):
#   ../shared/tools/gpu-pack -o .gpc ./conformance               # cgo: conformance + gpubench
#   CGO_ENABLED=0 ../shared/tools/gpu-pack -o .gpn               # no-cgo: everything
# carry them packed (tar | xz), unpack there, then: bash scripts/device-race.sh
# Environment: C, N (the cgo and no-cgo folders), R (race-checked repeats, default 3),
# BEFORE (an earlier gpubench -json file the cgo rows are compared with).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
C=${C:-.gpc} N=${N:-.gpn} R=${R:-3}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
conf() { # build timeout name args...
  local d=$1 t=$2 name=$3; shift 3
  local log="$OUT/$name.log" start=$(date +%s)
  (cd conformance && timeout "$t" "$root/$d/conformance.test" -test.count=1 -test.timeout "$((t - 10))s" -test.v "$@") > "$log" 2>&1
  local rc=$?
  echo "== $name: exit $rc in $(( $(date +%s) - start ))s, $(grep -c -- '--- PASS' "$log") passed, $(grep -c -- '--- FAIL' "$log") failed, $(grep -c -- '--- SKIP' "$log") skipped"
  grep -E -- '--- FAIL|^panic:|waiters:|binding|race' "$log" | grep -v '^=== ' | head -12
}
conf "$N" 240 nocgo-conformance
for i in $(seq "$R"); do
  conf "$C" 60 cgo-racechecked-$i -test.run '^TestCUDARaceChecked$'
  conf "$N" 60 nocgo-racechecked-$i -test.run '^TestCUDARaceChecked$'
done
GPU_RACE_COST=1 conf "$C" 200 cgo-racecost -test.run '^TestCUDARaceCost$'
grep -E 'racecost_test|pass [0-9]' "$OUT/cgo-racecost.log" | head -12
rows='^(sync/|kernel/launch$|array/construct)'
for i in 1 2; do
  timeout 100 $C/bin/gpubench -q -peers none -run "$rows" -benchtime 200ms -json "$OUT/sync-cgo-$i.json" \
    ${BEFORE:+-compare "$BEFORE"} > "$OUT/sync-cgo-$i.table" 2>&1
  echo "== sync rows round $i (cgo${BEFORE:+ against $BEFORE}): exit $?"; cat "$OUT/sync-cgo-$i.table"
  timeout 100 $N/bin/gpubench -q -peers none -run "$rows" -benchtime 200ms -compare "$OUT/sync-cgo-$i.json" \
    -json "$OUT/sync-nocgo-$i.json" > "$OUT/sync-nocgo-$i.table" 2>&1
  echo "== sync rows round $i (no-cgo against cgo): exit $?"; cat "$OUT/sync-nocgo-$i.table"
done
cd "$OUT" && tar -cf - *.log *.table *.json | xz -T0 > race.tar.xz && rm -f *.log *.table *.json
